"""MemeQA report: `accuracy.{type}`, `macro`, `micro`, `parse_failure_rate` (each with its 95% interval
under `intervals`, `memegauge.memeqa.headline`),
`random_baseline.{macro, micro}`, counts, model-call latency, wall time per question (`timing`,
`qa eval` runs), `details` (one row per question: id, type, question, options, gold,
prediction, raw output, correct) for the HTML report, `missing` (`qa score`: the questions the
predictions file does not answer, by id; the figures are those of the covered questions), and
`paper`: the paper's published figures (random, human, every model, zero-shot and fine-tuned) beside
the run's (`memeqa/paper.py`). `format_warning`: a sentence when more than half the scored answers could
not be read (its figures then measure the output format; `memeqa/metrics.py`), else null.

Build and fine-tuning runs (`qa build`, `qa finetune`) report what they stored instead, with
`paper` too (a fine-tuning run's best dev point beside the paper's figures).
"""

from __future__ import annotations

from typing import Any


from memegauge.engine.store import Store
from memegauge.memeqa.headline import intervals
from memegauge.memeqa.metrics import format_warning, summarize
from memegauge.memeqa.paper import beside
from memegauge.memeqa.records import BuildInfo, FinetuneInfo, QuestionRecord, read_info
from memegauge.records import read_checked

DETAIL_KEYS = ("id", "type", "question", "options", "gold", "prediction", "raw", "correct",
               "parse_error", "error_class")


def build(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    info = read_info(store, run["id"])
    if isinstance(info, BuildInfo):
        return {**info.stored(), "paper": beside(None)}
    if isinstance(info, FinetuneInfo):
        return {**info.stored(), "paper": _beside_best_dev_point(info, run.get("config") or {})}
    records = read_checked(store, run["id"], QuestionRecord)
    figures = summarize(records, info.types if info else None)
    return {
        "task": info and info.task, "version": info and info.version, "split": info and info.split,
        "model": info and info.model, "circular": bool(info and info.circular),
        **figures,
        # more than half the answers unreadable: the figures measure the output format (metrics.py)
        "format_warning": format_warning(records),
        # every accuracy with its 95% interval, clustered by meme picture (memeqa/headline.py)
        "intervals": intervals(records, info.types if info and info.types else figures["accuracy"]),
        # `qa score`: the chosen questions the predictions file does not answer (not in any figure)
        "missing": {"n": len(info.missing), "ids": info.missing} if info else {"n": 0, "ids": []},
        "latency": _latency(store, run["id"]),
        "timing": _timing(info.last_execution.model_dump() if info and info.last_execution else None,
                          len(records)),
        "details": [_detail(r) for r in records],
        # the published figures (test split) beside this run's, for reading it against the paper
        "paper": beside(info and info.version, figures["accuracy"], figures["macro"]),
    }


def _beside_best_dev_point(info: FinetuneInfo, config: dict[str, Any]) -> dict[str, Any]:
    best = next((p for p in info.dev if p.step == info.best_step), None)
    return beside(config.get("version"), best.accuracy if best else None, best.macro if best else None,
                  label=f"best dev point (step {info.best_step}, {config.get('dev_split', 'dev')} split)")


def _latency(store: Store, run_id: int) -> dict[str, Any]:
    """Model-call latency of this run's calls, as stored (cached calls keep their first latency).
    It includes the wait for a concurrency slot, so it is not the wall time per question."""
    calls, mean = store.call_latency(run_id)
    return {"calls": int(calls), "mean_call_latency_s": float(mean) if calls else None}


def _timing(execution: dict[str, Any] | None, questions: int) -> dict[str, Any] | None:
    """Wall time of the execution that finished the run (`qa eval` only), per question too."""
    if not execution or not questions:
        return None
    return {**execution, "s_per_question": execution["wall_s"] / questions}


def _detail(record: dict[str, Any]) -> dict[str, Any]:
    """One question for the HTML report; gold and prediction as answer letters ("ACD", "N")."""
    return {k: record["gold_letters"] if k == "gold" else record.get(k) for k in DETAIL_KEYS}


def tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The report as flat tables (`Result.to_pandas`): accuracy per question type with its 95% interval
    as numeric columns (`ci95_lo`, `ci95_hi`; `n` the scored questions) beside random guessing, and
    every question asked. Build and fine-tune runs: their stored summary."""
    from memegauge.report.intervals import columns

    if report.get("task") in ("build", "finetune"):
        return {"dev": report.get("dev", [])} if report["task"] == "finetune" else \
            {"af_rounds": report.get("af_rounds", [])}
    found = (report.get("intervals") or {}).get("accuracy") or {}
    return {"accuracy": [{"type": t, "n": report["n"][t], "accuracy": a,
                          **{k: v for k, v in columns(found.get(t)).items() if k != "n"},
                          "random": report["random_baseline"]["by_type"][t]} for t, a in report["accuracy"].items()],
            "questions": report["details"]}
