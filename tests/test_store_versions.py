"""Stores made by earlier MemeLens versions still open and report; stores from later ones are refused
with one message. The fixture in tests/data/store-v0 was written before store versioning."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from memelens.engine import Store
from memelens.engine.store import SCHEMA_VERSION, StoreError
from memelens.report import build_report

sys.path.insert(0, str(Path(__file__).parent))
from test_determinism import _without_clock  # noqa: E402

OLD = Path(__file__).parent / "data" / "store-v0"


def _old_store(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    with gzip.open(OLD / "store.db.gz", "rb") as src, open(path, "wb") as out:
        shutil.copyfileobj(src, out)
    return path


def _report(store: Store, name: str) -> dict:
    return json.loads(json.dumps(_without_clock(build_report(store, name)), sort_keys=True, default=str))


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
    assert report == expected
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
        assert report == expected


def test_a_store_from_a_newer_memelens_is_refused_with_the_fix(tmp_path):
    path = tmp_path / "new.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError) as info:
        Store(path)
    message = str(info.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in message and "upgrade MemeLens" in message
