"""Crash consistency (issue 29): a `qa eval` run against the test server, SIGKILLed again and again at
seeded random moments, half of them inside a store transaction (between BEGIN IMMEDIATE and COMMIT,
the COMMIT itself included), the others at a random instant. After every kill the store passes
`PRAGMA integrity_check`; every rerun takes the run over; the last one completes; its report's figures
are byte-identical to those of an uninterrupted run; and the calls asked twice are no more than the
calls in flight at the kills (sent, not yet stored).

The report's figures are its JSON less the run header, the call latencies and the wall-clock timing:
those say when and how fast this particular execution ran, which a resumed run cannot equal.
"""

from __future__ import annotations

import io
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from memegauge.cli import main
from memegauge.testing.server import start_server

from helpers.memeqa_data import make_dataset

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI

VOLATILE = ("run", "latency", "timing")  # when and how fast an execution ran, not what it found

# The child: `memegauge` with the store's connection counting the statements it executes inside a
# transaction; it SIGKILLs itself just before the Nth (argv[1]; 0: never), so it dies mid-commit.
KILL_INSIDE_A_COMMIT = """
import os, runpy, signal, sys
from memegauge.engine.store import errors
limit, seen, inside = int(sys.argv[1]), [0], [False]
def guarded(method):
    def run(self, sql, *args):
        head = sql.lstrip()[:8].upper()
        if head.startswith("BEGIN"):
            inside[0] = True
        elif inside[0]:
            seen[0] += 1
            if seen[0] == limit:
                os.kill(os.getpid(), signal.SIGKILL)
            inside[0] = not head.startswith(("COMMIT", "ROLLBACK"))
        return method(self, sql, *args)
    return run
errors.GuardedConnection.execute = guarded(errors.GuardedConnection.execute)
errors.GuardedConnection.executemany = guarded(errors.GuardedConnection.executemany)
sys.argv = ["memegauge", *sys.argv[2:]]
runpy.run_module("memegauge.cli", run_name="__main__")
"""


def _args(root: Path, data: Path, images: Path) -> list[str]:
    return ["--store", str(root / "s.db"), "--models", str(root / "models.yaml"), "--quiet", "qa", "eval",
            "--data", str(data), "--images", str(images), "--version", "none-minus", "--split", "dev",
            "--model", "vlm", "--run", "r"]


def _figures(root: Path) -> bytes:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["--store", str(root / "s.db"), "report", "r", "--format", "json"]) == 0
    report = {k: v for k, v in json.loads(out.getvalue()).items() if k not in VOLATILE}
    return json.dumps(report, sort_keys=True).encode()


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        try:
            return con.execute("SELECT COUNT(*) FROM run_calls").fetchone()[0]
        except sqlite3.OperationalError:  # killed before the schema was written
            return 0


def _integrity(db: Path) -> str:
    if not db.exists():
        return "ok"
    with sqlite3.connect(db) as con:
        return con.execute("PRAGMA integrity_check").fetchone()[0]


def _layout(root: Path, url: str) -> tuple[Path, Path]:
    data, images = make_dataset(root, memes=("m1", "m2", "m3", "m4"))  # 44 questions
    (root / "models.yaml").write_text(f"vlm: {{backend: openai, model: vlm, base_url: {url}, vision: false, "
                                      "max_concurrency: 4}\n")
    return data, images


def test_sigkill_at_random_moments_and_inside_commits_resumes_to_the_same_report(tmp_path):
    rng = random.Random(29)
    kills, inside_commits, in_flight = 0, 0, 0
    with start_server(latency_ms=40, seed=5) as server:
        clean = tmp_path / "clean"
        clean.mkdir()
        assert main(_args(clean, *_layout(clean, server.base_url))) == 0
        expected = _figures(clean)
        root = tmp_path / "killed"
        root.mkdir()
        data, images = _layout(root, server.base_url)
        requests0 = server.stats["requests"]
        for attempt in range(6):
            inside = attempt % 2 == 0
            limit = rng.randint(1, 40) if inside else 0
            before_requests, before_stored = server.stats["requests"], _stored(root / "s.db")
            child = subprocess.Popen([sys.executable, "-c", KILL_INSIDE_A_COMMIT, str(limit),
                                      *_args(root, data, images)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
            if not inside:
                while _stored(root / "s.db") == before_stored and child.poll() is None:
                    time.sleep(0.005)  # calling has begun …
                time.sleep(rng.uniform(0, 0.3))  # … then a random instant
                child.send_signal(signal.SIGKILL)
            code = child.wait(timeout=120)
            assert code in (-signal.SIGKILL, 0), child.stderr.read().decode()
            kills += code == -signal.SIGKILL
            inside_commits += code == -signal.SIGKILL and inside
            time.sleep(0.1)  # the server has counted every request the child sent
            in_flight += (server.stats["requests"] - before_requests) - (_stored(root / "s.db") - before_stored)
            assert _integrity(root / "s.db") == "ok"
        assert main(_args(root, data, images)) == 0
        requests = server.stats["requests"] - requests0
    repeated = requests - _stored(root / "s.db")
    print(f"kills {kills} ({inside_commits} inside a store transaction), calls in flight at the kills "
          f"{in_flight}, calls repeated {repeated}, figures byte-identical {_figures(root) == expected}")
    assert kills >= 5 and inside_commits >= 2
    assert _stored(root / "s.db") == 44 and _integrity(root / "s.db") == "ok"
    assert repeated <= in_flight
    assert _figures(root) == expected
