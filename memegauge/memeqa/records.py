"""MemeQA's stored records (see `memegauge.records`): one `QuestionRecord` per question asked or scored;
a build run's adversarial-filtering rounds (`AFRound`) and trivial filter (`TrivialSummary`); and
every run's summary, the ``meta/info`` record, whose shape depends on the task (`EvalInfo`,
`BuildInfo`, `FinetuneInfo`; `read_info` picks by `task`). Keys are the question id, the round number
(three digits), or fixed (``summary``, ``info``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memegauge.records import KeySpelling, Record, read_stored

if TYPE_CHECKING:
    from memegauge.engine.store import Store


class QARecord(Record):
    KEYS = KeySpelling("/", {"round": 3})


class QuestionRecord(QARecord):
    """The outcome of one question: what was asked, the gold and predicted letters, whether it counts."""

    KIND = "question"
    KEY = ("id",)

    id: str
    type: str = Field(description="The specific question type (one of the 11).")
    general_type: str = Field(description="single or multi (choice).")
    img: str
    question: str
    options: list[str]
    gold: list[int] = Field(description="Indices of the correct options.")
    gold_letters: str
    prediction: str | None = Field(description="The letters read from the first answer; None if unreadable.")
    raw: str | None = Field(description="The model's first answer as given; None when its call failed.")
    correct: bool | None = Field(description="None when a call failed: the question is not scored.")
    parse_failed: bool | None = Field(description="An answer was unreadable (it counts as wrong).")
    parse_error: str
    error_class: str | None
    answer_space: int = Field(description="How many answers were possible (for the random baseline).")
    rotations: int = Field(description="Presentations asked: 1, or the number of options (circular).")
    rotation_raw: list[str | None] | None = Field(description="Every rotation's answer (circular runs).")


class Execution(BaseModel):
    """Timing of one execution of a run."""

    model_config = ConfigDict(extra="forbid")

    wall_s: float
    new_calls: int
    backend: dict[str, int] = Field(default_factory=dict, description="What the model's backend counted "
                                    "of its own work in this execution, e.g. `hf.batches_split`: batches "
                                    "split in halves because they ran out of memory.")
    concurrency: dict[str, int | str] = Field(default_factory=dict, description="The concurrency limit "
                                              "in force per model at the end: a fixed number, or "
                                              "`auto:N` for `max_concurrency: auto` (N in flight).")


class EvalInfo(QARecord):
    """What an evaluation (`qa eval`, the demo) or a scoring (`qa score`) run was."""

    KIND = "meta"
    KEY = "info"

    task: Literal["eval", "score"]
    version: str = Field(description="none-minus or none-plus.")
    split: str
    model: str = Field(description="The model evaluated, or the predictions file scored.")
    circular: bool = False
    types: list[str] | None = Field(description="The question types asked; None: all.")
    last_execution: Execution | None = Field(default=None, description="Wall time and calls of the last "
                                             "execution (a resumed run reports its own).")
    missing: list[str] = Field(default_factory=list, description="`qa score`: the chosen questions the "
                               "predictions file has no answer for (not scored, not counted as wrong).")


class AFRound(QARecord):
    """One round of adversarial filtering (paper §3.2): how the discriminator did on the questions."""

    KIND = "af"
    KEY = ("round",)

    round: int = Field(description="0-based.")
    accuracy: float = Field(description="The discriminator's accuracy on the questions it answered.")
    questions: int
    answered_correctly: int = Field(description="Questions whose distractors the next round replaces.")
    stopped: bool = Field(description="The last round: accuracy stopped falling, or the round limit.")


class TrivialSummary(QARecord):
    """The trivial filter: questions a model answers correctly without the meme are dropped."""

    KIND = "trivial"
    KEY = "summary"

    model: str
    asked: int
    dropped: int
    failed_calls: int = Field(description="Calls that failed (their questions are kept).")


class BuildInfo(QARecord):
    """What a build run (`qa build`) made: counts per stage and the files written."""

    KIND = "meta"
    KEY = "info"

    task: Literal["build"]
    annotations: str = Field(description="The annotations file the questions were built from.")
    out: str = Field(description="The folder the benchmark was written to.")
    memes: int
    drafted: dict[str, int] = Field(description="Questions per type before filtering.")
    after_trivial_filter: dict[str, int] = Field(description="Questions per type in None−.")
    af_rounds: list[AFRound]
    trivial: TrivialSummary | None = Field(description="None when the trivial filter was off.")
    written: dict[str, int] = Field(description="Questions per `<version>/<split>` file.")


class DevPoint(BaseModel):
    """One dev evaluation during fine-tuning (every 20% of an epoch)."""

    model_config = ConfigDict(extra="forbid")

    step: int
    epoch: float
    train_loss: float
    accuracy: dict[str, float | None] = Field(description="Accuracy per question type.")
    macro: float | None
    micro: float | None
    parse_failure_rate: float | None


class FinetuneInfo(QARecord):
    """What a fine-tuning run (`qa finetune`) reached: the best dev point and every dev point."""

    KIND = "meta"
    KEY = "info"

    task: Literal["finetune"]
    out: str = Field(description="The output folder (``best/``, ``last/``, ``dev_scores.json``).")
    best_step: int | None
    best_macro: float | None
    dev: list[DevPoint]
    losses: list[float] = Field(default_factory=list, description="Training loss of every step "
                                "(the loss curve; empty in runs made before it was stored).")
    vision: bool | None = Field(default=None, description="Whether the model saw the meme pictures "
                                "(None: not recorded).")
    settings: dict[str, Any] = Field(default_factory=dict, description="The memory settings in force "
                                     "(`finetune.memory_settings`): parameters, gradient_checkpointing, "
                                     "micro_batch_size (the size `auto` found), max_pixels, image_size; "
                                     "empty in runs made before they were stored.")


INFO_BY_TASK: dict[str, type[QARecord]] = {"eval": EvalInfo, "score": EvalInfo, "build": BuildInfo,
                                           "finetune": FinetuneInfo}


def read_info(store: Store, run_id: int) -> EvalInfo | BuildInfo | FinetuneInfo | None:
    """The run's ``meta/info`` record, through the model of its task; None when the run has none yet."""
    data = store.get_record(run_id, "meta", "info")
    if data is None:
        return None
    model = INFO_BY_TASK.get(data.get("task"), EvalInfo)  # another task fails EvalInfo's own check
    return read_stored(model, "info", data)  # type: ignore[return-value]
