"""The Python API (issue 13): docs/api.md's example runs as written, and every method has one shape."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

import memegauge
from memegauge.testing.server import start_server
from memegauge.types import InputError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_the_documented_example_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOCS), "exec"), namespace)  # noqa: S102 (the documentation's own code)
    printed = capsys.readouterr().out
    assert "done" in printed and "win_rate" in printed
    assert namespace["again"].calls_made == namespace["result"].calls_made  # the rerun made no new call
    assert (tmp_path / "example.db").exists()


def test_import_memegauge_is_light_and_exports_the_entry_points():
    import subprocess
    import sys

    code = "import sys, memegauge; print(sorted(m for m in ('memegauge.api', 'pydantic', 'typer') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"
    assert callable(memegauge.run_arena) and callable(memegauge.run_memeqa) and callable(memegauge.run_adammeme)
    with pytest.raises(AttributeError):
        memegauge.no_such_thing  # noqa: B018


def test_memeqa_and_adammeme_run_through_the_same_shape(tmp_path):

    from helpers.runs import world

    with start_server(latency_ms=0) as server:
        w = world(tmp_path, server.base_url)
        qa = memegauge.run_memeqa({"data": str(w.qa_data), "images": str(w.qa_images), "model": "qwen-x"},
                                 store=w.store, models=w.models)
        adam = memegauge.run("adammeme", w.adam, store=str(w.store), models=str(w.models), name="adam-api")
    assert qa.status == "done" and qa.method == "memeqa" and qa.report["n_scored"] > 0
    accuracy = qa.to_pandas("accuracy")
    assert len(accuracy) == 11 and set(accuracy.columns) == {"type", "n", "accuracy", "ci95_lo", "ci95_hi", "random"}
    assert adam.name == "adam-api" and set(adam.tables()) == {"targets", "categories", "samples", "steps", "headline"}
    board = qa.to_pandas("headline")  # the leaderboard: 11 types, macro and micro, each with its interval
    assert len(board) == 13 and set(board["unit"]) == {"rate"}
    assert (board["ci95_lo"].le(board["value"]) | board["note"].notna()).all()  # an interval, or why not
    targets = adam.to_pandas("targets")
    assert list(targets["target"]) == ["gpt-x", "llava-x"]
    assert targets["avg_score"].tolist() == [adam.report["targets"][t]["overall"]["avg_score"]
                                             for t in ("gpt-x", "llava-x")]
    with pytest.raises(InputError, match="no table 'nope'"):
        adam.to_pandas("nope")


def test_an_api_call_inside_a_running_event_loop_still_runs(tmp_path):
    """A notebook cell runs inside an event loop, where asyncio.run() is refused."""
    from memegauge.samples import sample_memes_path

    with start_server(latency_ms=0) as server:
        models = {n: {"backend": "openai", "model": n, "base_url": server.base_url} for n in ("a", "b")}
        config = {"memes": str(sample_memes_path()), "limit": 1, "agent": "a", "targets": ["a", "b"],
                  "judges": ["a"], "bootstrap_rounds": 10}

        async def notebook_cell():
            return memegauge.run_arena(config, store=tmp_path / "s.db", models=models)

        result = asyncio.run(notebook_cell())
        with pytest.raises(InputError, match="meme set not found"):  # a bad config: one message
            memegauge.run_arena({**config, "memes": str(tmp_path / "nowhere.jsonl")}, store=tmp_path / "s.db",
                               models=models)
    assert result.status == "done" and result.calls > 0


def test_a_run_stores_its_roles_and_method_version_and_the_report_reads_them(tmp_path):
    """Issue 35: the run header holds role → models and the method's version, written by the run path;
    an older run (without them) reports its roles derived from its config, as before."""
    import sqlite3

    from helpers.runs import world
    from memegauge.methods import method
    from memegauge.report import build_report
    from memegauge.report.html import header_facts

    with start_server(latency_ms=0) as server:
        w = world(tmp_path, server.base_url)
        memegauge.run("adammeme", w.adam, store=str(w.store), models=str(w.models), name="adam-api")
    store = memegauge.open_store(w.store)
    header = build_report(store, "adam-api")["run"]
    assert header["roles"] == {"agent": ["agent"], "targets": ["gpt-x", "llava-x"], "judges": []}
    assert header["method_version"] == method("adammeme").version
    facts = dict(header_facts(header))
    assert facts["targets"] == "gpt-x, llava-x" and facts["method version"] == header["method_version"]
    store.close()
    db = sqlite3.connect(w.store)  # as a run made before runs stored them
    db.execute("UPDATE runs SET roles_json=NULL, method_version=NULL")
    db.commit()
    db.close()
    store = memegauge.open_store(w.store)
    old = build_report(store, "adam-api")["run"]
    assert "roles" not in old and "method_version" not in old
    assert dict(header_facts(old))["targets"] == "gpt-x, llava-x" and "method version" not in dict(header_facts(old))
