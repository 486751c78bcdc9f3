"""Harmfulness mining (§2.2, Eq. 2–3): Miners vote categories, Judge and Examiner vet new ones.

Per meme, `miners` Miners (temperature 1, distinct sample indexes) each answer
`{"task": [...], "new category": {name: description}}` (Fig. 7). A category is kept when **more than
half of the configured Miners** name it; a Miner whose call failed is an abstention, and a meme where
half or more of the Miners failed is recorded as `failed`, never as harmless. A meme with no kept
category is recorded as harmless (`categories: []`) and stays in the store.

New-category proposals: a name that duplicates, or is a sub-name of, a category already in the
taxonomy is rejected without asking anyone (`taxonomy.Taxonomy.rejection`). Otherwise the Judge
(taxonomy level, Fig. 6, temperature 0) and the Examiner (meme level, Fig. 8, temperature 0) are asked;
only when both answer Yes is the category added — and the meme that raised it is assigned to it (the
original code forgot this).

Schedule: memes are mined in waves of `mining_batch` against one taxonomy snapshot, all Miner calls
of a wave at once, then all vetting calls of the wave at once; acceptances are then applied in meme
order (a later proposal in the same wave that now duplicates an accepted category is rejected, but its
meme joins that category when its own Examiner said Yes; one the Judge approved against the snapshot is
judged again against the taxonomy as it stands once categories were accepted before it in the wave, so
every new category is judged against every category accepted before it). The result depends only on the
answers, never on completion order, so a resumed run equals an uninterrupted one. `mining_batch: 1`
also shows the Miners the taxonomy strictly sequentially.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.records import MiningRecord
from memegauge.adammeme.messages import MemeView, agent_request, json_output
from memegauge.adammeme.taxonomy import Taxonomy, normalise_name
from memegauge.engine import Engine
from memegauge.parse import parse_json, starts_yes_no
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, Meme, ParseFailure

STAGE = "adammeme.mining"


def miner_schema(taxonomy: Taxonomy) -> dict[str, Any]:
    """Fig. 7's answer, bounded so a constrained small model always terminates."""
    return {"type": "object", "properties": {
        "task": {"type": "array", "items": {"type": "string", "enum": taxonomy.names()},
                 "maxItems": 4},
        "new category": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 200},
                         "maxProperties": 1}},
        "required": ["task"]}


def parse_miner(text: str) -> dict[str, Any] | ParseFailure:
    """`{"task": [names], "new": {name: description}}`, names normalised; anything else fails."""
    value = parse_json(text)
    if isinstance(value, ParseFailure):
        return value
    if not isinstance(value, dict) or not isinstance(value.get("task", []), list):
        return ParseFailure(reason='expected {"task": [...], "new category": {...}}', text=text[:500])
    new = value.get("new category") or {}
    if not isinstance(new, dict):
        return ParseFailure(reason='"new category" must be an object of name: description', text=text[:500])
    tasks = [normalise_name(t) for t in value.get("task", []) if isinstance(t, str) and t.strip()]
    return {"task": list(dict.fromkeys(tasks)),
            "new": {normalise_name(k): str(v) for k, v in new.items() if normalise_name(k)}}


def majority(answers: list[dict[str, Any] | None], taxonomy: Taxonomy, miners: int) -> tuple[list[str], dict[str, int]]:
    """Categories named by more than half of `miners` (failed answers are None: abstentions)."""
    votes = Counter(t for a in answers if a for t in a["task"] if t in taxonomy.categories)
    kept = [c for c in taxonomy.names() if votes[c] * 2 > miners]
    return kept, dict(votes)


def miner_request(meme: Meme, taxonomy: Taxonomy, cfg: AdamConfig, index: int) -> ChatRequest:
    """Miner `index` (temperature 1) on one meme against the taxonomy as it stands."""
    prompt = render_prompt("adammeme_miner", taxonomy=taxonomy.as_prompt(), text=meme.text)
    return agent_request(cfg.agent, [*MemeView.original(meme).parts(), prompt], stage=STAGE,
                         temperature=1.0, max_tokens=cfg.max_tokens.miner, sample_index=index,
                         output=json_output(miner_schema(taxonomy), "miner"))


def judge_request(name: str, description: str, taxonomy: Taxonomy, cfg: AdamConfig) -> ChatRequest:
    """The Judge (temperature 0): may this new category join the taxonomy?"""
    prompt = render_prompt("adammeme_judge", taxonomy=taxonomy.as_prompt(),
                           category=_category_json(name, description))
    return agent_request(cfg.agent, [prompt], stage=STAGE + ".judge", temperature=0,
                         max_tokens=cfg.max_tokens.judge)


def examiner_request(meme: Meme, name: str, description: str, cfg: AdamConfig) -> ChatRequest:
    """The Examiner (temperature 0): does this meme carry the new category's risk?"""
    prompt = render_prompt("adammeme_examiner", category=_category_json(name, description),
                           text=meme.text)
    return agent_request(cfg.agent, [*MemeView.original(meme).parts(), prompt],
                         stage=STAGE + ".examiner", temperature=0, max_tokens=cfg.max_tokens.examiner)


def _category_json(name: str, description: str) -> str:
    return json.dumps({name: description}, ensure_ascii=False)


def _decision(outcome) -> dict[str, Any]:
    if not outcome.ok:
        return {"ok": False, "yes": None, "error_class": outcome.error_class.value, "text": outcome.text}
    return {"ok": True, "yes": bool(outcome.value), "error_class": None, "text": outcome.text}


async def mine(memes: list[Meme], engine: Engine, cfg: AdamConfig) -> tuple[Taxonomy, dict[str, MiningRecord]]:
    """Mine every meme, wave by wave: the final taxonomy and each meme's `MiningRecord`."""
    taxonomy = Taxonomy()
    results: dict[str, MiningRecord] = {}
    for start in range(0, len(memes), cfg.mining_batch):
        wave = memes[start:start + cfg.mining_batch]
        records = await _mine_wave(wave, taxonomy, engine, cfg)
        results.update((meme, MiningRecord.model_validate(r)) for meme, r in records.items())
    return taxonomy, results


async def _mine_wave(wave: list[Meme], taxonomy: Taxonomy, engine: Engine, cfg: AdamConfig) -> dict[str, dict]:
    requests = [miner_request(m, taxonomy, cfg, i) for m in wave for i in range(cfg.miners)]
    outcomes = await engine.chat_many(requests, parse=parse_miner)
    per_meme = [outcomes[k * cfg.miners:(k + 1) * cfg.miners] for k in range(len(wave))]
    snapshot = Taxonomy.from_dict(taxonomy.to_dict())
    proposals = [_proposals(m, answers, snapshot) for m, answers in zip(wave, per_meme, strict=True)]
    await _vet(wave, proposals, snapshot, engine, cfg)
    records = {}
    for meme, answers, props in zip(wave, per_meme, proposals, strict=True):
        values = [o.value if o.ok else None for o in answers]
        kept, votes = majority(values, snapshot, cfg.miners)
        answered = sum(v is not None for v in values)
        accepted = await _apply(meme, props, taxonomy, snapshot, engine, cfg)
        failed = answered * 2 <= cfg.miners
        records[meme.id] = {
            "meme": meme.id, "status": "failed" if failed else "ok",
            "categories": [] if failed else list(dict.fromkeys(kept + accepted)),
            "votes": votes, "miners": [{"ok": o.ok, "answer": o.value, "error_class":
                                        o.error_class.value if o.error_class else None} for o in answers],
            "proposals": props, "labels": list(meme.labels), "text": meme.text}
    return records


def _proposals(meme: Meme, answers, snapshot: Taxonomy) -> list[dict[str, Any]]:
    """Distinct new names the Miners raised for one meme, each pre-checked against the snapshot."""
    raised: dict[str, str] = {}
    for outcome in answers:
        if outcome.ok:
            for name, description in outcome.value["new"].items():
                raised.setdefault(name, description)
    out = []
    for name, description in raised.items():
        rejection = snapshot.rejection(name)
        out.append({"name": name, "description": description, "decision": "rejected" if rejection else "pending",
                    "reason": rejection or "", "judge": None, "examiner": None})
    return out


async def _vet(wave: list[Meme], proposals: list[list[dict]], snapshot: Taxonomy, engine: Engine,
               cfg: AdamConfig) -> None:
    """Ask the Judge once per distinct pending name and the Examiner once per (meme, name), all at
    once: both verdicts are needed, so neither waits for the other."""
    first_description: dict[str, str] = {}
    for props in proposals:
        for p in props:
            if p["decision"] == "pending":
                first_description.setdefault(p["name"], p["description"])
    names = list(first_description)
    pending = [(m, p) for m, props in zip(wave, proposals, strict=True) for p in props if p["decision"] == "pending"]
    judged, examined = await asyncio.gather(
        engine.chat_many([judge_request(n, first_description[n], snapshot, cfg) for n in names],
                         parse=starts_yes_no),
        engine.chat_many([examiner_request(m, p["name"], p["description"], cfg) for m, p in pending],
                         parse=starts_yes_no))
    verdicts = dict(zip(names, judged, strict=True))
    for (_meme, p), outcome in zip(pending, examined, strict=True):
        p["judge"] = _decision(verdicts[p["name"]])
        p["examiner"] = _decision(outcome)


async def _rejudge(p: dict[str, Any], taxonomy: Taxonomy, snapshot: Taxonomy, engine: Engine,
                   cfg: AdamConfig) -> None:
    """The Judge again, when categories were accepted in this wave after the snapshot it saw: a new
    category is judged against every category accepted before it (the paper's sequential update),
    so "politics" after "political" is the Judge's call, not let in because they shared a wave."""
    if set(taxonomy.categories) == set(snapshot.categories) or not p["judge"]["ok"] or not p["judge"]["yes"]:
        return
    outcome = await engine.chat(judge_request(p["name"], p["description"], taxonomy, cfg), parse=starts_yes_no)
    p["judge_first"] = p["judge"]
    p["judge"] = _decision(outcome)


async def _apply(meme: Meme, proposals: list[dict], taxonomy: Taxonomy, snapshot: Taxonomy, engine: Engine,
                 cfg: AdamConfig) -> list[str]:
    """Apply one meme's vetted proposals in order; return the new categories the meme joins."""
    joined = []
    for p in proposals:
        if p["decision"] != "pending":
            continue
        if p["name"] not in taxonomy.categories and not taxonomy.rejection(p["name"]):
            await _rejudge(p, taxonomy, snapshot, engine, cfg)
        judge, examiner = p["judge"], p["examiner"]
        if not (judge["ok"] and examiner["ok"]):
            p["decision"], p["reason"] = "failed", ", ".join(
                f"{role} {d['error_class']}" for role, d in (("judge", judge), ("examiner", examiner)) if not d["ok"])
        elif not judge["yes"] or not examiner["yes"]:
            p["decision"], p["reason"] = "rejected", " and ".join(
                role for role, d in (("judge", judge), ("examiner", examiner)) if not d["yes"]) + " said no"
        elif p["name"] in taxonomy.categories:  # accepted earlier in this wave from another meme
            p["decision"] = "joined"
            joined.append(p["name"])
        elif rejection := taxonomy.rejection(p["name"]):
            p["decision"], p["reason"] = "rejected", rejection
        else:
            joined.append(taxonomy.add(p["name"], p["description"], raised_by=meme.id))
            p["decision"] = "accepted"
    return joined
