"""Misbelief narration (§2.2, Eq. 4; Fig. 9): one generic misbelief sentence per (meme, category).

The Narrator (temperature 0) answers `{"misbelief": "..."}`. It is asked only for the sampled pairs —
the only ones any later stage reads — which gives the same result as narrating every mined pair at a
fraction of the calls. A pair whose narration failed is recorded with its error class and left out
of scoring (it has no misbelief to retrieve by), never given an invented sentence.
"""

from __future__ import annotations


from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.messages import MemeView, agent_request, json_output
from memegauge.adammeme.records import MisbeliefRecord, SamplingRecord
from memegauge.engine import Engine
from memegauge.parse import parse_json
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, Meme, ParseFailure

STAGE = "adammeme.misbelief"
SCHEMA = {"type": "object", "properties": {"misbelief": {"type": "string", "maxLength": 240}},
          "required": ["misbelief"]}


def parse_misbelief(text: str) -> str | ParseFailure:
    value = parse_json(text)
    if isinstance(value, ParseFailure):
        return value
    sentence = value.get("misbelief") if isinstance(value, dict) else None
    if not isinstance(sentence, str) or not sentence.strip():
        return ParseFailure(reason='expected {"misbelief": "<sentence>"}', text=text[:500])
    return sentence.strip()


def narrator_request(meme: Meme, category: str, cfg: AdamConfig) -> ChatRequest:
    """The Narrator (temperature 0) on one (meme, category) pair."""
    prompt = render_prompt("adammeme_narrator", text=meme.text, task=category)
    return agent_request(cfg.agent, [*MemeView.original(meme).parts(), prompt], stage=STAGE, temperature=0,
                         max_tokens=cfg.max_tokens.narrator, output=json_output(SCHEMA, "misbelief"))


async def narrate(plan: dict[str, SamplingRecord], memes: dict[str, Meme], engine: Engine,
                  cfg: AdamConfig) -> list[MisbeliefRecord]:
    """The misbelief of every sampled pair (a failed call is a record with its class, no sentence)."""
    pairs = [(c, m) for c, entry in plan.items() for m in entry.sampled]
    outcomes = await engine.chat_many([narrator_request(memes[m], c, cfg) for c, m in pairs],
                                      parse=parse_misbelief)
    return [MisbeliefRecord(category=c, meme=m, ok=o.ok, misbelief=o.value,
                            error_class=o.error_class.value if o.error_class else None)
            for (c, m), o in zip(pairs, outcomes, strict=True)]
