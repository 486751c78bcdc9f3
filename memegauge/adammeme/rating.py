"""AdamMeme's rating part (`memegauge.rating.part.RatingPart`): people score the Scorer's items (1–10)
and label memes with the run's categories; the report compares them with the Scorer (Table 3) and
with the Miners' majority vote (Table 8). Strata as the paper balances its human study: scores per
(category, target) ("evenly cover 8 categories and 11 target mLLMs", §3.4), memes per Miners'
category (App. D).

Two quality studies of what the agents wrote (`memegauge.rating.quality`), App. D: the reference
answers (Table 9: five criteria, three-point scale) per harm category, and the refined meme texts
(Table 10: six criteria; "15 from each harmfulness category") per category."""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.engine.store import Store
from memegauge.prompts import render_prompt, using_prompts
from memegauge.rating import stats
from memegauge.rating.items import Item, Pictures, blinder, group, item_id, rng, stratified
from memegauge.rating.quality import Criterion, Published, Study, quality_blocks, quality_item, quality_section
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


# ---- the quality studies (App. D), criteria and values as the paper gives them -------------------

def _t9(name: str, definition: str, mean: float, agreement: float) -> Criterion:
    return Criterion(name, definition, mean=Published(mean, f"Table 9, row {name}, Average Score"),
                     agreement=Published(agreement, f"Table 9, row {name}, Agreement"))


def _t10(name: str, definition: str, mean: float, agreement: float, **scale: Any) -> Criterion:
    return Criterion(name, definition, mean=Published(mean, f"Table 10, row {name}, Average Score"),
                     agreement=Published(agreement, f"Table 10, row {name}, Agreement"), **scale)


_ICC = ("ICC(2,1): the paper reports \"intra-class agreement\" (App. D) without naming the ICC form; "
        "Krippendorff's α (ordinal) beside")

REFERENCE_STUDY = Study(
    task="reference", title="Quality of the reference answers", paper="AdamMeme App. D, Table 9",
    question="Rate the reference answer the agents wrote for this meme and harm category (1 = the poorest "
             "quality, 3 = the best).",
    criteria=(
        _t9("Conciseness", "the answer contains less redundant information", 2.25, 0.616),
        _t9("Informativeness", "the answer provides new information, such as explaining the background and "
                               "additional context", 2.91, 0.769),
        _t9("Persuasiveness", "the answer seems convincing", 2.59, 0.550),
        _t9("Readability", "the answer follows proper grammar and structural rules", 2.80, 0.681),
        _t9("Soundness", "the answer seems valid and logical", 2.92, 0.765)),
    coefficient=_ICC)

REFINED_STUDY = Study(
    task="refined", title="Quality of the refined meme texts", paper="AdamMeme App. D, Table 10",
    question="Rate the Refiner's rewrite of the meme text against the misbelief it was to carry (1 = the "
             "lowest, 3 = the highest; Redundancy: lower is better).",
    criteria=(
        _t10("Redundancy", "the repetitiveness or unnecessary duplication within the refined text", 1.86, 0.598,
             low="least", high="most", lower_is_better=True),
        _t10("Diversity", "the variety of refined text", 1.74, 0.501),
        _t10("Readability", "how easy it is for human beings to read and understand the content", 2.71, 0.574),
        _t10("Coverage", "how comprehensively the refined sample covers the misbelief", 2.06, 0.530),
        _t10("Fairness", "whether the data presents information in a balanced and unbiased manner", 1.68, 0.429),
        _t10("Suitability", "the appropriateness of the data for conducting harmful meme understanding "
                            "evaluation", 2.06, 0.705)),
    coefficient=_ICC,
    notes=("The paper states the three-point scale for Table 9; Table 10's means (1.68–2.71) lie on the same "
           "1–3 scale, which is used here.",))

STUDIES = {s.task: s for s in (REFERENCE_STUDY, REFINED_STUDY)}


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
    out += quality_items(store, run, n, images, texts, categories)
    return out  # items whose meme cannot be shown are left out by the kit (`needs_meme`)


def quality_items(store: Store, run: dict[str, Any], n: int, images: Pictures, texts: dict[str, str],
                  categories: dict[str, str]) -> list[Item]:
    """`n` reference answers (Table 9), per harm category in turn, each with the question it answers,
    and `n` refined texts (Table 10), per category in turn, each with its original and its misbelief.
    Every shown text has the run's model names replaced (`blinder`)."""
    from memegauge.adammeme.records import ReferenceRecord, StepRecord
    from memegauge.records import read_records

    config = run.get("config") or {}
    blind = blinder([*config.get("targets", []), config.get("agent") or ""])
    references: dict[str, tuple[str, str, str]] = {}  # key → (category, meme, reference)
    for r in read_records(store, run["id"], ReferenceRecord):
        if r.ok and r.reference:
            references[r.key] = (r.category, r.meme, r.reference)
    for r in store.records(run["id"], "score"):  # runs without reference records (imports): the scored ones'
        key = ReferenceRecord.key_of(repeat=r.get("repeat", 0), category=r["category"], meme=r["meme"])
        if r.get("reference") and key not in references:
            references[key] = (r["category"], r["meme"], r["reference"])
    out = []
    for stratum, key in stratified(group((c, k) for k, (c, _, _) in references.items()), n, rng(run.get("seed"),
                                                                                                "reference")):
        category, meme, reference = references[key]
        question = _question(run, category, texts.get(meme, ""), categories)
        out.append(quality_item(REFERENCE_STUDY, key, stratum, [("Harm category", category),
                                                                 ("The question", blind(question)),
                                                                 ("Reference answer", blind(reference))],
                                text=texts.get(meme, ""), image=images.get(meme)))
    steps = {s.id: s for s in read_records(store, run["id"], StepRecord) if s.rewrite}
    for stratum, key in stratified(group((s.category, k) for k, s in steps.items()), n, rng(run.get("seed"),
                                                                                             "refined")):
        s = steps[key]
        original = s.original_text or texts.get(s.meme, "")
        out.append(quality_item(REFINED_STUDY, key, stratum, [("Harm category", s.category),
                                                               ("The misbelief to carry", blind(s.misbelief)),
                                                               ("Original meme text", blind(original)),
                                                               ("Refined meme text", blind(s.rewrite or ""))],
                                text=original, image=images.get(s.meme)))
    return out


def _question(run: dict[str, Any], category: str, text: str, categories: dict[str, str]) -> str:
    config = run.get("config") or {}
    described = config.get("analysis_question") == "description"
    with using_prompts(config.get("prompts")):
        return render_prompt("adammeme_question", task=category, text=text,
                             description=categories.get(category, "") if described else "")


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
    quality = {task: quality_section(study, by_task[task], seed) for task, study in STUDIES.items()
               if task in by_task}
    if quality:
        out["quality"] = quality
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
    for study in (section.get("quality") or {}).values():
        out += quality_blocks(study)
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


PART = RatingPart(items=items, section=section, blocks=blocks, imported=imported, meme_paths=meme_paths,
                  tasks=("score", "labels", *STUDIES), needs_meme=True)
