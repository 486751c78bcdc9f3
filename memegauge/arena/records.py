"""MemeArena's stored records (see `memegauge.records`): the answer, judgment and battle models that the
stages write and the report reads. Winners are Chatbot Arena values in the battle's own orientation
(model names in alphabetical order); dimensions are the paper's five plus ``overall``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memegauge.records import KeySpelling, Record

KEYS = KeySpelling("|", {"round": 2})
"""How MemeArena spells every record key: the key fields joined by ``|`` (a task id, ``<meme>#<n>``,
holds no ``|``); a fusion round's number two digits wide."""

Winner = Literal["model_a", "model_b", "tie", "tie (bothbad)"]


class ArenaRecord(Record):
    KEYS = KEYS


class MemeRecord(ArenaRecord):
    """A meme of the arena, in input order: what the report shows of it."""

    KIND = "meme"

    id: str
    order: int
    text: str
    caption: str
    labels: list[str]
    image: str | None = Field(description="The image path the run used (the picture itself: `meme_image`).")

    KEY = ("id",)


class _Call(ArenaRecord):
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
    missing_sections: list[str] = Field(description="Sections asked for and not found (recorded, not "
                                                    "failed).")

    KEY = ("task", "target")


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

    KEY = ("setting", "task", "model_a", "model_b", "judge", "order")


class FailedJudgment(BaseModel):
    """A judge call of a battle that failed (its class; never a verdict)."""

    model_config = ConfigDict(extra="forbid")

    judge: str
    order: str
    error_class: str | None


class BattleRecord(ArenaRecord):
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
    flips: dict[str, bool] = Field(description="Per judge, whether its two orders disagreed (both orders "
                                               "only).")
    failed_judgments: list[FailedJudgment]
    joint: dict[str, Winner | None] = Field(description="The panel's verdict per dimension.")
    judged: bool = Field(description="The battle has an overall joint verdict (it is ranked).")

    KEY = ("setting", "task", "model_a", "model_b")


class ContextRecord(_Call):
    """The three viewer personas simulated for one meme (paper §2.1)."""

    KIND = "context"

    meme: str
    personas: list[str] = Field(description="Three user profiles; empty when the call failed.")

    KEY = ("meme",)


class TasksRecord(_Call):
    """The context-specific task prompts formulated for one meme's personas (paper §2.2)."""

    KIND = "tasks"

    meme: str
    prompts: list[str] = Field(description="One task per persona; empty when the call failed.")

    KEY = ("meme",)


class TaskRecord(ArenaRecord):
    """One task in use: the n-th of its meme, with the persona it was written for."""

    KIND = "task"

    task: str = Field(description="<meme id>#<n>")
    meme: str
    index: int
    persona: str
    prompt: str

    KEY = ("task",)


class FusionRoundRecord(_Call):
    """One round of guideline fusion (paper §2.3): a judge merging one author's answer."""

    KIND = "fusion_round"

    task: str
    round: int = Field(description="0: the initial guideline (the author's own answer, no judge).")
    judge: str | None
    author: str
    guideline_first: bool | None = Field(default=None, description="Whether the current guideline was shown "
                                         "first (the order is drawn per round).")
    arrival: int = Field(default=0, description="The author's arrival stage (0: a base target; runs made "
                                                "before targets could be added have only those).")
    guideline: str | None = Field(description="The guideline after this round.")

    KEY = ("task", "round")


class GuidelineRecord(_Call):
    """A task's fused guideline: the final text and each version by arrival stage."""

    KIND = "guideline"

    task: str
    meme: str
    text: str | None
    versions: dict[str, str] = Field(default_factory=dict,
                                     description="Arrival stage → the guideline then.")
    init_author: str | None = None
    rounds: int = 0
    failed_rounds: int = 0

    KEY = ("task",)


class DetectionRecord(_Call):
    """A target's harmful / harmless label for one labelled meme (the detection baseline)."""

    KIND = "detection"

    target: str
    meme: str
    gold: bool
    harmful: bool | None
    source: str = Field(default="", description="The meme's `source` (its data set, e.g. FHM, HarM, "
                        "MAMI); empty when the meme file gives none or the run predates the field.")

    KEY = ("target", "meme")


class HumanVoteRecord(ArenaRecord):
    """A human's pairwise vote, imported for agreement (App. C, Tables 5–6; `arena/agreement.py`)."""

    KIND = "human_vote"
    KEY = ("index",)

    index: int = Field(description="The vote's position in the votes file (0-based).")
    task: str
    model_a: str
    model_b: str
    winner: Winner


class RepeatRecord(ArenaRecord):
    """One run of a repeated arena (`repeats: k`): repeat 1 is the run itself, repeat k runs as ``NAME#rk``
    with seed + k − 1. Every repeat run stores the whole list, so each can report the set."""

    KIND = "repeat"
    KEY = ("repeat",)

    repeat: int = Field(ge=1)
    run: str
    seed: int
