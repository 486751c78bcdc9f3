"""MemeArena end to end against the local test server: a full arena, then a sixth target added to it.

    python bench/arena_e2e.py [--memes 20] [--latency-ms 20] [--one-order] [--out DIR]

1. Writes a meme set of N memes (the bundled samples' pictures, cycled, with numbered texts) and a model
   registry of an agent plus six `backend: openai` models served by `memegauge.testing.server`.
2. `memegauge arena -c arena.yaml --both-orders` with 5 targets and 3 judges (`--one-order` drops
   `--both-orders`); checks the report JSON has every section DESIGN §3 asks for (the flip rate too
   with both orders, bt_ci on every row, NDCG for every judge); prints the ranking and the call counts.
3. `memegauge arena -c arena6.yaml --extend full` adds a sixth target; prints how many calls it made and
   what they were (its answers, one fusion round per task merging its answer, its detection labels, its
   new battles' judgments), next to what a fresh six-target arena costs, measured in the same run
   against a fresh store. Exits 1 when a section is missing or the extension made any other call.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memegauge.cli import main as cli  # noqa: E402
from memegauge.memes import load_memes  # noqa: E402
from memegauge.samples import sample_memes_path  # noqa: E402
from memegauge.testing.server import start_server  # noqa: E402

TARGETS = ["gpt-x", "gemini-x", "qwen-x", "llava-x", "pixtral-x"]
JUDGES = ["gpt-x", "gemini-x", "qwen-x"]
REQUIRED = ("run", "ranking", "dimensions", "judges", "bias", "counts", "failures", "detection",
            "agreement", "details")


def write_inputs(folder: Path, n: int, base_url: str) -> None:
    samples = load_memes(sample_memes_path())
    folder.joinpath("memes.jsonl").write_text("".join(
        json.dumps({"id": f"m{i:02d}", "image": str(samples[i % len(samples)].image),
                    "text": f"{samples[i % len(samples)].text} ({i})",
                    "caption": samples[i % len(samples)].caption,
                    "labels": samples[i % len(samples)].labels}) + "\n" for i in range(n)))
    folder.joinpath("models.yaml").write_text("".join(
        f"{m}: {{backend: openai, model: {m}, base_url: {base_url}, max_concurrency: 16}}\n"
        for m in ["agent", *TARGETS, "step-x"]))
    for name, targets in (("arena.yaml", TARGETS), ("arena6.yaml", [*TARGETS, "step-x"])):
        folder.joinpath(name).write_text(
            f"memes: memes.jsonl\nagent: agent\ntargets: [{', '.join(targets)}]\n"
            f"judges: [{', '.join(JUDGES)}]\nseed: 0\n")


def complete(report: dict, both_orders: bool) -> list[str]:
    """What the report lacks of DESIGN §3 (and of the flip rate when both orders were judged)."""
    missing = [k for k in REQUIRED if k not in report]
    if both_orders and "flip_rate" not in report:
        missing.append("flip_rate")
    rows = [*report.get("ranking", []), *(r for d in report.get("dimensions", {}).values() for r in d)]
    if not rows or any(r.get("bt_ci") is None for r in rows):
        missing.append("ranking rows with bt_ci")
    if any(j.get("ndcg") is None for j in report.get("judges", {}).values()) or not report.get("judges"):
        missing.append("judges' ndcg")
    return missing


def run(folder: Path, store: str, *args: str) -> float:
    start = time.perf_counter()
    code = cli(["--store", str(folder / store), "--models", str(folder / "models.yaml"), "--quiet", *args])
    if code:
        raise SystemExit(f"memegauge {' '.join(args)} exited {code}")
    return time.perf_counter() - start


def report(folder: Path, store: str, name: str) -> dict:
    out = folder / f"{name}.json"
    run(folder, store, "report", name, "--format", "json", "--out", str(out))
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memes", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=20)
    parser.add_argument("--one-order", action="store_true", help="judge each pair in one order only")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="arena-e2e-"))
    folder.mkdir(parents=True, exist_ok=True)
    with start_server(latency_ms=args.latency_ms, seed=1) as server:
        write_inputs(folder, args.memes, server.base_url)
        orders = ["--one-order"] if args.one_order else ["--both-orders"]
        full_s = run(folder, "store.db", "arena", "-c", str(folder / "arena.yaml"), "--run", "full", *orders)
        full_requests = server.stats["requests"]
        extend_s = run(folder, "store.db", "arena", "-c", str(folder / "arena6.yaml"), "--extend", "full",
                       *orders)
        extend_requests = server.stats["requests"] - full_requests
        fresh_s = run(folder, "fresh.db", "arena", "-c", str(folder / "arena6.yaml"), "--run", "fresh6",
                      *orders)
        fresh_requests = server.stats["requests"] - full_requests - extend_requests
    full, grown = report(folder, "store.db", "full"), report(folder, "store.db", "full+step-x")
    missing = complete(full, not args.one_order)
    print(f"folder: {folder}")
    print(f"full arena: {args.memes} memes, {len(TARGETS)} targets, {len(JUDGES)} judges: "
          f"{full['run']['calls']} calls in {full_s:.1f} s; report sections missing: {missing or 'none'}")
    print(f"  counts: {full['counts']}")
    print(f"  failures: {full['failures']}; judges NDCG: "
          f"{ {j: round(v['ndcg'], 3) for j, v in full['judges'].items()} }")
    if "flip_rate" in full:
        print(f"  flip rate (both orders): {full['flip_rate']}")
    for row in full["ranking"]:
        print(f"  {row['model']:<10} BT {row['bt']:7.1f} CI [{row['bt_ci'][0]:.0f}, {row['bt_ci'][1]:.0f}] "
              f"Elo {row['elo']:7.1f} win {row['win_rate']:.2f} battles {row['battles']}")
    print(f"add a 6th target (--extend): {grown['run']['calls_made']} new calls "
          f"({extend_requests} server requests) in {extend_s:.1f} s; "
          f"{grown['run']['cached_calls']} replayed from the cache")
    tasks = grown["counts"]["tasks"]
    labelled = grown["detection"]["step-x"]["n"] + grown["detection"]["step-x"]["failed"]
    rounds = grown["counts"]["fusion_rounds"] - full["counts"]["fusion_rounds"]
    judgments = grown["counts"]["judgments"] - full["counts"]["judgments"]
    print(f"  = {tasks} answers + {rounds} fusion rounds + {labelled} detection labels + {judgments} "
          f"judgments of {grown['counts']['battles'] - full['counts']['battles']} new battles")
    print(f"fresh 6-target arena for comparison: {fresh_requests} requests in {fresh_s:.1f} s")
    ok = not missing and grown["run"]["calls_made"] == tasks + rounds + labelled + judgments
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
