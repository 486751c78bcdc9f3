"""Evaluate a model on MemeQA (paper §4.1, App. D): one greedy call per question, ≤10 new tokens.

Prompts: single-answer (one letter); select-all in None− (letters in alphabetical order, 'N' when no
option is right); select-all in None+ (letters; the last option is "None of the above"). The meme
image is attached as an `ImagePart` whose alt text is the meme text, so a vision model sees the
picture and a text-only model (the embedded one) reads the text instead.

Grading: the answer is read with `parse_choice`; a question is correct iff the chosen set equals
the gold set exactly. An answer that does not parse is wrong and counted as a parse failure. A call
that fails (server error, timeout … after the engine's retries) is recorded with its class and is
neither right nor wrong: it is left out of every accuracy and counted as failed.

`--circular` (as VLMEvalKit's CircularEval): the question is asked once per rotation of its options
and is correct only if every rotation is; "None of the above" stays last, because the None+ prompt
and the option's meaning ("of the above") need it there.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from memegauge.memeqa.dataset import NONE_OF_THE_ABOVE, Question
from memegauge.parse import parse_choice
from memegauge.prompts import render_prompt
from memegauge.types import (ChatRequest, ImagePart, Meme, Message, OutputKind, OutputSpec,
                            ParseFailure, SamplingParams)

MAX_NEW_TOKENS = 10
STAGE = "memeqa.evaluate"


@dataclass(frozen=True)
class Presentation:
    """One way of showing a question: options in some order and where the gold options went."""

    options: tuple[str, ...]
    gold: tuple[int, ...]
    rotation: int = 0


def presentations(question: Question, circular: bool = False) -> list[Presentation]:
    """The original order, or every rotation of the options ("None of the above" kept last)."""
    options = list(question.options)
    pinned = len(options) - 1 if options[-1] == NONE_OF_THE_ABOVE else None
    movable = [i for i in range(len(options)) if i != pinned]
    shifts = range(len(movable)) if circular else range(1)
    out = []
    for shift in shifts:
        order = movable[shift:] + movable[:shift] + ([pinned] if pinned is not None else [])
        new_index = {old: new for new, old in enumerate(order)}
        out.append(Presentation(tuple(options[i] for i in order),
                                tuple(sorted(new_index[g] for g in question.gold)), shift))
    return out


def allows_none_letter(question: Question, version: str) -> bool:
    """Only None− select-all questions may be answered 'N' (App. D)."""
    return question.multi and version == "none-minus"


def template_for(question: Question, version: str) -> str:
    if not question.multi:
        return "memeqa_single"
    return "memeqa_multi_none_letter" if version == "none-minus" else "memeqa_multi_none_option"


def answer_space(question: Question, version: str) -> int:
    """How many answers the prompt admits: n letters, or the (non-empty unless 'N') subsets."""
    n = len(question.options)
    if not question.multi:
        return n
    return 2 ** n if allows_none_letter(question, version) else 2 ** n - 1


def qa_prompt(question: Question, options: tuple[str, ...], version: str) -> str:
    letters = string.ascii_uppercase[:len(options)]
    return render_prompt(template_for(question, version), question=question.question,
                         options=list(options), letters=letters)


def qa_request(question: Question, presentation: Presentation, version: str, model: str,
               meme: Meme | None, stage: str = STAGE) -> ChatRequest:
    """The request for one presentation; `meme=None` asks without the meme (the trivial filter)."""
    parts: list[Any] = [qa_prompt(question, presentation.options, version)]
    if meme is not None:
        image = ImagePart.of(meme.image, alt_text=meme.as_text()) if meme.image else meme.as_text()
        parts.insert(0, image)
    output = OutputSpec(kind=OutputKind.CHOICE, n_options=len(presentation.options),
                        multi=question.multi, allow_none=allows_none_letter(question, version))
    return ChatRequest(model=model, messages=[Message.user(*parts)], stage=stage,
                       params=SamplingParams(temperature=0, max_tokens=MAX_NEW_TOKENS),
                       output=output)


def letters_of(indexes: tuple[int, ...] | None) -> str | None:
    if indexes is None:
        return None
    return "".join(string.ascii_uppercase[i] for i in indexes) or "N"


@dataclass(frozen=True)
class Graded:
    prediction: tuple[int, ...] | None  # None when the answer did not parse
    correct: bool
    parse_error: str


def grade(text: str, question: Question, presentation: Presentation, version: str) -> Graded:
    """Parse an answer text and compare it with the gold set (exact match)."""
    value = parse_choice(text, multi=question.multi, n_options=len(presentation.options),
                         allow_none=allows_none_letter(question, version), options=presentation.options)
    if isinstance(value, ParseFailure):
        return Graded(None, False, value.reason)
    return Graded(value, tuple(value) == presentation.gold, "")


def question_record(question: Question, version: str, texts: list[str | None],
                    error_classes: list[str | None], circular: bool) -> dict[str, Any]:
    """The stored outcome of one question (what the report's `details` show).

    `texts[k]` is the raw answer to presentation k (None when that call failed). `correct` is None
    when any call failed: the question is then not scored at all.
    """
    shown = presentations(question, circular)
    graded = [grade(t, question, p, version) if t is not None else None for t, p in zip(texts, shown, strict=True)]
    failed = any(g is None for g in graded)
    first = graded[0]
    return {
        "id": question.id, "type": question.specific_type, "general_type": question.general_type,
        "img": question.img, "question": question.question, "options": list(question.options),
        "gold": list(question.gold), "gold_letters": letters_of(question.gold),
        "prediction": letters_of(first.prediction) if first else None,
        "raw": texts[0], "correct": None if failed else all(g.correct for g in graded),
        "parse_failed": None if failed else any(g.prediction is None for g in graded),
        "parse_error": next((g.parse_error for g in graded if g and g.parse_error), ""),
        "error_class": next((e for e in error_classes if e), None),
        "answer_space": answer_space(question, version), "rotations": len(shown),
        "rotation_raw": texts if circular else None,
    }


async def evaluate_questions(questions: list[Question], memes: dict[str, Meme], *, model: str,
                             version: str, engine, circular: bool = False,
                             with_meme: bool = True, stage: str = STAGE) -> list[dict[str, Any]]:
    """Ask every question (every rotation when circular); one record per question, input order."""
    plan = [(q, p) for q in questions for p in presentations(q, circular)]
    requests = [qa_request(q, p, version, model, memes[q.img] if with_meme else None, stage)
                for q, p in plan]
    # Unparsed, refusals allowed: a refusal or a malformed answer is the model's answer (wrong),
    # not a call failure; only transport failures come back as failed outcomes.
    outcomes = await engine.chat_many(requests, parse=None, detect_refusal=False)
    records, cursor = [], 0
    for q in questions:
        count = len(presentations(q, circular))
        chunk = outcomes[cursor:cursor + count]
        cursor += count
        texts = [o.text if o.ok else None for o in chunk]
        errors = [o.error_class.value if o.error_class else None for o in chunk]
        records.append(question_record(q, version, texts, errors, circular))
    return records
