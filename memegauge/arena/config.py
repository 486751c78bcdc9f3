"""MemeArena run configuration (YAML → `ArenaConfig`), validated with clear errors.

Example::

    memes: memes.jsonl            # relative paths resolve from the config file
    limit: 20                     # first N memes (optional)
    agent: gpt-4o                 # context simulation + task formulation (temperature 1)
    targets: [gpt-4o, gemini-2, qwen-vl-32b, llava-8b, pixtral-12b]
    judges: [gpt-4o, gemini-2, qwen-vl-32b]     # the panel; each judge is also a target
    seed: 0

Every other key has a default (see the fields). `added_targets` lists targets added to a finished arena
one at a time (`memegauge arena --extend RUN` fills it in): their answers are merged into the guidelines as
extra fusion rounds and their battles are *added* to the base arena's, which stay as they are (see
`memegauge.arena.fusion` and `memegauge.arena.judging.sample_pairs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memegauge.config import MethodConfig
from memegauge.prompts import prompt_folder, stored_prompts
from memegauge.types import MAX_TOKENS

SETTINGS = ("fused", "self", "human", "none")
"""The bias study's reference settings (paper §3.3): the fused guideline (MemeArena), the judge's own
answer (LLM-as-a-Judge), a human-written guideline from a file, no reference at all."""


PROMPT_PREFIX = "arena_"
PromptFolder = prompt_folder(PROMPT_PREFIX)


class StageTokens(BaseModel):
    """`max_tokens` per stage. The defaults fit the paper's example outputs with room to spare (Fig. 13's
    ~600-word answers, Fig. 14's 742-word fused guideline after the judge's comparison, Fig. 15's
    judgment, at ~1.4 tokens a word); small values keep the embedded model's demo inside its time."""

    model_config = ConfigDict(extra="forbid")

    contexts: int = Field(default=400, ge=16, le=MAX_TOKENS)
    tasks: int = Field(default=500, ge=16, le=MAX_TOKENS)
    answers: int = Field(default=1200, ge=16, le=MAX_TOKENS)
    fusion: int = Field(default=2000, ge=16, le=MAX_TOKENS)
    judging: int = Field(default=1200, ge=16, le=MAX_TOKENS)
    detection: int = Field(default=40, ge=8, le=MAX_TOKENS)


class ArenaConfig(MethodConfig):
    """A MemeArena run. Unknown keys are refused (a typo must not silently fall back to a default); paths
    resolve from the config file (`MethodConfig`)."""

    memes: Path = Field(description="Meme set (JSONL, CSV or a folder of images).")
    images: Path | None = Field(default=None, description="Folder the meme set's relative `image` names "
                                "resolve from (or the corpus folder holding it as `images/`), when the "
                                "pictures are not beside the meme-set file (--images).")
    limit: int | None = Field(default=None, ge=1, description="Use only the first N memes.")
    require_images: bool = Field(default=True, description="False: load text-only memes too.")
    agent: str = Field(description="Registry name of the context/task agent (temperature 1).")
    targets: list[str] = Field(min_length=2, description="Target models (registry names).")
    added_targets: list[str] = Field(
        default_factory=list, description="Targets added to a finished arena, in arrival order.")
    judges: list[str] = Field(min_length=1, description="The judge panel; every judge is a target.")
    allow_same_family: bool = Field(
        default=False, description="Accept two judges of one model family (the paper requires distinct "
        "families; registry key `family:`). The demo's personas of one model need it.")
    seed: int = Field(default=0, description="Seed of every random choice.")
    repeats: int = Field(default=1, ge=1, description="Independent runs of the whole arena (seeds seed, "
                         "seed+1, …); the report gives each model's Elo, BT and win rate as mean ± 95% CI "
                         "over them (the paper averages three).")
    tasks_per_meme: int = Field(default=3, ge=1, le=3,
                                description="Use the first N of the three context-specific tasks.")
    answers_per_task: int = Field(default=3, ge=2,
                                  description="Target answers sampled per task; all their pairs battle.")
    fusion_pool: Literal["judges", "all"] = Field(
        default="all", description="Whose answers the guideline is fused from: every target's (the "
                                   "paper) or the judges' only (cheaper); see fusion.py.")
    self_judging: bool = Field(default=True,
                               description="Judges also judge battles involving their own answer, as "
                                           "in the paper (its bias study measures that self-preference); "
                                           "false excludes them.")
    both_orders: bool = Field(default=False,
                              description="Judge each pair in both orders; a disagreement is a tie.")
    settings: list[Literal["fused", "self", "human", "none"]] = Field(
        default_factory=lambda: ["fused"], min_length=1,
        description="Reference settings to judge under; the first one is the headline ranking.")
    human_guidelines: Path | None = Field(
        default=None, description="JSONL {meme, guideline[, task]} for the 'human' setting.")
    human_votes: Path | None = Field(
        default=None, description="CSV of human pairwise votes (task, model_a, model_b, winner).")
    detection: bool = Field(default=True, description="Run the harmful/harmless detection baseline.")
    elo_k: float = Field(default=4.0, gt=0, description="Online Elo K factor.")
    bootstrap_rounds: int = Field(default=1000, ge=0, description="Bradley-Terry bootstrap rounds.")
    max_tokens: StageTokens = Field(default_factory=StageTokens)
    prompts: PromptFolder = Field(default=None, description="A folder of templates replacing shipped ones "
                                  "role by role (`arena_<role>.j2`); docs/arena.md, \"Custom prompts\".")

    @model_validator(mode="after")
    def _consistent(self) -> ArenaConfig:
        every = self.all_targets
        if len(set(every)) != len(every):
            raise ValueError("targets and added_targets must not repeat a model")
        outside = [j for j in self.judges if j not in self.targets]
        if outside:
            raise ValueError(f"judges {outside} are not in targets (every judge is also a target, "
                             "and a judge cannot join with added_targets)")
        if len(set(self.judges)) != len(self.judges):
            raise ValueError("judges must not repeat a model")
        if "human" in self.settings and self.human_guidelines is None:
            raise ValueError("the 'human' setting needs human_guidelines: FILE")
        if len(set(self.settings)) != len(self.settings):
            raise ValueError("settings must not repeat")
        return self

    @property
    def all_targets(self) -> list[str]:
        return [*self.targets, *self.added_targets]

    def roles(self) -> dict[str, list[str]]:
        """The agent, the targets (added ones too) and the judges (each judge is also a target)."""
        return {"agent": [self.agent], "targets": self.all_targets, "judges": list(self.judges)}

    def default_name(self) -> str:
        """The run's name when none is given: ``arena-<targets>-<memes>[-s<seed>]-<config hash>``
        (`memegauge.methods.default_run_name`); the one place ArenaConfig's runs are named."""
        from memegauge.methods import default_run_name  # the registry's naming rule (methods imports no config)

        return default_run_name("arena", self.targets, self.memes, self.stored())

    def stored(self) -> dict[str, Any]:
        """The config as stored with the run (and hashed): JSON-safe, paths as strings; custom prompts
        with their hashes (absent without them)."""
        # `images` only when given: configs written before it keep their hash (and their runs resume)
        unset = {"prompts"} | ({"images"} if self.images is None else set())
        return {**self.model_dump(mode="json", exclude=unset),
                **stored_prompts(self.prompts, PROMPT_PREFIX)}
