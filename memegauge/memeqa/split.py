"""Meme-level train/dev/test split (paper §3.6): 60/20/20 of the memes, seeded, so all questions of
one meme land in one split (no leakage) and None− and None+ share the assignment."""

from __future__ import annotations

import hashlib

from memegauge.memeqa.dataset import Question

SPLITS = ("train", "dev", "test")


def assign_memes(memes: list[str], seed: int, ratios: tuple[float, float, float] = (0.6, 0.2, 0.2)
                 ) -> dict[str, str]:
    """meme image → split; images ordered by a seeded hash, cut at the cumulative ratios."""
    order = sorted(set(memes), key=lambda m: hashlib.sha256(f"{seed}:split:{m}".encode()).hexdigest())
    total = sum(ratios)
    n_train = round(len(order) * ratios[0] / total)
    n_dev = round(len(order) * ratios[1] / total)
    return {m: "train" if i < n_train else "dev" if i < n_train + n_dev else "test"
            for i, m in enumerate(order)}


def split_questions(questions: list[Question], assignment: dict[str, str]) -> dict[str, list[Question]]:
    out: dict[str, list[Question]] = {s: [] for s in SPLITS}
    for q in questions:
        out[assignment[q.img]].append(q)
    return out
