"""The AdamMeme config (`memegauge adam -c CONFIG`): memes, agent model, targets, sizes, seed, repeats.

Defaults are the paper's hyper-parameters (App. A and C): 3 Miners and 3 reference candidates, a cap of
200 samples per category (warn under 150), a seed set of 10 per category, at most 10 refinement steps,
top-3 in-context examples, FR threshold 4.0. Where the paper's text and its released results differ, the
choice is named (`failure_rule`, `seeds_per_category` as a count or a fraction) and recorded in the run. Example::

    memes: memes.jsonl            # relative to this file
    agent: gpt-4o                 # registry name of the agent controller (every AdamMeme role)
    targets: [qwen-vl, llava]     # one or more target models
    seed: 0
    repeats: 1                    # --repeat K: K independent draws of the T>0 agents
    erase: true                   # score on text-erased pictures (needs tesseract); false: originals
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memegauge.adammeme.records import FailureRuleName
from memegauge.config import MethodConfig
from memegauge.prompts import prompt_folder, stored_prompts
from memegauge.types import MAX_TOKENS


PROMPT_PREFIX = "adammeme_"
PromptFolder = prompt_folder(PROMPT_PREFIX)


class MaxTokens(BaseModel):
    """Generation budget per agent role (tokens). The defaults fit the paper's own example outputs with
    room to spare (Fig. 17's candidates and senior answer, Fig. 18's ~260-word comparison, at ~1.4 tokens
    a word), so a real model's answer is not cut; small models need them tight (the demo's are)."""

    model_config = ConfigDict(extra="forbid")

    miner: int = Field(default=300, ge=1, le=MAX_TOKENS)
    judge: int = Field(default=150, ge=1, le=MAX_TOKENS)
    examiner: int = Field(default=150, ge=1, le=MAX_TOKENS)
    narrator: int = Field(default=120, ge=1, le=MAX_TOKENS)
    candidate: int = Field(default=900, ge=1, le=MAX_TOKENS)
    senior: int = Field(default=1500, ge=1, le=MAX_TOKENS)
    target: int = Field(default=900, ge=1, le=MAX_TOKENS)
    scorer: int = Field(default=700, ge=1, le=MAX_TOKENS)
    refiner: int = Field(default=300, ge=1, le=MAX_TOKENS)
    validity: int = Field(default=100, ge=1, le=MAX_TOKENS)


class AdamConfig(MethodConfig):
    """Everything one AdamMeme run depends on; the whole object is the run's config (and its hash).
    Paths resolve from the config file (`MethodConfig`)."""

    memes: Path = Field(description="Meme set (JSONL, CSV or a folder of images), relative to the file.")
    images: Path | None = Field(default=None, description="Folder the meme set's relative `image` names "
                                "resolve from (or the corpus folder holding it as `images/`), when the "
                                "pictures are not beside the meme-set file (--images).")
    require_images: bool = Field(default=True, description="False: memes without images are text-only.")
    limit: int | None = Field(default=None, ge=1, description="Use only the first N memes.")
    agent: str = Field(description="Registry name of the agent model (every AdamMeme role); required: "
                       "the figures are only as good as this model, so it is never chosen silently.")
    targets: list[str] = Field(min_length=1, description="Registry names of the target models.")
    seed: int = Field(default=0, description="Seeds every random draw (sampling, seed set).")
    repeats: int = Field(default=1, ge=1, description="Independent repeats of scoring + refinement.")
    miners: int = Field(default=3, ge=1, description="Miners per meme (temperature 1).")
    candidates: int = Field(default=3, ge=1, description="Reference candidates (temperature 1).")
    mining_batch: int = Field(
        default=32, ge=1,
        description="Memes mined at once against one taxonomy snapshot (1 = strictly one by one).")
    cap: int = Field(default=200, ge=1, description="Samples per category (seeded draw above it).")
    warn_below: int = Field(default=150, ge=0, description="Warn when a category has fewer.")
    categories: list[str] | None = Field(
        default=None, description="Score and refine only these categories (default: all mined).")
    seeds_per_category: int | float = Field(
        default=10, description="Seed set S per category: a count (the paper's text: 10), or a fraction of "
        "the category's sample in (0, 1] (the original release refined about 10%: `0.1`).")
    max_steps: int = Field(default=10, ge=0, description="N: refinement steps per seed at most.")
    top_k: int = Field(default=3, ge=1, description="In-context examples retrieved from history.")
    rewrite_attempts: int = Field(default=3, ge=1, description="Refiner tries per step.")
    analysis_question: Literal["description", "category"] = Field(
        default="description", description="What the analysis question names: the category and its "
        "description (category-specific, as the original release and the paper's Fig. 17-18 ask), or the "
        "bare category name.")
    failure_threshold: float = Field(default=4.0, description="FR's threshold (paper: 4).")
    failure_rule: FailureRuleName = Field(
        default="at_or_below", description="`at_or_below`: a score at or below the threshold fails (the "
        "original release's results; they reproduce the published Table 1); `below`: only under it (the "
        "paper's text, §3.1). docs/adammeme.md, \"Reproducing Table 1\".")
    erase: bool = Field(default=True, description="Score on text-erased pictures (tesseract).")
    erase_cache: Path | None = Field(default=None, description="Erased pictures (default: by the store).")
    top_terms: int = Field(default=10, ge=1, description="Misbelief topic terms per category.")
    max_tokens: MaxTokens = Field(default_factory=MaxTokens)
    prompts: PromptFolder = Field(default=None, description="A folder of templates replacing shipped ones "
                                  "role by role (`adammeme_<role>.j2`); docs/adammeme.md, \"Custom prompts\".")

    @field_validator("seeds_per_category")
    @classmethod
    def _count_or_fraction(cls, value: int | float) -> int | float:
        if isinstance(value, int) and value < 0:
            raise ValueError("a count of seeds is 0 or more")
        if isinstance(value, float) and not 0 < value <= 1:
            raise ValueError("a fraction of seeds is in (0, 1], e.g. 0.1; a count is a whole number, e.g. 10")
        return value

    def seeds_for(self, sampled: int) -> int:
        """|S| for a category of `sampled` memes: the count, or the fraction of them rounded down."""
        if isinstance(self.seeds_per_category, float):
            return int(self.seeds_per_category * sampled)
        return self.seeds_per_category

    @field_validator("targets")
    @classmethod
    def _distinct_targets(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("targets must be distinct")
        return value

    def roles(self) -> dict[str, list[str]]:
        """The agent (every AdamMeme role) and the targets."""
        return {"agent": [self.agent], "targets": list(self.targets)}

    def default_name(self) -> str:
        """The run's name when none is given: ``adam-<targets>-<memes>[-s<seed>]-<config hash>``
        (`memegauge.methods.default_run_name`); the one place AdamConfig's runs are named."""
        from memegauge.methods import default_run_name  # the registry's naming rule (methods imports no config)

        return default_run_name("adam", self.targets, self.memes, self.stored())

    def stored(self) -> dict[str, Any]:
        """The run's stored config: what its answers depend on (paths as strings; custom prompts with
        their hashes, absent without them)."""
        # `images` only when given: configs written before it keep their hash (and their runs resume)
        unset = {"prompts"} | ({"images"} if self.images is None else set())
        return {**self.model_dump(mode="json", exclude=unset),
                **stored_prompts(self.prompts, PROMPT_PREFIX)}
