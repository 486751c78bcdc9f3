"""Target answers (paper §2.2, Fig. 9): every target answers every task at temperature 0 in the
chain-of-thought format ``[Background Knowledge]`` then ``[Reasoning]``.

A refusal is a legitimate (weak) answer to be judged, so refusal detection is off here. The two sections
are parsed; a missing one is recorded (``missing_sections``), not an error: Instruction Following is
exactly what the judges assess. A call that still fails after the engine's retries is recorded with its
class and the answer takes part in nothing downstream.
"""

from __future__ import annotations

from typing import Any

from memegauge.arena.common import ANSWER_SECTIONS, failure_fields, meme_part
from memegauge.arena.records import AnswerRecord
from memegauge.engine import Engine
from memegauge.parse import parse_sections_partial
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, Meme, Message, OutputKind, OutputSpec, SamplingParams

STAGE = "arena.answers"


def answer_request(meme: Meme, task_prompt: str, target: str, max_tokens: int) -> ChatRequest:
    return ChatRequest(
        model=target,
        messages=[Message.user(meme_part(meme), render_prompt("arena_answer", task=task_prompt))],
        params=SamplingParams(temperature=0.0, max_tokens=max_tokens),
        output=OutputSpec(kind=OutputKind.TEXT, sections=ANSWER_SECTIONS), stage=STAGE)


def answer_record(task: dict[str, Any], target: str, text: str | None,
                  failure: dict[str, Any]) -> dict[str, Any]:
    sections = parse_sections_partial(text or "", list(ANSWER_SECTIONS)) if failure["ok"] else {}
    return {"task": task["task"], "meme": task["meme"], "target": target, "text": text,
            "sections": sections,
            "missing_sections": [s for s in ANSWER_SECTIONS if s not in sections] if failure["ok"] else [],
            **failure}


async def answer_tasks(tasks: list[dict[str, Any]], memes: dict[str, Meme], targets: list[str],
                       max_tokens: int, engine: Engine) -> dict[str, dict[str, Any]]:
    """`answer` records (`AnswerRecord`) keyed `<task>|<target>`."""
    jobs = [(t, target) for t in tasks for target in targets]
    outcomes = await engine.chat_many(
        [answer_request(memes[t["meme"]], t["prompt"], target, max_tokens) for t, target in jobs],
        detect_refusal=False)
    records = {AnswerRecord.key_of(task=t["task"], target=target):
               answer_record(t, target, o.text, failure_fields(o))
               for (t, target), o in zip(jobs, outcomes, strict=True)}
    return records
