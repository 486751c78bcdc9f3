"""AdamMeme's stored records (see `memelens.records`): one model per kind, shared by the stages that
write them and the report that reads them. Keys: ``<target>/<repeat>/<category>/<meme>`` for a scored
original sample, ``…/<category>/<chain:03d>/<step:03d>`` for a refinement step, the meme id for mining."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memelens.records import Record

FailedStage = Literal["reference", "target", "scorer", "refiner"]


class RunMeta(Record):
    """What the run was asked to do: its targets, agent, threshold and size."""

    KIND = "meta"

    targets: list[str]
    agent: str
    threshold: float = Field(description="A score below this is a failure (paper: 4).")
    repeats: int
    top_terms: int
    memes: int
    erase: bool
    source: str | None = Field(default=None, description="Imported runs: the folder of the original logs.")
    experiment: str | None = Field(default=None, description="Imported runs: the experiment's name.")

    @property
    def key(self) -> str:
        return "run"


class Verdict(BaseModel):
    """A Judge's or Examiner's yes/no on a proposed category (None when its call failed)."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    yes: bool | None = Field(description="The answer; None when the call failed.")
    error_class: str | None = None
    text: str | None = Field(default=None, description="The model's answer as given.")


class Proposal(BaseModel):
    """A new category a Miner raised for one meme, and what became of it (paper §2.1, Fig. 3)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    decision: Literal["pending", "accepted", "joined", "rejected", "failed"] = Field(
        description="accepted: added to the taxonomy; joined: the meme joins a category accepted earlier "
                    "in its wave; rejected/failed: see `reason`; pending only while mining runs.")
    reason: str = Field(default="", description="Why it was rejected or failed, e.g. \"duplicate of 'race'\", "
                                                "\"judge said no\", \"examiner timeout\".")
    judge: Verdict | None = None
    examiner: Verdict | None = None
    judge_first: Verdict | None = Field(default=None, description="The Judge's first verdict, when it was "
                                        "asked again after categories were accepted earlier in the wave.")

    @model_validator(mode="before")
    @classmethod
    def _split_legacy_decision(cls, data: Any) -> Any:
        """Stores before typed records kept "rejected: <reason>" in one string."""
        if isinstance(data, dict) and ":" in str(data.get("decision", "")):
            decision, _, reason = data["decision"].partition(":")
            data = {**data, "decision": decision.strip(), "reason": reason.strip()}
        return data


class MinerAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ok: bool
    answer: dict[str, Any] | None = Field(description="{task: [categories], new: {name: description}}.")
    error_class: str | None = None


class MiningRecord(Record):
    """One meme's harmfulness mining: the Miners' answers, the majority vote and new categories."""

    KIND = "mining"

    meme: str
    status: Literal["ok", "failed"] = Field(description="failed: half or more of the Miners failed.")
    categories: list[str] = Field(description="The categories the meme is harmful in (empty: harmless).")
    votes: dict[str, int] = Field(description="Miner votes per existing category.")
    miners: list[MinerAnswer]
    proposals: list[Proposal]
    labels: list[str] = Field(description="The meme set's own labels, kept for agreement figures.")

    @property
    def key(self) -> str:
        return self.meme


def pair_key(category: str, meme_id: str) -> str:
    """The key of a sampled (category, meme) pair: its misbelief record and the pipeline's lookups."""
    return f"{category}/{meme_id}"


class MisbeliefRecord(Record):
    """The misbelief the Narrator states for one sampled (category, meme) pair (Fig. 9)."""

    KIND = "misbelief"

    category: str
    meme: str
    ok: bool
    misbelief: str | None = Field(description="One sentence; None when the call failed.")
    error_class: str | None = None

    @property
    def key(self) -> str:
        return pair_key(self.category, self.meme)


class _Scored(Record):
    """What scoring one meme text gives (Fig. 11): reference, target answer, Scorer comparison, score."""

    id: str
    target: str
    repeat: int
    category: str
    meme: str
    misbelief: str
    iteration: int = Field(description="0 for an original sample, k for the k-th refinement step of a chain.")
    reference: str | None = None
    answer: str | None = Field(default=None, description="The target model's answer.")
    comparison: str | None = Field(default=None, description="The Scorer's comparison, with its rating.")
    score: int | None = Field(default=None, description="1–10; None when a call failed (never a score).")
    status: str = Field(description="scored, failed, or why the step stopped (an error class).")
    failed_stage: FailedStage | None = None
    error_class: str | None = None

    @property
    def key(self) -> str:
        return self.id


class ScoreRecord(_Scored):
    """An original (iteration 0) sample scored for one target and repeat."""

    KIND = "score"

    text: str | None = Field(description="The meme text as scored.")


class RefineAttempt(BaseModel):
    """One Refiner try within a step: its rewrite, or why it was not used."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(description="ok, invalid, or the failed call's error class.")
    error_class: str | None = None
    reason: str | None = None
    rewrite: str | None = None
    text: str | None = Field(default=None, description="The Refiner's output when its call failed.")


class StepRecord(_Scored):
    """One refinement step of Algorithm 1: the case rewritten, then scored like an original."""

    KIND = "step"

    case: str | None = Field(description="Key of the sample rewritten (None in imported legacy logs).")
    chain: int | None
    seed: str | None = Field(description="The seed meme of the chain.")
    step: int | None
    original_text: str | None
    rewrite: str | None = Field(description="The rewritten meme text; None when no valid rewrite came.")
    explanation: str | None
    parent_score: int | None = Field(description="The case's score before this rewrite.")
    improved: bool | None = Field(description="True when the rewrite scored lower (harder) than its case.")
    examples: list[str] = Field(description="Keys of the retrieved examples shown to the Refiner.")
    attempts: list[RefineAttempt]
