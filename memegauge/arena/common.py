"""Small pieces every MemeArena stage shares: keyed randomness, the meme as a message part, task keys
and the failure fields a record carries."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from memegauge.engine import CallOutcome
from memegauge.types import ContentPart, ImagePart, Meme, TextPart

DIMENSIONS = ("Instruction Following", "Correctness", "Redundancy", "Relevance", "Accuracy")
"""The five judged dimensions (paper §2.4), in the order the judge prompt asks for them."""
OVERALL = "overall"
"""The dimension name the overall verdict (`[Overall Judge]`) is stored and ranked under."""
ANSWER_SECTIONS = ("Background Knowledge", "Reasoning")


def keyed_rng(seed: int, *parts: object) -> random.Random:
    """A generator that depends only on the seed and the item it decides for — never on the order in
    which concurrent calls finish — so a resumed run draws exactly what an uninterrupted one did."""
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def keyed_uniform(seed: int, *parts: object) -> float:
    """A uniform number in [0, 1) fixed by (seed, parts): a stable priority for sampling without
    replacement that does not change when other items are added."""
    digest = hashlib.sha256(":".join(str(p) for p in (seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def meme_part(meme: Meme) -> ContentPart:
    """The meme as the first part of a message: its image (text-only models read its text and
    caption instead), or its text and caption when the meme has no image."""
    if meme.image:
        return ImagePart.of(meme.image, alt_text=meme.as_text())
    return TextPart(text=meme.as_text())


def arrival_stages(targets: list[str], added: list[str]) -> dict[str, int]:
    """Each target's arrival stage: 0 for the arena's targets, i for the i-th target added to it."""
    return {**{t: 0 for t in targets}, **{t: i for i, t in enumerate(added, start=1)}}


def task_key(meme_id: str, index: int) -> str:
    """`<meme id>#<n>`: the n-th (1-based) context-specific task of a meme."""
    return f"{meme_id}#{index}"


def failure_fields(outcome: CallOutcome) -> dict[str, Any]:
    """What a record keeps of a call: ok, and on failure its class and message (never a score)."""
    error_class = outcome.error_class.value if outcome.error_class else None
    return {"ok": outcome.ok, "error_class": None if outcome.ok else error_class,
            "error": "" if outcome.ok else outcome.record.error}
