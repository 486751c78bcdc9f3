"""Reference generation (§2.3, Eq. 5; Fig. 10): wisdom of crowds, then a senior summariser.

`candidates` agents (temperature 1, distinct sample indexes) answer the analysis question; a senior
agent (temperature 0) picks the best or writes a better one under `## Final Response:`, which is the
reference. Answers are computed on the scoring view (erased picture + meme text), so the references of
the original memes are target-independent and shared by every target; a rewritten text gets a fresh
reference. With `--repeat`, repeat r draws candidates r·k … r·k+k−1, so repeats are independent draws.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from collections.abc import Iterator

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.messages import MemeView, agent_request
from memegauge.adammeme.records import ReferenceRecord
from memegauge.engine import Engine
from memegauge.parse import parse_final_response
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest

STAGE = "adammeme.reference"


_DESCRIPTIONS: ContextVar[dict[str, str]] = ContextVar("adammeme_category_descriptions", default={})  # noqa: B039 (only read)


@contextmanager
def asking_about(descriptions: dict[str, str]) -> Iterator[None]:
    """Within the block, the analysis question of a category names its description (the run sets it
    once from the taxonomy; the context carries it into every reference, answer, score and step)."""
    token = _DESCRIPTIONS.set(descriptions)
    try:
        yield
    finally:
        _DESCRIPTIONS.reset(token)


def question(view: MemeView, category: str) -> str:
    """The analysis question every answering model gets (Fig. 10, upper), category-specific when the
    run asks with descriptions (`analysis_question: description`)."""
    return render_prompt("adammeme_question", task=category, text=view.text,
                         description=_DESCRIPTIONS.get().get(category, ""))


def candidate_requests(view: MemeView, category: str, cfg: AdamConfig, repeat: int) -> list[ChatRequest]:
    """The `candidates` crowd answers (temperature 1) of one repeat."""
    prompt = question(view, category)
    first = repeat * cfg.candidates
    return [agent_request(cfg.agent, [*view.parts(), prompt], stage=STAGE + ".candidate", temperature=1.0,
                          max_tokens=cfg.max_tokens.candidate, sample_index=first + i)
            for i in range(cfg.candidates)]


def senior_request(view: MemeView, answers: list[str], cfg: AdamConfig) -> ChatRequest:
    """The senior agent (temperature 0) choosing among, or improving on, the crowd's answers."""
    prompt = render_prompt("adammeme_senior", meme_text=view.text, responses=answers)
    return agent_request(cfg.agent, [*view.parts(), prompt], stage=STAGE + ".senior", temperature=0,
                         max_tokens=cfg.max_tokens.senior)


async def build_reference(view: MemeView, category: str, engine: Engine, cfg: AdamConfig,
                          repeat: int) -> ReferenceRecord:
    """The reference for one (view, category) in one repeat (a failed call: no reference, its class)."""
    outcomes = await engine.chat_many(candidate_requests(view, category, cfg, repeat))
    answers = [o.value for o in outcomes if o.ok]
    pair = {"repeat": repeat, "category": category, "meme": view.meme.id}
    if not answers:
        return ReferenceRecord(**pair, ok=False, reference=None, candidates=[], failed_stage="reference",
                               error_class=outcomes[0].error_class.value)
    senior = await engine.chat(senior_request(view, answers, cfg), parse=parse_final_response)
    return ReferenceRecord(**pair, ok=senior.ok, reference=senior.value, candidates=answers,
                           failed_stage=None if senior.ok else "reference",
                           error_class=senior.error_class.value if senior.error_class else None)
