"""Engine throughput against the local test server, side by side with the backend-bound ideal.

    python bench/engine_throughput.py [--calls 2000] [--concurrency 64] [--latency-ms 200 1000]

The server runs in its own process (its CPU is not ours). Ideal = what a client with zero overhead
achieves against a server of fixed latency: ceil(calls / concurrency) waves of one latency each. The engine's own
CPU cost per call is measured on a null backend (instant answers), so it excludes the HTTP client;
the total client CPU per call (engine + openai/httpx) is printed beside it.
One block per server latency, each ending `ratio: <achieved throughput / ideal throughput>`: the
client's per-call CPU is a fixed cost, so the ratio rises with the latency (real LLM calls take
seconds; 200 ms is a harsh case where, on 2 cores, client and server compete for the CPU).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from pathlib import Path

from memegauge.engine import Store
from memegauge.engine.core import Engine
from memegauge.testing.server import spawn_server
from memegauge.testing.workload import probe_registry, probe_request, run_workload
from memegauge.types import ChatResult, Usage


class NullBackend:
    """Answers instantly: what is left of a call's cost is the engine's (cache, gate, store)."""

    vision = False

    async def complete(self, request):
        return ChatResult(text="Clear enough. Rating: [[7]]", usage=Usage(prompt_tokens=20,
                                                                          completion_tokens=5))

    async def aclose(self):
        return None


async def engine_cpu_per_call(store: Store, calls: int, concurrency: int) -> float:
    engine = Engine(store, probe_registry("http://127.0.0.1:9/v1", concurrency))
    engine.backends["probe"] = NullBackend()
    cpu0 = time.process_time()
    await engine.chat_many([probe_request(10_000_000 + i) for i in range(calls)])
    return (time.process_time() - cpu0) / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[200.0, 1000.0])
    args = parser.parse_args()
    import memegauge.models.openai_backend  # noqa: F401  one-time import cost is not per-call cost

    for latency_ms in args.latency_ms:
        measure(args.calls, args.concurrency, latency_ms)


def measure(calls: int, concurrency: int, latency_ms: float) -> None:
    server, url = spawn_server(latency_ms)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "bench.db")
            registry = probe_registry(url, concurrency, timeout_s=30.0)
            result = asyncio.run(run_workload(store, registry, calls, "bench"))
            overhead = asyncio.run(engine_cpu_per_call(store, calls, concurrency))
    finally:
        server.terminate()
        server.wait()
    ideal_s = math.ceil(calls / concurrency) * latency_ms / 1000
    failed = sum(e is not None for e in result["error_classes"])
    print(f"calls: {calls}  concurrency: {concurrency}  latency: {latency_ms:g} ms  failed: {failed}")
    print(f"achieved: {calls / result['wall_s']:.1f} calls/s  ({result['wall_s']:.2f} s)")
    print(f"ideal (backend-bound): {calls / ideal_s:.1f} calls/s  ({ideal_s:.2f} s)")
    print(f"engine CPU per call (null backend): {overhead * 1000:.3f} ms")
    print(f"client CPU per call (engine + openai client + store): "
          f"{result['cpu_s'] / calls * 1000:.3f} ms")
    print(f"ratio: {ideal_s / result['wall_s']:.3f}", flush=True)


if __name__ == "__main__":
    main()
