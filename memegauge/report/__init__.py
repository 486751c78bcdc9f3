"""Reports read only the store: a run's header plus its method's figures, in JSON/CSV/Markdown/HTML.

Each method's descriptor (`memegauge.methods`) names its builder `build(store, run) -> dict`; the formats are
renderings of that one dict (`memegauge.report.formats`), so every format shows the same numbers.
"""

from __future__ import annotations

import json
from typing import Any

from memegauge.engine.store import Store
from memegauge.methods import method
from memegauge.types import InputError


# Config keys that name a protocol choice (the report header shows them): AdamMeme's failure rule, seed
# set and analysis question, MemeQA fine-tuning's LoRA scope.
PROTOCOL_KEYS = ("failure_rule", "failure_threshold", "seeds_per_category", "analysis_question", "lora_targets")


def run_header(store: Store, name: str) -> dict[str, Any]:
    """The `run` section every report starts with."""
    r = store.run_summary(name)
    truncated = store.truncated_counts(r["id"])
    config = json.loads(r["config_json"])
    return {
        "name": r["name"], "method": r["method"], "status": r["status"], "created": r["created"],
        "updated": r["updated"], "config_hash": r["config_hash"], "seed": r["seed"],
        "package_version": r["version"], "calls": r["calls"], "calls_made": r["calls_made"],
        "cached_calls": r["cached"], "tokens": r["tokens"], "cost": r["cost"],
        "failed_calls": r["failed_calls"],
        "failed_calls_by_class": store.failed_call_counts(r["id"]),
        "failed_attempts_by_class": store.attempt_counts(r["id"]),
        # outputs cut at max_tokens, by stage: flagged and counted beside failures, never hidden
        "truncated_calls": sum(truncated.values()),
        "truncated_by_stage": truncated,
        # per model: its calls, and how many carried the meme picture (0 for a text-only model)
        "images_by_model": store.image_counts(r["id"]),
        "config": config, "error": r["error"],
        # the named choices where the papers' text and their released results differ (docs say which)
        "protocol": {k: config[k] for k in PROTOCOL_KEYS if k in config},
        # custom prompts (`prompts: DIR`): the folder and each replaced template's hash; None: shipped
        "prompts": {"folder": config["prompts"], "hashes": config.get("prompt_hashes", {})}
        if config.get("prompts") else None,
    }


def build_report(store: Store, name: str) -> dict[str, Any]:
    header = run_header(store, name)
    found = method(header["method"])
    if found is None:
        raise InputError(f"no installed method {header['method']!r} reports this run", where=f"run {name!r}",
                         fix="install the package that provides that method, or report with the MemeGauge "
                             "version that made the run")
    run_id = store.run_row(name)["id"]
    from memegauge.rating.section import people_vs_judges  # numpy, judges' parsers: only when reporting

    report = {"run": header, **found.report(store, {**header, "id": run_id})}
    people = people_vs_judges(store, {**header, "id": run_id})
    return report if people is None else {**report, "people_vs_judges": people}
