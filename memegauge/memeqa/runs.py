"""MemeQA runs in the store: `eval` (ask a model) and `score` (grade answers produced elsewhere).

Both write the same records, so `memegauge report NAME` and `memegauge qa compare` read either:
``question/<id>`` (see `evaluate.question_record`) and ``meta/info`` (task, version, split, model).
A run's config names everything that decides its results, so a rerun under the same name resumes
(model calls replay from the cache) and a different config under that name is refused.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from memegauge.config import ModelRegistry
from memegauge.engine import Store, open_run
from memegauge.images.thumbnail import MemeImage, meme_image_records
from memegauge.memeqa.dataset import (Question, load_memes_for, load_questions, resolve_types,
                                     select_questions)
from memegauge.memeqa.evaluate import evaluate_questions, question_record
from memegauge.memeqa.records import EvalInfo, Execution, QuestionRecord, read_info
from memegauge.records import read_checked
from memegauge.types import InputError, Meme

METHOD = "memeqa"


def default_run_name(task: str, version: str, split: str, who: str, limit: int | None,
                     types: list[str], circular: bool = False) -> str:
    parts = ["memeqa", task, who, version, split]
    if limit:
        parts.append(f"n{limit}")
    if len(types) != 11:
        parts.append("t" + hashlib.sha256("|".join(types).encode()).hexdigest()[:6])
    if circular:
        parts.append("circular")
    return "-".join(parts)


async def eval_run(store: Store, registry: ModelRegistry, *, data: Path, images: Path,
                   version: str, split: str, model: str, texts: Path | None = None,
                   run_name: str | None = None, limit: int | None = None,
                   types: list[str] | None = None, seed: int = 0, circular: bool = False,
                   progress: bool | None = None) -> str:
    """Evaluate `model` on one split of one version; returns the run name."""
    registry.get(model)  # unknown model: fail before reading anything
    chosen_types = resolve_types(types)
    questions = select_questions(load_questions(data, version, split), types=chosen_types,
                                 limit=limit, seed=seed)
    memes = load_memes_for(questions, images, texts)
    name = run_name or default_run_name("eval", version, split, model, limit, chosen_types, circular)
    config = {"task": "eval", "version": version, "split": split, "model": model,
              "questions": _digest(q.id for q in questions), "limit": limit,
              "types": chosen_types, "seed": seed, "circular": circular}
    info = EvalInfo(task="eval", version=version, split=split, model=model, circular=circular, types=chosen_types)
    await ask_questions(store, registry, questions, memes, name=name, config=config, info=info, seed=seed,
                        progress=progress)
    return name


async def ask_questions(store: Store, registry: ModelRegistry, questions: list[Question],
                        memes: dict[str, Meme], *, name: str, config: dict[str, Any], info: EvalInfo,
                        seed: int = 0, progress: bool | None = None) -> list[dict[str, Any]]:
    """Ask `info.model` the questions as the run `name` and store every outcome with the run's info
    (and this execution's wall time); returns the question records. `qa eval` and the demo."""
    async with open_run(store, registry, name=name, method=METHOD, config=config, seed=seed,
                        progress=progress, vision_models=[info.model]) as (run, engine):
        started = time.monotonic()
        records = await evaluate_questions(questions, memes, model=info.model, version=info.version,
                                           engine=engine, circular=info.circular)
        # Wall time of this execution only: a resumed or replayed run reports its own, shorter one.
        timing = Execution(wall_s=time.monotonic() - started, new_calls=engine.calls_made)
        store_results(run, records, info.model_copy(update={"last_execution": timing}))
        # the pictures `memegauge rate` shows; a rerun makes only those it lacks
        stored = {image.meme for image in run.all(MemeImage)}
        run.put_many(meme_image_records(m for m in memes.values() if m.id not in stored))
    return records


def read_predictions(path: Path) -> dict[str, str]:
    """``{id: raw answer text}`` from a JSONL file of ``{"id", "prediction"}`` lines."""
    if not Path(path).is_file():
        raise InputError("predictions file not found", str(path), "check the path")
    predictions: dict[str, str] = {}
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", f"{path}:{line}",
                         "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", where,
                             'write one {"id": ..., "prediction": "..."} object per line') from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) \
                or not isinstance(row.get("prediction"), str):
            raise InputError('expected {"id": str, "prediction": str}', where,
                             "write the model's raw answer text as a string")
        if row["id"] in predictions:
            raise InputError(f"second prediction for id {row['id']!r}", where,
                             "keep one prediction per question")
        predictions[row["id"]] = row["prediction"]
    return predictions


def score_records(questions: list[Question], predictions: dict[str, str],
                  version: str) -> list[dict[str, Any]]:
    """Grade raw answers like `eval` does; a question with no prediction is wrong (not failed)."""
    unknown = sorted(set(predictions) - {q.id for q in questions})
    if unknown:
        raise InputError(f"{len(unknown)} prediction(s) for ids not in this split, e.g. "
                         f"{unknown[0]!r}", "--predictions",
                         "check --version/--split (or --types/--limit) against the file")
    records = []
    for q in questions:
        record = question_record(q, version, [predictions.get(q.id, "")], [None], circular=False)
        if q.id not in predictions:
            record.update(raw=None, parse_failed=False, parse_error="", missing=True)
        records.append(record)
    return records


async def score_run(store: Store, registry: ModelRegistry, *, data: Path, version: str,
                    split: str, predictions: Path, run_name: str | None = None,
                    limit: int | None = None, types: list[str] | None = None,
                    seed: int = 0) -> str:
    """Score a predictions file into a run; returns the run name."""
    chosen_types = resolve_types(types)
    every = load_questions(data, version, split)
    answers = read_predictions(predictions)
    score_records(every, answers, version)  # ids foreign to the split are bad input, sample or not
    questions = select_questions(every, types=chosen_types, limit=limit, seed=seed)
    chosen = {q.id for q in questions}
    records = score_records(questions, {k: v for k, v in answers.items() if k in chosen}, version)
    file_hash = hashlib.sha256(Path(predictions).read_bytes()).hexdigest()[:16]
    name = run_name or default_run_name("score", version, split, Path(predictions).stem, limit,
                                        chosen_types)
    config = {"task": "score", "version": version, "split": split, "predictions": file_hash,
              "limit": limit, "types": chosen_types, "seed": seed}
    async with open_run(store, registry, name=name, method=METHOD, config=config, seed=seed,
                        progress=False) as (run, _engine):
        store_results(run, records, EvalInfo(task="score", version=version, split=split,
                                             model=Path(predictions).name, circular=False, types=chosen_types))
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
