"""Concurrency that finds the server's pace: fixed 8, the best fixed limit (a sweep) and `auto`, side by side.

    python bench/concurrency.py [--questions 1887] [--memes 60] [--step-ms 300] [--capacity 48]
        [--hard-cap 96] [--sweep 16,32,48,64,96] [--api-cap 10] [--parts qa,adam,capped]

Against the project's test server in batching mode (its own process): `--capacity` requests served at
once, each for `--step-ms` (one step); the rest wait for a slot, so latency grows beyond it; 429 for a
request arriving with `--hard-cap` in flight. Every setting runs on a fresh store (no answer cached):

* **qa**: `memegauge qa eval` (its own process, as a user runs it) of `--questions` MemeQA questions: the
  dev split of /work/shared/data/memeqa (`--data`) sampled with `--limit` (the test split is not
  shipped there; 1,887 is the test split's size), a text-only model (`vision: false`: the bench
  measures pacing, not image encoding). The wall time is the execution's, as `qa eval` prints it.
  Server-bound ideal: questions × step / capacity.
* **adam**: AdamMeme (`run_adammeme`, paper defaults, two targets, `--memes` synthetic memes), agent and
  targets on the one server. Server-bound ideal: the larger of all calls × step / capacity and the
  Algorithm 1 floor (its longest chain of calls that wait for each other × step,
  bench/adammeme_schedule.py).
* **capped**: `qa eval` with `auto` against a server with no batching that answers 429 to a request
  arriving with `--api-cap` in flight (an API's concurrency limit): the limit it settles at, the 429s it
  provoked, and 0 failed calls.

Each row: wall time, ratio to the ideal, 429s the server answered (retried by the engine), calls left
failed. The last lines: `auto / best fixed` per part.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from adammeme_schedule import TARGETS, algorithm1_floor  # noqa: E402

from memegauge.adammeme.config import AdamConfig  # noqa: E402
from memegauge.adammeme.pipeline import run_adammeme  # noqa: E402
from memegauge.models.spec import ModelRegistry, ModelSpec  # noqa: E402
from memegauge.engine import Store  # noqa: E402
from memegauge.testing.server import spawn_server  # noqa: E402
from memegauge.testing.synthetic_memes import write_meme_set  # noqa: E402

DATA = Path("/work/shared/data/memeqa")
IMAGES = Path("/work/shared/data/semeval2021-task6/images")


def server_stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as response:
        return json.loads(response.read())


def setting_yaml(limit: str) -> str:
    return "" if limit == "auto" else f", max_concurrency: {limit}"  # auto: the key absent (the default)


def qa_eval(url: str, limit: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """One `qa eval` in its own process on a fresh store: wall time, calls, failed calls, 429s."""
    folder = Path(tempfile.mkdtemp(dir=tmp))
    (folder / "models.yaml").write_text(f"m: {{backend: openai, model: m, base_url: {url}, vision: false, "
                                        f"timeout_s: 120{setting_yaml(limit)}}}\n")
    before = server_stats(url)["overloaded"]
    out = subprocess.run([str(Path(sys.executable).with_name("memegauge")), "--store", str(folder / "s.db"), "--models",
                          str(folder / "models.yaml"), "--progress-every", "5", "qa", "eval", "--data",
                          str(args.data), "--images", str(args.images), "--model", "m", "--limit",
                          str(args.questions)], capture_output=True, text=True, env=_env())
    text = out.stdout + out.stderr
    wall = re.search(r"([\d.]+) s wall", text)
    failed = re.search(r"failed calls (\d+)", text)
    if out.returncode or not wall or not failed:
        raise RuntimeError(f"qa eval ({limit}) failed:\n{text[-3000:]}")
    final = re.search(r"max_concurrency auto\): m (\d+)", text)
    return {"limit": limit, "wall_s": float(wall.group(1)), "failed": int(failed.group(1)),
            "429s": server_stats(url)["overloaded"] - before, "final": final.group(1) if final else ""}


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "COLUMNS": "200"}


def adam(url: str, limit: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """One AdamMeme run (two targets) on a fresh store, in this process."""
    fields = {} if limit == "auto" else {"max_concurrency": int(limit)}
    models = ModelRegistry({n: ModelSpec(name=n, backend="openai", model=n, base_url=url, timeout_s=120, **fields)
                            for n in ("agent", *TARGETS)})
    folder = Path(tempfile.mkdtemp(dir=tmp))
    cfg = AdamConfig(memes=write_meme_set(folder, args.memes, seed=0), agent="agent", targets=list(TARGETS),
                     seed=0, erase=False)
    store = Store(folder / "s.db")
    before = server_stats(url)["overloaded"]
    started = time.monotonic()
    asyncio.run(run_adammeme(cfg, store, models, "bench", progress=False))
    wall = time.monotonic() - started
    summary = store.run_summary("bench")
    floor, _ = algorithm1_floor(store)
    return {"limit": limit, "wall_s": wall, "failed": summary["failed_calls"], "calls": summary["calls_made"],
            "floor_calls": floor, "429s": server_stats(url)["overloaded"] - before, "final": ""}


def table(title: str, rows: list[dict[str, Any]], ideal: float) -> None:
    print(f"\n{title} (server-bound ideal {ideal:.1f} s)")
    print(f"{'max_concurrency':>16} {'wall s':>8} {'× ideal':>8} {'429s':>6} {'failed':>7} {'auto at end':>12}")
    for r in rows:
        print(f"{r['limit']:>16} {r['wall_s']:>8.1f} {r['wall_s'] / ideal:>8.2f} {r['429s']:>6} {r['failed']:>7} "
              f"{r['final']:>12}", flush=True)


def compare(part: str, rows: list[dict[str, Any]], ideal: float) -> None:
    fixed = [r for r in rows if r["limit"] != "auto"]
    best = min(fixed, key=lambda r: r["wall_s"])
    auto = next(r for r in rows if r["limit"] == "auto")
    eight = next(r for r in rows if r["limit"] == "8")
    print(f"{part}: fixed 8 {eight['wall_s'] / ideal:.2f}× ideal, best fixed ({best['limit']}) "
          f"{best['wall_s'] / ideal:.2f}×, auto {auto['wall_s'] / ideal:.2f}×; auto / best fixed "
          f"{auto['wall_s'] / best['wall_s']:.2f}, auto failed calls {auto['failed']}, auto 429s {auto['429s']}",
          flush=True)


def run_part(part: str, args: argparse.Namespace, tmp: Path) -> None:
    step = args.step_ms / 1000
    batching = ["--capacity", str(args.capacity), "--hard-cap", str(args.hard_cap)]
    server, url = spawn_server(args.step_ms, *(batching if part != "capped" else ["--hard-cap", str(args.api_cap)]))
    try:
        if part == "qa":
            rows = [qa_eval(url, limit, args, tmp) for limit in ["8", *args.sweep, "auto"]]
            ideal = args.questions * step / args.capacity
            table(f"qa eval, {args.questions} questions, batching server ({args.capacity} at {args.step_ms:g} ms "
                  f"a step, 429 at {args.hard_cap} in flight)", rows, ideal)
            compare("qa eval", rows, ideal)
        elif part == "adam":
            rows = [adam(url, limit, args, tmp) for limit in ["8", *args.sweep, "auto"]]
            calls, floor = rows[0]["calls"], rows[0]["floor_calls"]
            ideal = max(calls * step / args.capacity, floor * step)
            table(f"adam, {args.memes} memes, 2 targets, {calls} calls (Algorithm 1 floor {floor} calls), "
                  f"same server", rows, ideal)
            compare("adam", rows, ideal)
        else:
            rows = [qa_eval(url, limit, args, tmp) for limit in ("8", "auto")]
            ideal = args.questions * step / args.api_cap
            table(f"qa eval against an API limit: 429 at {args.api_cap} in flight, {args.step_ms:g} ms, no batching",
                  rows, ideal)
            stats = server_stats(url)
            print(f"capped: auto settled at {rows[-1]['final']} in flight (the server's limit: {args.api_cap}), "
                  f"{rows[-1]['429s']} 429s provoked, {rows[-1]['failed']} failed calls; the server saw at most "
                  f"{stats['max_in_flight']} in flight", flush=True)
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=1887)
    parser.add_argument("--memes", type=int, default=60)
    parser.add_argument("--step-ms", type=float, default=300.0)
    parser.add_argument("--capacity", type=int, default=48)
    parser.add_argument("--hard-cap", type=int, default=96)
    parser.add_argument("--api-cap", type=int, default=10)
    parser.add_argument("--sweep", type=lambda v: v.split(","), default="16,32,48,64,96")
    parser.add_argument("--parts", type=lambda v: v.split(","), default="qa,adam,capped")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--images", type=Path, default=IMAGES)
    args = parser.parse_args()
    if not (args.data / "none-minus" / "test.json").is_file():
        print(f"MemeQA test split not in {args.data}: {args.questions} questions sampled from the dev split")
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[:3]}")
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.parts:
            run_part(part, args, Path(tmp))
    with open("/proc/loadavg") as f:
        print(f"load average at end: {f.read().split()[:3]}")


if __name__ == "__main__":
    main()
