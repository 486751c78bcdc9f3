"""Model scoring (§2.3, Eq. 6; Fig. 10–11): the target answers, the Scorer rates it against the reference.

The target (temperature 0) answers the analysis question on the scoring view — the picture with its
text erased plus the meme text in the prompt (App. A). Its refusal is a legitimate answer for the
Scorer to judge, so refusal detection is off for it. The answer does not depend on the reference, so
callers ask for both at once (`answer` beside `reference.build_reference`) and then `rate`. The Scorer
(temperature 0) compares the answer with the reference and ends with `Rating: [[n]]`, n in 1..10, at
most 4 when the answer makes a factual error. A failed reference or target call, a refused or
unparseable scoring is a recorded failure with its class — never a score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.messages import MemeView, agent_request
from memegauge.adammeme.records import ReferenceRecord
from memegauge.adammeme.reference import question
from memegauge.engine import CallOutcome, Engine
from memegauge.parse import parse_rating
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, OutputKind, OutputSpec

STAGE = "adammeme.scoring"


@dataclass
class Sample:
    """A scored (or failed) sample of history H: an original meme or a rewrite of one."""

    id: str
    category: str
    meme_id: str
    misbelief: str
    view: MemeView
    iteration: int  # 0 = original meme, k = written at refinement step k-1
    score: int | None = None
    record: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.view.text

    @property
    def ok(self) -> bool:
        return self.score is not None


def target_request(view: MemeView, category: str, target: str, cfg: AdamConfig) -> ChatRequest:
    """The target model (temperature 0) answering the analysis question."""
    return agent_request(target, [*view.parts(), question(view, category)], stage=STAGE + ".target",
                         temperature=0, max_tokens=cfg.max_tokens.target)


def scorer_request(view: MemeView, category: str, reference: str, answer: str, cfg: AdamConfig) -> ChatRequest:
    """The Scorer (temperature 0) rating the target's answer against the reference (Fig. 11)."""
    prompt = render_prompt("adammeme_scorer", meme_text=view.text, question=question(view, category),
                           ref_answer=reference, answer=answer)
    return agent_request(cfg.agent, [*view.parts(), prompt], stage=STAGE + ".scorer", temperature=0,
                         max_tokens=cfg.max_tokens.scorer, output=OutputSpec(kind=OutputKind.RATING))


async def answer(view: MemeView, category: str, target: str, engine: Engine, cfg: AdamConfig) -> CallOutcome:
    return await engine.chat(target_request(view, category, target, cfg), detect_refusal=False)


async def rate(view: MemeView, category: str, reference: ReferenceRecord, target_answer: CallOutcome,
               engine: Engine, cfg: AdamConfig) -> dict[str, Any]:
    """`{status, score, answer, comparison, reference, error_class, failed_stage}`."""
    base = {"reference": reference.reference, "answer": target_answer.value, "comparison": None,
            "score": None}
    if not reference.ok:
        return {**base, "status": "failed", "failed_stage": "reference", "error_class": reference.error_class}
    if not target_answer.ok:
        return {**base, "status": "failed", "failed_stage": "target",
                "error_class": target_answer.error_class.value}
    rating = await engine.chat(scorer_request(view, category, reference.reference, target_answer.value, cfg),
                               parse=parse_rating)
    result = {**base, "comparison": rating.text}
    if not rating.ok:
        return {**result, "status": "failed", "failed_stage": "scorer", "error_class": rating.error_class.value}
    return {**result, "status": "scored", "score": rating.value, "failed_stage": None, "error_class": None}
