"""MemeArena's stored records (see `memelens.records`): the answer, judgment and battle models that the
stages write and the report reads. Winners are Chatbot Arena values in the battle's own orientation
(model names in alphabetical order); dimensions are the paper's five plus ``overall``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memelens.records import Record

Winner = Literal["model_a", "model_b", "tie", "tie (bothbad)"]


class _Call(Record):
    """The failure fields every call-backed record carries (a failure is recorded, never a value)."""

    ok: bool
    error_class: str | None = None
    error: str = ""


class AnswerRecord(_Call):
    """A target's analysis of one task: its text and its [Background Knowledge]/[Reasoning] sections."""

    KIND = "answer"

    task: str
    meme: str
    target: str
    text: str | None
    sections: dict[str, str] = Field(description="The sections found, by name.")
    missing_sections: list[str] = Field(description="Sections asked for and not found (recorded, not failed).")

    @property
    def key(self) -> str:
        return f"{self.task}|{self.target}"


class JudgmentRecord(_Call):
    """One judge call on one battle: which answer it preferred per dimension, in the battle's
    orientation (`verdicts`) and as read from its text in the shown positions (`read`)."""

    KIND = "judgment"

    setting: str = Field(description="fused, self, human or none: the reference the judge was given.")
    task: str
    model_a: str
    model_b: str
    judge: str
    order: Literal["ab", "ba"] = Field(description="ab: model_a was shown as Model A; ba: the reverse.")
    verdicts: dict[str, Winner | None]
    read: dict[str, str | None] = Field(default_factory=dict, description="The verdicts as the judge wrote "
                                        "them (A, B, Tie …); empty in runs made before they were kept.")
    truncated: bool = Field(default=False, description="The judgment was cut at max_tokens.")
    text: str | None

    @property
    def key(self) -> str:
        return f"{self.setting}|{self.task}|{self.model_a}|{self.model_b}|{self.judge}|{self.order}"


class FailedJudgment(BaseModel):
    """A judge call of a battle that failed (its class; never a verdict)."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    order: str
    error_class: str | None


class BattleRecord(Record):
    """One battle (setting, task, pair): each judge's verdicts, its flips, and the panel's joint vote."""

    KIND = "battle"

    battle: str = Field(description="<setting>|<task>|<model_a>|<model_b>")
    order: int = Field(description="Position in the planned battle sequence (online Elo's order).")
    setting: str
    task: str
    meme: str
    model_a: str
    model_b: str
    judges: dict[str, dict[str, Winner | None]]
    flips: dict[str, bool] = Field(description="Per judge, whether its two orders disagreed (both orders only).")
    failed_judgments: list[FailedJudgment]
    joint: dict[str, Winner | None] = Field(description="The panel's verdict per dimension.")
    judged: bool = Field(description="The battle has an overall joint verdict (it is ranked).")

    @property
    def key(self) -> str:
        return self.battle
