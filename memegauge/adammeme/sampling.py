"""Sampling (App. C): per category a seeded draw of at most `cap` mined memes, and the seed set S.

Both draws use their own generator `random.Random(f"{seed}:<purpose>:<category>")` over the memes in
meme-set order, so they depend only on the seed and the mining result — never on targets, on scores or
on the order calls complete. The seed set is therefore the same for every target (paper App. A).
A category with fewer than `warn_below` memes is kept whole and flagged (the paper found ~150 the
least for stable figures).
"""

from __future__ import annotations

import random
import warnings
from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.records import MiningRecord, SamplingRecord
from memegauge.adammeme.taxonomy import Taxonomy, normalise_name
from memegauge.errors import InputError


def seeded_draw(ids: list[str], k: int, seed: int, purpose: str, category: str) -> list[str]:
    """k of `ids` drawn without replacement, returned in their given order."""
    if len(ids) <= k:
        return list(ids)
    rng = random.Random(f"{seed}:{purpose}:{category}")
    chosen = set(rng.sample(ids, k))
    return [i for i in ids if i in chosen]


def plan_samples(meme_order: list[str], mining: dict[str, MiningRecord], taxonomy: Taxonomy,
                 cfg: AdamConfig) -> dict[str, SamplingRecord]:
    """Every category's sample: the memes drawn and the refinement seeds among them."""
    wanted = _categories(taxonomy, cfg)
    plan = {}
    for category in wanted:
        mined = [m for m in meme_order if category in mining[m].categories]
        sampled = seeded_draw(mined, cfg.cap, cfg.seed, "sample", category)
        warning = None
        if len(sampled) < cfg.warn_below:
            warning = f"{len(sampled)} samples, fewer than {cfg.warn_below}: figures are unstable"
        plan[category] = SamplingRecord(
            category=category, mined=len(mined), sampled=sampled, warning=warning,
            seeds=seeded_draw(sampled, cfg.seeds_for(len(sampled)), cfg.seed, "seeds", category))
    small = [f"{c} ({len(e.sampled)})" for c, e in plan.items() if e.warning]
    if small:
        warnings.warn(f"categories with fewer than {cfg.warn_below} samples (unstable figures): "
                      + ", ".join(small), stacklevel=2)
    return plan


def _categories(taxonomy: Taxonomy, cfg: AdamConfig) -> list[str]:
    if cfg.categories is None:
        return taxonomy.names()
    wanted = [normalise_name(c) for c in cfg.categories]
    unknown = [c for c in wanted if c not in taxonomy.categories]
    if unknown:
        raise InputError(f"categories not in the taxonomy: {', '.join(unknown)}", "config: categories",
                         f"use some of: {', '.join(taxonomy.names())}, or leave `categories` out")
    return wanted
