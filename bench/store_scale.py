"""A large run through the engine and store, then its full replay: peak memory, calls/s, report time.

    python bench/store_scale.py [--calls 200000] [--concurrency 64] [--store PATH]

The test server (latency 0, its own process) answers N distinct rating calls (`memegauge.testing.workload`,
the same path the methods use: engine → openai backend → store). Each phase runs in a fresh Python
process so its peak RSS is its own: the run, then the same command again (a full replay from the
store, 0 calls), then the report header of the run (call accounting in SQL). Prints one line per phase
and ends with `ratio: <replay calls/s ÷ run calls/s>`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from memegauge.testing.server import spawn_server

PHASE = """
import asyncio, json, resource, sys, time
from memegauge.engine import Store
from memegauge.testing.workload import probe_registry, run_workload
store_path, url, calls, concurrency, phase = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
started = time.perf_counter()
store = Store(store_path)
if phase == "report":
    from memegauge.report import run_header
    header = run_header(store, "probe")
    out = {"calls": header.calls, "failed": header.failed_calls}
else:
    result = asyncio.run(run_workload(store, probe_registry(url, concurrency), calls, "probe"))
    out = {"made": result["calls_made"], "failed": sum(v is None for v in result["values"])}
out.update(wall_s=time.perf_counter() - started, peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def phase(store: Path, url: str, calls: int, concurrency: int, name: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PHASE, str(store), url, str(calls), str(concurrency), name],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{name} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--store", type=Path, default=None, help="default: a temporary file")
    args = parser.parse_args()
    server, url = spawn_server(0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = args.store or Path(tmp) / "scale.db"
            run = phase(store, url, args.calls, args.concurrency, "run")
            replay = phase(store, url, args.calls, args.concurrency, "replay")
            report = phase(store, url, args.calls, args.concurrency, "report")
    finally:
        server.terminate()
    run_rate, replay_rate = args.calls / run["wall_s"], args.calls / replay["wall_s"]
    print(f"run:    {args.calls} calls, {run['made']} made, {run['failed']} failed, {run['wall_s']:.1f} s "
          f"= {run_rate:,.0f} calls/s, peak RSS {run['peak_rss_mb']:,.0f} MB")
    print(f"replay: {replay['made']} calls made, {replay['wall_s']:.1f} s = {replay_rate:,.0f} calls/s, "
          f"peak RSS {replay['peak_rss_mb']:,.0f} MB")
    print(f"report: header of {report['calls']} calls in {report['wall_s']:.2f} s, "
          f"peak RSS {report['peak_rss_mb']:,.0f} MB")
    print(f"ratio: {replay_rate / run_rate:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
