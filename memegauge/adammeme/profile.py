"""AdamMeme's profile part (`memegauge.profiles.part`): a run's kind is its meme set, failure rule and refinement
settings; its items are each target's scored samples and refinement steps (an item is right when its score does
not fail under the run's own rule, the rule its report's FR uses). Two targets of one run are scored on the same
original samples (one sample S for every target), so their paired difference is on those; refinement chains
differ per target and are never paired. No published figure is set beside a run: the paper's Tables 1–2 are on
its own 5k-meme sample, whose scored originals the release does not ship (`memegauge.adammeme.paper`), so no run
MemeGauge makes or imports measures the same items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from memegauge.profiles.part import ProfilePart
from memegauge.profiles.records import Outcome, content_hash


def kind(report: dict[str, Any]) -> str | None:
    config = report["run"].get("config") or {}
    if not report.get("targets"):
        return None
    memes = Path(str(config.get("memes") or config.get("legacy_import") or "memes")).name
    rule = f"{config.get('failure_rule', 'at_or_below')} {config.get('failure_threshold', 4.0):g}"
    return (f"AdamMeme · {memes} · FR {rule} · {config.get('seeds_per_category', '?')} seeds/category, "
            f"{config.get('max_steps', '?')} steps")


def outcomes(store: Any, report: dict[str, Any], model: str) -> list[Outcome]:
    from memegauge.adammeme.headline import cluster_of
    from memegauge.adammeme.records import ScoreRecord, StepRecord
    from memegauge.adammeme.report import failure_rule, run_meta
    from memegauge.records import read_checked

    rid = store.run_row(report["run"]["name"])["id"]
    rule = failure_rule(run_meta(store, rid))
    out = []
    for record, original in ((ScoreRecord, True), (StepRecord, False)):
        for r in sorted(read_checked(store, rid, record), key=lambda r: r["id"]):
            if r["target"] != model:
                continue
            score = r.get("score")
            right = None if score is None else not bool(rule.fails(np.array([float(score)]))[0])
            key = f"{r['category']}|{r['meme']}|{r['repeat']}" if original else f"step|{model}|{r['id']}"
            text = r.get("text") if original else r.get("rewrite")
            out.append(Outcome(key=key, meme=cluster_of(r), groups=[r["category"]], correct=right, text=text,
                               answer=r.get("answer"), overall=original,
                               content=content_hash(r["category"], r["meme"], r.get("text")) if original else None,
                               expected=None if score is None else f"score {score}/10 against the reference: "
                                                                   f"{r.get('reference') or '–'}"))
    return out


def sources(report: dict[str, Any]) -> dict[str, str]:
    config = report["run"].get("config") or {}
    return {k: str(config[k]) for k in ("memes", "legacy_import", "agent", "seed") if config.get(k) is not None}


def configs(base: dict[str, Any], models: list[str]) -> list[tuple[dict[str, Any], list[str]]]:
    """One run with every model as a target: all of them are scored on one sample S (paired)."""
    return [({**base, "targets": list(models)}, list(models))]


def plan(config: Any, checked: Any, name: str) -> list[Any]:
    from memegauge.adammeme.plan import plan_calls

    return plan_calls(config, checked.inputs)


PART = ProfilePart(kind=kind, outcomes=outcomes, sources=sources, configs=configs, plan=plan,
                   paired_figure="share not failed (score above the threshold)")
