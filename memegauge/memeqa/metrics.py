"""MemeQA figures from question records: pure, vectorised functions (no I/O, no model).

* accuracy per type = correct / scored questions of that type (a failed call is not scored);
* macro = unweighted mean over the types that have scored questions (the paper's "Macro Average"
  over its 11 types); micro = correct / scored over all questions;
* parse_failure_rate = unparseable answers / scored questions (they count as wrong);
* format_warning: when more than `UNREADABLE_ABOVE` of the scored answers could not be read, the run's
  figures measure the model's output format, not its understanding of memes; the report, the tables and
  the exit status (3) say so (`format_warning`);
* random_baseline = the expected accuracy of guessing uniformly among the answers each prompt
  admits (1/n for single answers, 1/2^n subsets with 'N' in None−, 1/(2^n − 1) in None+), raised to
  the number of rotations under circular evaluation; computed from the questions actually asked, so
  it is the right yardstick for any subset, version or data set.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import numpy as np

from memegauge.memeqa.dataset import QUESTION_TYPES


def summarize(records: list[dict[str, Any]], types: Iterable[str] | None = None) -> dict[str, Any]:
    """Accuracy per type, macro, micro, parse failure rate, random baseline and counts."""
    order = list(types) if types is not None else [t.name for t in QUESTION_TYPES]
    scored = [r for r in records if r["correct"] is not None]
    kinds = np.array([r["type"] for r in scored], dtype=object)
    correct = np.array([bool(r["correct"]) for r in scored], dtype=float)
    parse_failed = np.array([bool(r["parse_failed"]) for r in scored], dtype=float)
    chance = np.array([1.0 / r["answer_space"] ** r["rotations"] for r in scored], dtype=float)
    present = [t for t in order if (kinds == t).any()]
    per_type = {t: float(correct[kinds == t].mean()) for t in present}
    baseline = {t: float(chance[kinds == t].mean()) for t in present}
    return {
        "accuracy": {t: per_type.get(t) for t in order},
        "macro": _mean(per_type.values()),
        "micro": float(correct.mean()) if len(scored) else None,
        "parse_failure_rate": float(parse_failed.mean()) if len(scored) else None,
        "random_baseline": {"macro": _mean(baseline.values()),
                            "micro": float(chance.mean()) if len(scored) else None,
                            "by_type": {t: baseline.get(t) for t in order}},
        "n": {t: int((kinds == t).sum()) for t in order},
        "n_questions": len(records),
        "n_scored": len(scored),
        "n_failed_calls": len(records) - len(scored),
    }


# More than half unreadable: the accuracy is then bounded by the format, below 50% whatever the model knows;
# a model that follows the prompt leaves a few percent (the realistic test server: 5%).
UNREADABLE_ABOVE = 0.5


def format_warning(records: list[dict[str, Any]]) -> str | None:
    """What to tell a user whose run's answers mostly could not be read (None when they could)."""
    scored = [r for r in records if r["correct"] is not None]
    unreadable = sum(bool(r["parse_failed"]) for r in scored)
    if not scored or unreadable <= UNREADABLE_ABOVE * len(scored):
        return None
    return (f"{unreadable} of {len(scored)} answers could not be read (more than "
            f"{UNREADABLE_ABOVE:.0%} of the scored answers): these figures measure the model's output format, "
            "not its understanding of memes. Check the raw answers (details[].raw, parse_error in the JSON "
            "report): a reasoning model spends the 10 answer tokens thinking, a chat template or system prompt "
            "makes it chat, or it answers in words instead of letters; fix the model's settings (models.yaml) "
            "or read its answers yourself and score them with `qa score`.")


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return float(np.mean(values)) if values else None
