"""MemeQA's stored records (see `memelens.records`): one `QuestionRecord` per question asked or scored,
and the `EvalInfo` of an evaluation or scoring run. (Build and fine-tune runs keep their summary as an
untyped ``meta/info`` record; their figures live in their own files.)"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memelens.records import Record


class QuestionRecord(Record):
    """The outcome of one question: what was asked, the gold and predicted letters, whether it counts."""

    KIND = "question"

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

    @property
    def key(self) -> str:
        return self.id


class Execution(BaseModel):
    """Timing of one execution of a run."""

    model_config = ConfigDict(extra="forbid")

    wall_s: float
    new_calls: int


class EvalInfo(Record):
    """What an evaluation (`qa eval`, the demo) or a scoring (`qa score`) run was."""

    KIND = "meta"

    task: Literal["eval", "score"]
    version: str = Field(description="none-minus or none-plus.")
    split: str
    model: str = Field(description="The model evaluated, or the predictions file scored.")
    circular: bool = False
    types: list[str] | None = Field(description="The question types asked; None: all.")
    last_execution: Execution | None = Field(default=None, description="Wall time and calls of the last "
                                             "execution (a resumed run reports its own).")

    @property
    def key(self) -> str:
        return "info"
