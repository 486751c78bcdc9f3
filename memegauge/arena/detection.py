"""The classic detection baseline (paper App. D, Table 7): each target labels every meme harmful or
harmless; accuracy and macro-F1 against the meme file's labels, pooled and per source data set (the
meme file's `source`: FHM, HarM, MAMI in the paper).

A meme's gold label is "harmful" when its labels hold ``harmful``, "harmless" when they hold ``harmless``
(or ``not harmful`` / ``benign``); other memes are not scored. A failed call is recorded with its class
and counted apart, never as a wrong (or right) label.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.arena.common import failure_fields, meme_part
from memegauge.engine import Engine
from memegauge.parse import parse_json
from memegauge.prompts import render_prompt
from memegauge.types import (ChatRequest, Meme, Message, OutputKind, OutputSpec, ParseFailure,
                            SamplingParams)

STAGE = "arena.detection"
_HARMLESS = {"harmless", "not harmful", "not_harmful", "benign"}


def gold_label(meme: Meme) -> bool | None:
    labels = {label.strip().lower() for label in meme.labels}
    if "harmful" in labels:
        return True
    return False if labels & _HARMLESS else None


def detection_request(meme: Meme, target: str, max_tokens: int) -> ChatRequest:
    schema = {"type": "object", "additionalProperties": False, "required": ["harmful"],
              "properties": {"harmful": {"type": "boolean"}}}
    return ChatRequest(model=target, messages=[Message.user(meme_part(meme), render_prompt("arena_detect"))],
                       params=SamplingParams(temperature=0.0, max_tokens=max_tokens),
                       output=OutputSpec(kind=OutputKind.JSON, json_schema=schema, schema_name="detection"),
                       stage=STAGE)


def parse_harmful(text: str) -> bool | ParseFailure:
    value = parse_json(text)
    if isinstance(value, ParseFailure):
        return value
    if not isinstance(value, dict) or not isinstance(value.get("harmful"), bool):
        return ParseFailure(reason='expected {"harmful": true|false}', text=text[:500])
    return value["harmful"]


def detection_metrics(predicted: list[bool], gold: list[bool]) -> dict[str, float | int | None]:
    """Accuracy and macro-F1: the mean of the harmful and harmless classes' F1 (sklearn's
    `f1_score(average="macro")` over the classes that occur in gold or predictions)."""
    if not gold:
        return {"n": 0, "accuracy": None, "macro_f1": None}
    p, g = np.asarray(predicted, bool), np.asarray(gold, bool)
    f1s = []
    for cls in (True, False):
        tp = np.sum((p == cls) & (g == cls))
        fp = np.sum((p == cls) & (g != cls))
        fn = np.sum((p != cls) & (g == cls))
        if tp + fp + fn:
            f1s.append(2 * tp / (2 * tp + fp + fn))
    return {"n": int(g.size), "accuracy": float(np.mean(p == g)), "macro_f1": float(np.mean(f1s))}


async def detect(memes: list[Meme], targets: list[str], max_tokens: int,
                 engine: Engine) -> list[dict[str, Any]]:
    """`detection` records (`DetectionRecord`): {target, meme, gold, harmful, ok, error...}."""
    scored = [m for m in memes if gold_label(m) is not None]
    jobs = [(t, m) for t in targets for m in scored]
    outcomes = await engine.chat_many([detection_request(m, t, max_tokens) for t, m in jobs],
                                      parse=parse_harmful)
    return [{"target": t, "meme": m.id, "gold": gold_label(m), "harmful": o.value, "source": m.source,
             **failure_fields(o)} for (t, m), o in zip(jobs, outcomes, strict=True)]


def _scored(records: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [r for r in records if r["ok"]]
    return {**detection_metrics([r["harmful"] for r in answered], [r["gold"] for r in answered]),
            "failed": len(records) - len(answered)}


def detection_summary(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per target: n, accuracy, macro_f1 over answered memes, and failed (calls that failed); and the
    same per source data set (`by_source`, the paper's Table 7 reports FHM, HarM and MAMI apart; memes
    without a `source` are under "")."""
    out: dict[str, dict[str, Any]] = {}
    for target in dict.fromkeys(r["target"] for r in records):
        mine = [r for r in records if r["target"] == target]
        sources = sorted({r.get("source", "") for r in mine})
        out[target] = {**_scored(mine),
                       "by_source": {s: _scored([r for r in mine if r.get("source", "") == s]) for s in sources}}
    return out
