"""None+ (paper §3.5): every question except Sentiment ID gets "None of the above" as option D.

For 25% of the questions (a seeded choice) a correct option is the one replaced; for the other 75% a
wrong option is. The replaced option is removed, the others keep their order, "None of the above"
goes last (index 3), and it is correct exactly when no remaining option is. A question with no
correct option can only lose a wrong one, and one with no wrong option only a correct one.
"""

from __future__ import annotations

import hashlib
import random

from memegauge.memeqa.dataset import NONE_OF_THE_ABOVE, SENTIMENT, Question

CORRECT_SHARE = 0.25


def _rank(seed: int, question_id: str) -> str:
    return hashlib.sha256(f"{seed}:noneplus:{question_id}".encode()).hexdigest()


def replace_option(question: Question, drop: int) -> Question:
    """The None+ form of `question` with option `drop` replaced by "None of the above"."""
    kept = [i for i in range(len(question.options)) if i != drop]
    gold = set(question.gold)
    options = [question.options[i] for i in kept] + [NONE_OF_THE_ABOVE]
    new_gold = {n for n, i in enumerate(kept) if i in gold}
    return question.with_gold(options, new_gold or {len(kept)})


def derive_none_plus(questions: list[Question], seed: int,
                     correct_share: float = CORRECT_SHARE) -> list[Question]:
    """None+ from None− questions, same ids and order."""
    eligible = sorted((q for q in questions if q.specific_type != SENTIMENT),
                      key=lambda q: _rank(seed, q.id))
    replace_correct = {q.id for q in eligible[:round(correct_share * len(eligible))]}
    out = []
    for q in questions:
        if q.specific_type == SENTIMENT:
            out.append(q)
            continue
        gold = set(q.gold)
        wrong = [i for i in range(len(q.options)) if i not in gold]
        wants_correct = q.id in replace_correct
        candidates = sorted(gold) if (wants_correct and gold) or not wrong else wrong
        drop = random.Random(f"{seed}:noneplus:{q.id}").choice(candidates)
        out.append(replace_option(q, drop))
    return out
