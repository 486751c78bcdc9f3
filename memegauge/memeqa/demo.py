"""MemeQA part of `memegauge demo`: a handful of questions built from the bundled sample memes'
annotations (`memegauge/samples/annotations.jsonl`) by the construct stage, asked to the demo model
with the paper's prompts, and stored as an ordinary `qa eval` run.

Only the question types that need no generator call are built (cloze distractors would cost a
generator call each), and `QUESTIONS` of them are asked, one per type first: the embedded model reads
about 70 prompt tokens a second on two cores, so this keeps the part under a minute.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from memegauge.clikit import notes, stdout_console
from memegauge.memeqa.construct import load_annotations, multi_questions, single_questions
from memegauge.memeqa.dataset import select_questions
from memegauge.memeqa.metrics import summarize
from memegauge.memeqa.records import EvalInfo
from memegauge.memeqa.runs import ask_questions

if TYPE_CHECKING:
    from memegauge.methods import DemoInputs

QUESTIONS = 4
SEED = 0
VERSION = "none-minus"


def sample_annotations_path() -> Path:
    return Path(str(resources.files("memegauge.samples").joinpath("annotations.jsonl")))


async def demo(inputs: DemoInputs) -> str:
    """Build a few questions from the sample annotations and ask them like `qa eval` does."""
    model = inputs.model
    annotations = load_annotations(sample_annotations_path())
    by_image = {m.image.name: m for m in inputs.memes if m.image}
    annotations = [a for a in annotations if a.image in by_image]
    built = multi_questions(annotations, SEED) + single_questions(annotations, SEED)
    questions = select_questions(built, limit=QUESTIONS, seed=SEED)
    name = f"demo-memeqa-{model}"
    config = {"task": "eval", "version": VERSION, "split": "samples", "model": model,
              "questions": [q.id for q in questions]}
    info = EvalInfo(task="eval", version=VERSION, split="samples", model=model, circular=False, types=None)
    records = await ask_questions(inputs.store, inputs.registry, questions, by_image, name=name, config=config,
                                  info=info, seed=SEED, progress=inputs.progress)
    _print(records, model)
    return name


def _print(records: list[dict], model: str) -> None:
    table = Table(title=f"MemeQA on the sample memes ({model}; a functional check, not a benchmark)")
    for column in ("type", "question", "gold", "answer", "correct"):
        table.add_column(column)
    for r in records:
        table.add_row(r["type"], r["question"][:50], r["gold_letters"], str(r["prediction"] or r["raw"]),
                      {True: "yes", False: "no", None: "failed"}[r["correct"]])
    summary = summarize(records)
    stdout_console().print(table)
    if summary["micro"] is not None:
        from memegauge.report.intervals import rate, shown

        scored = [r for r in records if r["correct"] is not None]  # each question's picture is its cluster
        accuracy = rate([float(r["correct"]) for r in scored], [r.get("img") or r["question"] for r in scored])
        notes.print(f"MemeQA demo: accuracy {shown(accuracy, percent=True)} (n={accuracy['n']}), random guessing "
                    f"{100 * summary['random_baseline']['micro']:.1f}%")
