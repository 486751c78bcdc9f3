"""Time MemeArena's part of `memegauge demo` alone, with the demo's model, on a fresh store.

    python bench/arena_demo.py [--model embedded] [--timeout-s S] [--out DIR]

Runs `memegauge.arena.demo.demo` exactly as `memegauge demo` does (the bundled sample memes, the
model playing three personas, two of them judges) against a new store in DIR (a temporary folder by
default), so nothing comes from the cache. Prints the wall time, the process's CPU time and the load
average next to it (on a shared machine the wall time grows with the other processes' load), the calls
and tokens per stage, and the ranking rows; the part's budget inside the whole demo (< 10 min on 2
cores for three methods) is about 3 minutes. Loading the embedded model (~6 s) is included, as it is
in the demo. `--timeout-s` raises the model's per-call timeout (default: the registry's) so that a run
on a heavily loaded machine completes instead of timing out; the token totals then still measure the
work, and the last line converts them to time at the given uncontended speeds (`--prefill-tps`,
`--decode-tps`: this machine's embedded model does about 70 and 12 tokens/s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memegauge.arena.demo import demo  # noqa: E402
from memegauge.cli import Settings  # noqa: E402
from memegauge.config import load_registry  # noqa: E402
from memegauge.memes import load_memes  # noqa: E402
from memegauge.samples import sample_memes_path  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--timeout-s", type=float, default=None)
    parser.add_argument("--prefill-tps", type=float, default=70.0)
    parser.add_argument("--decode-tps", type=float, default=12.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="arena-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    store_path = folder / "store.db"
    if store_path.exists():
        raise SystemExit(f"{store_path} exists: give an empty --out so nothing replays from the cache")
    registry = load_registry(None)
    if args.timeout_s:
        registry.add(registry.get(args.model).model_copy(update={"timeout_s": args.timeout_s}))
    settings = Settings(store_path=store_path, models_path=None, quiet=True, _registry=registry)
    memes = load_memes(sample_memes_path())
    start = time.perf_counter()
    name = asyncio.run(demo(settings, memes, args.model, folder))
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    store = settings.store()
    summary = store.run_summary(name)
    calls = store.run_calls(store.run_row(name)["id"])
    by_stage = Counter(c.stage for c in calls)
    tokens, prompt, completion = Counter(), 0, 0
    for c in calls:
        tokens[c.stage] += c.usage.total
        prompt += c.usage.prompt_tokens
        completion += c.usage.completion_tokens
    report = json.loads((folder / "arena-report.json").read_text())
    print(f"MemeArena demo part ({args.model}): {seconds:.1f} s wall, {summary['calls']} calls "
          f"({summary['failed_calls']} failed), {summary['tokens']} tokens")
    print(f"  CPU time {usage.ru_utime + usage.ru_stime:.1f} s on {os.cpu_count()} cores; "
          f"load average now {os.getloadavg()[0]:.1f}")
    for stage in sorted(by_stage):
        print(f"  {stage:<16} {by_stage[stage]:3d} calls {tokens[stage]:6d} tokens")
    print(f"  counts: {report['counts']}; failures: {report['failures']}")
    for row in report["ranking"]:
        print(f"  {row['model']:<24} BT {row['bt']:7.1f} Elo {row['elo']:7.1f} battles {row['battles']}")
    sequential = prompt / args.prefill_tps + completion / args.decode_tps
    print(f"  {prompt} prompt + {completion} completion tokens = {sequential:.0f} s at "
          f"{args.prefill_tps:g}/{args.decode_tps:g} tokens/s one call at a time (no batching)")
    print(f"folder: {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
