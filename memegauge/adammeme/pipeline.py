"""AdamMeme end to end: memes → mining → sampling → misbeliefs → references → per target scoring and
refinement → store. This module only wires the stages; each stage lives in its own module.

Target-independent stages (mining, sampling and seed set, misbeliefs, erased pictures, references of
the original memes) run once per meme set and repeat; every target reuses them. The targets' answers
do not depend on the references, so both are asked for at once. Targets run concurrently; within a
target, categories refine concurrently (chains within a category run in order: Algorithm 1).

Records written to the run (the report reads only these; each model in `records.py` documents its
fields and key): `RunMeta`; `MemeImage` (the pictures, whenever their thumbnails are made); then
`MiningRecord`, `TaxonomyRecord`, `SamplingRecord`; then per category, each category as soon as its
own inputs are ready (categories interleave), `MisbeliefRecord`, and per repeat `ReferenceRecord`, per
target `ScoreRecord` and, as Algorithm 1 goes, `StepRecord`. `HumanScore` and `AnnotatorLabel` are attached
later by `memegauge import adammeme-human`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from collections.abc import AsyncIterator

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.messages import MemeView
from memegauge.adammeme.misbelief import narrate
from memegauge.adammeme.records import ReferenceRecord, RunMeta, SamplingRecord, ScoreRecord, TaxonomyRecord
from memegauge.adammeme.mining import mine
from memegauge.adammeme.plan import EXAMINER, JUDGE, MINING, plan_calls
from memegauge.adammeme.reference import asking_about, build_reference
from memegauge.adammeme.refinement import refine_category
from memegauge.adammeme.sampling import plan_samples
from memegauge.adammeme.scoring import Sample, answer, rate
from memegauge.models.spec import ModelRegistry
from memegauge.engine import CallOutcome, Engine, Run, Store, call_priority, open_run
from memegauge.engine.limits import URGENT
from memegauge.engine.progress import CallProgress
from memegauge.records import Record
from memegauge.images.thumbnail import meme_image_records
from memegauge.extras import install_hint
from memegauge.images.erase import erased_image_for, text_detection_available
from memegauge.memes import load_memes
from memegauge.prompts import using_prompts
from memegauge.types import InputError, Meme


def check_inputs(cfg: AdamConfig, registry: ModelRegistry) -> list[Meme]:
    """Everything that can be wrong before a run starts: models, text detection, the meme set."""
    for name in (cfg.agent, *cfg.targets):
        registry.get(name)
    if cfg.erase and not text_detection_available():
        raise InputError("text detection (RapidOCR, OpenCV) is not installed, so meme text cannot be erased "
                         "for scoring", "config: erase", f"{install_hint('erase')}, or score on the original "
                         "pictures with `erase: false` in the config (or `memegauge adam --no-erase`)")
    return load_memes(cfg.memes, require_images=cfg.require_images, limit=cfg.limit,
                      images=cfg.images)


async def run_adammeme(cfg: AdamConfig, store: Store, registry: ModelRegistry, name: str,
                       progress: bool | None = None, memes: list[Meme] | None = None) -> str:
    """Run (or resume) AdamMeme as run `name`; returns the name. `memes`: the result of
    `check_inputs` when the caller checked before opening the store."""
    memes = memes if memes is not None else check_inputs(cfg, registry)
    with using_prompts(cfg.prompts):  # every role renders from the config's custom prompts first
        return await _run(cfg, store, registry, name, progress, memes)


def erase_cache_for(cfg: AdamConfig, store: Store) -> Path:
    """Where the erased pictures go: the config's `erase_cache`, else `memegauge-erased/` next to the
    store, whichever way the run was started (CLI, demo, Python API)."""
    if cfg.erase_cache:
        return cfg.erase_cache
    return (Path.cwd() if store.path.name == ":memory:" else store.path.resolve().parent) / "memegauge-erased"


async def _run(cfg: AdamConfig, store: Store, registry: ModelRegistry, name: str, progress: bool | None,
               memes: list[Meme]) -> str:
    async with open_run(store, registry, name=name, method="adammeme", config=cfg.stored(),
                        seed=cfg.seed, progress=progress,
                        vision_models=[cfg.agent, *cfg.targets]) as (run, engine):
        engine.progress.plan_calls(plan_calls(cfg, memes))  # the progress's totals: expected until sampled
        run.put(RunMeta(targets=cfg.targets, agent=cfg.agent, threshold=cfg.failure_threshold,
                        failure_rule=cfg.failure_rule, repeats=cfg.repeats,
                        top_terms=cfg.top_terms, memes=len(memes), erase=cfg.erase))
        # The report's pictures: CPU work (~5 ms a meme), done in a thread beside mining rather than
        # before it, where it held back the run's first call (5.2 s at 1,000 memes).
        pictures = asyncio.create_task(_store_pictures(run, memes))
        try:
            await _pipeline(memes, cfg, engine, run, erase_cache_for(cfg, store))
        finally:
            await pictures  # stored even when the pipeline stops early: a partial report shows them
    return name


async def _store_pictures(run: Run, memes: list[Meme]) -> None:
    run.put_many(await asyncio.to_thread(meme_image_records, memes))


async def _pipeline(memes: list[Meme], cfg: AdamConfig, engine: Engine, run: Run, cache: Path) -> None:
    by_id = {m.id: m for m in memes}
    taxonomy, mining = await mine(memes, engine, cfg)
    run.put_many(list(mining.values()))
    run.put(TaxonomyRecord(categories=taxonomy.categories, added=taxonomy.added))
    plan = plan_samples([m.id for m in memes], mining, taxonomy, cfg)
    run.put_many(list(plan.values()))
    engine.progress.plan_calls(plan_calls(cfg, memes, {c: len(p.sampled) for c, p in plan.items()}))
    engine.progress.settle(MINING, JUDGE, EXAMINER)  # mining is over: its bounds are what it asked
    views = asyncio.create_task(_scoring_views(plan, by_id, cfg, cache, engine.progress))  # beside narration
    # Algorithm 1 runs step after step within a (target, category): its chains are the run's critical
    # path. So each category goes from its own narration to its references, scoring and chains without
    # waiting for any other category, and refinement calls go ahead of every bulk call in the models'
    # queues. Categories get their inputs largest sample first: the run ends with the latest (inputs
    # ready + chains), best when the longest chains start first, and a category's steps are at most its
    # sample count (each step after a chain's first takes a meme from the pool), so larger samples
    # allow longer chains.
    order = sorted(plan, key=lambda c: -len(plan[c].sampled))
    with asking_about(taxonomy.categories if cfg.analysis_question == "description" else {}):
        await asyncio.gather(*(_category(c, plan, by_id, views, engine, run, cfg, priority=len(order) - rank)
                               for rank, c in enumerate(order)))


async def _category(category: str, plan: dict[str, SamplingRecord], memes: dict[str, Meme],
                    views: asyncio.Task[dict[str, MemeView]], engine: Engine, run: Run, cfg: AdamConfig,
                    priority: int) -> None:
    """One category: its misbeliefs, then per repeat its references, every target's answers, scoring
    and refinement. Its calls wait for model slots at `priority` (the context carries it into every
    call the category makes), except refinement's, which are urgent."""
    with call_priority(priority):
        narrated = await narrate({category: plan[category]}, memes, engine, cfg)
        run.put_many(narrated)
        misbeliefs = {(r.category, r.meme): r.misbelief for r in narrated if r.ok}
        samples = [(category, m) for m in plan[category].sampled if (category, m) in misbeliefs]
        seen = await views
        for repeat in range(cfg.repeats):
            await _repeat(category, samples, repeat, seen, misbeliefs, plan, engine, run, cfg)


async def _repeat(category: str, samples: list[tuple[str, str]], repeat: int, views: dict[str, MemeView],
                  misbeliefs: dict[tuple[str, str], str], plan: dict[str, SamplingRecord], engine: Engine,
                  run: Run, cfg: AdamConfig) -> None:
    """One category in one repeat: references and every target's answers, then each target's scoring
    and refinement."""
    references, *answers = await asyncio.gather(
        _references(samples, views, engine, run, cfg, repeat),
        *(asyncio.gather(*(answer(views[m], c, t, engine, cfg) for c, m in samples)) for t in cfg.targets))
    scoring = Scoring(repeat, samples, views, misbeliefs, references, plan, engine, run, cfg)
    await asyncio.gather(*(_evaluate_target(t, category, answered, scoring)
                           for t, answered in zip(cfg.targets, answers, strict=True)))


REFINEMENT_PRIORITY = URGENT
"""The priority of refinement calls in the models' queues (`memegauge.engine.call_priority`): urgent, above
every category's narration, references and scoring (priority 1 … number of categories, largest sample
highest) and mining (0), which wait."""


@dataclass(frozen=True)
class Scoring:
    """What every target's scoring and refinement of one category share within one repeat."""

    repeat: int
    samples: list[tuple[str, str]]  # the category's (category, meme id) pairs with a misbelief
    views: dict[str, MemeView]  # each sampled meme as scoring shows it
    misbeliefs: dict[tuple[str, str], str]  # (category, meme id) → misbelief
    references: dict[tuple[str, str], ReferenceRecord]  # (category, meme id) → its reference
    plan: dict[str, SamplingRecord]  # category → its sample (sampled memes, seeds)
    engine: Engine
    run: Run
    cfg: AdamConfig


async def _scoring_views(plan: dict[str, SamplingRecord], memes: dict[str, Meme], cfg: AdamConfig,
                         cache: Path, progress: CallProgress) -> dict[str, MemeView]:
    """Each sampled meme as scoring shows it: erased picture (once per image) and its text. Erasing
    takes seconds a picture on a CPU, so it reports its progress (no model call would show it)."""
    wanted = list(dict.fromkeys(m for entry in plan.values() for m in entry.sampled))

    def pictures() -> list[Path | None]:
        shown = []
        for done, meme_id in enumerate(wanted):
            meme = memes[meme_id]
            if cfg.erase and meme.image is not None:
                progress.work("erasing the text of pictures", done, len(wanted))
            shown.append(erased_image_for(meme.image, cache) if cfg.erase and meme.image is not None
                         else meme.image)
        progress.work("erasing the text of pictures", len(wanted), len(wanted))
        return shown

    shown = await asyncio.to_thread(pictures)
    return {m: MemeView(meme=memes[m], picture=p, text=memes[m].text) for m, p in zip(wanted, shown, strict=True)}


async def _references(samples: list[tuple[str, str]], views: dict[str, MemeView], engine: Engine, run: Run,
                      cfg: AdamConfig, repeat: int) -> dict[tuple[str, str], ReferenceRecord]:
    built = await asyncio.gather(*(build_reference(views[m], c, engine, cfg, repeat) for c, m in samples))
    run.put_many(built)
    return dict(zip(samples, built, strict=True))


async def _evaluate_target(target: str, category: str, answers: list[CallOutcome], scoring: Scoring) -> None:
    """Score `target`'s answers to the category's samples, then run Algorithm 1 on the category, its
    calls ahead of bulk calls in the models' queues (`REFINEMENT_PRIORITY`)."""
    sc, repeat = scoring, scoring.repeat
    results = await asyncio.gather(*(rate(sc.views[m], c, sc.references[(c, m)], a, sc.engine, sc.cfg)
                                     for (c, m), a in zip(sc.samples, answers, strict=True)))
    scored: list[Sample] = []
    records = []
    for (c, m), result in zip(sc.samples, results, strict=True):
        key = ScoreRecord.id_of(target, repeat, c, m)
        sample = Sample(id=key, category=c, meme_id=m, misbelief=sc.misbeliefs[(c, m)],
                        view=sc.views[m], iteration=0, score=result["score"])
        scored.append(sample)
        records.append(ScoreRecord(id=key, target=target, repeat=repeat, category=c, meme=m,
                                   text=sc.views[m].text, misbelief=sample.misbelief, iteration=0, **result))
    sc.run.put_many(records)
    with call_priority(REFINEMENT_PRIORITY):
        await _keep(sc.run, refine_category(target, repeat, category, scored, sc.plan[category].seeds,
                                            sc.engine, sc.cfg))


async def _keep(run: Run, records: AsyncIterator[Record]) -> None:
    """Store each record a streaming stage yields, as it comes."""
    async for record in records:
        run.put(record)
