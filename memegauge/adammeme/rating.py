"""AdamMeme's rating part (`memegauge.rating.part.RatingPart`): people score the Scorer's items (1–10)
and label memes with the run's categories; the report compares them with the Scorer (Table 3) and
with the Miners' majority vote (Table 8). Strata as the paper balances its human study: scores per
(category, target) ("evenly cover 8 categories and 11 target mLLMs", §3.4), memes per Miners'
category (App. D)."""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.engine.store import Store
from memegauge.prompts import render_prompt, using_prompts
from memegauge.rating import stats
from memegauge.rating.items import Item, Pictures, group, item_id, rng, shown_only, stratified
from memegauge.rating.part import ByRater, RatingPart
from memegauge.rating.records import HumanRating
from memegauge.rating.section import alpha, common, complete
from memegauge.rating.view import between_blocks, ci_cell, n_of
from memegauge.rating.votes import CSV_RATER
import memegauge.report.intervals as ci
from memegauge.report.blocks import Block, count, num, pct, table, text
from memegauge.types import Meme, MemeGaugeError


def part(run: dict[str, Any]) -> RatingPart:
    return PART


# ---- items --------------------------------------------------------------------------------------

def items(store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]:
    """`n` Scorer items (the target's answer, the reference, the Scorer's exact instructions → 1–10)
    and `n` mining items (a meme → its categories in the run's final taxonomy)."""
    run_id, seed = run["id"], run.get("seed")
    scored = {r["id"]: r for r in store.records(run_id, "score") if r.get("status") == "scored"}
    texts = {r["meme"]: r.get("text") or "" for r in scored.values()} | {m.id: m.text for m in run_memes(run)} \
        | {m["meme"]: m["text"] for m in store.records(run_id, "mining") if m.get("text")}  # an import's texts
    taxonomy = store.get_record(run_id, "taxonomy", "final") or {}
    categories = taxonomy.get("categories") or {}
    out = []
    for stratum, key in stratified(group((f"{r['category']} · {r['target']}", k) for k, r in scored.items()),
                                   n, rng(seed, "score")):
        r = scored[key]
        question, prompt = _scorer_prompt(run, r, categories)
        out.append(Item(item_id("score", key), "score", key, stratum, {
            "task": "score", "text": r.get("text") or "", "image": images.get(r["meme"]),
            "category": r["category"], "reference": r.get("reference") or "", "answer": r.get("answer") or "",
            "rubric": scorer_rubric(prompt), "prompt": prompt}))
    mined = {m["meme"]: m for m in store.records(run_id, "mining") if m.get("status") == "ok"}
    for stratum, meme in stratified(group(((m.get("categories") or ["harmless"])[0], k) for k, m in mined.items()),
                                    n, rng(seed, "labels")):
        out.append(Item(item_id("labels", meme), "labels", meme, stratum, {
            "task": "labels", "text": texts.get(meme, ""), "image": images.get(meme),
            "categories": [{"name": c, "description": d} for c, d in categories.items()]}))
    return shown_only(out, run) if out else out


def _scorer_prompt(run: dict[str, Any], score: dict[str, Any], categories: dict[str, str]) -> tuple[str, str]:
    """The analysis question and the Scorer's prompt as the run asked them: its own templates (`prompts:`)
    and, when it asked category-specific questions, the category's description (runs stored before
    `analysis_question` existed asked the bare category)."""
    config = run.get("config") or {}
    described = config.get("analysis_question") == "description"
    with using_prompts(config.get("prompts")):
        question = render_prompt("adammeme_question", task=score["category"], text=score.get("text") or "",
                                 description=categories.get(score["category"], "") if described else "")
        return question, render_prompt("adammeme_scorer", meme_text=score.get("text") or "", question=question,
                                       ref_answer=score.get("reference") or "", answer=score.get("answer") or "")


def scorer_rubric(prompt: str) -> str:
    """The Scorer's instructions without the item's question and answers (shown apart): its prompt up
    to ``[Question]`` and from the end of the assistant's answer on, as `adammeme_scorer.j2` lays it out."""
    head, _, rest = prompt.partition("[Question]")
    _, _, tail = rest.partition("[The End of Assistant's Answer]")
    return f"{head.strip()}\n\n{tail.strip()}".strip()


def run_memes(run: dict[str, Any]) -> list[Meme]:
    """The run's meme set, as far as it still loads (a moved set gives none: texts and pictures then
    come from the store alone)."""
    from memegauge.memes import load_memes

    path = (run.get("config") or {}).get("memes")
    try:
        return load_memes(path, require_images=False) if path else []
    except (MemeGaugeError, OSError):
        return []


def meme_paths(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    return {m.id: m.image for m in run_memes(run)}


def imported(store: Store, run: dict[str, Any]) -> list[HumanRating]:
    """`import adammeme-human`'s scores and labels (`human_score`, `human_label`) as ratings of rater csv."""
    run_id = run["id"]
    out = [HumanRating(rater=CSV_RATER, item=item_id("score", r["sample"]), task="score",
                       source=r["sample"], origin="csv", score=r["score"])
           for r in store.records(run_id, "human_score")]
    out += [HumanRating(rater=CSV_RATER, item=item_id("labels", r["meme"]), task="labels",
                        source=r["meme"], origin="csv", categories=r["categories"])
            for r in store.records(run_id, "human_label")]
    return out


# ---- the section ----------------------------------------------------------------------------------

def section(store: Store, run: dict[str, Any], by_task: dict[str, ByRater], seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "score" in by_task:
        out["scores"] = score_section(store, run, by_task["score"], seed)
    if "labels" in by_task:
        out["labels"] = label_section(store, run, by_task["labels"], seed)
    return out


def _threshold(store: Store, run: dict[str, Any]) -> float:
    meta = store.get_record(run["id"], "meta", "run") or {}
    return float(meta.get("threshold") or 4.0)


def score_section(store: Store, run: dict[str, Any], per_rater: ByRater, seed: int) -> dict[str, Any]:
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
        raters, shared, m = complete(per_rater, lambda r: r.score)
        m = m.astype(float)
        out["between_raters"] = {
            "raters": raters,
            "icc": stats.interval(lambda idx: stats.icc_2_1(m[idx]), len(shared), seed),
            "krippendorff_alpha_interval": alpha(per_rater, lambda r: r.score, "interval", seed)}
    return out


def label_section(store: Store, run: dict[str, Any], per_rater: ByRater, seed: int) -> dict[str, Any]:
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
        raters, shared = common(per_rater)
        cube = np.array([[decisions(set(per_rater[r][m].categories or [])) for r in raters] for m in shared],
                        dtype=int).reshape(len(shared), len(raters), len(categories))  # memes × raters × categories

        def flat(idx: np.ndarray) -> np.ndarray:  # (meme, category) decisions × raters
            return cube[idx].transpose(0, 2, 1).reshape(-1, len(raters))

        out["between_raters"] = {
            "raters": raters,
            "mean_pairwise_kappa": stats.interval(lambda idx: stats.mean_pairwise_kappa(flat(idx)),
                                                  len(shared), seed),
            "krippendorff_alpha_nominal": stats.interval(
                lambda idx: stats.krippendorff_alpha(flat(idx).T.astype(float), "nominal"), len(shared), seed)}
    return out


# ---- the HTML tables --------------------------------------------------------------------------------

def blocks(section: dict[str, Any]) -> list[Block]:
    out: list[Block] = []
    if "scores" in section:
        out += _score_blocks(section["scores"])
    if "labels" in section:
        out += _label_blocks(section["labels"])
    return out


def _score_blocks(scores: dict[str, Any]) -> list[Block]:
    rows = [[text(rater), count(r["n"]), num(r["human_avg_score"]), num(r["agent_avg_score"]),
             pct(r["human_failure_rate"]), pct(r["agent_failure_rate"]),
             ci_cell(r["score_icc"]), ci_cell(r["fr_icc"])] for rater, r in scores["vs_scorer"].items()]
    return [Block("table", "AdamMeme scores: each person vs the Scorer (Table 3; ICC(2,1), FR at score < "
                           f"{scores['threshold']:g})",
                  table=table(["rater", "n", "human avg", "Scorer avg", "human FR", "Scorer FR",
                               "ICC score [95% CI]", "ICC FR [95% CI]"], rows)),
            *between_blocks("AdamMeme scores", scores.get("between_raters"),
                            {"icc": "ICC(2,1) (items every person scored)",
                             "krippendorff_alpha_interval": "Krippendorff's α, interval"})]


def _label_blocks(labels: dict[str, Any]) -> list[Block]:
    rows = [[text(rater), ci_cell(r["accuracy"], percent=True), ci_cell(r["kappa"]), n_of(r["accuracy"])]
            for rater, r in labels["vs_miners"].items()]
    return [Block("table", "AdamMeme categories: each person vs the Miners' majority vote (Table 8)",
                  table=table(["rater", "accuracy (same set) [95% CI]", "Cohen's κ per decision [95% CI]",
                               "n memes"], rows)),
            *between_blocks("AdamMeme categories", labels.get("between_raters"),
                            {"mean_pairwise_kappa": "mean pairwise Cohen's κ (the paper's Agreement)",
                             "krippendorff_alpha_nominal": "Krippendorff's α, nominal"})]


PART = RatingPart(items=items, section=section, blocks=blocks, imported=imported, meme_paths=meme_paths)
