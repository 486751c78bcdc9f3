"""Recovery after a rate-limit storm (issue 47): a 200-call run after a 20-second 429 storm, against the same
run with no storm, side by side in one process.

    python bench/rate_limit_storm.py [--calls 200] [--storm-s 20] [--latency-ms 100]

The project's test server (in this process, on 127.0.0.1) answers every request with 429 (`Retry-After:
0.5`) for `--storm-s` seconds while a run sends calls into it (each refused call is recorded failed: the
storm's run is not the one measured); the `auto` limit falls to 1. The storm then ends and the measured
run of `--calls` calls starts on the same model (its limit is shared by every run of the process, as
in `memegauge eval` followed by another). The baseline is the same run on a second server that never saw
a storm. Printed: both wall times, their ratio, the limit each ended at, and failed calls (0 expected).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from memegauge.engine import Store  # noqa: E402
from memegauge.testing.server import start_server  # noqa: E402
from memegauge.testing.workload import probe_registry, run_workload  # noqa: E402


async def storm(store: Store, server, seconds: float) -> int:
    """Send calls into a server answering 429 for `seconds`; the number of 429s it answered."""
    server.config.fault_rate, server.config.faults, server.config.retry_after = 1.0, ("429",), 0.5
    registry = probe_registry(server.base_url, "auto", max_retries=0)
    ends = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < ends:
        await run_workload(store, registry, 8, f"storm-{rounds}")
        rounds += 1
        await asyncio.sleep(0.5)
    server.config.fault_rate = 0.0
    return server.stats["faults"]["429"]


async def measured(store: Store, server, calls: int, name: str) -> dict:
    return await run_workload(store, probe_registry(server.base_url, "auto"), calls, name)


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder, start_server(latency_ms=args.latency_ms) as stormy, \
            start_server(latency_ms=args.latency_ms) as calm:
        refused = await storm(Store(Path(folder) / "storm"), stormy, args.storm_s)
        # each measured run on a store of its own: no answer comes from the cache
        after = await measured(Store(Path(folder) / "after"), stormy, args.calls, "after-storm")
        baseline = await measured(Store(Path(folder) / "calm"), calm, args.calls, "no-storm")
    for label, result in (("after a storm", after), ("no storm", baseline)):
        failed = sum(1 for e in result["error_classes"] if e)
        print(f"{label:>14}: {args.calls} calls in {result['wall_s']:.2f} s, limit at the end "
              f"{result['concurrency']}, {failed} failed")
    print(f"storm: {args.storm_s:g} s, {refused} 429s answered")
    print(f"after storm / no storm: {after['wall_s'] / baseline['wall_s']:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--storm-s", type=float, default=20.0)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    asyncio.run(main(parser.parse_args()))
