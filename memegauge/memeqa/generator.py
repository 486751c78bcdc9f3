"""The distractor generator (paper §3.3.3, App. E): asks a model for new wrong options of a question.

Five types have a generator prompt (cloze for both completions; Derivation, Intent, Visual and
Background ID); the generator sees the meme's caption and text, the correct answer(s) and every
distractor used before, and must answer in the prompt's format: a comma-separated list (cloze) or one
statement per line. The answer is parsed here; an answer with too few usable items is unparseable
(the engine retries it, then records the failure and the old distractors stay).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from memegauge.memeqa.dataset import Question
from memegauge.parse import ParseFailure
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, Message, OutputKind, OutputSpec, SamplingParams

TEMPLATES = {
    "Derivation Completion": "memeqa_gen_cloze",
    "Intent Completion": "memeqa_gen_cloze",
    "Derivation Identification": "memeqa_gen_derivation",
    "Intent Identification": "memeqa_gen_intent",
    "Visual Identification": "memeqa_gen_visual",
    "Background Identification": "memeqa_gen_background",
}
CLOZE = {"Derivation Completion", "Intent Completion"}
TEMPERATURE = 1.0  # fresh distractors each AF round: the paper's generator samples
MAX_TOKENS = {True: 48, False: 160}  # cloze words vs. sentences
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def has_generator(qtype: str) -> bool:
    return qtype in TEMPLATES


def generator_request(question: Question, context: dict[str, Any], old: list[str], model: str,
                      round_index: int, stage: str) -> ChatRequest:
    """The App. E prompt for `question`; `old` = every distractor it has had so far."""
    gold = set(question.gold)
    correct = [o for i, o in enumerate(question.options) if i in gold]
    k = len(question.options) - len(correct)
    cloze = question.specific_type in CLOZE
    variables = {"caption": context["caption"], "text": context["text"], "k": k,
                 "old": [o for o in old if o], "correct": correct}
    if cloze:
        variables |= {"sentence": question.question.split(": ", 1)[-1], "answer": correct[0]}
    prompt = render_prompt(TEMPLATES[question.specific_type], **variables)
    return ChatRequest(model=model, messages=[Message.user(prompt)], stage=stage,
                       sample_index=round_index,
                       params=SamplingParams(temperature=TEMPERATURE, max_tokens=MAX_TOKENS[cloze]),
                       output=OutputSpec(kind=OutputKind.TEXT))


def parse_items(text: str, k: int, cloze: bool, banned: list[str]) -> list[str] | ParseFailure:
    """The first `k` usable items: split on commas (cloze) or lines, bullets stripped, none equal
    to a correct answer or to each other (case-insensitively)."""
    pieces = text.replace("\n", ",").split(",") if cloze else text.split("\n")
    seen = {b.strip().lower() for b in banned}
    items = []
    for piece in pieces:
        item = _BULLET.sub("", piece).strip().strip("'\"").rstrip(".").strip()
        if item and item.lower() not in seen:
            seen.add(item.lower())
            items.append(item)
    if len(items) < k:
        return ParseFailure(reason=f"{len(items)} usable items, need {k}", text=text[:500])
    return items[:k]


def replace_distractors(question: Question, new: list[str]) -> Question:
    """The question with its wrong options replaced, in place, by `new` (order kept)."""
    gold = set(question.gold)
    fresh = iter(new)
    options = [o if i in gold else next(fresh) for i, o in enumerate(question.options)]
    return question.with_gold(options, gold)


def distractors_of(question: Question) -> list[str]:
    gold = set(question.gold)
    return [o for i, o in enumerate(question.options) if i not in gold]


async def generate(questions: list[Question], contexts: dict[str, dict[str, Any]],
                   history: dict[str, list[str]], *, model: str, engine, round_index: int,
                   stage: str) -> dict[str, list[str] | None]:
    """New distractors per question id (None where the generator failed)."""
    # Each question has its own parser (its k and banned items), so the calls are gathered one by
    # one: an unusable answer is then retried by the engine like any unparseable one.
    outcomes = await asyncio.gather(*(
        engine.chat(generator_request(q, contexts[q.img], history.get(q.id, []), model,
                                      round_index, stage), parse=_parser(q, history.get(q.id, [])))
        for q in questions))
    return {q.id: outcome.value if outcome.ok else None for q, outcome in zip(questions, outcomes, strict=True)}


def _parser(question: Question, old: list[str]):
    gold = set(question.gold)
    correct = [o for i, o in enumerate(question.options) if i in gold]
    k = len(question.options) - len(correct)
    return lambda text: parse_items(text, k, question.specific_type in CLOZE, correct + old)
