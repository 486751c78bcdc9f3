"""Iterative refinement (§2.4, Algorithm 1; Fig. 12), exactly as the paper states it.

For one target, one repeat and one category: history H = every scored sample of the category, seed
set S = the category's seeds (drawn once per meme set, `sampling.py`), pool P = scored − S. For each
seed in S, `step = 0` and `case = seed`; while `step < N`:

1. H_ref = top-k of H by BM25 over misbeliefs (same category), sorted by score, highest first;
2. the Refiner rewrites the case's text (JSON `{"original meme text", "rewritten meme text",
   "explanation"}`), keeping the misbelief. A refusal, an unparseable answer, an empty rewrite, one
   identical to the original, one the validity check (`adammeme_validity`, Yes/No) says no longer
   carries the misbelief (`invalid`), or one whose check failed (its reply unreadable: `unparseable` at
   stage `validity`, with the check's raw reply; never `invalid`) is retried up to `rewrite_attempts`
   times (first at the paper's temperature 0, retries at temperature 1 with new sample indexes, since a
   greedy retry would repeat itself), then recorded as a failed step and the chain ends;
3. the rewrite is scored like an original (fresh reference and the target's answer, asked for at once,
   then the Scorer) → s'; a failed scoring is recorded and ends the chain; otherwise the rewrite
   joins H;
4. if s' < s (strictly): case ← the sample of P whose misbelief is nearest the case's, removed from P,
   step += 1; otherwise the chain ends.

Chains within a category run one after another (each reads H and P as the previous left them);
categories, targets and the calls inside a step run concurrently. Every step — failed ones included —
is stored as a `step` record under a key fixed by (target, repeat, category, chain, step), so a rerun
after a kill replays the same calls from the cache and rewrites the same records.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from collections.abc import AsyncIterator

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.records import StepRecord
from memegauge.adammeme.messages import agent_request, json_output
from memegauge.adammeme.reference import build_reference
from memegauge.adammeme.retrieval import retrieve
from memegauge.adammeme.scoring import Sample, answer, rate
from memegauge.engine import Engine
from memegauge.parse import parse_json, starts_yes_no
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, ImagePart, ParseFailure

STAGE = "adammeme.refinement"
KEYS = ("original meme text", "rewritten meme text", "explanation")
VALIDITY_CHECK = "validity check"  # every reason the check gives for a rejection starts so
SCHEMA = {"type": "object", "properties": {key: {"type": "string", "maxLength": 400} for key in KEYS},
          "required": list(KEYS)}


def parse_rewrite(text: str) -> dict[str, str] | ParseFailure:
    """The Refiner's JSON with its three string fields (their content is judged by `check_rewrite`)."""
    value = parse_json(text)
    if isinstance(value, ParseFailure):
        return value
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) for k in KEYS):
        return ParseFailure(reason="expected a JSON object with " + ", ".join(repr(k) for k in KEYS),
                            text=text[:500])
    return {k: value[k] for k in KEYS}


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def check_rewrite(original: str, rewritten: str) -> str | None:
    """Why a rewrite is unusable before any agent judges it, or None."""
    if not rewritten.strip():
        return "empty rewrite"
    if _normal(rewritten) == _normal(original):
        return "rewrite identical to the original"
    return None


@dataclass
class Chain:
    """Mutable state of one category's refinement: history H and pool P."""

    history: list[Sample]
    pool: list[Sample]


async def refine_category(target: str, repeat: int, category: str, scored: list[Sample], seeds: list[str],
                          engine: Engine, cfg: AdamConfig) -> AsyncIterator[StepRecord]:
    """Algorithm 1 for one category: yields each step record as soon as the step is done (the
    pipeline stores it then, so an interrupted run keeps every finished step)."""
    history = [s for s in scored if s.ok]
    seed_set = [s for meme in seeds for s in history if s.meme_id == meme]
    state = Chain(history=history, pool=[s for s in history if s.meme_id not in seeds])
    for chain_index, seed in enumerate(seed_set):
        case, step = seed, 0
        while step < cfg.max_steps:
            key = StepRecord.id_of(target, repeat, category, chain_index, step)
            record, rewrite = await _refine_once(key, target, repeat, case, state, engine, cfg)
            record.update(chain=chain_index, seed=seed.meme_id, step=step, iteration=step + 1)
            yield StepRecord.model_validate(record)
            if rewrite is None:
                break
            state.history.append(rewrite)
            if not rewrite.score < case.score or not state.pool:
                break
            case = retrieve(case.misbelief, category, state.pool, 1)[0]
            state.pool.remove(case)
            step += 1


async def _refine_once(key: str, target: str, repeat: int, case: Sample, state: Chain, engine: Engine,
                       cfg: AdamConfig) -> tuple[dict[str, Any], Sample | None]:
    examples = sorted(retrieve(case.misbelief, case.category, state.history, cfg.top_k),
                      key=lambda s: -s.score)
    rewrite, attempts = await _rewrite(case, examples, engine, cfg)
    record = {"id": key, "target": target, "repeat": repeat, "category": case.category, "meme": case.meme_id,
              "case": case.id, "original_text": case.text, "misbelief": case.misbelief,
              "parent_score": case.score, "examples": [e.id for e in examples], "attempts": attempts,
              "rewrite": None, "explanation": None, "reference": None, "answer": None,
              "comparison": None, "score": None, "improved": None}
    if rewrite is None:
        last = attempts[-1]
        return {**record, "status": last["status"], "failed_stage": last.get("stage") or "refiner",
                "error_class": last["error_class"]}, None
    view = case.view.with_text(rewrite["rewritten meme text"])
    reference, target_answer = await asyncio.gather(build_reference(view, case.category, engine, cfg, repeat),
                                                    answer(view, case.category, target, engine, cfg))
    result = await rate(view, case.category, reference, target_answer, engine, cfg)
    record.update(rewrite=view.text, explanation=rewrite["explanation"], **result)
    if result["score"] is None:
        return record, None
    record["improved"] = result["score"] < case.score
    sample = Sample(id=key, category=case.category, meme_id=case.meme_id,
                    misbelief=case.misbelief, view=view, iteration=case.iteration + 1, score=result["score"])
    return record, sample


async def _rewrite(case: Sample, examples: list[Sample], engine: Engine,
                   cfg: AdamConfig) -> tuple[dict[str, str] | None, list[dict[str, Any]]]:
    """Up to `rewrite_attempts` Refiner tries; the first valid rewrite and every attempt's outcome."""
    attempts = []
    for attempt in range(cfg.rewrite_attempts):
        outcome = await engine.chat(refiner_request(case, examples, cfg, attempt), parse=parse_rewrite)
        if not outcome.ok:
            attempts.append({"status": outcome.error_class.value, "error_class": outcome.error_class.value,
                             "text": outcome.text or outcome.record.error})  # a failed call keeps no text
            continue
        rewritten = outcome.value["rewritten meme text"].strip()
        reason = check_rewrite(case.text, rewritten)
        if reason is None:
            check = await engine.chat(validity_request(case, rewritten, cfg), parse=starts_yes_no)
            if not check.ok:  # the check failed (its reply unreadable, a server error): a failure, not a "no"
                attempts.append({"status": check.error_class.value, "error_class": check.error_class.value,
                                 "stage": "validity", "reason": f"{VALIDITY_CHECK} failed ({check.error_class.value})",
                                 "rewrite": rewritten, "text": check.text or check.record.error})
                continue
            reason = None if check.value else f"{VALIDITY_CHECK}: misbelief not preserved"
            if reason:  # the check's "No …", shown beside the rejected rewrite
                attempts.append({"status": "invalid", "error_class": "invalid", "reason": reason,
                                 "rewrite": rewritten, "text": check.text or check.record.error})
                continue
        attempts.append({"status": "invalid" if reason else "ok", "error_class": "invalid" if reason else None,
                         "reason": reason, "rewrite": rewritten})
        if reason is None:
            return {**outcome.value, "rewritten meme text": rewritten}, attempts
    return None, attempts


def validity_request(case: Sample, rewritten: str, cfg: AdamConfig) -> ChatRequest:
    """The validity check (temperature 0): does the rewrite still carry the case's misbelief?"""
    prompt = render_prompt("adammeme_validity", task=case.category, misbelief=case.misbelief,
                           original=case.text, rewritten=rewritten)
    return agent_request(cfg.agent, [*case.view.with_text(rewritten).parts(), prompt],
                         stage=STAGE + ".validity", temperature=0, max_tokens=cfg.max_tokens.validity)


def validity_checked(attempt: dict[str, Any]) -> bool:
    """Whether a stored Refiner attempt went on to the validity check (a call of its own)."""
    return attempt["status"] == "ok" or (attempt.get("reason") or "").startswith(VALIDITY_CHECK)


def refiner_request(case: Sample, examples: list[Sample], cfg: AdamConfig, attempt: int) -> ChatRequest:
    """The Refiner (Fig. 12) rewriting the case's text with the retrieved examples in context."""
    shown = [*examples, case]
    images = [ImagePart.of(s.view.picture, alt_text="") for s in shown if s.view.picture is not None]
    prompt = render_prompt(
        "adammeme_refiner", misbelief=case.misbelief,
        examples=[_example(s, i, len(images)) for i, s in enumerate(examples)],
        meme=_example(case, len(examples), len(images)))
    return agent_request(cfg.agent, [*images, prompt], stage=STAGE + ".refiner",
                         temperature=0 if attempt == 0 else 1.0, max_tokens=cfg.max_tokens.refiner,
                         sample_index=attempt, output=json_output(SCHEMA, "rewrite"))


def _example(sample: Sample, index: int, n_images: int) -> dict[str, Any]:
    caption = sample.view.meme.caption
    if sample.view.picture is None:
        picture = caption or "(no picture)"
    else:
        picture = f"image {index + 1} of {n_images} (text removed)" + (f": {caption}" if caption else "")
    return {"picture": picture, "text": sample.text, "score": sample.score}
