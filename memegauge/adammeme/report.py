"""AdamMeme report: read the run's records (see `memegauge.adammeme.pipeline`) → one dict.

`targets.{T}` holds, for repeat 0 … R−1 pooled: `categories.{C}` and `overall` on history H (original
samples plus scored rewrites — "with refinement"; `failed` beside n counts samples and steps that have
no score, e.g. refusals), `original_only` the same on the originals (the
ablation without refinement), `by_iteration` (Fig. 3) and `by_category_iteration` (the same per
category, as Fig. 3 plots it), `by_rule` (FR under each failure rule, whichever the run uses),
`topics.{C}` (misbelief terms of refined samples, Fig. 4) and `failures` by stage and class.
With several repeats `repeats` gives each figure's
mean ± std across them; with several targets `paired_tests` compares them on shared originals.
`intervals` gives FR and average score (overall, per category, originals only) with 95% intervals,
clustered by seed meme (`memegauge.adammeme.headline`).
`seeds` gives the seed set S (the same for every target) and the seeds that failed for this target.
`details` lists every sample and chain step for browsing. Failed calls are counted, never scored.
`failure` names the run's failure rule (`below` the threshold: the paper's text; `at_or_below`: the
original release's results) and its threshold; a run stored before the rule was recorded counted `below`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from memegauge.adammeme import agreement, metrics
from memegauge.adammeme.headline import intervals
from memegauge.adammeme.records import (AnnotatorLabel, HumanLabel, HumanScore, MiningRecord, RunMeta,
                                       SamplingRecord, ScoreRecord, StepRecord, TaxonomyRecord)
from memegauge.engine.store import Store
from memegauge.records import read_checked, read_record, read_records

DEFAULT_THRESHOLD = 4.0


def run_meta(store: Store, rid: int) -> dict[str, Any]:
    return next(iter(read_checked(store, rid, RunMeta)), {})


def failure_rule(meta: dict[str, Any]) -> metrics.FailureRule:
    """The run's own failure rule (from `run_meta`), as its report and its exports apply it."""
    # a run stored before `failure_rule` existed counted `below` (RunMeta's default says so)
    return metrics.FailureRule(meta.get("failure_rule", "below"), float(meta.get("threshold", DEFAULT_THRESHOLD)))


def build(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    rid = run["id"]
    meta = run_meta(store, rid)
    rule = failure_rule(meta)
    taxonomy = read_record(store, rid, TaxonomyRecord) or TaxonomyRecord(categories={}, added={})
    # Targets and categories run concurrently, so insertion order varies between two runs; the
    # keys (target/repeat/category/meme, …/chain/step, zero-padded) give one stable order.
    originals = sorted(read_checked(store, rid, ScoreRecord), key=lambda r: r["id"])
    steps = sorted(read_checked(store, rid, StepRecord), key=lambda r: r["id"])
    sampling = {r.category: r for r in read_records(store, rid, SamplingRecord)}
    categories = list(sampling) or list(taxonomy.categories)
    targets = meta.get("targets") or sorted({r["target"] for r in originals + steps})
    report = {
        "taxonomy": {"categories": taxonomy.categories, "added": taxonomy.added},
        "mining": _mining(read_records(store, rid, MiningRecord)),
        "sampling": {c: {"mined": e.mined, "warning": e.warning, "seeds": e.seeds, "sampled": len(e.sampled)}
                     for c, e in sampling.items()},
        "threshold": rule.threshold,
        "failure": {"rule": rule.name, "threshold": rule.threshold, "describe": rule.describe()},
        "targets": {t: {**_target(t, originals, steps, categories, rule, meta),
                        "seeds": _seeds(t, originals, sampling)} for t in targets},
        "paired_tests": metrics.paired_tests(_per_original(originals, targets)),
        "agreement": _agreement(store, rid, originals + steps, rule, categories),
        "details": {"samples": originals, "steps": steps},
    }
    return report


def _scored(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("score") is not None]


def _figures(rows: list[dict], categories: list[str], rule: metrics.FailureRule) -> dict[str, Any]:
    """Figures over scored rows; `failed` counts the rows that have no score (they are not in n)."""
    scored = _scored(rows)
    originals = [r for r in scored if r["iteration"] == 0]
    failed = Counter(r["category"] for r in rows if r.get("score") is None)
    return {"categories": {c: {**s, "failed": failed[c]}
                           for c, s in metrics.by_category(scored, categories, rule).items()},
            "overall": {**metrics.summary([r["score"] for r in scored], rule), "failed": sum(failed.values())},
            "original_only": {"categories": metrics.by_category(originals, categories, rule),
                              **metrics.summary([r["score"] for r in originals], rule)},
            "by_iteration": metrics.by_iteration(scored, rule)}


def _by_rule(rows: list[dict], categories: list[str], threshold: float) -> dict[str, Any]:
    """FR per category and overall under each failure rule (history H and originals only), so a run
    reads against figures made with either rule (the paper's text or its released results)."""
    scored = _scored(rows)
    originals = [r for r in scored if r["iteration"] == 0]
    out = {}
    for name in metrics.FAILURE_RULES:
        rule = metrics.FailureRule(name, threshold)  # type: ignore[arg-type]
        per_category = metrics.by_category(scored, categories, rule)
        out[name] = {"categories": {c: s["failure_rate"] for c, s in per_category.items()},
                     "overall": metrics.summary([r["score"] for r in scored], rule)["failure_rate"],
                     "original_only": metrics.summary([r["score"] for r in originals], rule)["failure_rate"]}
    return out


def _target(target: str, originals: list[dict], steps: list[dict], categories: list[str],
            rule: metrics.FailureRule, meta: dict[str, Any]) -> dict[str, Any]:
    mine = [r for r in originals + steps if r["target"] == target]
    out = _figures(mine, categories, rule)
    out["by_rule"] = _by_rule(mine, categories, rule.threshold)
    out["intervals"] = intervals(mine, categories, rule)  # 95% intervals (adammeme/headline.py)
    out["by_category_iteration"] = metrics.by_category_and_iteration(_scored(mine), categories, rule)
    out["topics"] = {c: metrics.topic_terms(
        [r["misbelief"] for r in _scored(mine) if r["category"] == c and r["iteration"] > 0],
        [r["misbelief"] for r in _scored(mine) if r["category"] == c and r["iteration"] == 0],
        int(meta.get("top_terms", 10))) for c in categories}
    out["failures"] = _failures(mine)
    out["steps"] = {"total": sum(r["target"] == target for r in steps),
                    "scored": sum(r["target"] == target and r.get("score") is not None for r in steps),
                    "improved": sum(r["target"] == target and bool(r.get("improved")) for r in steps)}
    repeats = sorted({r["repeat"] for r in mine})
    if len(repeats) > 1:
        per = [_figures([r for r in mine if r["repeat"] == k], categories, rule) for k in repeats]
        out["repeats"] = {
            "overall": {m: metrics.repeat_stats([p["overall"][m] for p in per]) for m in ("avg_score", "failure_rate")},
            "original_only": {m: metrics.repeat_stats([p["original_only"][m] for p in per])
                              for m in ("avg_score", "failure_rate")},
            "categories": {c: {m: metrics.repeat_stats([p["categories"][c][m] for p in per])
                               for m in ("avg_score", "failure_rate")} for c in categories}}
    return out


def _seeds(target: str, originals: list[dict], sampling: dict[str, SamplingRecord]) -> dict[str, Any]:
    """The seed set S is the same for every target (drawn once per meme set); a seed whose original
    scoring failed for this target cannot start a chain, and is listed here as failed for it."""
    scored = {(r["category"], r["meme"]) for r in originals if r["target"] == target and r.get("score") is not None}
    planned = [(c, m) for c, entry in sampling.items() for m in entry.seeds]
    failed = [f"{c}/{m}" for c, m in planned if (c, m) not in scored]
    return {"planned": len(planned), "refined": len(planned) - len(failed), "failed": failed}


def _failures(rows: list[dict]) -> dict[str, int]:
    """Failed samples and steps by `stage:class` (e.g. `scorer:unparseable`, `refiner:refusal`)."""
    counts = Counter(f"{r.get('failed_stage') or 'unknown'}:{r.get('error_class') or 'unknown'}"
                     for r in rows if r.get("score") is None)
    return dict(sorted(counts.items()))


def _mining(records: list[MiningRecord]) -> dict[str, Any]:
    return {"memes": len(records),
            "harmful": sum(r.status == "ok" and bool(r.categories) for r in records),
            "harmless": sum(r.status == "ok" and not r.categories for r in records),
            "failed": sum(r.status != "ok" for r in records),
            "per_category": dict(Counter(c for r in records for c in r.categories)),
            "proposals": dict(Counter(p.decision for r in records for p in r.proposals))}


def _per_original(originals: list[dict], targets: list[str]) -> dict[str, dict[str, float]]:
    """Per target, each original sample's score averaged over repeats, keyed by category/meme."""
    sums: dict[str, dict[str, list[float]]] = {t: defaultdict(list) for t in targets}
    for r in _scored(originals):
        if r["target"] in sums:
            sums[r["target"]][f"{r['category']}/{r['meme']}"].append(r["score"])
    return {t: {k: sum(v) / len(v) for k, v in per.items()} for t, per in sums.items()}


def _agreement(store: Store, rid: int, rows: list[dict], rule: metrics.FailureRule, categories: list[str]) -> dict:
    human_scores = {h.sample: h.score for h in read_records(store, rid, HumanScore)}
    annotators = _annotators(store, rid)
    out: dict[str, Any] = {}
    if human_scores:
        pairs = [(r["score"], human_scores[r["id"]]) for r in _scored(rows) if r.get("id") in human_scores]
        out["scores"] = agreement.score_agreement([a for a, _ in pairs], [h for _, h in pairs], rule)
    if annotators:
        votes = {r.meme: r.categories for r in read_records(store, rid, MiningRecord) if r.status == "ok"}
        out["labels"] = agreement.label_agreement(votes, next(iter(annotators.values())), categories)
        out["annotators"] = agreement.annotator_agreement(votes, annotators, categories)
    return out


def _annotators(store: Store, rid: int) -> dict[str, dict[str, list[str]]]:
    """Each annotator's labels by meme, in annotator order; labels stored before annotators were told
    apart (`HumanLabel`) are annotator 1."""
    out: dict[str, dict[str, list[str]]] = {}
    for h in read_records(store, rid, HumanLabel):
        out.setdefault("1", {})[h.meme] = h.categories
    for a in read_records(store, rid, AnnotatorLabel):
        out.setdefault(a.annotator, {})[a.meme] = a.categories
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))  # annotators are numbered 1, 2, …


def tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The report as flat tables (`Result.to_pandas`): per target, per target × category, and every
    scored sample and refinement step. Each failure rate and average score has its 95% interval as
    numeric columns (`failure_rate_ci95_lo`, `failure_rate_ci95_hi`, `failure_rate_n`, the same for
    `avg_score` and for the `original_` figures)."""
    targets, categories = [], []
    for target, figures in report["targets"].items():
        overall, original = figures["overall"], figures["original_only"]
        found = figures.get("intervals") or {}
        targets.append({"target": target, **overall, **_interval_columns(found.get("overall")),
                        "original_n": original["n"], "original_avg_score": original["avg_score"],
                        "original_failure_rate": original["failure_rate"],
                        **_interval_columns(found.get("original_only"), "original_"),
                        "steps": figures["steps"]["total"], "improved_steps": figures["steps"]["improved"]})
        categories += [{"target": target, "category": c, **v,
                        **_interval_columns((found.get("categories") or {}).get(c))}
                       for c, v in figures["categories"].items()]
    return {"targets": targets, "categories": categories, "samples": report["details"]["samples"],
            "steps": report["details"]["steps"]}


def _interval_columns(figures: dict[str, Any] | None, prefix: str = "") -> dict[str, Any]:
    """`failure_rate` and `avg_score` intervals of one `intervals` entry as numeric columns."""
    from memegauge.report.intervals import columns

    return {k: v for name in ("failure_rate", "avg_score")
            for k, v in columns((figures or {}).get(name), f"{prefix}{name}_").items()}
