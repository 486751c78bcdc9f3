"""Check every method's report against the ground truth of the test server's realistic style.

    .venv/bin/python scripts/realistic_check.py [--shared ../shared/data] [--limit N] [--only memeqa]

MemeQA runs on the real dev split (both versions, SemEval images: 182 of them JPEGs named .png) when
`--shared` has it; MemeArena and AdamMeme on a few of those memes. The server answers the way real chat
models do (`memegauge.testing.realistic`) and records what each reply means; this script looks each
stored answer up there and prints, per method, the report's figure beside the ground truth's. It exits
1 if any figure differs. Offline; binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.pipeline import run_adammeme
from memegauge.arena.config import ArenaConfig
from memegauge.arena.pipeline import run_arena
from memegauge.config import load_registry
from memegauge.engine import Store
from memegauge.memeqa.runs import eval_run
from memegauge.memeqa.config import EvalConfig
from memegauge.report import build_report
from memegauge.testing.realistic import REFUSAL
from memegauge.testing.server import start_server

MISMATCHES: list[str] = []


def check(label: str, report_value, truth_value) -> None:
    same = report_value == truth_value
    print(f"  {label:<44} report {report_value!s:<24} truth {truth_value!s:<24} {'ok' if same else 'DIFFERS'}")
    if not same:
        MISMATCHES.append(label)


def truth_of(truths: dict, text: str | None) -> dict | None:
    return None if text is None else truths.get(hashlib.sha256(text.encode()).hexdigest())


def registry(tmp: Path, url: str, names: list[str]):
    path = tmp / "models.yaml"
    path.write_text("".join(f"{n}: {{backend: openai, model: {n}, base_url: {url}, max_concurrency: 16}}\n"
                            for n in names))
    return load_registry(path)


def memeqa(tmp: Path, shared: Path, limit: int | None) -> None:
    for version in ("none-minus", "none-plus"):
        with start_server(seed=11, style="realistic") as server:
            store = Store(tmp / f"qa-{version}.db")
            config = EvalConfig(data=shared / "memeqa", images=shared / "semeval2021-task6" / "images",
                                texts=shared / "semeval2021-task6" / "memes.jsonl", version=version, split="dev",
                                model="vlm", limit=limit)
            name = asyncio.run(eval_run(store, registry(tmp, server.base_url, ["vlm"]), config, progress=False))
            stats = server.stats
        report = build_report(store, name)
        details = report["details"]
        truths = [truth_of(stats["truths"], d["raw"]) for d in details]
        readable = [t for t in truths if t and t["readable"]]
        correct = Counter()
        for d, t in zip(details, truths, strict=True):
            correct[d["type"]] += bool(t and t["readable"] and t["letters"] == d["gold"])
        per_type = Counter(d["type"] for d in details)
        print(f"MemeQA {version}: {len(details)} questions, {len(readable)} readable replies, "
              f"{len({(d['raw'] or ' ').split()[0] for d in details})} distinct opening words")
        check("predictions read as the server meant",
              sum(d["prediction"] == t["letters"] for d, t in zip(details, truths, strict=True) if t and t["readable"]),
              len(readable))
        check("readable replies that failed to parse",
              sum(bool(d["parse_error"]) for d, t in zip(details, truths, strict=True) if t and t["readable"]), 0)
        check("parse failure rate (= unreadable replies)", round(report["parse_failure_rate"], 6),
              round(1 - len(readable) / len(details), 6))
        check("accuracy (micro) = share of gold answers given", round(report["micro"], 6),
              round(sum(correct.values()) / len(details), 6))
        check("macro accuracy", round(report["macro"], 6),
              round(sum(correct[t] / n for t, n in per_type.items()) / len(per_type), 6))
        check("calls with the picture", report["run"]["images_by_model"]["vlm"]["with_image"], len(details))
        check("server requests carrying an image", stats["requests_with_image"]["vlm"], stats["models"]["vlm"])
        check("images declared with another MIME type", stats["image_mime_mismatch"], 0)


def world(tmp: Path, shared: Path, n: int) -> Path:
    lines = (shared / "semeval2021-task6" / "memes.jsonl").read_text().splitlines()[:n]
    images = shared / "semeval2021-task6" / "images"
    out = tmp / "memes.jsonl"
    out.write_text("".join(json.dumps({"id": json.loads(line)["image"].rsplit(".", 1)[0],
                                       "image": str(images / json.loads(line)["image"]),
                                       "text": json.loads(line)["text"]}) + "\n" for line in lines))
    return out


def arena(tmp: Path, shared: Path) -> None:
    memes = world(tmp, shared, 6)
    with start_server(seed=12, style="realistic") as server:
        reg = registry(tmp, server.base_url, ["agent", "gpt-x", "qwen-x", "llava-x", "step-x"])
        cfg = ArenaConfig(memes=memes, agent="agent", targets=["gpt-x", "qwen-x", "llava-x", "step-x"],
                          judges=["gpt-x", "qwen-x", "llava-x"], detection=False, bootstrap_rounds=100)
        store = Store(tmp / "arena.db")
        asyncio.run(run_arena(cfg, store, reg, "arena", progress=False))
        stats = server.stats
    report = build_report(store, "arena")
    judgments = store.records(store.run_row("arena")["id"], "judgment")
    truths = [truth_of(stats["truths"], j["text"]) for j in judgments]
    meant = Counter()
    read = Counter()
    for j, t in zip(judgments, truths, strict=True):
        meant["overall"] += 1
        read["overall"] += j["read"].get("overall") == t["overall"]
        for name, verdict in t["dimensions"].items():
            meant["dims"] += 1
            read["dims"] += j["read"].get(name) == verdict
    ties = Counter(t["overall"] for t in truths)
    print(f"MemeArena: {len(judgments)} judgments, {meant['dims']} dimension verdicts meant")
    check("overall verdicts read as meant", read["overall"], meant["overall"])
    check("dimension verdicts read as meant", read["dims"], meant["dims"])
    check("dimension verdicts counted in the report",
          sum(v["read"] for d, v in report["counts"]["verdicts_read"].items() if d != "overall"), meant["dims"])
    check("plain ties", report["counts"]["overall_ties"]["plain"], ties["Tie"])
    check("ties (both strong) + (both weak)", report["counts"]["overall_ties"]["both_strong"]
          + report["counts"]["overall_ties"]["both_weak"], ties["Tie (both strong)"] + ties["Tie (both weak)"])
    check("battles judged", report["counts"]["battles_judged"], report["counts"]["battles"])
    check("failed calls (every reply was readable)", report["run"]["failed_calls"], 0)
    for model in ("gpt-x", "qwen-x", "llava-x", "step-x"):
        images = report["run"]["images_by_model"][model]
        check(f"{model}: calls with the picture", images["with_image"], images["calls"])


def adammeme(tmp: Path, shared: Path) -> None:
    memes = world(tmp, shared, 24)
    with start_server(seed=13, style="realistic", refusers=["tgt-shy"]) as server:
        reg = registry(tmp, server.base_url, ["agent", "tgt-shy", "tgt-bold"])
        cfg = AdamConfig(memes=memes, agent="agent", targets=["tgt-shy", "tgt-bold"], erase=False,
                         seeds_per_category=3, max_steps=3, warn_below=0)
        store = Store(tmp / "adam.db")
        asyncio.run(run_adammeme(cfg, store, reg, "adam", progress=False))
        stats = server.stats
    report = build_report(store, "adam")
    rid = store.run_row("adam")["id"]
    rows = [r for r in store.records(rid, "score") + store.records(rid, "step") if r.get("comparison")]
    print(f"AdamMeme: {len(rows)} scored samples and steps, "
          f"{sum(r['answer'] == REFUSAL for r in rows)} of them target refusals")
    check("failed calls (every reply was readable)", report["run"]["failed_calls"], 0)
    check("Judge answers read (of the mining proposals)", sum(p["judge"] is not None and p["judge"]["ok"]
          for r in store.records(rid, "mining") for p in r["proposals"] if p["judge"]),
          sum(p["judge"] is not None for r in store.records(rid, "mining") for p in r["proposals"]))
    for target in ("tgt-shy", "tgt-bold"):
        mine = [r for r in rows if r["target"] == target]
        ratings = [truth_of(stats["truths"], r["comparison"])["rating"] for r in mine]
        overall = report["targets"][target]["overall"]
        check(f"{target}: n", overall["n"], len(ratings))
        check(f"{target}: refusals scored (counted in n)", sum(r["answer"] == REFUSAL and r["score"] is not None
                                                              for r in mine), sum(r["answer"] == REFUSAL for r in mine))
        check(f"{target}: FR", round(overall["failure_rate"], 6), round(sum(s < 4 for s in ratings) / len(ratings), 6))
        check(f"{target}: average score", round(overall["avg_score"], 6), round(sum(ratings) / len(ratings), 6))
        check(f"{target}: seeds failed", report["targets"][target]["seeds"]["failed"], [])
        check(f"{target}: requests carrying an image", stats["requests_with_image"][target], stats["models"][target])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--limit", type=int, default=None, help="MemeQA questions per version")
    parser.add_argument("--only", choices=("memeqa", "arena", "adammeme"), help="check one method only")
    args = parser.parse_args()
    if not (args.shared / "memeqa").is_dir():
        print(f"no shared data at {args.shared}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "memeqa"):
            memeqa(Path(tmp), args.shared, args.limit)
        if args.only in (None, "arena"):
            arena(Path(tmp), args.shared)
        if args.only in (None, "adammeme"):
            adammeme(Path(tmp), args.shared)
    print("all figures equal the ground truth" if not MISMATCHES else f"DIFFERS: {MISMATCHES}")
    return 1 if MISMATCHES else 0


if __name__ == "__main__":
    sys.exit(main())
