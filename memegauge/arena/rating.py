"""MemeArena's rating part (`memegauge.rating.part.RatingPart`): people vote on battles of the headline
setting (A / B / tie per dimension and overall), one stratum per model pair; the report compares the
votes with each judge and the joint vote (App. C, Table 5). Blinding: which answer is A is a seeded
coin per battle (`Item.swapped`), and every model name in a shown text is replaced (`blinder`)."""

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
    return out


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
    return {"pairs": pair_section(store, run, by_task["pair"], seed)} if "pair" in by_task else {}


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
    if "pairs" not in section:
        return []
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
                             "krippendorff_alpha_nominal": "Krippendorff's α, nominal"})]


PART = RatingPart(items=items, section=section, blocks=blocks, imported=imported, meme_paths=meme_paths)
