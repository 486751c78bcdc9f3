"""Multi-view fusion (paper §2.3, Algorithm 1, Fig. 10): the panel merges answers into one guideline per task.

For each task: the guideline starts as the answer of a randomly chosen panel judge (round 0); then every
remaining answer of the pool, in random order, is merged by a judge drawn at random among the judges who
did *not* write it. The judge sees the current guideline and that answer as "Answer 1" / "Answer 2" in
random order, unlabelled, and its ``[Synthesized Answer]`` becomes the new guideline. Every round is
stored (round, judge, whose answer, which slot the guideline took, the guideline after it). The answer
that starts the guideline is always a judge's own, so every later answer has an eligible judge (a
one-judge panel merges every other answer itself).

Which answers are fused (`fusion_pool`):

* ``all`` (default) — every target's answer, as in the paper (n − 1 rounds per task).
* ``judges`` — the panel judges' own answers only (k − 1 rounds): cheaper, and the guideline then does
  not depend on which other targets are in the arena.

Targets added to a finished arena (`added_targets`) arrive one at a time. Their answers are merged
*after* the base rounds, one more round each in arrival order (the discussion simply goes on), so the
base plan — and every base call — stays exactly as it was. The guideline therefore has one version per
arrival *stage* (0 = the base targets, i = after the i-th added target); a battle is judged against the
version of the stage at which its later model arrived (see `battle_arrival`). Old battles keep their
reference and their verdicts; a fresh run of the same config computes exactly the same versions.

All draws come from generators keyed by (seed, task) for the base plan and (seed, task, newcomer) for an
added round, so the plan is fixed before any call is made and a resumed run follows the same plan. A
failed round (after the engine's retries) is recorded with its class and the guideline stays as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memegauge.arena.common import ANSWER_SECTIONS, failure_fields, keyed_rng, meme_part
from memegauge.arena.records import AnswerRecord
from memegauge.engine import Engine
from memegauge.parse import parse_sections_partial
from memegauge.prompts import render_prompt
from memegauge.types import (ChatRequest, Meme, Message, OutputKind, OutputSpec, ParseFailure,
                            SamplingParams)

STAGE = "arena.fusion"
SYNTHESIZED = "Synthesized Answer"
_OUTPUT_SECTIONS = ("Comparison", SYNTHESIZED, *ANSWER_SECTIONS)


@dataclass(frozen=True)
class FusionRound:
    """One discussion round: `judge` merges `author`'s answer into the current guideline."""

    round: int
    judge: str
    author: str
    guideline_first: bool  # the guideline is shown as "Answer 1"
    arrival: int = 0  # arrival stage of `author` (0: base target; i: the i-th added target)


@dataclass(frozen=True)
class FusionPlan:
    task: str
    init_author: str | None  # whose answer is the round-0 guideline (None: nothing to fuse)
    rounds: tuple[FusionRound, ...]
    init_arrival: int = 0


def plan_fusion(task: str, authors: list[str], judges: list[str], seed: int,
                arrivals: Mapping[str, int] | None = None) -> FusionPlan:
    """Algorithm 1's random choices for one task. `authors` are the pool's targets whose answers exist,
    in config order; `arrivals` their arrival stages (absent: 0). The authors of the first stage are
    planned together; each later one is merged after them, one round each in arrival order. The first
    guideline is a judge's own answer (any answer if no judge answered)."""
    if not authors:
        return FusionPlan(task, None, ())
    arrival = {a: (arrivals or {}).get(a, 0) for a in authors}
    first = min(arrival.values())
    base = [a for a in authors if arrival[a] == first]
    rng = keyed_rng(seed, "fusion", task)
    init = rng.choice([a for a in base if a in judges] or base)
    remaining = [a for a in base if a != init]
    rng.shuffle(remaining)
    rounds = [FusionRound(number, rng.choice(_eligible(judges, author)), author, rng.random() < 0.5,
                          first) for number, author in enumerate(remaining, start=1)]
    for author in sorted((a for a in authors if arrival[a] > first), key=arrival.__getitem__):
        own = keyed_rng(seed, "fusion", task, author)  # independent of the base draws
        rounds.append(FusionRound(len(rounds) + 1, own.choice(_eligible(judges, author)), author,
                                  own.random() < 0.5, arrival[author]))
    return FusionPlan(task, init, tuple(rounds), first)


def _eligible(judges: list[str], author: str) -> list[str]:
    """The judges who may merge `author`'s answer. Never empty: a judge's own answer can only be the
    round-0 guideline when it is the panel's only judge (judges are base targets)."""
    return [j for j in judges if j != author]


def battle_arrival(arrivals: Mapping[str, int], *models: str) -> int:
    """The arrival stage of a battle: that of its later model (0 when all are base targets)."""
    return max(arrivals.get(m, 0) for m in models)


def parse_synthesized(text: str) -> str | ParseFailure:
    """The content of the ``[Synthesized Answer]`` section (its own sections included)."""
    sections = parse_sections_partial(text, ["Comparison", SYNTHESIZED])
    if SYNTHESIZED not in sections:
        return ParseFailure(reason="no [Synthesized Answer] section", text=text[:500])
    return sections[SYNTHESIZED]


def fusion_request(meme: Meme, question: str, answer_1: str, answer_2: str, judge: str,
                   max_tokens: int) -> ChatRequest:
    prompt = render_prompt("arena_fusion", question=question, answer_1=answer_1, answer_2=answer_2)
    return ChatRequest(model=judge, messages=[Message.user(meme_part(meme), prompt)],
                       params=SamplingParams(temperature=0.0, max_tokens=max_tokens),
                       output=OutputSpec(kind=OutputKind.TEXT, sections=_OUTPUT_SECTIONS),
                       stage=STAGE)


async def _fuse_one(task: dict[str, Any], meme: Meme, answers: dict[str, dict[str, Any]],
                    plan: FusionPlan, max_tokens: int, engine: Engine) -> tuple[list, dict]:
    guideline = answers[AnswerRecord.key_of(task=task["task"], target=plan.init_author)]["text"]
    versions = {str(plan.init_arrival): guideline}
    rounds = [(f"{task['task']}|00", {"task": task["task"], "round": 0, "judge": None,
                                      "author": plan.init_author, "guideline_first": None,
                                      "arrival": plan.init_arrival, "guideline": guideline, "ok": True,
                                      "error_class": None, "error": ""})]
    for step in plan.rounds:
        answer = answers[AnswerRecord.key_of(task=task["task"], target=step.author)]["text"]
        first, second = (guideline, answer) if step.guideline_first else (answer, guideline)
        outcome = await engine.chat(
            fusion_request(meme, task["prompt"], first, second, step.judge, max_tokens),
            parse=parse_synthesized)
        if outcome.ok:
            guideline = outcome.value
        versions[str(step.arrival)] = guideline
        rounds.append((f"{task['task']}|{step.round:02d}", {
            "task": task["task"], "round": step.round, "judge": step.judge, "author": step.author,
            "guideline_first": step.guideline_first, "arrival": step.arrival, "guideline": guideline,
            **failure_fields(outcome)}))
    failed = sum(1 for _, r in rounds if not r["ok"])
    summary = {"task": task["task"], "meme": task["meme"], "ok": True, "text": guideline,
               "versions": versions, "init_author": plan.init_author, "rounds": len(plan.rounds),
               "failed_rounds": failed}
    return rounds, summary


def guideline_at(guideline: dict[str, Any], arrival: int) -> str | None:
    """The guideline as it stood once every target of arrival stage ≤ `arrival` was merged (None
    before the first version)."""
    known = [int(s) for s in guideline.get("versions", {}) if int(s) <= arrival]
    return guideline["versions"][str(max(known))] if known else None


async def fuse_guidelines(tasks: list[dict[str, Any]], memes: dict[str, Meme],
                          answers: dict[str, dict[str, Any]], pool: list[str], judges: list[str],
                          arrivals: Mapping[str, int], seed: int, max_tokens: int,
                          engine: Engine) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """`fusion_round` records (`FusionRoundRecord`) and one `guideline` record per task
    (`GuidelineRecord`: its final text and its `versions` by arrival stage). Tasks are fused concurrently;
    the rounds of one task run in
    order, each needing the previous guideline. `arrivals`: each target's arrival stage."""
    plans = {}
    for task in tasks:
        authors = [a for a in pool if answers[AnswerRecord.key_of(task=task["task"], target=a)]["ok"]]
        plans[task["task"]] = plan_fusion(task["task"], authors, judges, seed, arrivals)
    fusable = [t for t in tasks if plans[t["task"]].init_author is not None]
    results = await asyncio.gather(*(_fuse_one(t, memes[t["meme"]], answers, plans[t["task"]],
                                               max_tokens, engine) for t in fusable))
    guidelines = {t["task"]: {"task": t["task"], "meme": t["meme"], "ok": False, "text": None,
                              "error_class": "no_answers", "error": "no answer of the pool exists"}
                  for t in tasks if plans[t["task"]].init_author is None}
    every_round = []
    for rounds, summary in results:
        every_round += [r for _, r in rounds]
        guidelines[summary["task"]] = summary
    return every_round, guidelines
