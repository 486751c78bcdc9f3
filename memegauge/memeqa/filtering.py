"""Step 3 and the None− filter of MemeQA construction (paper §3.3.3, §3.5, App. C).

Adversarial filtering (AF): each round the discriminator answers every question (with the meme);
a question it gets wrong is hard enough and stays; every question it gets right has all its
distractors replaced — by the generator for the five types with a generator prompt, by a fresh
sample of other memes' answers for the others (Sentiment ID keeps its fixed options). Rounds go on
until the discriminator's accuracy stops falling or `max_rounds` is reached.

Trivial filter: a text-only model answers each question without the meme; whatever it answers
correctly can be answered without looking at the meme and is dropped.
"""

from __future__ import annotations

import random
from typing import Any
from collections.abc import Callable

from memegauge.memeqa.dataset import SENTIMENT, Question
from memegauge.memeqa.evaluate import evaluate_questions
from memegauge.memeqa.generator import distractors_of, generate, has_generator, replace_distractors
from memegauge.memeqa.records import AFRound, TrivialSummary
from memegauge.types import Meme

AF_STAGE = "memeqa.filtering.af"
TRIVIAL_STAGE = "memeqa.filtering.trivial"
Pool = Callable[[Question], list[str]]  # other memes' answers a question's distractors come from


def _accuracy(records: list[dict[str, Any]]) -> float:
    scored = [r for r in records if r["correct"] is not None]
    return sum(bool(r["correct"]) for r in scored) / len(scored) if scored else 0.0


def resample(question: Question, pool: list[str], old: list[str], seed: int, round_index: int) -> Question:
    """Distractors drawn afresh from other memes' answers, avoiding earlier ones when possible."""
    rng = random.Random(f"{seed}:af:{round_index}:{question.id}")
    gold = {question.options[i].strip().lower() for i in question.gold}
    k = len(question.options) - len(question.gold)
    fresh = sorted({p for p in pool if p.strip().lower() not in gold and p not in old})
    if len(fresh) < k:
        fresh += sorted({p for p in pool if p.strip().lower() not in gold} - set(fresh))
    return replace_distractors(question, rng.sample(fresh, k)) if len(fresh) >= k else question


async def adversarial_filter(questions: list[Question], memes: dict[str, Meme],
                             contexts: dict[str, dict[str, Any]], pools: Pool, *,
                             discriminator: str, generator: str, engine, seed: int,
                             max_rounds: int) -> tuple[list[Question], list[AFRound]]:
    """Harden the questions' distractors: the questions, and how each round went."""
    rounds: list[AFRound] = []
    history = {q.id: distractors_of(q) for q in questions}
    current = {q.id: q for q in questions}
    previous = None
    for round_index in range(max_rounds):
        asked = list(current.values())
        records = await evaluate_questions(asked, memes, model=discriminator, version="none-minus",
                                           engine=engine, stage=AF_STAGE)
        accuracy = _accuracy(records)
        easy = [current[r["id"]] for r in records
                if r["correct"] and current[r["id"]].specific_type != SENTIMENT]
        stop = previous is not None and accuracy >= previous
        rounds.append(AFRound(round=round_index, accuracy=accuracy, questions=len(asked),
                              answered_correctly=len(easy), stopped=stop or round_index == max_rounds - 1))
        if stop or round_index == max_rounds - 1:
            break
        previous = accuracy
        generated = await generate([q for q in easy if has_generator(q.specific_type)], contexts,
                                   history, model=generator, engine=engine,
                                   round_index=round_index + 1, stage="memeqa.filtering.generator")
        for q in easy:
            if has_generator(q.specific_type):
                new = generated.get(q.id)
                updated = replace_distractors(q, new) if new else q
            else:
                updated = resample(q, pools(q), history[q.id], seed, round_index + 1)
            history[q.id] = history[q.id] + [d for d in distractors_of(updated)
                                             if d not in history[q.id]]
            current[q.id] = updated
    return [current[q.id] for q in questions], rounds


async def trivial_filter(questions: list[Question], *, model: str,
                         engine) -> tuple[list[Question], TrivialSummary]:
    """Drop what `model` answers correctly without the meme; a failed call keeps the question."""
    records = await evaluate_questions(questions, {}, model=model, version="none-minus",
                                       engine=engine, with_meme=False, stage=TRIVIAL_STAGE)
    dropped = {r["id"] for r in records if r["correct"]}
    summary = TrivialSummary(model=model, asked=len(records), dropped=len(dropped),
                             failed_calls=sum(r["correct"] is None for r in records))
    return [q for q in questions if q.id not in dropped], summary
