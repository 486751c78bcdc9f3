"""MemeQA runs in the store: `eval` (ask a model) and `score` (grade answers produced elsewhere).

Both write the same records, so `memegauge report NAME` and `memegauge qa compare` read either:
``question/<id>`` (see `evaluate.question_record`) and ``meta/info`` (task, version, split, model).
A run's config names everything that decides its results, so a rerun under the same name resumes
(model calls replay from the cache) and a different config under that name is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path
from typing import Any

from memegauge.models.spec import ModelRegistry
from memegauge.engine import Store, open_run
from memegauge.images.thumbnail import meme_image_records
from memegauge.memeqa.config import EvalConfig
from memegauge.memeqa.plan import plan_eval
from memegauge.memeqa.config import default_run_name
from memegauge.memeqa.dataset import (Question, load_memes_for, load_questions, resolve_types,
                                     select_questions, split_path)
from memegauge.memeqa.evaluate import evaluate_questions, question_record
from memegauge.memeqa.records import EvalInfo, Execution, QuestionRecord, read_info
from memegauge.records import read_checked
from memegauge.files import jsonl_rows
from memegauge.types import InputError, Meme

METHOD = "memeqa"


async def eval_run(store: Store, registry: ModelRegistry, config: EvalConfig, *, run_name: str | None = None,
                   progress: bool | None = None,
                   inputs: tuple[list[Question], dict[str, Meme]] | None = None) -> str:
    """Evaluate `config.model` on one split of one version; returns the run name. `inputs`: the questions
    and memes `read_eval_inputs(config)` already read (the run path checks them before its preflight)."""
    registry.get(config.model)  # unknown model: fail before reading anything
    chosen_types = resolve_types(config.types)
    questions, memes = inputs or read_eval_inputs(config)
    name = run_name or config.default_name()
    stored = {"task": "eval", "version": config.version, "split": config.split, "model": config.model,
              "questions": _digest(q.id for q in questions), "limit": config.limit,
              "types": chosen_types, "seed": config.seed, "circular": config.circular}
    info = EvalInfo(task="eval", version=config.version, split=config.split, model=config.model,
                    circular=config.circular, types=chosen_types)
    await ask_questions(store, registry, questions, memes, name=name, config=stored, info=info, seed=config.seed,
                        progress=progress)
    return name


def read_eval_inputs(config: EvalConfig) -> tuple[list[Question], dict[str, Meme]]:
    """The questions `eval_run` asks and their memes, read and checked (InputError on bad input)."""
    questions = select_questions(load_questions(config.data, config.version, config.split),
                                 types=resolve_types(config.types), limit=config.limit, seed=config.seed)
    return questions, load_memes_for(questions, config.images, config.texts)


async def ask_questions(store: Store, registry: ModelRegistry, questions: list[Question],
                        memes: dict[str, Meme], *, name: str, config: dict[str, Any], info: EvalInfo,
                        seed: int = 0, progress: bool | None = None) -> list[dict[str, Any]]:
    """Ask `info.model` the questions as the run `name` and store every outcome with the run's info
    (and this execution's wall time); returns the question records. `qa eval` and the demo."""
    async with open_run(store, registry, name=name, method=METHOD, config=config, seed=seed,
                        progress=progress, vision_models=[info.model]) as (run, engine):
        engine.progress.plan_calls(plan_eval(questions, memes, model=info.model, version=info.version,
                                             circular=info.circular, words=False))
        started = time.monotonic()
        # The report's pictures, keyed by the questions' `img`: made in a thread beside the questions.
        pictures = asyncio.create_task(asyncio.to_thread(
            meme_image_records, [meme.model_copy(update={"id": img}) for img, meme in memes.items()]))
        try:
            records = await evaluate_questions(questions, memes, model=info.model, version=info.version,
                                               engine=engine, circular=info.circular)
        finally:
            run.put_many(await pictures)
        # Wall time of this execution only: a resumed or replayed run reports its own, shorter one.
        timing = Execution(wall_s=time.monotonic() - started, new_calls=engine.calls_made,
                           backend=engine.backend_counters(), concurrency=engine.concurrency())
        store_results(run, records, info.model_copy(update={"last_execution": timing}))
    return records


def read_predictions(path: Path) -> dict[str, str]:
    """``{id: raw answer text}`` from a JSONL file of ``{"id", "prediction"}`` lines."""
    if not Path(path).is_file():
        raise InputError("predictions file not found", str(path), "check the path")
    predictions: dict[str, str] = {}
    for where, row in jsonl_rows(path, 'write one {"id": ..., "prediction": "..."} object per line'):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) \
                or not isinstance(row.get("prediction"), str):
            raise InputError('expected {"id": str, "prediction": str}', where,
                             "write the model's raw answer text as a string")
        if row["id"] in predictions:
            raise InputError(f"second prediction for id {row['id']!r}", where,
                             "keep one prediction per question")
        predictions[row["id"]] = row["prediction"]
    return predictions


def score_records(questions: list[Question], predictions: dict[str, str], version: str,
                  where: str = "--predictions", split: str = "") -> tuple[list[dict[str, Any]], list[str]]:
    """(records of the questions that have a prediction, graded like `eval` does; the ids of those
    that have none). A partial file (another harness's `--limit`, a run cut short) is the normal case:
    its missing questions are listed, never graded as wrong, so the figures are those of the covered
    questions. An id foreign to the split is bad input; `where` names the predictions file and `split`
    the split file in that message."""
    unknown = sorted(set(predictions) - {q.id for q in questions})
    if unknown:
        raise InputError(f"{len(unknown)} prediction(s) for ids not in {split or 'this split'}, e.g. "
                         f"{unknown[0]!r}", where,
                         "check --version/--split (or --types/--limit) against the file")
    covered = [q for q in questions if q.id in predictions]
    records = [question_record(q, version, [predictions[q.id]], [None], circular=False) for q in covered]
    missing = [q.id for q in questions if q.id not in predictions]
    return records, missing


async def score_run(store: Store, registry: ModelRegistry, *, data: Path, version: str,
                    split: str, predictions: Path, run_name: str | None = None,
                    limit: int | None = None, types: list[str] | None = None,
                    seed: int = 0) -> str:
    """Score a predictions file into a run; returns the run name. Every record is built and checked
    before the run is opened, so bad input leaves no half-made run (a retry is not "a different config")."""
    chosen_types = resolve_types(types)
    every = load_questions(data, version, split)
    answers = read_predictions(predictions)
    # ids foreign to the split are bad input, sample or not
    score_records(every, answers, version, str(predictions),
                  f"the {version} {split} split ({split_path(Path(data), version, split)})")
    questions = select_questions(every, types=chosen_types, limit=limit, seed=seed)
    chosen = {q.id for q in questions}
    records, missing = score_records(questions, {k: v for k, v in answers.items() if k in chosen}, version)
    if not records:
        raise InputError(f"none of the {len(questions)} chosen questions has a prediction", str(predictions),
                         "check --version/--split (or --types/--limit) against the file")
    checked = [QuestionRecord.model_validate(r) for r in records]
    file_hash = hashlib.sha256(Path(predictions).read_bytes()).hexdigest()[:16]
    name = run_name or default_run_name("score", version, split, Path(predictions).stem, limit,
                                        chosen_types, seed=seed)
    config = {"task": "score", "version": version, "split": split, "predictions": file_hash,
              "limit": limit, "types": chosen_types, "seed": seed}
    info = EvalInfo(task="score", version=version, split=split, model=Path(predictions).name, circular=False,
                    types=chosen_types, missing=missing)
    async with open_run(store, registry, name=name, method=METHOD, config=config, seed=seed,
                        progress=False) as (run, _engine):
        run.put_many(checked)
        run.put(info)
    return name


def store_results(run, records: list[dict[str, Any]], info: EvalInfo) -> None:
    """An evaluation's or a scoring's question records and its info."""
    run.put_many([QuestionRecord.model_validate(r) for r in records])
    run.put(info)


def _digest(ids) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def load_run_records(store: Store, name: str) -> tuple[EvalInfo, list[dict[str, Any]]]:
    """(info, question records) of a MemeQA evaluation or scoring run, or an InputError if it is not one."""
    row = store.run_row(name)
    if row["method"] != METHOD:
        raise InputError(f"run {name!r} is a {row['method']} run, not a MemeQA run", "run name",
                         "pass the name of a `memegauge qa eval` or `qa score` run")
    info = read_info(store, row["id"])
    if info is None:
        raise InputError(f"run {name!r} has no MemeQA results (did it finish?)", "run name",
                         "rerun the same command to complete it")
    if not isinstance(info, EvalInfo):
        raise InputError(f"run {name!r} is a MemeQA {info.task} run, it answered no questions", "run name",
                         "pass the name of a `memegauge qa eval` or `qa score` run")
    return info, read_checked(store, row["id"], QuestionRecord)
