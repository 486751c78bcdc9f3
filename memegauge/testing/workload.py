"""A synthetic engine workload: N distinct rating calls through the full engine and store.

Used by the crash-resume and fault-injection tests and by `bench/engine_throughput.py`, so they
exercise exactly the path the methods use (engine → openai backend → store), nothing mocked.

    python -m memegauge.testing.workload --store S.db --base-url URL --calls 500 --run probe \
        [--concurrency 64|auto] [--out results.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.engine import Store, open_run
from memegauge.parse import parse_rating
from memegauge.records import Record
from memegauge.types import ChatRequest, Message, OutputKind, OutputSpec, SamplingParams


def probe_registry(base_url: str | list[str], concurrency: int | str, **overrides: Any) -> ModelRegistry:
    fields = {"backend": "openai", "model": "probe-model", "base_url": base_url,
              "max_concurrency": concurrency, "timeout_s": 5.0, "max_retries": 6,
              "backoff_s": 0.05, "backoff_max_s": 1.0, "api_key_env": "MEMEGAUGE_PROBE_KEY",
              **overrides}
    return ModelRegistry({"probe": ModelSpec(name="probe", **fields)})



class ProbeRecord(Record):
    """One probe item's rating (or the class of its failure)."""

    KIND = "probe"
    KEY = ("item",)

    item: int
    value: int | None
    error_class: str | None

def probe_request(index: int) -> ChatRequest:
    text = (f"Probe item {index}: judge how clear this sentence is. Explain briefly and end with "
            "Rating: [[n]] where n is 1 to 10.")
    return ChatRequest(model="probe", messages=[Message.user(text)], stage="probe",
                       params=SamplingParams(temperature=0, max_tokens=64),
                       output=OutputSpec(kind=OutputKind.RATING))


async def run_workload(store: Store, registry: ModelRegistry, calls: int, run_name: str
                       ) -> dict[str, Any]:
    """Make `calls` calls; store one `probe` record per item; return values and accounting."""
    started, cpu0 = time.perf_counter(), time.process_time()
    async with open_run(store, registry, name=run_name, method="probe",
                        config={"calls": calls}, progress=False) as (run, engine):
        outcomes = await engine.chat_many((probe_request(i) for i in range(calls)), parse=parse_rating)
        for start in range(0, calls, 10_000):  # records in chunks: a 200k-item list is not needed
            run.put_many([ProbeRecord(item=i, value=o.value,
                                      error_class=o.error_class.value if o.error_class else None)
                          for i, o in enumerate(outcomes[start:start + 10_000], start=start)])
        made, concurrency = engine.calls_made, engine.concurrency()
    return {"values": [o.value for o in outcomes], "concurrency": concurrency,
            "error_classes": [o.error_class.value if o.error_class else None for o in outcomes],
            "calls_made": made, "wall_s": time.perf_counter() - started,
            "cpu_s": time.process_time() - cpu0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--base-url", required=True, action="append")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--run", default="probe")
    parser.add_argument("--concurrency", type=lambda v: v if v == "auto" else int(v), default=32,
                        help="calls in flight, or auto")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    store = Store(args.store)
    result = asyncio.run(run_workload(store, probe_registry(args.base_url, args.concurrency),
                                      args.calls, args.run))
    text = json.dumps(result)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
