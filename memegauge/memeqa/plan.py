"""The planned calls of `qa eval` (`--dry-run`, and the progress's total): one call per question, or
per rotation of its options when circular — exact; each prompt rendered as the run renders it, so
its words are counted (the picture is counted by the estimate, per call)."""

from __future__ import annotations

from memegauge.engine.estimate import PlannedCalls
from memegauge.memeqa.evaluate import MAX_NEW_TOKENS, STAGE, presentations, qa_prompt


def plan_eval(questions, memes, *, model: str, version: str, circular: bool) -> list[PlannedCalls]:
    words = [len(qa_prompt(q, shown.options, version).split())
             for q in questions for shown in presentations(q, circular)]
    return [PlannedCalls(stage=STAGE, model=model, calls=len(words), max_tokens=MAX_NEW_TOKENS,
                         prompt_words=sum(words) / max(len(words), 1), images=1,
                         note="questions × rotations" if circular else "one per question")]
