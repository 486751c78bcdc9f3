"""Stores made by earlier MemeGauge versions still open and report; stores from later ones are refused
with one message. The fixture in tests/data/store-v0 was written before store versioning."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memegauge.engine import Store
from memegauge.engine.store import SCHEMA_VERSION, StoreError
from memegauge.report import build_report

from helpers.reports import CLOCK, assert_same_figures, without_keys

OLD = Path(__file__).parent / "data" / "store-v0"


def _old_store(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    with gzip.open(OLD / "store.db.gz", "rb") as src, open(path, "wb") as out:
        shutil.copyfileobj(src, out)
    return path


def _report(store: Store, name: str) -> dict:
    """The report's figures from the store; `paper` (the MemeQA paper's published figures, package
    data added after the fixture was made, not read from the store) is left out."""
    report = {k: v for k, v in build_report(store, name).items() if k != "paper"}
    return json.loads(json.dumps(without_keys(report, CLOCK | ADDED_KEYS), sort_keys=True, default=str))


# keys the reports gained after the fixture was made (issue 25's 95% intervals, issue 34's format warning);
# every other figure of an old store must read as it did
ADDED_KEYS = {"intervals", "win_rate_ci95", "bt_note", "format_warning"}


def _user_version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize("name", ["adam", "arena", "qa"])
def test_a_store_made_before_versioning_still_reports_the_same_figures(tmp_path, name):
    path = _old_store(tmp_path)
    assert _user_version(path) == 0
    store = Store(path)
    report = _report(store, name)
    store.close()
    expected = json.loads((OLD / "reports" / f"{name}.json").read_text())
    if name == "arena":  # a figure added since the fixture was made (issue 46): present, checked in its own tests
        assert report.pop("style_control")["overall"]["rows"]
    assert_same_figures(report, expected)  # the fixture was made on another machine: BLAS may differ in the last bits
    assert _user_version(path) == SCHEMA_VERSION  # migrated when opened for writing


def test_migration_adds_what_the_old_layout_lacks_and_keeps_every_row(tmp_path):
    """The layout before call columns and leases were added (issue 10/11): made by dropping them."""
    path = _old_store(tmp_path)
    db = sqlite3.connect(path)
    for column in ("finish_reason", "reasoning", "images_sent"):
        db.execute(f"ALTER TABLE calls DROP COLUMN {column}")
    db.execute("DROP TABLE leases")
    db.commit()
    counts = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "calls", "records")}
    db.close()
    Store(path).close()
    db = sqlite3.connect(path)
    columns = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    after = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "calls", "records")}
    db.close()
    assert {"finish_reason", "reasoning", "images_sent"} <= columns and "leases" in tables
    assert after == counts
    store = Store(path)
    for name in ("adam", "arena", "qa"):
        report, expected = _report(store, name), json.loads((OLD / "reports" / f"{name}.json").read_text())
        # that layout did not count pictures: unknown, never "none sent"
        images = report["run"].pop("images_by_model")
        assert images and all(v == {"calls": n, "with_image": 0, "unrecorded": n}
                              for v, n in ((v, v["calls"]) for v in images.values()))
        expected["run"].pop("images_by_model")
        report.pop("style_control", None)  # added since the fixture (issue 46)
        assert_same_figures(report, expected)


def test_figures_compare_within_blas_noise_and_nothing_else():
    """The Haswell kernel's last bits pass; a real change of a figure, a count, a label or a key does not."""
    expected = {"bt_ci": [1165.6614447585878, 1276.9188182608018], "n": 18, "model": "a", "ok": True, "x": None}
    assert_same_figures({**expected, "bt_ci": [1165.6614447585878, 1276.918818260802]}, expected)
    for changed in ({"bt_ci": [1165.6614447585878, 1276.9189]}, {"n": 19}, {"n": 18.5}, {"model": "b"},
                    {"ok": False}, {"x": 0}, {"bt_ci": [1165.6614447585878]}):
        with pytest.raises(AssertionError):
            assert_same_figures({**expected, **changed}, expected)
    with pytest.raises(AssertionError):
        assert_same_figures({k: v for k, v in expected.items() if k != "x"}, expected)


def test_a_store_from_a_newer_memegauge_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "new.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError) as info:
        Store(path)
    message = str(info.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in message and "upgrade MemeGauge" in message


@pytest.mark.slow
def test_version_1_repeat_keys_migrate_and_a_resumed_run_keeps_one_record_per_repeat(tmp_path):
    """Version 1 keyed a MemeArena repeat record 0-based; version 2 keys every record by its fields.
    Without the migration, resuming such a run would store repeat 1 twice and list its run twice."""
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config, load_registry
    from memegauge.testing.server import start_server
    from helpers.worlds import arena_world

    with start_server(seed=5) as server:
        config = arena_world(tmp_path, server.base_url, n_memes=1)
        config.write_text(config.read_text() + "repeats: 2\n")
        registry = load_registry(tmp_path / "models.yaml")
        path = tmp_path / "s.db"
        store = Store(path)
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "rep", progress=False))
        expected = _report(store, "rep")
        store.close()
        db = sqlite3.connect(path)  # as version 1 wrote them: keys "0", "1"
        db.execute("UPDATE records SET rkey = CAST(json_extract(data, '$.repeat') - 1 AS TEXT) WHERE kind='repeat'")
        db.execute("PRAGMA user_version=1")
        db.commit()
        db.close()
        store = Store(path)
        assert _user_version(path) == SCHEMA_VERSION
        assert _report(store, "rep") == expected
        again = asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "rep", progress=False))
    assert again.calls_made == 0
    keys = [k for k, _ in store.record_items(store.run_row("rep")["id"], "repeat")]
    assert keys == ["1", "2"] and _report(store, "rep") == expected


def test_records_that_kept_a_field_only_in_their_key_read_it_from_there(tmp_path):
    """Stores before version 2 wrote an AdamMeme reference, a sampling and a human vote without the
    fields their key was made of; reading completes them from the key."""
    from memegauge.adammeme.records import ReferenceRecord, SamplingRecord
    from memegauge.arena.records import HumanVoteRecord
    from memegauge.records import read_records

    store = Store(tmp_path / "s.db")
    run_id, _ = store.open_run("old", "adammeme", {}, "h", None, "0")
    store.put_records(run_id, "reference", [("1/race/m/7", {"ok": True, "reference": "r", "candidates": ["r"],
                                                            "failed_stage": None, "error_class": None})])
    store.put_records(run_id, "sampling", [("race", {"mined": 2, "sampled": ["m/7"], "warning": None,
                                                     "seeds": []})])
    store.put_records(run_id, "human_vote", [("3", {"task": "m#1", "model_a": "a", "model_b": "b",
                                                    "winner": "tie"})])
    (reference,) = read_records(store, run_id, ReferenceRecord)
    assert (reference.repeat, reference.category, reference.meme) == (1, "race", "m/7")  # a meme id with "/"
    assert reference.key == "1/race/m/7"
    (sampling,) = read_records(store, run_id, SamplingRecord)
    assert sampling.category == "race" and sampling.key == "race"
    (vote,) = read_records(store, run_id, HumanVoteRecord)
    assert vote.index == 3 and vote.winner == "tie"


def test_version_2_gains_the_logprobs_column_and_a_call_keeps_its_logprobs(tmp_path):
    """Schema 3 adds `calls.logprobs` (a benchmark's yes/no log-probabilities): a version 2 store gets the column
    ('' for its calls), and a call stored with log-probabilities reads them back."""
    from memegauge.types import CallRecord, CallStatus

    path = tmp_path / "v2.db"
    first = Store(path)
    first.put_call(CallRecord(key="old", model="m", status=CallStatus.OK, text="No"), None, None, True)
    first.close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE calls DROP COLUMN logprobs")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    store = Store(path)
    assert _user_version(path) == SCHEMA_VERSION == 4
    store.put_call(CallRecord(key="k", model="m", status=CallStatus.OK, text="Yes",
                              logprobs={"Yes": -0.1, "No": -2.4}), None, None, True)
    assert store.get_call("k").logprobs == {"Yes": -0.1, "No": -2.4} and store.get_call("old").logprobs == {}
    store.close()
