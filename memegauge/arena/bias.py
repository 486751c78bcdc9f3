"""MemeArena bias study (paper §3.3, App. B): how far a judge's ranking strays from the joint one.

NDCG@n of a judge's ranking against the reference (joint-vote) ranking of the same P models::

    rel(m)  = P − p(m)          p(m) = m's 1-based position in the reference ranking
    DCG@n   = Σ_{i=1..n} rel(judge_ranking[i]) / log2(i + 1)   i = 1-based position in the judge's
    IDCG@n  = Σ_{i=1..n} (P − i) / log2(i + 1)                  the reference's own DCG@n
    NDCG@n  = DCG@n / IDCG@n                                    in [0, 1]; 1 = same order

The reference's top model has relevance P − 1 and its last model 0 (paper App. B: rel_p = P − p).

The per-judge study (`judge_ndcg`): each judge's verdicts alone are ranked by Bradley–Terry and compared
with the joint vote's Bradley–Terry ranking of the same battles' setting. When a judge never sees some
models (with self-judging off it never judges battles with its own answer, so it cannot rank itself),
both rankings are restricted to the models the judge did rank, so NDCG compares like with like.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memegauge.arena.ranking import compute_bt

__all__ = ["ndcg_at_n", "bt_ranking", "judge_ndcg"]


def ndcg_at_n(
    judge_ranking: Sequence[str], reference_ranking: Sequence[str], n: int | None = None
) -> float:
    """NDCG@n of `judge_ranking` against `reference_ranking` (both best first), see the module doc.

    Both rankings must hold the same models, each once. `n` defaults to P (all models) and must be
    in 1..P. With a single model (IDCG = 0) the only possible ranking is the reference: 1.0.
    """
    judge, reference = list(judge_ranking), list(reference_ranking)
    total = len(reference)
    if total == 0:
        raise ValueError("the reference ranking is empty")
    for name, ranking in (("judge", judge), ("reference", reference)):
        if len(set(ranking)) != len(ranking):
            duplicates = sorted({m for m in ranking if ranking.count(m) > 1})
            raise ValueError(f"the {name} ranking lists models more than once: {duplicates}")
    if set(judge) != set(reference):
        missing = sorted(set(reference) - set(judge))
        extra = sorted(set(judge) - set(reference))
        raise ValueError(
            "the rankings must hold the same models; "
            f"judge lacks {missing}, judge has extra {extra}"
        )
    n = total if n is None else n
    if not 1 <= n <= total:
        raise ValueError(f"n must be in 1..{total}, got {n}")
    relevance = {model: total - position for position, model in enumerate(reference, start=1)}
    discounts = 1.0 / np.log2(np.arange(2, n + 2))  # position i -> 1 / log2(i + 1)
    dcg = float(np.dot([relevance[m] for m in judge[:n]], discounts))
    idcg = float(np.dot(total - np.arange(1, n + 1), discounts))
    return 1.0 if idcg == 0 else dcg / idcg


def bt_ranking(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Models best first by Bradley–Terry rating (name order on equal ratings); [] without battles."""
    if not records:
        return []
    ratings = compute_bt(list(records))
    return sorted(ratings, key=lambda m: (-ratings[m], m))


def judge_ndcg(judge_records: Mapping[str, Sequence[Mapping[str, Any]]],
               joint_records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """{judge: {ndcg, ranking, battles}} — NDCG@P of each judge's BT ranking against the joint one,
    P = the number of models the judge ranked (see the module doc); ndcg None below two models."""
    joint = bt_ranking(joint_records)
    out = {}
    for judge, records in judge_records.items():
        ranking = bt_ranking(records)
        reference = [m for m in joint if m in set(ranking)]
        ok = len(ranking) >= 2 and len(reference) == len(ranking)
        out[judge] = {"ndcg": ndcg_at_n(ranking, reference) if ok else None, "ranking": ranking,
                      "battles": len(records)}
    return out
