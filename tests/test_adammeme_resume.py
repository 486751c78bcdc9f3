"""Kill a real `memegauge adam` process in the middle of refinement, rerun it, and get exactly the records
of an uninterrupted run, with no finished call made twice (local test server, deterministic answers)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.worlds import adam_resume_world
from memegauge.engine import Store
from memegauge.testing.server import start_server

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI

MEMEGAUGE = str(Path(sys.executable).with_name("memegauge"))
KINDS = ("taxonomy", "mining", "sampling", "misbelief", "reference", "score", "step")


@pytest.fixture(scope="module")
def server():
    with start_server(latency_ms=30, seed=3) as srv:
        yield srv


def command(store: Path, models: Path, config: Path) -> list[str]:
    return [MEMEGAUGE, "--store", str(store), "--models", str(models), "--quiet", "adam", "-c", str(config),
            "--run", "r"]


def step_count(store: Path) -> int:
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM records WHERE kind='step'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def records(store: Path) -> dict[str, dict]:
    s = Store(store)
    rid = s.run_row("r")["id"]
    return {kind: dict(s.record_items(rid, kind)) for kind in KINDS}


def test_killed_refinement_resumes_to_the_uninterrupted_result(tmp_path, server):
    models, config = adam_resume_world(tmp_path, server.base_url)
    straight, killed = tmp_path / "straight.db", tmp_path / "killed.db"
    subprocess.run(command(straight, models, config), check=True, cwd=tmp_path, timeout=300)

    process = subprocess.Popen(command(killed, models, config), cwd=tmp_path)
    deadline = time.monotonic() + 240
    while step_count(killed) < 1 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the run finished before it could be killed mid-refinement"
    process.kill()
    process.wait()
    partial = records(killed)["step"]
    assert 0 < len(partial) < len(records(straight)["step"])

    subprocess.run(command(killed, models, config), check=True, cwd=tmp_path, timeout=300)
    assert records(killed) == records(straight)
    summary_killed, summary_straight = Store(killed).run_summary("r"), Store(straight).run_summary("r")
    assert summary_killed["calls_made"] == summary_straight["calls_made"]  # nothing finished was redone
