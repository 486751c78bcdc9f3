"""The report's "People vs judges" section: the human ratings of a run (`memegauge.rating.votes`)
against each other and against the run's LLM judges, as each paper reports it (see
`memegauge.rating.stats` for which coefficient answers which table). Every figure is
{value, ci95, n}: a seeded 95% bootstrap interval over the items and the number of items behind it; an
accuracy (a rate) is a Wilson interval instead, clustered by meme where items share one
(`memegauge.report.intervals.rate`): a bootstrap over 4 items all wrong can only draw 0, "0.0% [0.0%,
0.0%]", where Wilson at 0 of 4 is [0, 49.0%].
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from memegauge.arena.common import DIMENSIONS, OVERALL
from memegauge.arena.judging import TIE, TIE_BOTHBAD
from memegauge.engine.store import Store
from memegauge.rating import stats
from memegauge.rating.records import HumanRating
from memegauge.rating.votes import run_ratings
import memegauge.report.intervals as ci

OUTCOMES = ("model_a", "model_b", "tie")


def people_vs_judges(store: Store, run: dict[str, Any]) -> dict[str, Any] | None:
    """The section for a run with human ratings; None without any."""
    ratings = run_ratings(store, run)
    if not ratings:
        return None
    seed = int(run.get("seed") or 0)
    by_task: dict[str, dict[str, dict[str, HumanRating]]] = defaultdict(lambda: defaultdict(dict))
    for r in ratings:
        by_task[r.task][r.rater][r.source] = r
    section: dict[str, Any] = {"raters": {
        rater: {"rated": sum(len(t.get(rater, {})) for t in by_task.values()),
                "origin": "csv" if all(r.origin == "csv" for r in ratings if r.rater == rater) else "page"}
        for rater in sorted({r.rater for r in ratings})}}
    if "score" in by_task:
        section["scores"] = score_section(store, run, by_task["score"], seed)
    if "labels" in by_task:
        section["labels"] = label_section(store, run, by_task["labels"], seed)
    if "pair" in by_task:
        section["pairs"] = pair_section(store, run, by_task["pair"], seed)
    if "answer" in by_task:
        section["answers"] = answer_section(store, run, by_task["answer"], seed)
    return section


def _threshold(store: Store, run: dict[str, Any]) -> float:
    meta = store.get_record(run["id"], "meta", "run") or {}
    return float(meta.get("threshold") or 4.0)


def _common(per_rater: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(raters, sources rated by every rater): the complete table ICC and Fleiss' κ need."""
    raters = sorted(per_rater)
    return raters, sorted(set.intersection(*(set(per_rater[r]) for r in raters))) if raters else []


def _complete(per_rater: dict[str, dict[str, Any]], value) -> tuple[list[str], list[str], np.ndarray]:
    """(raters, sources rated by every rater, sources × raters matrix of `value(rating)`)."""
    raters, common = _common(per_rater)
    matrix = np.array([[value(per_rater[r][s]) for r in raters] for s in common], dtype=object)
    return raters, common, matrix.reshape(len(common), len(raters))


def _alpha(per_rater: dict[str, dict[str, Any]], value, level: str, seed: int) -> dict[str, Any]:
    """Krippendorff's α over every item rated by at least one person (raters × items, nan = unrated)."""
    raters = sorted(per_rater)
    sources = sorted(set().union(*(per_rater[r] for r in raters)))
    x = np.array([[value(per_rater[r][s]) if s in per_rater[r] else np.nan for s in sources] for r in raters],
                 dtype=float).reshape(len(raters), len(sources))
    return stats.interval(lambda idx: stats.krippendorff_alpha(x[:, idx], level), len(sources), seed)


# ---- AdamMeme -----------------------------------------------------------------------------------

def score_section(store: Store, run: dict[str, Any], per_rater: dict[str, dict[str, HumanRating]],
                  seed: int) -> dict[str, Any]:
    """Table 3: each person against the Scorer (ICC(2,1) on the score and on the FR list), and the
    people among themselves (ICC(2,1) on items all rated, Krippendorff's α interval on all)."""
    threshold = _threshold(store, run)
    agent = {r["id"]: float(r["score"]) for kind in ("score", "step") for r in store.records(run["id"], kind)
             if r.get("score") is not None}  # an imported CSV may score refinement steps too
    vs_scorer = {}
    for rater, rated in sorted(per_rater.items()):
        keys = [k for k in rated if k in agent]
        pair = np.array([[agent[k], rated[k].score] for k in keys], dtype=float).reshape(len(keys), 2)
        passed = (pair >= threshold).astype(float)
        vs_scorer[rater] = {
            "n": len(keys),
            "agent_avg_score": float(pair[:, 0].mean()) if keys else None,
            "human_avg_score": float(pair[:, 1].mean()) if keys else None,
            "agent_failure_rate": float(1 - passed[:, 0].mean()) if keys else None,
            "human_failure_rate": float(1 - passed[:, 1].mean()) if keys else None,
            "score_icc": stats.interval(lambda idx, pair=pair: stats.icc_2_1(pair[idx]), len(keys), seed),
            "fr_icc": stats.interval(lambda idx, passed=passed: stats.icc_2_1(passed[idx]), len(keys), seed)}
    out: dict[str, Any] = {"threshold": threshold, "vs_scorer": vs_scorer}
    if len(per_rater) >= 2:
        raters, common, m = _complete(per_rater, lambda r: r.score)
        m = m.astype(float)
        out["between_raters"] = {
            "raters": raters,
            "icc": stats.interval(lambda idx: stats.icc_2_1(m[idx]), len(common), seed),
            "krippendorff_alpha_interval": _alpha(per_rater, lambda r: r.score, "interval", seed)}
    return out


def label_section(store: Store, run: dict[str, Any], per_rater: dict[str, dict[str, HumanRating]],
                  seed: int) -> dict[str, Any]:
    """Table 8: each person's accuracy against the Miners' majority vote (same category set) and
    Cohen's κ over the (meme, category) decisions; among people the mean pairwise Cohen's κ (the
    paper's "Agreement") and Krippendorff's α (nominal) over the same decisions."""
    vote = {m["meme"]: set(m.get("categories") or []) for m in store.records(run["id"], "mining")
            if m.get("status") == "ok"}
    categories = list((store.get_record(run["id"], "taxonomy", "final") or {}).get("categories") or {})
    decisions = lambda chosen: np.array([c in chosen for c in categories], dtype=int)  # noqa: E731
    vs_miners = {}
    for rater, rated in sorted(per_rater.items()):
        memes = [m for m in rated if m in vote]
        human = np.array([decisions(set(rated[m].categories or [])) for m in memes]).reshape(len(memes), -1)
        agent = np.array([decisions(vote[m]) for m in memes]).reshape(len(memes), -1)
        exact = (human == agent).all(axis=1)
        vs_miners[rater] = {
            "accuracy": ci.rate(exact.astype(float)),  # one decision per meme: Wilson
            "kappa": stats.interval(lambda idx, agent=agent, human=human: stats.cohen_kappa(agent[idx].ravel(),
                                                                                          human[idx].ravel()),
                                    len(memes), seed)}
    out: dict[str, Any] = {"categories": categories, "vs_miners": vs_miners}
    if len(per_rater) >= 2:
        raters, common = _common(per_rater)
        cube = np.array([[decisions(set(per_rater[r][m].categories or [])) for r in raters] for m in common],
                        dtype=int).reshape(len(common), len(raters), len(categories))  # memes × raters × categories

        def flat(idx: np.ndarray) -> np.ndarray:  # (meme, category) decisions × raters
            return cube[idx].transpose(0, 2, 1).reshape(-1, len(raters))

        out["between_raters"] = {
            "raters": raters,
            "mean_pairwise_kappa": stats.interval(lambda idx: stats.mean_pairwise_kappa(flat(idx)),
                                                  len(common), seed),
            "krippendorff_alpha_nominal": stats.interval(
                lambda idx: stats.krippendorff_alpha(flat(idx).T.astype(float), "nominal"), len(common), seed)}
    return out


# ---- MemeArena ----------------------------------------------------------------------------------

def three_way(winner: str | None) -> str | None:
    """A judge's or person's outcome as the paper compares them: A, B or tie (both tie kinds alike)."""
    return TIE if winner in (TIE, TIE_BOTHBAD) else winner


def pair_section(store: Store, run: dict[str, Any], per_rater: dict[str, dict[str, HumanRating]],
                 seed: int) -> dict[str, Any]:
    """App. C, Table 5: each person's overall vote against each judge and the joint vote (accuracy);
    per dimension against the joint vote; among people Fleiss' κ, mean pairwise Cohen's κ and
    Krippendorff's α (nominal) on the overall vote."""
    battles = {b["battle"]: b for b in store.records(run["id"], "battle")}
    judges = list((run.get("config") or {}).get("judges") or [])
    vs_judges, by_dimension = {}, {}
    for rater, rated in sorted(per_rater.items()):
        keys = [k for k in rated if k in battles]

        def accuracy(verdict, dimension: str = OVERALL, rated=rated, keys=keys) -> dict[str, Any]:
            pairs = [(rated[k].choices.get(dimension), three_way(verdict(battles[k])), battles[k].get("meme"))
                     for k in keys]
            kept = [(float(h == v), meme) for h, v, meme in pairs if h is not None and v is not None]
            return ci.rate([hit for hit, _ in kept], [meme for _, meme in kept])  # a meme's battles: clustered

        vs_judges[rater] = {**{j: accuracy(lambda b, j=j: b["judges"].get(j, {}).get(OVERALL)) for j in judges},
                            "joint vote": accuracy(lambda b: b["joint"].get(OVERALL))}
        by_dimension[rater] = {d: accuracy(lambda b, d=d: b["joint"].get(d), d) for d in (*DIMENSIONS, OVERALL)}
    out: dict[str, Any] = {"vs_judges": vs_judges, "vs_joint_by_dimension": by_dimension}
    if len(per_rater) >= 2:
        code = lambda r: OUTCOMES.index(r.choices[OVERALL])  # noqa: E731
        raters, common, m = _complete(per_rater, code)
        m = m.astype(int)
        out["between_raters"] = {
            "raters": raters,
            "fleiss_kappa": stats.interval(lambda idx: stats.fleiss_kappa(stats.category_counts(m[idx], range(3))),
                                           len(common), seed),
            "mean_pairwise_kappa": stats.interval(lambda idx: stats.mean_pairwise_kappa(m[idx]), len(common), seed),
            "krippendorff_alpha_nominal": _alpha(per_rater, code, "nominal", seed)}
    return out


# ---- MemeQA -------------------------------------------------------------------------------------

def answer_section(store: Store, run: dict[str, Any], per_rater: dict[str, dict[str, HumanRating]],
                   seed: int) -> dict[str, Any]:
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
        raters, common, m = _complete(per_rater, lambda r: ",".join(map(str, sorted(r.answer or []))))
        values = sorted({v for v in m.ravel()})
        coded = np.vectorize(values.index)(m) if m.size else m
        out["between_raters"] = {
            "raters": raters,
            "fleiss_kappa": stats.interval(
                lambda idx: stats.fleiss_kappa(stats.category_counts(coded[idx], range(len(values)))),
                len(common), seed)}
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
