"""Agreement with people (§3.4, App. D): human scores vs the Scorer (Table 3) and human category
labels vs the Miners' majority vote (Table 8).

Inputs are CSV files: scores `sample_id,score` (a sample id as the report's `details` lists it, e.g.
`gpt-4o/0/race/meme-7` or a refinement step's id) and labels `meme_id,categories` (categories separated
by `|` or `;`, empty = harmless). `read_*` validate them into one InputError naming file, line and fix.

* `score_agreement`: ICC(2,1) (two-way random effects, absolute agreement, single rater) between agent
  and human scores, and for FR the same ICC on the 0/1 "score passes" lists the paper describes (pass =
  not a failure under the run's `FailureRule`),
  with their raw agreement and Cohen's κ beside.
* `label_agreement`: Cohen's κ over every (meme, category) yes/no decision, and accuracy as the share of
  memes whose human category set equals the Miners' vote (the paper's multiple-choice accuracy).
* `annotator_agreement`: with several annotators, each one's `label_agreement` with the vote, and κ
  between every pair of annotators (Table 8's 0.767 is the mean κ among three annotators).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import numpy as np

from memegauge.adammeme.metrics import FailureRule
from memegauge.adammeme.taxonomy import normalise_name
from memegauge.files import read_csv_rows
from memegauge.rating.stats import cohen_kappa, icc_2_1
from memegauge.errors import InputError


def score_agreement(agent: Sequence[float], human: Sequence[float], rule: FailureRule) -> dict[str, Any]:
    a, h = np.asarray(agent, dtype=float), np.asarray(human, dtype=float)
    passed_a, passed_h = (~rule.fails(a)).astype(int), (~rule.fails(h)).astype(int)
    return {"n": int(a.size),
            "agent_avg_score": float(a.mean()) if a.size else None,
            "human_avg_score": float(h.mean()) if h.size else None,
            "agent_failure_rate": float(1 - passed_a.mean()) if a.size else None,
            "human_failure_rate": float(1 - passed_h.mean()) if h.size else None,
            "score_icc": icc_2_1(np.column_stack([a, h])) if a.size else None,
            "fr_icc": icc_2_1(np.column_stack([passed_a, passed_h])) if a.size else None,
            "fr_raw_agreement": float((passed_a == passed_h).mean()) if a.size else None,
            "fr_kappa": cohen_kappa(passed_a, passed_h)}


def label_agreement(votes: dict[str, list[str]], human: dict[str, list[str]],
                    categories: Sequence[str]) -> dict[str, Any]:
    memes = sorted(set(votes) & set(human))
    agent_flat = [c in votes[m] for m in memes for c in categories]
    human_flat = [c in human[m] for m in memes for c in categories]
    exact = [set(votes[m]) == set(human[m]) for m in memes]
    return {"n": len(memes), "accuracy": float(np.mean(exact)) if memes else None,
            "kappa": cohen_kappa(agent_flat, human_flat)}


def annotator_agreement(votes: dict[str, list[str]], annotators: dict[str, dict[str, list[str]]],
                        categories: Sequence[str]) -> dict[str, Any]:
    """Table 8 with several annotators: each one against the Miners' vote (`label_agreement`), their
    mean accuracy, and Cohen's κ between every pair of annotators over the (meme, category) yes/no
    decisions of the memes both labelled, with the mean κ (the paper's 0.767 is such a mean, over
    three annotators)."""
    per = {a: label_agreement(votes, labels, categories) for a, labels in annotators.items()}
    pairs = [{"a": a, "b": b, **label_agreement(annotators[a], annotators[b], categories)}
             for a, b in itertools.combinations(sorted(annotators), 2)]
    accuracies = [v["accuracy"] for v in per.values() if v["accuracy"] is not None]
    kappas = [p["kappa"] for p in pairs if p["kappa"] is not None]
    return {"per_annotator": per, "mean_accuracy": float(np.mean(accuracies)) if accuracies else None,
            "pairs": [{k: p[k] for k in ("a", "b", "n", "kappa")} for p in pairs],
            "mean_pairwise_kappa": float(np.mean(kappas)) if kappas else None}


def _rows(path: Path, columns: tuple[str, str]) -> list[tuple[str, str, str]]:
    if not Path(path).is_file():
        raise InputError("file not found", str(path), "check the path of the CSV file")
    rows = [(f"{path}:{line}", *row) for line, row in read_csv_rows(path) if any(c.strip() for c in row)]
    if rows and rows[0][1].strip().lower() in (columns[0], "id", "sample", "meme"):
        rows = rows[1:]
    for where, *cells in rows:
        if len(cells) < 2 or not cells[0].strip():
            raise InputError(f"expected two columns {columns[0]},{columns[1]}", where,
                             f"write one `{columns[0]},{columns[1]}` pair per line")
    return [(where, cells[0].strip(), cells[1].strip()) for where, *cells in rows]


def read_human_scores(path: Path) -> dict[str, int]:
    scores = {}
    for where, sample, value in _rows(path, ("sample_id", "score")):
        try:
            score = float(value)
        except ValueError:
            raise InputError(f"score {value!r} is not a number", where, "give a score from 1 to 10") from None
        if not 1 <= score <= 10:
            raise InputError(f"score {value} is outside 1..10", where, "give a score from 1 to 10")
        scores[sample] = score
    return scores


def read_human_labels(path: Path) -> dict[str, list[str]]:
    return {meme: [normalise_name(c) for c in re.split(r"[|;]", value) if c.strip()]
            for _, meme, value in _rows(path, ("meme_id", "categories"))}
