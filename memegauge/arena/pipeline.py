"""MemeArena pipeline: memes → contexts → tasks → answers → fusion → judging (→ detection) → store.

`run_arena` only wires the stages; each stage module is one step of the paper and writes its records
through the `Run`. The report (`memegauge.arena.report`) reads nothing but these records.

Record kinds, in pipeline order (answer, judgment and battle are typed: `memegauge.arena.records`)
------------------------------------------------------------------------------------------------
``meme``          key meme id → {id, order, text, caption, labels, image}
``meme_image``    key meme id → {meme, sha256, thumbnail (JPEG data URL)}: the report's pictures
``context``       key meme id → {meme, ok, personas: [3 profiles], error_class, error}
``tasks``         key meme id → {meme, ok, prompts: [3 task prompts], error_class, error}
``task``          key ``<meme>#<n>`` → {task, meme, index, persona, prompt} (the tasks in use)
``answer``        key ``<task>|<target>`` → {task, meme, target, ok, text, sections: {Background
                  Knowledge, Reasoning}, missing_sections: [...], error_class, error}
``fusion_round``  key ``<task>|<round:02d>`` → {task, round, judge, author, guideline_first, arrival,
                  guideline (after the round), ok, error_class, error}; round 0 = the initial guideline
                  (author = the judge whose own answer it is, judge None); arrival = the author's
                  arrival stage (0 base target, i the i-th added target)
``guideline``     key task → {task, meme, ok, text (final), versions: {arrival stage: text}, init_author,
                  rounds, failed_rounds}
``judgment``      key ``<setting>|<task>|<model_a>|<model_b>|<judge>|<ab|ba>`` → {setting, task, model_a,
                  model_b, judge, order, verdicts: {dimension: winner}, text, ok, error_class, error}
``battle``        key ``<setting>|<task>|<model_a>|<model_b>`` → {battle, order, setting, task, meme,
                  model_a, model_b, judges: {J: {dimension: winner}}, flips: {J: bool},
                  failed_judgments: [...], joint: {dimension: winner}, judged}
``detection``     key ``<target>|<meme>`` → {target, meme, gold, harmful, ok, error_class, error}
``human_vote``    key row number → {task, model_a, model_b, winner}

Winners are Chatbot Arena values (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``) in the battle's own
orientation (model names in alphabetical order); dimensions are the five of the paper plus ``overall``.

Reuse: contexts and tasks depend only on the memes, the agent and the seed; answers on (task, target).
Every call is cached by the engine, so a rerun, a resumed run, or a run extended with another target
(`added_targets`) makes only the calls it has not made before: the newcomer's answers, one fusion round
per task merging its answer (pool ``all``), its new battles' judgments and its detection labels (see
`memegauge.arena.fusion` and `memegauge.arena.judging`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from memegauge.arena.agreement import read_human_votes
from memegauge.arena.answers import answer_tasks
from memegauge.arena.common import arrival_stages, task_key
from memegauge.arena.config import ArenaConfig
from memegauge.arena.contexts import simulate_contexts
from memegauge.arena.detection import detect
from memegauge.arena.fusion import fuse_guidelines
from memegauge.arena.judging import STAGE as JUDGING_STAGE, judge_battles, plan_battles
from memegauge.arena.plan import plan_calls
from memegauge.arena.tasks import formulate_tasks
from memegauge.models.spec import ModelRegistry
from memegauge.arena.records import (AnswerRecord, BattleRecord, ContextRecord, DetectionRecord,
                                    FusionRoundRecord, GuidelineRecord, HumanVoteRecord, JudgmentRecord,
                                    MemeRecord, RepeatRecord, TaskRecord, TasksRecord)
from memegauge.engine import Run, Store, open_run
from memegauge.files import jsonl_rows
from memegauge.prompts import using_prompts
from memegauge.images.thumbnail import meme_image_records
from memegauge.memes import load_memes
from memegauge.records import Record
from memegauge.types import InputError, Meme


@dataclass
class ArenaInputs:
    """Everything read from disk before the run opens, so bad input fails before anything is written."""

    memes: list[Meme]
    human_guidelines: dict[str, str]
    human_votes: list[dict[str, str]]


def read_human_guidelines(path: Path) -> dict[str, str]:
    """JSONL lines {"meme": id, "guideline": text[, "task": n]} → {meme id or task key: text}."""
    fix = 'write one object per line: {"meme": "<id>", "guideline": "<text>"} (optional "task": 1..3)'
    out = {}
    for where, row in jsonl_rows(path, fix):
        if not isinstance(row, dict) or not isinstance(row.get("meme"), (str, int)) \
                or not isinstance(row.get("guideline"), str) or not row["guideline"].strip():
            raise InputError("expected a meme id and a non-empty guideline", where, fix)
        task = row.get("task")
        if task is not None and (isinstance(task, bool) or not isinstance(task, int) or not 1 <= task <= 3):
            raise InputError(f"task must be 1, 2 or 3, not {task!r}", where, fix)
        key = str(row["meme"]) if task is None else task_key(str(row["meme"]), task)
        out[key] = row["guideline"].strip()
    if not out:
        raise InputError("no guidelines in the file", str(path), fix)
    return out


def check_judge_families(config: ArenaConfig, registry: ModelRegistry) -> None:
    """The paper's panel has judges of distinct model families; two of one family are refused, naming
    them, unless the config says `allow_same_family: true` (a judge of unknown family is not compared)."""
    if config.allow_same_family:
        return
    by_family: dict[str, list[str]] = {}
    for judge in config.judges:
        family = registry.get(judge).model_family
        if family:
            by_family.setdefault(family, []).append(judge)
    shared = {f: js for f, js in by_family.items() if len(js) > 1}
    if shared:
        named = "; ".join(f"{', '.join(js)} are {f}" for f, js in shared.items())
        raise InputError(f"judges of one model family: {named}", "config: judges",
                         "choose judges of distinct families (registry key `family:` corrects a wrong "
                         "guess), or set allow_same_family: true to accept it knowingly")


def read_inputs(config: ArenaConfig, registry: ModelRegistry) -> ArenaInputs:
    """Check models, memes and the optional human files; raise InputError on the first problem."""
    for name in config.models():
        registry.get(name)
    check_judge_families(config, registry)
    memes = load_memes(config.memes, require_images=config.require_images, limit=config.limit,
                       images=config.images)
    guidelines = read_human_guidelines(config.human_guidelines) if config.human_guidelines else {}
    votes = read_human_votes(config.human_votes) if config.human_votes else []
    return ArenaInputs(memes, guidelines, votes)


def extend_config(config: ArenaConfig, base: dict[str, Any], base_name: str) -> ArenaConfig:
    """The config of `base` (a finished run's stored config) with the targets of `config` that it lacks
    appended to `added_targets`. Everything else must be equal, or the two arenas would not compare."""
    old = ArenaConfig.model_validate({k: v for k, v in base.items() if k != "prompt_hashes"})
    lost = [t for t in old.all_targets if t not in config.all_targets]
    if lost:
        raise InputError(f"targets {lost} of run {base_name!r} are missing from the config",
                         "--extend", "list every target of the extended run, plus the new ones")
    fresh = [t for t in config.all_targets if t not in old.all_targets]
    if not fresh:
        raise InputError(f"the config adds no target to run {base_name!r}", "--extend",
                         "add the new target(s) to `targets` in the config")
    same = ("targets", "added_targets")
    differ = [k for k, v in config.stored().items() if k not in same and old.stored().get(k) != v]
    if differ:
        raise InputError(f"the config differs from run {base_name!r} in {', '.join(differ)}", "--extend",
                         "extend with the extended run's settings; only targets may change")
    return old.model_copy(update={"added_targets": [*old.added_targets, *fresh]})


@dataclass
class ArenaOutcome:
    run: str
    calls_made: int
    battles: int
    judged: int


def repeat_runs(config: ArenaConfig, run_name: str) -> list[tuple[str, int]]:
    """(run name, seed) of each repeat: the run itself, then `NAME#r2` … with seeds seed+1 … .

    The paper averages three runs of the whole arena. Repeat k is a run of its own with seed + k - 1:
    fresh personas and tasks (the seed is part of every T > 0 call's key), its own fusion order, pairs
    and positions. The report of the first run reads the others from the store (`repeat` records)."""
    return [(run_name if k == 0 else f"{run_name}#r{k + 1}", config.seed + k) for k in range(config.repeats)]


async def run_arena(config: ArenaConfig, store: Store, registry: ModelRegistry, run_name: str, *,
                    progress: bool | None = None,
                    inputs: ArenaInputs | None = None) -> ArenaOutcome:
    """Run (or resume) the arena `run_name` and its repeats; every stage's records go to the store."""
    inputs = inputs or read_inputs(config, registry)
    plan = repeat_runs(config, run_name)
    with using_prompts(config.prompts):  # every stage renders from the config's custom prompts first
        outcome = await _run_once(config, store, registry, run_name, progress, inputs, plan)
        for name, seed in plan[1:]:
            again = config.model_copy(update={"seed": seed, "repeats": 1})
            extra = await _run_once(again, store, registry, name, progress, inputs, [])
            outcome.calls_made += extra.calls_made
    return outcome


async def _run_once(config: ArenaConfig, store: Store, registry: ModelRegistry, run_name: str,
                    progress: bool | None, inputs: ArenaInputs,
                    repeats: list[tuple[str, int]]) -> ArenaOutcome:
    memes = {m.id: m for m in inputs.memes}
    tokens = config.max_tokens
    async with open_run(store, registry, name=run_name, method="arena", config=config.stored(),
                        seed=config.seed, progress=progress,
                        vision_models=config.models()) as (run, engine):
        engine.progress.plan_calls(plan_calls(config, inputs.memes))  # bounds until answers are in
        run.put_many([RepeatRecord(repeat=k, run=name, seed=seed)
                      for k, (name, seed) in enumerate(repeats, start=1)] if len(repeats) > 1 else [])
        run.put_many([MemeRecord(id=m.id, order=i, text=m.text, caption=m.caption, labels=m.labels,
                                 image=str(m.image) if m.image else None)
                      for i, m in enumerate(inputs.memes)])
        run.put_many(meme_image_records(inputs.memes))  # the report's pictures
        contexts = await simulate_contexts(inputs.memes, config.agent, tokens.contexts, engine)
        _put_as(run, ContextRecord, contexts.values())
        per_meme, tasks = await formulate_tasks(inputs.memes, contexts, config.agent, tokens.tasks,
                                                config.tasks_per_meme, engine)
        _put_as(run, TasksRecord, per_meme.values())
        _put_as(run, TaskRecord, tasks)
        answers = await answer_tasks(tasks, memes, config.all_targets, tokens.answers, engine)
        _put_as(run, AnswerRecord, answers.values())
        pool = config.judges if config.fusion_pool == "judges" else config.all_targets
        rounds, guidelines = await fuse_guidelines(tasks, memes, answers, pool, config.judges,
                                                   arrival_stages(config.targets, config.added_targets),
                                                   config.seed, tokens.fusion, engine)
        _put_as(run, FusionRoundRecord, rounds)
        _put_as(run, GuidelineRecord, guidelines.values())
        plan = plan_battles(tasks, answers, config.targets, config.added_targets, config.judges,
                            list(config.settings), config.answers_per_task, config.self_judging,
                            config.both_orders, config.seed)
        engine.progress.plan(JUDGING_STAGE, len(plan.judgments))  # exact now the answers are known
        judgments, battles = await judge_battles(tasks, memes, answers, guidelines, inputs.human_guidelines,
                                                 plan, tokens.judging, engine)
        _put_as(run, JudgmentRecord, judgments)
        _put_as(run, BattleRecord, battles)
        if config.detection:
            labels = await detect(inputs.memes, config.all_targets, tokens.detection, engine)
            _put_as(run, DetectionRecord, labels)
        run.put_many([HumanVoteRecord(index=i, **v) for i, v in enumerate(inputs.human_votes)])
        calls_made = engine.calls_made
    return ArenaOutcome(run_name, calls_made, len(battles), sum(b["judged"] for b in battles))


def _put_as(run: Run, model: type[Record], records: Iterable[dict[str, Any]]) -> None:
    """Store a stage's records through their model (the stages return them; only the pipeline writes)."""
    run.put_many([model.model_validate(r) for r in records])
