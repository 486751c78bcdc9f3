"""A run's header: what ran, how it ended and what it cost, typed (`RunHeader`), read from the store.

Every report starts with it (the `run` section of `memegauge report`), the HTML index page lists it, the
Python API returns it (`memegauge.Result.header`) and `memegauge runs` prints it. The report's own
figures follow it, as the run's method builds them (`memegauge.methods.Method.report`); headline rows
common to every method (issue 25's `Headline`) are meant to sit beside it, not inside it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memegauge.engine.store import Store

# Config keys that name a protocol choice (the report header shows them): AdamMeme's failure rule, seed
# set and analysis question, MemeQA fine-tuning's LoRA scope.
PROTOCOL_KEYS = ("failure_rule", "failure_threshold", "seeds_per_category", "analysis_question", "lora_targets")

Number = int | float  # as the store gives it: a sum over no rows is the integer 0, and JSON shows it so


class CustomPrompts(BaseModel):
    """The custom prompt templates a run used (a config's `prompts: DIR`)."""

    model_config = ConfigDict(extra="forbid")

    folder: str = Field(description="The folder of custom templates, as the config gave it (resolved).")
    hashes: dict[str, str] = Field(description="Each replaced template's name → sha256 of its file.")


class RunHeader(BaseModel):
    """The `run` section of every report. Field order is the report's (JSON, CSV, Markdown keep it)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The run's name (unique in its store).")
    method: str = Field(description="The registered method that made it (`memegauge.methods`).")
    method_version: str | None = Field(
        default=None, description="The method's version that made it (`Method.version`); None: a run made "
                                  "before runs stored it (left out of the report).")
    roles: dict[str, list[str]] | None = Field(
        default=None, description="Role → the models the run used in it, stored when it was made; None: a "
                                  "run made before runs stored them (left out; derived from its config).")
    status: str = Field(description="running, done, incomplete (some calls still failed) or failed.")
    created: Number = Field(description="When the run was first opened (Unix time, seconds).")
    updated: Number = Field(description="When the run was last written (Unix time, seconds).")
    config_hash: str = Field(description="sha256 of the run's canonical config: the same config resumes.")
    seed: int | None = Field(description="The run's seed, when its method has one.")
    package_version: str | None = Field(description="The MemeGauge version that last ran it.")
    calls: int = Field(description="Every call of the run, replayed ones included.")
    calls_made: int = Field(description="Of which made (paid) by an execution of this run.")
    cached_calls: int = Field(description="Of which answered from the store's cache (calls - calls_made).")
    tokens: int = Field(description="Prompt plus completion tokens of the calls made.")
    cost: Number = Field(description="US dollars of the calls made (models with a price only).")
    failed_calls: int = Field(description="Calls that still failed after their retries (never scored).")
    failed_calls_by_class: dict[str, int] = Field(description="Failed calls per error class.")
    failed_attempts_by_class: dict[str, int] = Field(
        description="Failed attempts (retried or not) per error class.")
    truncated_calls: int = Field(description="Outputs cut at max_tokens: flagged and counted, never hidden.")
    truncated_by_stage: dict[str, int] = Field(description="Those cut outputs per stage.")
    images_by_model: dict[str, dict[str, Any]] = Field(
        description="Per model: its calls and how many carried the meme picture (0 for a text-only model).")
    config: dict[str, Any] = Field(description="The run's stored config, as its method recorded it.")
    error: str | None = Field(description="Why the run failed, when it did.")
    protocol: dict[str, Any] = Field(
        description="The config's protocol choices (PROTOCOL_KEYS) where the papers' text and their "
                    "released results differ (the docs say which).")
    prompts: CustomPrompts | None = Field(description="Custom prompts; None: the shipped templates.")
    last_execution_new_calls: int = Field(
        default=0, exclude=True,
        description="Calls made by the run's last execution (`memegauge runs`); not part of the report.")

    def as_dict(self) -> dict[str, Any]:
        """The header as the report's `run` section (JSON-ready, in field order)."""
        header = self.model_dump()
        return {k: v for k, v in header.items() if v is not None or k not in ("method_version", "roles")}


def run_header(store: Store, name: str) -> RunHeader:
    """The header of run `name`, from the store only."""
    r = store.run_summary(name)
    truncated = store.truncated_counts(r["id"])
    config = json.loads(r["config_json"])
    prompts = CustomPrompts(folder=config["prompts"], hashes=config.get("prompt_hashes", {})) \
        if config.get("prompts") else None
    return RunHeader(
        name=r["name"], method=r["method"], method_version=r.get("method_version"),
        roles=json.loads(r["roles_json"]) if r.get("roles_json") else None, status=r["status"],
        created=r["created"], updated=r["updated"],
        config_hash=r["config_hash"], seed=r["seed"], package_version=r["version"], calls=r["calls"],
        calls_made=r["calls_made"], cached_calls=r["cached"], tokens=r["tokens"], cost=r["cost"],
        failed_calls=r["failed_calls"], failed_calls_by_class=store.failed_call_counts(r["id"]),
        failed_attempts_by_class=store.attempt_counts(r["id"]), truncated_calls=sum(truncated.values()),
        truncated_by_stage=truncated, images_by_model=store.image_counts(r["id"]), config=config,
        error=r["error"], protocol={k: config[k] for k in PROTOCOL_KEYS if k in config}, prompts=prompts,
        last_execution_new_calls=r["last_execution_new_calls"])
