"""AdamMeme's stored records (see `memegauge.records`): one model per kind, shared by the stages that
write them and the report that reads them.

Every key is spelled by `KEYS` (parts joined by ``/``; chain and step numbers three digits wide):
``<meme>`` for mining, ``<category>`` for sampling, ``<category>/<meme>`` for a misbelief,
``<repeat>/<category>/<meme>`` for a reference, ``<target>/<repeat>/<category>/<meme>`` for a scored
original sample (its `id`, also the key of a human score), ``<target>/<repeat>/<category>/<chain>/<step>``
for a refinement step."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memegauge.adammeme.failure_rule import FailureRuleName  # noqa: F401 (where it has always been read)
from memegauge.records import KeySpelling, Record

FailedStage = Literal["reference", "target", "scorer", "refiner", "validity"]  # validity: the Refiner's check

KEYS = KeySpelling("/", {"chain": 3, "step": 3})
"""How AdamMeme spells every record key."""


class AdamRecord(Record):
    KEYS = KEYS


class RunMeta(AdamRecord):
    """What the run was asked to do: its targets, agent, threshold and size."""

    KIND = "meta"
    KEY = "run"

    targets: list[str]
    agent: str
    threshold: float = Field(description="The failure threshold (paper: 4).")
    failure_rule: FailureRuleName = Field(
        default="below", description="`below`: a score under the threshold fails (the paper's text); "
        "`at_or_below`: at it too (the original release's results). Runs stored before this field "
        "counted `below`, hence the default here (a new run's config defaults to `at_or_below`).")
    repeats: int
    top_terms: int
    memes: int
    erase: bool
    source: str | None = Field(default=None, description="Imported runs: the folder of the original logs.")
    experiment: str | None = Field(default=None, description="Imported runs: the experiment's name.")


class TaxonomyRecord(AdamRecord):
    """The taxonomy as mining left it (§2.2): the seed categories and those mining added."""

    KIND = "taxonomy"
    KEY = "final"

    categories: dict[str, str] = Field(description="Every category, in order: name → description.")
    added: dict[str, str] = Field(default_factory=dict, description="Category → the meme that raised it.")


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


class MiningRecord(AdamRecord):
    """One meme's harmfulness mining: the Miners' answers, the majority vote and new categories."""

    KIND = "mining"
    KEY = ("meme",)

    meme: str
    status: Literal["ok", "failed"] = Field(description="failed: half or more of the Miners failed.")
    categories: list[str] = Field(description="The categories the meme is harmful in (empty: harmless).")
    votes: dict[str, int] = Field(description="Miner votes per existing category.")
    miners: list[MinerAnswer]
    proposals: list[Proposal]
    labels: list[str] = Field(description="The meme set's own labels, kept for agreement figures.")
    text: str = Field(default="", description="The meme's text as the run read it (its meme set, a sidecar "
                                          ".txt, or OCR for a folder of images). Empty in older stores.")


class SamplingRecord(AdamRecord):
    """One category's sample (§2.3): the memes mined into it, those drawn, and the refinement seeds."""

    KIND = "sampling"
    KEY = ("category",)

    category: str
    mined: int = Field(description="How many memes mining put in the category.")
    sampled: list[str] = Field(description="The meme ids drawn (at most `cap`), in meme-set order.")
    warning: str | None = Field(description="Set when the sample is too small for stable figures.")
    seeds: list[str] = Field(description="The sampled memes Algorithm 1 starts its chains from.")


class MisbeliefRecord(AdamRecord):
    """The misbelief the Narrator states for one sampled (category, meme) pair (Fig. 9)."""

    KIND = "misbelief"
    KEY = ("category", "meme")

    category: str
    meme: str
    ok: bool
    misbelief: str | None = Field(description="One sentence; None when the call failed.")
    error_class: str | None = None


class ReferenceRecord(AdamRecord):
    """The wisdom-of-crowds reference for one sampled pair in one repeat (§2.3, Eq. 5, Fig. 10)."""

    KIND = "reference"
    KEY = ("repeat", "category", "meme")

    repeat: int
    category: str
    meme: str
    ok: bool
    reference: str | None = Field(description="The senior agent's final response; None when it failed.")
    candidates: list[str] = Field(description="The crowd's answers the senior agent chose from.")
    failed_stage: FailedStage | None = None
    error_class: str | None = None


class _Scored(AdamRecord):
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

    KEY = ("id",)


class ScoreRecord(_Scored):
    """An original (iteration 0) sample scored for one target and repeat."""

    KIND = "score"

    text: str | None = Field(description="The meme text as scored.")

    @staticmethod
    def id_of(target: str, repeat: int, category: str, meme: str) -> str:
        return KEYS.join({"target": target, "repeat": repeat, "category": category, "meme": meme})


class RefineAttempt(BaseModel):
    """One Refiner try within a step: its rewrite, or why it was not used."""

    model_config = ConfigDict(extra="forbid")

    status: str = Field(description="ok, invalid (the check said no), or the failed call's error class.")
    error_class: str | None = None
    stage: str | None = Field(default=None, description="'validity' when the validity check's call failed "
                                                        "(e.g. its reply unreadable); None otherwise.")
    reason: str | None = None
    rewrite: str | None = None
    text: str | None = Field(default=None, description="The reply that ended the attempt: the Refiner's when its "
                                                       "call failed, else the validity check's (its 'No'); for a "
                                                       "failed call, its error, which quotes an unreadable reply.")


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

    @staticmethod
    def id_of(target: str, repeat: int, category: str, chain: int, step: int) -> str:
        return KEYS.join({"target": target, "repeat": repeat, "category": category, "chain": chain, "step": step})


class HumanScore(AdamRecord):
    """A human's score of one original sample, imported for agreement (Table 3)."""

    KIND = "human_score"
    KEY = ("sample",)

    sample: str = Field(description="The scored sample's id (`ScoreRecord.id`).")
    score: float = Field(ge=1, le=10)


class HumanLabel(AdamRecord):
    """A human's harm categories for one meme, as runs stored them before annotators were told apart
    (read as annotator 1; new imports write `AnnotatorLabel`)."""

    KIND = "human_label"
    KEY = ("meme",)

    meme: str
    categories: list[str]


class AnnotatorLabel(AdamRecord):
    """One annotator's harm categories for one meme, imported for agreement (Table 8: each annotator
    against the Miners' vote, and Cohen's κ between every pair of annotators)."""

    KIND = "annotator_label"
    KEY = ("annotator", "meme")

    annotator: str = Field(description="1, 2, … in the order the label files were given.")
    meme: str
    categories: list[str]
