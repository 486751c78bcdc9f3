"""Context simulation (paper §2.2, Fig. 7): one agent at temperature 1 describes three social-media users
per meme — highly relevant, moderately relevant, unrelated — as ``[USER 1..3]: A person ...``.

Target-independent: computed once per meme and reused by every target (and, through the engine's
cache, by every later run over the same memes with the same agent and seed).
"""

from __future__ import annotations

from typing import Any

from memegauge.arena.common import failure_fields, meme_part
from memegauge.engine import Engine
from memegauge.parse import parse_labelled_lines
from memegauge.prompts import render_prompt
from memegauge.types import (ChatRequest, Meme, Message, OutputKind, OutputSpec, ParseFailure,
                            SamplingParams)

STAGE = "arena.contexts"
USERS = 3
_MIN_WORDS = 3  # "A person ..." with nothing said about them is not a profile


def context_request(meme: Meme, agent: str, max_tokens: int) -> ChatRequest:
    return ChatRequest(
        model=agent, messages=[Message.user(meme_part(meme), render_prompt("arena_context"))],
        params=SamplingParams(temperature=1.0, max_tokens=max_tokens),
        output=OutputSpec(kind=OutputKind.TEXT, sections=tuple(f"USER {i}" for i in range(1, USERS + 1))),
        stage=STAGE)


def parse_personas(text: str) -> list[str] | ParseFailure:
    """The three user profiles, each at least a few words long."""
    personas = parse_labelled_lines(text, "USER", USERS)
    if isinstance(personas, ParseFailure):
        return personas
    short = [i + 1 for i, p in enumerate(personas) if len(p.split()) < _MIN_WORDS]
    if short:
        return ParseFailure(reason=f"user profile(s) {short} too short to describe a person", text=text[:500])
    return personas


async def simulate_contexts(memes: list[Meme], agent: str, max_tokens: int,
                            engine: Engine) -> dict[str, dict[str, Any]]:
    """`context` records (`ContextRecord`) by meme id: {meme, ok, personas, error_class, error}."""
    outcomes = await engine.chat_many([context_request(m, agent, max_tokens) for m in memes],
                                      parse=parse_personas)
    records = {m.id: {"meme": m.id, "personas": o.value or [], **failure_fields(o)}
               for m, o in zip(memes, outcomes, strict=True)}
    return records
