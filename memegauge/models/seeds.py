"""The seed each backend sends for one draw."""

from __future__ import annotations

SEED_STRIDE = 1_000_003  # sample_index multiplier: seeds of repeated draws never collide


def draw_seed(seed: int | None, sample_index: int, default: int = 0, modulus: int = 2**31 - 1) -> int:
    """The backend seed of one draw: the request's seed (or `default`) moved by its sample index, so
    each repeated draw (3 Miners at T = 1, `--repeat K`) differs and each is reproducible."""
    return ((default if seed is None else seed) + sample_index * SEED_STRIDE) % modulus
