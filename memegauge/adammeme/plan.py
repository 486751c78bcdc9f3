"""The planned calls of `memegauge adam` (`--dry-run`) and the totals its progress shows.

Mining is exact: memes × Miners. Everything after it depends on what mining finds — which memes fall
in which category — so before mining the (category, meme) sample is **expected** from the meme set's
own labels (a meme without labels counts once, in one category), each category drawn down to `cap`;
once the run's sampling is stored (a resumed run, or `sample_counts` during a run) the counts are
exact. The Judge and Examiner are bounded by one new name per Miner answer ("at most"); refinement by
Algorithm 1's limits: per category at most min(seeds × max_steps, sampled) steps, each at most
`rewrite_attempts` Refiner and validity calls plus one scoring (candidates, senior, target, Scorer).
Beside those bounds, refinement's expected count (`--dry-run`'s `expected $`): `EXPECTED_CHAIN` steps
per seed, one Refiner and one validity call each.
"""

from __future__ import annotations

from collections import Counter

from memegauge.adammeme.config import AdamConfig
from memegauge.engine.estimate import PlannedCalls
from memegauge.prompts import template_words

MINING, JUDGE, EXAMINER = "adammeme.mining", "adammeme.mining.judge", "adammeme.mining.examiner"
NARRATOR = "adammeme.misbelief"
CANDIDATE, SENIOR = "adammeme.reference.candidate", "adammeme.reference.senior"
TARGET, SCORER = "adammeme.scoring.target", "adammeme.scoring.scorer"
REFINER, VALIDITY = "adammeme.refinement.refiner", "adammeme.refinement.validity"
EXPECTED_CHAIN = 2
"""A seed's expected refinement steps: Algorithm 1 stops a chain at the first rewrite that does not score
lower; if a rewrite scores lower half the time, a chain is 1 + 1/2 + 1/4 + … = 2 steps long (capped at
`max_steps`). The bound is `max_steps` steps, every one with `rewrite_attempts` tries."""


def expected_samples(memes: list, cfg: AdamConfig) -> dict[str, int]:
    """Category → memes expected in its sample, from the meme set's labels (see the module docstring)."""
    sizes = Counter(label for m in memes for label in (m.labels or ["(unlabelled)"]))
    if cfg.categories is not None:
        sizes = Counter({c: n for c, n in sizes.items() if c in cfg.categories})
    return {c: min(n, cfg.cap) for c, n in sizes.items()}


def plan_calls(cfg: AdamConfig, memes: list, samples: dict[str, int] | None = None) -> list[PlannedCalls]:
    """Every stage's calls; `samples` (category → sampled memes) when sampling is known, else expected."""
    known = samples is not None
    samples = samples if known else expected_samples(memes, cfg)
    n, tokens, agent = len(memes), cfg.max_tokens, cfg.agent
    words = sum(len(m.text.split()) for m in memes) / max(n, 1)
    pairs, after = sum(samples.values()), ("exact" if known else "expected")
    answer_words = tokens.target * 0.75
    plans = [
        PlannedCalls(MINING, agent, n * cfg.miners, "exact", tokens.miner,
                     template_words("adammeme_miner") + words + 80, note="memes × Miners"),
        PlannedCalls(JUDGE, agent, 2 * n * cfg.miners, "at most", tokens.judge,
                     template_words("adammeme_judge") + 100, note="one per new name, and its re-judging"),
        PlannedCalls(EXAMINER, agent, n * cfg.miners, "at most", tokens.examiner,
                     template_words("adammeme_examiner") + words + 30, note="one per (meme, new name)"),
        PlannedCalls(NARRATOR, agent, pairs, after, tokens.narrator, template_words("adammeme_narrator") + words,
                     note="sampled (category, meme) pairs"),
    ]
    r = cfg.repeats
    steps = sum(min(cfg.seeds_for(s) * cfg.max_steps, s) for s in samples.values()) if cfg.max_steps else 0
    likely = sum(min(cfg.seeds_for(s) * min(EXPECTED_CHAIN, cfg.max_steps), s) for s in samples.values()) \
        if cfg.max_steps else 0
    scored = pairs * r  # per target: originals; refinement adds `steps` per target and repeat
    refined = steps * r * len(cfg.targets)
    plans += [
        PlannedCalls(CANDIDATE, agent, scored * cfg.candidates, after, tokens.candidate,
                     template_words("adammeme_question") + words, note="pairs × repeats × candidates"),
        PlannedCalls(SENIOR, agent, scored, after, tokens.senior,
                     template_words("adammeme_senior") + words + cfg.candidates * tokens.candidate * 0.75,
                     note="pairs × repeats"),
    ]
    plans += [PlannedCalls(TARGET, t, scored, after, tokens.target, template_words("adammeme_question") + words,
                           note="pairs × repeats") for t in cfg.targets]
    plans.append(PlannedCalls(SCORER, agent, scored * len(cfg.targets), after, tokens.scorer,
                              template_words("adammeme_scorer") + words + 2 * answer_words,
                              note="pairs × repeats × targets"))
    if refined:
        plans += _refinement(cfg, refined, words, likely * r * len(cfg.targets))
    return plans


def _refinement(cfg: AdamConfig, steps: int, words: float, likely: int) -> list[PlannedCalls]:
    """Algorithm 1's calls for `steps` steps (all targets and repeats): an upper bound; `likely`: the
    expected steps (`EXPECTED_CHAIN` per seed), each with one Refiner try (the others are retries of an
    invalid rewrite)."""
    tokens, agent, tries = cfg.max_tokens, cfg.agent, cfg.rewrite_attempts
    note = "≤ min(seeds × max_steps, sampled) steps per category, target and repeat"
    by_target, likely_by_target = steps // len(cfg.targets), likely // len(cfg.targets)
    return [
        PlannedCalls(REFINER, agent, steps * tries, "at most", tokens.refiner,
                     template_words("adammeme_refiner") + words * (cfg.top_k + 1) + 40, note=note, expected=likely),
        PlannedCalls(VALIDITY, agent, steps * tries, "at most", tokens.validity,
                     template_words("adammeme_validity") + 2 * words, note=note, expected=likely),
        PlannedCalls(CANDIDATE, agent, steps * cfg.candidates, "at most", tokens.candidate,
                     template_words("adammeme_question") + words, note="+ refinement steps",
                     expected=likely * cfg.candidates),
        PlannedCalls(SENIOR, agent, steps, "at most", tokens.senior, template_words("adammeme_senior") + words,
                     note="+ refinement steps", expected=likely),
        *(PlannedCalls(TARGET, t, by_target, "at most", tokens.target, template_words("adammeme_question") + words,
                       note="+ refinement steps", expected=likely_by_target) for t in cfg.targets),
        PlannedCalls(SCORER, agent, steps, "at most", tokens.scorer, template_words("adammeme_scorer") + words,
                     note="+ refinement steps", expected=likely),
    ]


def stored_samples(store_path, name: str) -> dict[str, int] | None:
    """Category → sampled memes of run `name` when the store already holds its sampling, else None."""
    from pathlib import Path

    from memegauge.adammeme.records import SamplingRecord
    from memegauge.engine.store import Store
    from memegauge.records import read_records
    from memegauge.errors import InputError

    if not Path(store_path).exists():
        return None
    store = Store(store_path)
    try:
        records = read_records(store, store.run_row(name)["id"], SamplingRecord)
    except InputError:  # no such run yet
        records = []
    finally:
        store.close()
    return {r.category: len(r.sampled) for r in records} or None
