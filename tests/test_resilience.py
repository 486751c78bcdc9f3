"""The engine against a real HTTP server: injected faults, kill -9 resume, replicas, key hygiene."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.net import free_port
from memegauge.engine import Store
from memegauge.testing.server import start_server
from memegauge.testing.workload import probe_registry, run_workload

SENTINEL = "sk-memegauge-SENTINEL-7f3a9c"


def workload(store_path: Path, base_url, calls: int, run: str = "probe", **overrides):
    store = Store(store_path)
    try:
        return asyncio.run(run_workload(store, probe_registry(base_url, 32, **overrides), calls, run))
    finally:
        store.close()


@pytest.fixture(scope="module")
def clean_values(tmp_path_factory):
    with start_server(latency_ms=1, seed=3) as server:
        result = workload(tmp_path_factory.mktemp("clean") / "s.db", server.base_url, 500)
    assert all(v is not None for v in result["values"])
    return result["values"]


@pytest.mark.slow
def test_twenty_percent_faults_all_recorded_none_parsed(tmp_path, clean_values):
    with start_server(latency_ms=1, fault_rate=0.2, seed=3, hang_s=5) as server:
        result = workload(tmp_path / "s.db", server.base_url, 500, timeout_s=2.0)
        faults = server.stats["faults"]
    store = Store(tmp_path / "s.db")
    attempts = store.attempt_counts(store.run_row("probe")["id"])
    assert sum(faults.values()) >= 60, faults  # ~20% of the ~600 requests
    assert attempts.get("rate_limit", 0) == faults["429"]
    assert attempts.get("server", 0) == faults["500"]
    assert attempts.get("timeout", 0) == faults["timeout"]
    # a cut JSON answer (finish_reason "length") is classed truncated, other garbage unparseable
    assert attempts.get("unparseable", 0) + attempts.get("truncated", 0) == faults["truncated"] + faults["garbage"]
    # no fault ever became a value: every value equals the fault-free run's
    for value, clean, error in zip(result["values"], clean_values, result["error_classes"], strict=True):
        assert value == clean if error is None else value is None
    assert sum(v is not None for v in result["values"]) >= 495


def _child(store: Path, url: str, out: Path | None = None) -> subprocess.Popen:
    args = [sys.executable, "-m", "memegauge.testing.workload", "--store", str(store),
            "--base-url", url, "--calls", "500", "--concurrency", "8"]
    if out:
        args += ["--out", str(out)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stored_keys(store_path: Path) -> set[str]:
    store = Store(store_path)
    try:
        return {k for (k,) in store.db.execute("SELECT key FROM calls")}
    finally:
        store.close()


@pytest.mark.slow
def test_kill9_at_random_points_then_resume_equals_uninterrupted(tmp_path, clean_values):
    store_path, out = tmp_path / "s.db", tmp_path / "out.json"
    rng = random.Random(11)
    targets = sorted(rng.sample(range(20, 480), 5))  # kill once this many calls are stored …
    with start_server(latency_ms=40, seed=3) as server:
        before = 0
        for target in targets:
            child = _child(store_path, server.base_url)
            # at least one new call, so each child has started its execution before it dies
            while len(_stored_keys(store_path)) < max(target, before + 1):
                if child.poll() is not None:
                    pytest.fail(f"child ended before the kill: {child.stderr.read().decode()}")
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.05))  # … plus a random instant, mid-call or mid-commit
            child.send_signal(signal.SIGKILL)
            child.wait()
            stored = _stored_keys(store_path)
            assert len(stored) >= max(before, target)  # nothing finished is ever lost
            before = len(stored)
        requests_before_final = server.stats["requests"]
        final = _child(store_path, server.base_url, out)
        assert final.wait(timeout=120) == 0, final.stderr.read().decode()
        requests_final = server.stats["requests"] - requests_before_final
    result = json.loads(out.read_text())
    assert 0 < before < 500
    assert result["calls_made"] == 500 - before == requests_final  # no finished call repeated
    assert result["values"] == clean_values
    store = Store(store_path)
    assert store.db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == 500
    assert store.db.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM run_calls").fetchone() == (500, 500)
    assert store.run_summary("probe")["executions"] == 6
    assert len(store.records(store.run_row("probe")["id"], "probe")) == 500


def test_replicas_share_load_and_fail_over(tmp_path, clean_values):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with start_server(latency_ms=20, seed=3) as a, start_server(latency_ms=20, seed=3) as b:
        result = workload(tmp_path / "s.db", [a.base_url, b.base_url, dead], 200)
        share_a, share_b = a.stats["requests"], b.stats["requests"]
    assert result["values"] == clean_values[:200]
    assert share_a + share_b == 200 and min(share_a, share_b) >= 60


def test_api_key_never_stored_logged_or_raised(tmp_path, monkeypatch, capfd):
    """A server that echoes the Authorization header back in its error messages."""
    from aiohttp import web

    async def echo(request):
        auth = request.headers.get("Authorization", "")
        return web.json_response({"error": {"message": f"bad key {auth}", "type": "invalid"}},
                                 status=401)

    async def main():
        from helpers.net import chat_server

        async with chat_server(echo) as port:
            store = Store(tmp_path / "s.db")
            try:
                return await run_workload(store, probe_registry(f"http://127.0.0.1:{port}/v1", 4), 5,
                                          "keys")
            finally:
                store.close()

    monkeypatch.setenv("MEMEGAUGE_PROBE_KEY", SENTINEL)
    result = asyncio.run(main())
    assert result["error_classes"] == ["bad_request"] * 5
    store_bytes = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SENTINEL.encode() not in store_bytes
    store = Store(tmp_path / "s.db")
    errors = [c.error for c in store.run_calls(store.run_row("keys")["id"])]
    assert errors and all("***" in e and SENTINEL not in e for e in errors)
    captured = capfd.readouterr()
    assert SENTINEL not in captured.out + captured.err
    assert os.environ["MEMEGAUGE_PROBE_KEY"] == SENTINEL
