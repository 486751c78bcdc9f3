"""MemeArena's rating part (`memegauge.rating.part.RatingPart`): people vote on battles of the headline
setting (A / B / tie per dimension and overall), one stratum per model pair; the report compares the
votes with each judge and the joint vote (App. C, Table 5). Blinding: which answer is A is a seeded
coin per battle (`Item.swapped`), and every model name in a shown text is replaced (`blinder`).

Three quality studies of what the agents wrote (`memegauge.rating.quality`), App. C: the final fused
guidelines with their task (Table 3, "50 samples", one meme's guideline in turn), the guideline after
each discussion round (Figure 6, "10 from each discussion round", stratified by round) and each meme's
simulated contexts with their tasks (Table 4, "50 memes", strata by the meme's first label)."""

from __future__ import annotations

import random
from typing import Any


from memegauge.arena.agreement import match_votes
from memegauge.arena.common import DIMENSIONS, OVERALL
from memegauge.arena.judging import TIE, TIE_BOTHBAD
from memegauge.engine.store import Store
from memegauge.rating import stats
from memegauge.rating.items import Item, Pictures, blinder, group, item_id, rng, stratified
from memegauge.rating.part import ByRater, RatingPart
from memegauge.rating.quality import Criterion, Published, Study, quality_blocks, quality_item, quality_section
from memegauge.rating.records import HumanRating
from memegauge.rating.section import alpha, complete
from memegauge.rating.view import between_blocks, ci_cell
from memegauge.rating.votes import CSV_RATER
import memegauge.report.intervals as ci
from memegauge.report.blocks import Block, table, text

PAIR_QUESTIONS = (*DIMENSIONS, OVERALL)
OUTCOMES = ("model_a", "model_b", "tie")


def part(run: dict[str, Any]) -> RatingPart:
    return PART


# ---- the quality studies (§3.4, App. C), criteria and values as the paper gives them ---------------

_FIVE = (("Conciseness", "Cns.", "the answer contains less redundant information", 2.2846, 0.3747),
         ("Informativeness", "Inf.", "the answer provides new information, such as explaining the background "
                                     "and additional context", 2.5285, 0.5157),
         ("Persuasiveness", "Psv.", "the answer seems convincing", 2.4797, 0.5478),
         ("Readability", "Rdb.", "the answer follows proper grammar and structural rules", 2.8293, 0.4862),
         ("Soundness", "Snd.", "the answer seems valid and logical", 2.5041, 0.5057))
_UNNAMED = ("ICC(2,1): the paper's \"inter-judge\" / \"intra-judge agreement\" names no coefficient; "
            "Krippendorff's α (ordinal) beside")

GUIDELINE_STUDY = Study(
    task="guideline", title="Quality of the fused guidelines", paper="MemeArena §3.4 and App. C, Table 3",
    question="Rate the fused guideline written for this task (1 = the poorest quality, 3 = the best).",
    criteria=tuple(Criterion(name, definition, mean=Published(mean, f"Table 3, column {short}, row Judgment"),
                             agreement=Published(agreement, f"Table 3, column {short}, row Agreement"))
                   for name, short, definition, mean, agreement in _FIVE),
    coefficient=_UNNAMED)

ROUND_STUDY = Study(
    task="guideline_round", title="Guideline quality per discussion round", paper="MemeArena App. C, Figure 6",
    question="Rate the guideline as it stood after this round of discussion (1 = the poorest quality, "
             "3 = the best).",
    criteria=tuple(Criterion(name, definition) for name, _, definition, _, _ in _FIVE),
    coefficient=_UNNAMED, by="round",
    overall=Published(0.682, "App. C, Quality of Guidelines: \"The intra-judge agreement is 0.682\""),
    notes=("Figure 6 plots Conciseness and Readability per round without printing its values; the paper's "
           "only number for this study is its agreement (0.682).",))

CONTEXT_STUDY = Study(
    task="context", title="Quality of the simulated contexts and tasks", paper="MemeArena App. C, Table 4",
    question="Rate this meme's simulated viewer contexts (personas) and the tasks written for them "
             "(1 = the poorest, 3 = the best).",
    criteria=tuple(Criterion(name, definition, mean=Published(mean, f"Table 4, row {name}, Judgment"),
                             agreement=Published(agreement, f"Table 4, row {name}, Agreement"))
                   for name, definition, mean, agreement in (
        ("Context Diversity", "the set of contexts reflects a set of diverse interpretive perspectives",
         2.7647, 0.3896),
        ("Realistic Views", "the contexts appear realistic and plausible, simulating different viewpoints in "
                            "reality", 2.8529, 0.4217),
        ("Instruction Suitability", "the suitability of the tasks for guiding meme interpretation", 2.7941,
         0.4488),
        ("Task Coverage", "the combination of tasks enables a comprehensive understanding of the meme", 2.7831,
         0.4986),
        ("Relevance to Context", "the relevance between each task and its associated context", 2.9118,
         0.5429))),
    coefficient=_UNNAMED,
    overall=Published(0.7333, "Table 4 caption: \"The intra-judge agreement is 0.7333\""))

STUDIES = {s.task: s for s in (GUIDELINE_STUDY, ROUND_STUDY, CONTEXT_STUDY)}


def items(store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]:
    """`n` battles of the headline setting, one per (task, pair), the answers in a seeded order."""
    run_id, seed, config = run["id"], run.get("seed"), run.get("config") or {}
    setting = (config.get("settings") or ["fused"])[0]
    battles = {b["battle"]: b for b in store.records(run_id, "battle")
               if b["setting"] == setting and b.get("joint", {}).get(OVERALL) is not None}
    tasks = {t["task"]: t for t in store.records(run_id, "task")}
    answers = {(a["task"], a["target"]): a.get("text") or "" for a in store.records(run_id, "answer")}
    memes = {m["id"]: m for m in store.records(run_id, "meme")}
    blind = blinder([*config.get("targets", []), *config.get("added_targets", []), *config.get("judges", [])])
    out = []
    for stratum, key in stratified(group((" vs ".join(sorted((b["model_a"], b["model_b"]))), k)
                                         for k, b in battles.items()), n, rng(seed, "pair")):
        b = battles[key]
        swapped = random.Random(f"{seed}:rate:swap:{key}").random() < 0.5
        first, second = (b["model_b"], b["model_a"]) if swapped else (b["model_a"], b["model_b"])
        meme = memes.get(b["meme"], {})
        out.append(Item(item_id("pair", key), "pair", key, stratum, {
            "task": "pair", "text": blind(meme.get("text") or ""), "image": images.get(b["meme"]),
            "instruction": blind(tasks.get(b["task"], {}).get("prompt") or ""),
            "answer_a": blind(answers.get((b["task"], first), "")),
            "answer_b": blind(answers.get((b["task"], second), "")),
            "questions": list(PAIR_QUESTIONS)}, swapped))
    return out + quality_items(store, run, n, images, blind, memes, tasks)


def quality_items(store: Store, run: dict[str, Any], n: int, images: Pictures, blind,
                  memes: dict[str, Any], tasks: dict[str, Any]) -> list[Item]:
    """`n` items of each quality study (see the module doc), every shown text blinded."""
    seed = run.get("seed")
    run_id = run["id"]
    out: list[Item] = []

    def meme_of(meme: str) -> dict[str, Any]:
        return {"text": blind((memes.get(meme) or {}).get("text") or ""), "image": images.get(meme)}

    guidelines = {g["task"]: g for g in store.records(run_id, "guideline") if g.get("ok") and g.get("text")}
    for stratum, key in stratified(group((g["meme"], k) for k, g in guidelines.items()), n, rng(seed, "guideline")):
        g = guidelines[key]
        out.append(quality_item(GUIDELINE_STUDY, key, stratum, [
            ("The task", blind((tasks.get(key) or {}).get("prompt") or "")),
            ("The fused guideline", blind(g["text"]))], **meme_of(g["meme"])))
    rounds = {f"{r['task']}|{r['round']:02d}": r for r in store.records(run_id, "fusion_round")
              if r.get("ok") and r.get("guideline")}
    for stratum, key in stratified(group((str(r["round"]), k) for k, r in rounds.items()), n,
                                   rng(seed, "guideline_round")):
        r = rounds[key]
        task = tasks.get(r["task"]) or {}
        out.append(quality_item(ROUND_STUDY, key, stratum, [
            ("The task", blind(task.get("prompt") or "")),
            (f"The guideline after round {r['round']}", blind(r["guideline"]))], **meme_of(task.get("meme", ""))))
    by_meme: dict[str, list[dict[str, Any]]] = {}
    for t in sorted(tasks.values(), key=lambda t: t.get("index", 0)):
        by_meme.setdefault(t["meme"], []).append(t)
    contexts = {c["meme"]: c for c in store.records(run_id, "context") if c.get("ok") and c.get("personas")}
    for stratum, meme in stratified(group((((memes.get(m) or {}).get("labels") or ["unlabelled"])[0], m)
                                          for m in contexts), n, rng(seed, "context")):
        personas = contexts[meme]["personas"]
        shown = [(f"Context {i}", blind(p)) for i, p in enumerate(personas, start=1)]

        def context_of(task: dict, personas: list = personas) -> str:
            return str(personas.index(task["persona"]) + 1) if task.get("persona") in personas else "?"

        shown += [(f"Task {t.get('index', i)} (for context {context_of(t)})", blind(t.get("prompt") or ""))
                  for i, t in enumerate(by_meme.get(meme, []), start=1)]
        out.append(quality_item(CONTEXT_STUDY, meme, stratum, shown, **meme_of(meme)))
    return out


def round_groups(store: Store, run: dict[str, Any]) -> dict[str, str]:
    """Fusion round key → its round number (the groups of Figure 6)."""
    return {f"{r['task']}|{r['round']:02d}": str(r["round"]) for r in store.records(run["id"], "fusion_round")}


def meme_paths(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    return {m["id"]: m.get("image") for m in store.records(run["id"], "meme")}


def imported(store: Store, run: dict[str, Any]) -> list[HumanRating]:
    """The votes of an arena's `human_votes:` file (`human_vote`), matched to their battles, as ratings."""
    votes = store.records(run["id"], "human_vote")
    if not votes:
        return []
    setting = ((run.get("config") or {}).get("settings") or ["fused"])[0]
    battles = [b for b in store.records(run["id"], "battle") if b["setting"] == setting]
    return [HumanRating(rater=CSV_RATER, item=item_id("pair", battle["battle"]), task="pair",
                        source=battle["battle"], origin="csv", choices={"overall": outcome})
            for outcome, battle in match_votes(votes, battles)]


def three_way(winner: str | None) -> str | None:
    """A judge's or person's outcome as the paper compares them: A, B or tie (both tie kinds alike)."""
    return TIE if winner in (TIE, TIE_BOTHBAD) else winner


def section(store: Store, run: dict[str, Any], by_task: dict[str, ByRater], seed: int) -> dict[str, Any]:
    out = {"pairs": pair_section(store, run, by_task["pair"], seed)} if "pair" in by_task else {}
    quality = {task: quality_section(study, by_task[task], seed,
                                     round_groups(store, run) if study.by else None)
               for task, study in STUDIES.items() if task in by_task}
    if quality:
        out["quality"] = quality
    return out


def pair_section(store: Store, run: dict[str, Any], per_rater: ByRater, seed: int) -> dict[str, Any]:
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
        raters, shared, m = complete(per_rater, code)
        m = m.astype(int)
        out["between_raters"] = {
            "raters": raters,
            "fleiss_kappa": stats.interval(lambda idx: stats.fleiss_kappa(stats.category_counts(m[idx], range(3))),
                                           len(shared), seed),
            "mean_pairwise_kappa": stats.interval(lambda idx: stats.mean_pairwise_kappa(m[idx]), len(shared), seed),
            "krippendorff_alpha_nominal": alpha(per_rater, code, "nominal", seed)}
    return out


def blocks(section: dict[str, Any]) -> list[Block]:
    quality = [b for study in (section.get("quality") or {}).values() for b in quality_blocks(study)]
    if "pairs" not in section:
        return quality
    pairs = section["pairs"]
    judges = list(dict.fromkeys(j for r in pairs["vs_judges"].values() for j in r))
    rows = [[text(rater), *[ci_cell(r[j], percent=True, with_n=True) for j in judges]]
            for rater, r in pairs["vs_judges"].items()]
    dims = list(dict.fromkeys(d for r in pairs["vs_joint_by_dimension"].values() for d in r))
    dim_rows = [[text(rater), *[ci_cell(r[d], percent=True) for d in dims]]
                for rater, r in pairs["vs_joint_by_dimension"].items()]
    return [Block("table", "MemeArena: accuracy of each judge against each person's overall vote "
                           "(App. C, Table 5; A / B / tie; a judge does not judge its own battles)",
                  table=table(["rater", *judges], rows)),
            Block("table", "MemeArena: agreement with the joint vote per dimension",
                  table=table(["rater", *dims], dim_rows)),
            *between_blocks("MemeArena votes", pairs.get("between_raters"),
                            {"fleiss_kappa": "Fleiss' κ (battles every person voted on)",
                             "mean_pairwise_kappa": "mean pairwise Cohen's κ",
                             "krippendorff_alpha_nominal": "Krippendorff's α, nominal"}), *quality]


PART = RatingPart(items=items, section=section, blocks=blocks, imported=imported, meme_paths=meme_paths,
                  tasks=("pair", *STUDIES))
