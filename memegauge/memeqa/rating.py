"""MemeQA's rating part (`memegauge.rating.part.RatingPart`): people answer an evaluation run's
questions (without the gold answer), one stratum per question type; the report gives their accuracy
per type beside the run's model on the same questions (the "Hum" row of Tables 2–3). Only evaluation
runs offer rating: a dataset build or a fine-tuning run has no answers to compare."""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.engine.store import Store
from memegauge.rating import stats
from memegauge.rating.items import Item, Pictures, group, item_id, rng, stratified
from memegauge.rating.part import ByRater, RatingPart
from memegauge.rating.section import complete
from memegauge.rating.view import between_blocks, ci_cell, n_of
import memegauge.report.intervals as ci
from memegauge.report.blocks import Block, table, text


def part(run: dict[str, Any]) -> RatingPart | None:
    return PART if (run.get("config") or {}).get("task", "eval") == "eval" else None


def items(store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]:
    """`n` questions per the run's question types, shown without the gold answer."""
    questions = {q["id"]: q for q in store.records(run["id"], "question")}
    out = []
    for stratum, key in stratified(group((q["type"], k) for k, q in questions.items()), n,
                                   rng(run.get("seed"), "answer")):
        q = questions[key]
        out.append(Item(item_id("answer", key), "answer", key, stratum, {
            "task": "answer", "text": q.get("text") or "", "image": images.get(q.get("img") or ""),
            "type": q["type"], "question": q["question"], "options": list(q["options"]),
            "multi": q.get("general_type") == "multi"}))
    return out


def section(store: Store, run: dict[str, Any], by_task: dict[str, ByRater], seed: int) -> dict[str, Any]:
    return {"answers": answer_section(store, run, by_task["answer"], seed)} if "answer" in by_task else {}


def answer_section(store: Store, run: dict[str, Any], per_rater: ByRater, seed: int) -> dict[str, Any]:
    """Tables 2–3, the "Hum" row: each person's accuracy per question type (exact option set), macro
    over types, beside the run's model on the same questions; among people Fleiss' κ on the answers."""
    questions = {q["id"]: q for q in store.records(run["id"], "question")}
    accuracy, model = {}, {}
    for rater, rated in sorted(per_rater.items()):
        keys = [k for k in rated if k in questions]
        accuracy[rater] = _accuracy([questions[k] for k in keys],
                                    [float(sorted(rated[k].answer or []) == sorted(questions[k]["gold"]))
                                     for k in keys], seed)
        scored = [questions[k] for k in keys if questions[k].get("correct") is not None]
        model[rater] = _accuracy(scored, [float(bool(q["correct"])) for q in scored], seed)
    out: dict[str, Any] = {"human_accuracy": accuracy, "model_on_same_questions": model}
    if len(per_rater) >= 2:
        raters, shared, m = complete(per_rater, lambda r: ",".join(map(str, sorted(r.answer or []))))
        values = sorted({v for v in m.ravel()})
        coded = np.vectorize(values.index)(m) if m.size else m
        out["between_raters"] = {
            "raters": raters,
            "fleiss_kappa": stats.interval(
                lambda idx: stats.fleiss_kappa(stats.category_counts(coded[idx], range(len(values)))),
                len(shared), seed)}
    return out


def _accuracy(questions: list[dict[str, Any]], hits: list[float], seed: int) -> dict[str, Any]:
    """Accuracy per question type (Wilson, clustered by meme picture) and `macro`, their unweighted mean
    (cluster bootstrap), each with its interval and n, as `memegauge.memeqa.headline` reports a model."""
    types = sorted({q["type"] for q in questions})
    memes = [q.get("img") for q in questions]
    row = {t: ci.rate([h for h, q in zip(hits, questions, strict=True) if q["type"] == t],
                      [q.get("img") for q in questions if q["type"] == t]) for t in types}
    row["macro"] = ci.macro_rate(hits, [q["type"] for q in questions], memes, seed=seed)
    return row


def blocks(section: dict[str, Any]) -> list[Block]:
    if "answers" not in section:
        return []
    answers = section["answers"]
    rows = []
    for rater, by_type in answers["human_accuracy"].items():
        model = answers["model_on_same_questions"].get(rater, {})
        rows += [[text(rater), text(t), ci_cell(f, percent=True), n_of(f), ci_cell(model.get(t), percent=True),
                  n_of(model.get(t))] for t, f in by_type.items()]
    return [Block("table", "MemeQA: human accuracy per question type and macro (the Hum row of Tables 2–3)",
                  table=table(["rater", "type", "human accuracy [95% CI]", "n", "model, same questions [95% CI]",
                               "n scored"], rows)),
            *between_blocks("MemeQA answers", answers.get("between_raters"), {"fleiss_kappa": "Fleiss' κ"})]


PART = RatingPart(items=items, section=section, blocks=blocks)
