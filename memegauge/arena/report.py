"""MemeArena report, built from the run's records only (see `memegauge.arena.pipeline`).

Sections:

* ``ranking`` — rows {model, elo, bt, bt_ci: [lo, hi], win_rate, battles} from the panel's joint overall
  votes in the headline setting (the config's first `settings` entry), best BT first, with
  `win_rate_ci95` (clustered Wilson) and `bt_note` (why `bt_ci` is None: too few battles or memes;
  `memegauge.arena.headline`);
  ``dimensions.{D}`` — the same per judged dimension.
* ``style_control`` — the ranking with style covariates (`memegauge.arena.ranking.style_control`:
  answer length, markdown headers, lists and bold, as FastChat): ``overall`` and ``dimensions.{D}`` each
  {coefficients, battles, reg, rows: [{model, bt, bt_ci, rank, style_bt, style_ci, style_rank}]}, and
  ``bias.{setting}`` the judges' NDCG with the control ({judges: {J: ndcg}, avg_ndcg}).
* ``judges.{J}`` — {ndcg, ranking, battles, flip_rate}: NDCG of the judge's own ranking against the
  joint one (headline setting); ``bias.{setting}`` — the same for every setting run, with the average.
* ``flip_rate`` — share of (battle, judge) pairs judged in both orders whose readings disagreed (only
  with `both_orders`).
* ``counts`` and ``failures`` — records per stage, failed records by stage and error class, battles
  that got no verdict; failed calls never enter a ranking.
* ``detection.{T}`` — accuracy / macro-F1 of the detection baseline, and ``detection.{T}.by_source.{S}``
  the same per source data set; ``agreement`` — human votes.
* ``details`` — memes → personas → tasks → guideline rounds → battles (both answers, each judge's
  per-dimension verdicts, the joint vote), for the HTML report to browse.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from memegauge.arena.agreement import agreement_summary, judges_ablation
from memegauge.arena.bias import judge_ndcg, ndcg_at_n
from memegauge.arena.common import DIMENSIONS, OVERALL
from memegauge.arena.detection import detection_summary
from memegauge.arena.headline import annotate
from memegauge.arena.judging import ALL_DIMENSIONS, battle_records
from memegauge.arena.ranking import mean_ci, rank_table, style_control, style_counts, style_ranking
from memegauge.arena.records import (AnswerRecord, BattleRecord, ContextRecord, DetectionRecord,
                                    FusionRoundRecord, GuidelineRecord, HumanVoteRecord, JudgmentRecord,
                                    MemeRecord, RepeatRecord, TaskRecord, TasksRecord)
from memegauge.arena.verdicts import TIE, TIE_STRONG, TIE_WEAK
from memegauge.engine.store import Store
from memegauge.records import read_checked, read_records
from memegauge.errors import InputError

_STAGE_KINDS = ("context", "tasks", "answer", "fusion_round", "judgment", "detection")


TYPED = (MemeRecord, ContextRecord, TasksRecord, TaskRecord, AnswerRecord, FusionRoundRecord, GuidelineRecord,
         JudgmentRecord, BattleRecord, DetectionRecord, HumanVoteRecord)


def build(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    config = run["config"]
    records = {}
    for model in TYPED:  # validated against the writers' models
        records[model.KIND] = read_checked(store, run["id"], model)
    settings = config["settings"]
    headline = [b for b in records["battle"] if b["setting"] == settings[0]]
    judges = config["judges"]
    rank = {"k": config["elo_k"], "bootstrap_rounds": config["bootstrap_rounds"], "seed": config["seed"]}
    report: dict[str, Any] = {
        "setting": settings[0],
        "ranking": annotate(rank_table(battle_records(headline, OVERALL), **rank), headline),
        "dimensions": {d: annotate(rank_table(battle_records(headline, d), **rank), headline, d)
                       for d in DIMENSIONS},
        "judges": _judges(headline, judges),
        "bias": {s: _bias([b for b in records["battle"] if b["setting"] == s], judges) for s in settings},
        "counts": _counts(records, headline),
        "failures": _failures(records),
    }
    style = _StyleCounts(records["answer"])
    report["style_control"] = {
        "overall": style.section(headline, OVERALL, report["ranking"], rank),
        "dimensions": {d: style.section(headline, d, report["dimensions"][d], rank) for d in DIMENSIONS},
        "bias": {s: style.bias([b for b in records["battle"] if b["setting"] == s], judges) for s in settings}}
    if config["both_orders"]:
        report["flip_rate"] = _flip_rate(headline)
    if config["detection"]:
        report["detection"] = detection_summary(records["detection"])
    report["agreement"] = (agreement_summary(records["human_vote"], headline, judges)
                           if records["human_vote"] else {"ablation": judges_ablation(headline, judges)})
    repeats = read_records(store, run["id"], RepeatRecord)
    if repeats:
        report["repeats"] = _repeats(store, repeats, run["id"], report["ranking"])
    report["details"] = _details(records)
    return report


def _repeats(store: Store, repeats: list[RepeatRecord], own_id: int,
             own_ranking: list[dict[str, Any]]) -> dict[str, Any]:
    """Each model's headline figures over the repeat runs (this one first) that are done: mean and a
    95% t-interval; runs not done yet are listed as missing, never averaged in."""
    done, missing, tables = [], [], []
    for r in sorted(repeats, key=lambda r: r.repeat):
        try:
            row = store.run_row(r.run)
        except InputError:  # not started yet
            row = None
        if row is None or (row["id"] != own_id and row["status"] != "done"):
            missing.append(r.run)
            continue
        done.append(r.run)
        tables.append(own_ranking if row["id"] == own_id else
                      build(store, {"id": row["id"], "config": json.loads(row["config_json"])})["ranking"])
    models = sorted({t["model"] for table in tables for t in table})
    ranking = []
    for model in models:
        rows = [next((t for t in table if t["model"] == model), None) for table in tables]
        ranking.append({"model": model, **{k: mean_ci([r[k] for r in rows if r is not None])
                                           for k in ("elo", "bt", "win_rate", "score")}})
    ranking.sort(key=lambda r: -(r["bt"]["mean"] if r["bt"]["mean"] is not None else float("-inf")))
    return {"runs": done, "missing": missing, "ranking": ranking}


class _StyleCounts:
    """The style counts of every answer (`style_counts`), and the style-controlled figures of a set of
    battles: the same battles, in the same order, as `battle_records` gives the uncontrolled ones."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.counts = {(a["task"], a["target"]): style_counts(a.get("text")) for a in answers}

    def fit(self, battles: list[dict[str, Any]], dimension: str, judge: str | None = None,
            rounds: int = 0, seed: int = 0) -> dict[str, Any]:
        kept = [b for b in sorted(battles, key=lambda b: b["order"])
                if (b["joint"] if judge is None else b["judges"].get(judge, {})).get(dimension) is not None]
        zero = [0, 0, 0, 0]
        counts_a = [self.counts.get((b["task"], b["model_a"]), zero) for b in kept]
        counts_b = [self.counts.get((b["task"], b["model_b"]), zero) for b in kept]
        records = battle_records(kept, dimension, judge)
        return style_control(records, counts_a, counts_b, bootstrap_rounds=rounds, seed=seed)

    def section(self, battles: list[dict[str, Any]], dimension: str, rows: list[dict[str, Any]],
                rank: dict[str, Any]) -> dict[str, Any]:
        """The leaderboard with and without control side by side (`rows`: the uncontrolled ranking)."""
        control = self.fit(battles, dimension, rounds=rank["bootstrap_rounds"], seed=rank["seed"])
        order = style_ranking(control)
        side = [{"model": r["model"], "rank": i + 1, "bt": r["bt"], "bt_ci": r.get("bt_ci"),
                 "style_rank": order.index(r["model"]) + 1 if r["model"] in order else None,
                 "style_bt": control["ratings"].get(r["model"]),
                 "style_ci": (control["ratings_ci"] or {}).get(r["model"])} for i, r in enumerate(rows)]
        return {"coefficients": control["coefficients"], "battles": control["battles"], "reg": control["reg"],
                "rows": side}

    def bias(self, battles: list[dict[str, Any]], judges: list[str]) -> dict[str, Any]:
        """Each judge's NDCG against the joint vote, both ranked with style control (`judge_ndcg`'s rule:
        the joint ranking restricted to the models the judge ranked)."""
        joint = style_ranking(self.fit(battles, OVERALL))
        out = {}
        for judge in judges:
            ranking = style_ranking(self.fit(battles, OVERALL, judge))
            reference = [m for m in joint if m in set(ranking)]
            out[judge] = ndcg_at_n(ranking, reference) if len(ranking) >= 2 and len(reference) == len(ranking) \
                else None
        values = [v for v in out.values() if v is not None]
        return {"judges": out, "avg_ndcg": sum(values) / len(values) if values else None}


def _bias(battles: list[dict[str, Any]], judges: list[str]) -> dict[str, Any]:
    per_judge = {j: battle_records(battles, OVERALL, judge=j) for j in judges}
    scores = judge_ndcg(per_judge, battle_records(battles, OVERALL))
    values = [s["ndcg"] for s in scores.values() if s["ndcg"] is not None]
    return {"judges": {j: s["ndcg"] for j, s in scores.items()},
            "avg_ndcg": sum(values) / len(values) if values else None}


def _judges(battles: list[dict[str, Any]], judges: list[str]) -> dict[str, dict[str, Any]]:
    scores = judge_ndcg({j: battle_records(battles, OVERALL, judge=j) for j in judges},
                        battle_records(battles, OVERALL))
    for judge in judges:
        flips = [b["flips"][judge] for b in battles if judge in b["flips"]]
        scores[judge]["flip_rate"] = sum(flips) / len(flips) if flips else None
    return scores


def _flip_rate(battles: list[dict[str, Any]]) -> dict[str, Any]:
    flips = [f for b in battles for f in b["flips"].values()]
    return {"pairs": len(flips), "flipped": sum(flips), "rate": sum(flips) / len(flips) if flips else None}


def _counts(records: dict[str, list], headline: list[dict[str, Any]]) -> dict[str, Any]:
    return {"memes": len(records["meme"]), "tasks": len(records["task"]),
            "answers": len(records["answer"]), "fusion_rounds": len(records["fusion_round"]),
            "judgments": len(records["judgment"]), "battles": len(headline),
            "battles_judged": sum(b["judged"] for b in headline),
            "answers_missing_sections": sum(bool(a["missing_sections"]) for a in records["answer"]),
            **_verdicts_read(records["judgment"])}


def _verdicts_read(judgments: list[dict[str, Any]]) -> dict[str, Any]:
    """How many judge verdicts were read per dimension (a judgment without a readable verdict for a
    dimension is counted missing there), and the overall ties by kind as the judges wrote them."""
    ok = [j for j in judgments if j["ok"]]
    dimensions = {d: {"read": sum(j["verdicts"].get(d) is not None for j in ok),
                      "missing": sum(j["verdicts"].get(d) is None for j in ok)} for d in ALL_DIMENSIONS}
    ties = Counter((j.get("read") or {}).get(OVERALL) for j in ok)
    return {"verdicts_read": dimensions,
            "overall_ties": {"plain": ties[TIE], "both_strong": ties[TIE_STRONG], "both_weak": ties[TIE_WEAK]},
            "judgments_truncated": sum(bool(j.get("truncated")) for j in judgments)}


def _failures(records: dict[str, list]) -> dict[str, dict[str, int]]:
    """{stage kind: {error class: failed records}}; stages without failures are left out."""
    out = {}
    for kind in _STAGE_KINDS:
        counts = Counter(r["error_class"] for r in records[kind] if not r["ok"])
        if counts:
            out[kind] = dict(counts)
    unjudged = sum(not b["judged"] for b in records["battle"])
    if unjudged:
        out["battle"] = {"no_verdict": unjudged}
    return out


def _details(records: dict[str, list]) -> dict[str, Any]:
    """memes → personas → tasks → guideline rounds → battles, as nested lists."""
    contexts = {r["meme"]: r for r in records["context"]}
    answers = {(a["task"], a["target"]): a for a in records["answer"]}
    answers_by_task: dict[str, dict[str, dict]] = {}
    for a in records["answer"]:
        answers_by_task.setdefault(a["task"], {})[a["target"]] = {
            k: a[k] for k in ("ok", "text", "missing_sections", "error_class")}
    rounds: dict[str, list] = {}
    for r in records["fusion_round"]:
        rounds.setdefault(r["task"], []).append(r)
    guidelines = {g["task"]: g for g in records["guideline"]}
    battles: dict[str, list] = {}
    for b in sorted(records["battle"], key=lambda b: b["order"]):
        battles.setdefault(b["task"], []).append({
            **{k: b[k] for k in ("setting", "model_a", "model_b", "judges", "flips", "joint",
                                 "failed_judgments", "judged")},
            "answer_a": answers[(b["task"], b["model_a"])]["text"],
            "answer_b": answers[(b["task"], b["model_b"])]["text"]})
    memes = []
    for meme in sorted(records["meme"], key=lambda m: m["order"]):
        context = contexts.get(meme["id"], {})
        tasks = [{**t, "answers": answers_by_task.get(t["task"], {}),
                  "guideline": guidelines.get(t["task"]),
                  "rounds": sorted(rounds.get(t["task"], []), key=lambda r: r["round"]),
                  "battles": battles.get(t["task"], [])}
                 for t in records["task"] if t["meme"] == meme["id"]]
        memes.append({**meme, "personas": context.get("personas", []),
                      "context_error": context.get("error_class"), "tasks": tasks})
    return {"memes": memes}


def tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The report as flat tables (`Result.to_pandas`): the headline ranking, the ranking per dimension,
    the leaderboard with and without style control (overall and per dimension), and each judge's
    agreement with the panel. Intervals are numeric columns (`bt_ci95_lo`, `bt_ci95_hi`,
    `win_rate_ci95_lo`, `win_rate_ci95_hi`, `win_rate_n`, `memes`), not nested values."""
    style = report.get("style_control") or {}
    return {"ranking": [_flat(row) for row in report["ranking"]],
            "dimensions": [{"dimension": d, **_flat(row)} for d, rows in report["dimensions"].items() for row in rows],
            "style_control": [_style_row(d, row) for d, part in
                              (("overall", style.get("overall")), *(style.get("dimensions") or {}).items())
                              if part for row in part["rows"]],
            "judges": [{"judge": j, **{k: v for k, v in figures.items() if k != "ranking"}}
                       for j, figures in report["judges"].items()]}


def _style_row(dimension: str, row: dict[str, Any]) -> dict[str, Any]:
    """A row of the leaderboard with and without style control, its intervals as numeric columns."""
    bt, style = row.get("bt_ci"), row.get("style_ci")
    return {"dimension": dimension, **{k: row.get(k) for k in ("model", "rank", "bt", "style_rank", "style_bt")},
            "bt_ci95_lo": bt[0] if bt else None, "bt_ci95_hi": bt[1] if bt else None,
            "style_ci95_lo": style[0] if style else None, "style_ci95_hi": style[1] if style else None}


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """A ranking row with its `bt_ci` list and `win_rate_ci95` figure as numeric columns."""
    from memegauge.report.intervals import columns

    ci, win = row.get("bt_ci"), row.get("win_rate_ci95")
    flat = {k: v for k, v in row.items() if k not in ("bt_ci", "win_rate_ci95")}
    return {**flat, "bt_ci95_lo": ci[0] if ci else None, "bt_ci95_hi": ci[1] if ci else None,
            **columns(win, "win_rate_"), "memes": (win or {}).get("clusters")}
