"""Multi-view fusion (paper §2.3, Algorithm 1, Fig. 10): the panel merges answers into one guideline per task.

For each task: the guideline starts as the answer of a randomly chosen panel judge (round 0); then every
remaining answer of the pool, in random order, is merged by a judge drawn at random among the judges who
did *not* write it. The judge sees the current guideline and that answer as "Answer 1" / "Answer 2" in
random order, unlabelled, and its ``[Synthesized Answer]`` becomes the new guideline. Every round is
stored (round, judge, whose answer, which slot the guideline took, the guideline after it). The answer
that starts the guideline is always a judge's own, so every later answer has an eligible judge (a
one-judge panel merges every other answer itself).

Which answers are fused (`fusion_pool`):

* ``judges`` (default) — the panel judges' own answers only. The guideline then does not depend on which
  other targets are in the arena, so a target added later reuses every guideline as it is (no new fusion)
  and every earlier battle stays valid. With k judges there are k − 1 rounds per task.
* ``all`` — every target's answer, as in the paper's experiments (n − 1 rounds). Adding a target then
  changes the order and the guideline, so an extension re-fuses (the unchanged prefix of rounds replays
  from the cache) and re-judges.

All draws come from a generator keyed by (seed, task), so the plan is fixed before any call is made and
a resumed run follows the same plan. A failed round (after the engine's retries) is recorded with its
class and the guideline stays as it was.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from memelens.arena.answers import answer_key
from memelens.arena.common import ANSWER_SECTIONS, failure_fields, keyed_rng, meme_part
from memelens.engine import Engine, Run
from memelens.parse import parse_sections_partial
from memelens.prompts import render_prompt
from memelens.types import (ChatRequest, Meme, Message, OutputKind, OutputSpec, ParseFailure,
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


@dataclass(frozen=True)
class FusionPlan:
    task: str
    init_author: str | None  # whose answer is the round-0 guideline (None: nothing to fuse)
    rounds: tuple[FusionRound, ...]


def plan_fusion(task: str, authors: list[str], judges: list[str], seed: int) -> FusionPlan:
    """Algorithm 1's random choices for one task. `authors` are the pool's targets whose answers exist,
    in config order. The first guideline is a judge's own answer (any answer if no judge answered)."""
    if not authors:
        return FusionPlan(task, None, ())
    rng = keyed_rng(seed, "fusion", task)
    starters = [a for a in authors if a in judges] or authors
    init = rng.choice(starters)
    remaining = [a for a in authors if a != init]
    rng.shuffle(remaining)
    rounds = []
    for number, author in enumerate(remaining, start=1):
        eligible = [j for j in judges if j != author] or judges  # empty only if no judge answered
        rounds.append(FusionRound(number, rng.choice(eligible), author, rng.random() < 0.5))
    return FusionPlan(task, init, tuple(rounds))


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
    guideline = answers[answer_key(task["task"], plan.init_author)]["text"]
    rounds = [(f"{task['task']}|00", {"task": task["task"], "round": 0, "judge": None,
                                      "author": plan.init_author, "guideline_first": None,
                                      "guideline": guideline, "ok": True, "error_class": None,
                                      "error": ""})]
    for step in plan.rounds:
        answer = answers[answer_key(task["task"], step.author)]["text"]
        first, second = (guideline, answer) if step.guideline_first else (answer, guideline)
        outcome = await engine.chat(
            fusion_request(meme, task["prompt"], first, second, step.judge, max_tokens),
            parse=parse_synthesized)
        if outcome.ok:
            guideline = outcome.value
        rounds.append((f"{task['task']}|{step.round:02d}", {
            "task": task["task"], "round": step.round, "judge": step.judge, "author": step.author,
            "guideline_first": step.guideline_first, "guideline": guideline,
            **failure_fields(outcome)}))
    failed = sum(1 for _, r in rounds if not r["ok"])
    summary = {"task": task["task"], "meme": task["meme"], "ok": True, "text": guideline,
               "init_author": plan.init_author, "rounds": len(plan.rounds), "failed_rounds": failed}
    return rounds, summary


async def fuse_guidelines(tasks: list[dict[str, Any]], memes: dict[str, Meme],
                          answers: dict[str, dict[str, Any]], pool: list[str], judges: list[str],
                          seed: int, max_tokens: int, engine: Engine,
                          run: Run) -> dict[str, dict[str, Any]]:
    """`fusion_round` records (`<task>|<round>`) and one `guideline` record per task. Tasks are fused
    concurrently; the rounds of one task run in order, each needing the previous guideline."""
    plans = {}
    for task in tasks:
        authors = [a for a in pool if answers[answer_key(task["task"], a)]["ok"]]
        plans[task["task"]] = plan_fusion(task["task"], authors, judges, seed)
    fusable = [t for t in tasks if plans[t["task"]].init_author is not None]
    results = await asyncio.gather(*(_fuse_one(t, memes[t["meme"]], answers, plans[t["task"]],
                                               max_tokens, engine) for t in fusable))
    guidelines = {t["task"]: {"task": t["task"], "meme": t["meme"], "ok": False, "text": None,
                              "error_class": "no_answers", "error": "no answer of the pool exists"}
                  for t in tasks if plans[t["task"]].init_author is None}
    for rounds, summary in results:
        run.put_many("fusion_round", rounds)
        guidelines[summary["task"]] = summary
    run.put_many("guideline", list(guidelines.items()))
    return guidelines
