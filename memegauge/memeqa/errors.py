"""Error analysis of None+ (paper Table 4): one model's accuracy on None− and None+, split by
whether None+ replaced a correct option or a wrong one, and by single- vs multi-answer questions.

Only questions scored in both runs count (same ids); Sentiment ID is left out, as None+ never
changes it. Whether a correct option was replaced is read off the two records themselves: the None+
question keeps fewer of its real options correct than the None− one had.

Each cell's figures carry their 95% interval and n under `intervals` (`memegauge.report.intervals`): the
two accuracies as Wilson intervals clustered by meme picture, their difference as Newcombe's paired
interval (the same questions asked twice) built on those.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.memeqa.dataset import NONE_INDEX, NONE_OF_THE_ABOVE
from memegauge.report import intervals as ci

CELLS = (("incorrect_replaced", "single"), ("incorrect_replaced", "multi"),
         ("correct_replaced", "single"), ("correct_replaced", "multi"))


def correct_replaced(minus: dict[str, Any], plus: dict[str, Any]) -> bool:
    """Did None+ turn a correct option of this question into "None of the above"?"""
    has_none = len(plus["options"]) > NONE_INDEX and plus["options"][NONE_INDEX] == NONE_OF_THE_ABOVE
    real_gold = [g for g in plus["gold"] if not (has_none and g == NONE_INDEX)]
    return len(real_gold) < len(minus["gold"])


def table4(minus_records: list[dict[str, Any]], plus_records: list[dict[str, Any]]) -> dict[str, Any]:
    """``{cell: {n, none_minus, none_plus, difference, intervals: {none_minus, none_plus, difference}}}``
    plus the number of paired questions."""
    plus_by_id = {r["id"]: r for r in plus_records}
    rows = []
    for m in minus_records:
        p = plus_by_id.get(m["id"])
        if p is None or m["correct"] is None or p["correct"] is None or m["options"] == p["options"]:
            continue  # unpaired, unscored, or unchanged by None+ (Sentiment ID)
        kind = "correct_replaced" if correct_replaced(m, p) else "incorrect_replaced"
        rows.append((kind, m["general_type"], bool(m["correct"]), bool(p["correct"]), str(m.get("img"))))
    cells = {}
    for kind, general in CELLS:
        mine = [(a, b, img) for k, g, a, b, img in rows if k == kind and g == general]
        hits = np.array([(a, b) for a, b, _ in mine], dtype=float).reshape(len(mine), 2)
        memes = [img for _, _, img in mine]
        minus, plus = ci.rate(hits[:, 0], memes), ci.rate(hits[:, 1], memes)
        found = {"none_minus": minus, "none_plus": plus,
                 "difference": ci.paired_difference(hits[:, 0], hits[:, 1], minus, plus)}
        cells[f"{kind}.{general}"] = {"n": len(mine), **{k: f["value"] for k, f in found.items()},
                                      "intervals": found}
    return {"paired_questions": len(rows), "cells": cells}
