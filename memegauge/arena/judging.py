"""Judgment (paper §2.4, Fig. 11): sampled pairs of answers to a task, judged by the panel against a reference.

**Battles.** Per task, `answers_per_task` (default 3) target answers are sampled and every pair of them
battles (3 answers → 3 pairs; the paper's combinatorial-coverage design). Sampling gives each target a
stable priority u = H(seed, task, target) and takes the k lowest. Targets added to a finished arena
(`added_targets`) arrive one at a time: a newcomer x joins a task when it would have been among the k
drawn from the targets before it plus itself, and then battles the k − 1 lowest-priority earlier
targets — exactly the opponents it would meet in a fresh draw. Existing pairs therefore stay and only
new pairs with the newcomer are added (see `sample_pairs`).

**Judgments.** Each battle is judged by every panel judge (`self_judging`, default on, as in the paper) —
except, with `self_judging` off,
a judge whose own answer is in the battle. The answers' positions (Model A / Model B) are drawn per
judgment from a generator keyed by (seed, setting, task, pair, judge). With `both_orders`, each judge
judges both orders; when the two readings disagree the judge's verdict is a tie ("tie (bothbad)" when
one reading was a both-weak tie and none a both-strong tie, else "tie"), and the disagreement counts
towards the flip rate. If one of the two calls failed, the other reading stands alone.

**Joint vote.** Per battle and dimension, the most frequent verdict among the judges who gave one; a
split at the top is a tie ("tie (bothbad)" if weak ties outnumber strong ties among the votes, else
"tie"). Verdicts are stored in the battle's own orientation as Chatbot Arena winners: ``model_a``,
``model_b``, ``tie`` (both strong), ``tie (bothbad)`` (both weak).

**References** (`settings`): ``fused`` — the task's fused guideline, in the version of the battle's
arrival stage (see `memegauge.arena.fusion`: a battle with a target added later is judged against the
guideline that includes its answer; earlier battles keep the guideline they were judged with);
``self`` — the judge's own answer to the task (LLM-as-a-Judge); ``human`` — a human-written guideline
for the meme (or task) from a file; ``none`` — the same prompt without a reference. A judgment whose
reference is missing is not made.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Any
from collections.abc import Iterator

from memegauge.arena.common import (DIMENSIONS, OVERALL, arrival_stages, failure_fields, keyed_rng,
                                   keyed_uniform, meme_part)
from memegauge.arena.fusion import battle_arrival, guideline_at
from memegauge.arena.records import AnswerRecord, BattleRecord, JudgmentRecord
from memegauge.arena.verdicts import TIE as TIE_PLAIN
from memegauge.arena.verdicts import TIE_STRONG, TIE_WEAK, parse_dimension_verdicts, parse_verdict
from memegauge.engine import Engine
from memegauge.prompts import render_prompt
from memegauge.types import (ChatRequest, Meme, Message, OutputKind, OutputSpec, ParseFailure,
                            SamplingParams)

STAGE = "arena.judging"
TIE, TIE_BOTHBAD = "tie", "tie (bothbad)"
ALL_DIMENSIONS = (*DIMENSIONS, OVERALL)


# --------------------------------------------------------------------------------------------------
# Pure planning
# --------------------------------------------------------------------------------------------------


def sample_pairs(task: str, targets: list[str], added: list[str], answered: set[str], k: int,
                 seed: int) -> list[tuple[str, str]]:
    """The battles of one task as (model_a, model_b) pairs, names in alphabetical order.

    `targets` draw together (k lowest priorities, all their pairs); each of `added` then arrives in
    turn (see the module docstring). Only targets in `answered` (their answer exists) take part."""
    priority = {t: keyed_uniform(seed, "battle", task, t) for t in [*targets, *added]}
    seen = sorted((t for t in targets if t in answered), key=priority.__getitem__)
    pairs = set(combinations(seen[:k], 2))
    for newcomer in added:
        if newcomer not in answered:
            continue
        rank = sum(priority[t] < priority[newcomer] for t in seen)
        if rank < k:
            pairs.update((newcomer, opponent) for opponent in seen[:k - 1])
        seen = sorted([*seen, newcomer], key=priority.__getitem__)
    return sorted(tuple(sorted(p)) for p in pairs)


@dataclass(frozen=True)
class Judgment:
    """One judge call: `judge` compares `model_a` and `model_b` on `task` under `setting`; `order`
    "ab" shows model_a as Model A, "ba" shows model_b as Model A."""

    setting: str
    task: str
    model_a: str
    model_b: str
    judge: str
    order: str
    arrival: int = 0  # arrival stage of the battle's later model: which guideline version applies

    @property
    def battle(self) -> str:
        return BattleRecord.key_of(setting=self.setting, task=self.task, model_a=self.model_a,
                                   model_b=self.model_b)

    @property
    def key(self) -> str:
        return JudgmentRecord.key_of(setting=self.setting, task=self.task, model_a=self.model_a,
                                     model_b=self.model_b, judge=self.judge, order=self.order)


def plan_judgments(setting: str, task: str, pair: tuple[str, str], judges: list[str],
                   self_judging: bool, both_orders: bool, seed: int, arrival: int = 0) -> list[Judgment]:
    """Who judges a battle, and in which order(s) the answers are shown."""
    model_a, model_b = pair
    out = []
    for judge in judges:
        if not self_judging and judge in pair:
            continue
        if both_orders:
            orders = ["ab", "ba"]
        else:
            rng = keyed_rng(seed, "position", setting, task, model_a, model_b, judge)
            orders = [rng.choice(["ab", "ba"])]
        out += [Judgment(setting, task, model_a, model_b, judge, o, arrival) for o in orders]
    return out


# --------------------------------------------------------------------------------------------------
# Verdicts (pure)
# --------------------------------------------------------------------------------------------------


def to_winner(verdict: str, order: str) -> str:
    """A judge's verdict on the shown positions → the battle's winner field. A plain "Tie" (kind
    not said; the prompt's own format line is A/B/Tie) is a "tie": half a win each way."""
    if verdict in (TIE_STRONG, TIE_PLAIN):
        return TIE
    if verdict == TIE_WEAK:
        return TIE_BOTHBAD
    first_is_a = order == "ab"
    return "model_a" if (verdict == "A") == first_is_a else "model_b"


def combine_orders(first: str | None, second: str | None) -> tuple[str | None, bool | None]:
    """(verdict, flipped) from a judge's two readings of one battle; flipped is None unless both exist."""
    if first is None or second is None:
        return (first if second is None else second), None
    if first == second:
        return first, False
    readings = {first, second}
    weak_only = TIE_BOTHBAD in readings and TIE not in readings
    return (TIE_BOTHBAD if weak_only else TIE), True


def joint_vote(verdicts: list[str]) -> str | None:
    """The panel's verdict: the most frequent one; a tie when the top is split (see module doc)."""
    if not verdicts:
        return None
    counts = Counter(verdicts)
    top = max(counts.values())
    leaders = [v for v, c in counts.items() if c == top]
    if len(leaders) == 1:
        return leaders[0]
    return TIE_BOTHBAD if counts[TIE_BOTHBAD] > counts[TIE] else TIE


def parse_judgment(text: str) -> dict[str, str | None] | ParseFailure:
    """{dimension: verdict} for the five dimensions and `overall`. The overall verdict must parse (else
    the call is unparseable and retried); a dimension that does not parse is None (recorded)."""
    overall = parse_verdict(text)
    if isinstance(overall, ParseFailure):
        return overall
    dims = parse_dimension_verdicts(text, list(DIMENSIONS))
    return {**{d: (None if isinstance(v, ParseFailure) else v) for d, v in dims.items()}, OVERALL: overall}


# --------------------------------------------------------------------------------------------------
# Calls
# --------------------------------------------------------------------------------------------------


def judge_request(meme: Meme, task_prompt: str, shown_a: str, shown_b: str, reference: str | None,
                  judge: str, max_tokens: int) -> ChatRequest:
    prompt = render_prompt("arena_judge", task=task_prompt, answer_a=shown_a, answer_b=shown_b,
                           reference=reference)
    return ChatRequest(model=judge, messages=[Message.user(meme_part(meme), prompt)],
                       params=SamplingParams(temperature=0.0, max_tokens=max_tokens),
                       output=OutputSpec(kind=OutputKind.VERDICT, sections=DIMENSIONS), stage=STAGE)


def reference_for(judgment: Judgment, task: dict[str, Any], guidelines: dict[str, dict[str, Any]],
                  answers: dict[str, dict[str, Any]], human: dict[str, str]) -> tuple[bool, str | None]:
    """(available, reference text) of a judgment's setting."""
    if judgment.setting == "none":
        return True, None
    if judgment.setting == "fused":
        guideline = guidelines.get(task["task"], {})
        text = guideline_at(guideline, judgment.arrival) if guideline.get("ok") else None
        return text is not None, text
    if judgment.setting == "self":
        own = answers.get(AnswerRecord.key_of(task=task["task"], target=judgment.judge), {})
        return bool(own.get("ok")), own.get("text")
    text = human.get(task["task"]) or human.get(task["meme"])
    return text is not None, text


async def judge_battles(tasks: list[dict[str, Any]], memes: dict[str, Meme],
                        answers: dict[str, dict[str, Any]], guidelines: dict[str, dict[str, Any]],
                        human: dict[str, str], plan: BattlePlan, max_tokens: int,
                        engine: Engine) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`judgment` records (one per judge call, `JudgmentRecord`) and `battle` records (per setting,
    task and pair, `BattleRecord`)."""
    by_task = {t["task"]: t for t in tasks}
    made: list[Judgment] = []  # the judgments whose request was made, in request order

    def requests() -> Iterator[ChatRequest]:
        # Built as calls start, not all up front: 12k judgments took a second to render before the
        # first judge call went out (and held every prompt in memory).
        for judgment in plan.judgments:
            task = by_task[judgment.task]
            available, reference = reference_for(judgment, task, guidelines, answers, human)
            if not available:
                continue
            first, second = judgment.model_a, judgment.model_b
            if judgment.order == "ba":
                first, second = second, first
            made.append(judgment)
            yield judge_request(memes[task["meme"]], task["prompt"],
                                answers[AnswerRecord.key_of(task=task["task"], target=first)]["text"],
                                answers[AnswerRecord.key_of(task=task["task"], target=second)]["text"],
                                reference,
                                judgment.judge, max_tokens)

    outcomes = await engine.chat_many(requests(), parse=parse_judgment)
    judgments = []
    for judgment, outcome in zip(made, outcomes, strict=True):
        verdicts = {d: (to_winner(v, judgment.order) if v else None)
                    for d, v in (outcome.value or {}).items()}
        judgments.append({
            "setting": judgment.setting, "task": judgment.task, "model_a": judgment.model_a,
            "model_b": judgment.model_b, "judge": judgment.judge, "order": judgment.order,
            "verdicts": verdicts, "read": outcome.value or {}, "truncated": outcome.record.truncated,
            "text": outcome.text, **failure_fields(outcome)})
    return judgments, assemble_battles(plan, judgments, by_task)


@dataclass(frozen=True)
class BattlePlan:
    """Every battle (setting, task, pair, order index) and every judgment planned for a run."""

    battles: tuple[tuple[str, str, str, str, int], ...]
    judgments: tuple[Judgment, ...]


def plan_battles(tasks: list[dict[str, Any]], answers: dict[str, dict[str, Any]], targets: list[str],
                 added: list[str], judges: list[str], settings: list[str], k: int,
                 self_judging: bool, both_orders: bool, seed: int) -> BattlePlan:
    """The sampled pairs of every task under every setting, in a fixed order (used for online Elo)."""
    battles, judgments = [], []
    arrivals = arrival_stages(targets, added)
    for task in tasks:
        answered = {t for t in [*targets, *added]
                    if answers[AnswerRecord.key_of(task=task["task"], target=t)]["ok"]}
        for pair in sample_pairs(task["task"], targets, added, answered, k, seed):
            arrival = battle_arrival(arrivals, *pair)
            for setting in settings:
                battles.append((setting, task["task"], pair[0], pair[1], len(battles)))
                judgments += plan_judgments(setting, task["task"], pair, judges, self_judging,
                                            both_orders, seed, arrival)
    return BattlePlan(tuple(battles), tuple(judgments))


def assemble_battles(plan: BattlePlan, judgments: list[dict[str, Any]],
                     tasks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per planned battle: each judge's verdict per dimension, the flips, the joint vote."""
    by_battle: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for j in judgments:
        by_battle.setdefault((j["setting"], j["task"], j["model_a"], j["model_b"]), []).append(j)
    out = []
    for setting, task, model_a, model_b, order in plan.battles:
        key = (setting, task, model_a, model_b)
        per_judge: dict[str, dict[str, list[str | None]]] = {}
        failed = []
        for j in by_battle.get(key, []):
            if not j["ok"]:
                failed.append({"judge": j["judge"], "order": j["order"], "error_class": j["error_class"]})
                continue
            slots = per_judge.setdefault(j["judge"], {d: [] for d in ALL_DIMENSIONS})
            for d in ALL_DIMENSIONS:
                slots[d].append(j["verdicts"].get(d))
        judges: dict[str, dict[str, str | None]] = {}
        flips: dict[str, bool] = {}
        for judge, slots in per_judge.items():
            judges[judge] = {}
            for d in ALL_DIMENSIONS:
                readings = slots[d] + [None] * (2 - len(slots[d]))
                verdict, flipped = combine_orders(readings[0], readings[1])
                judges[judge][d] = verdict
                if d == OVERALL and flipped is not None:
                    flips[judge] = flipped
        joint = {d: joint_vote([v[d] for v in judges.values() if v[d] is not None]) for d in ALL_DIMENSIONS}
        out.append({"battle": BattleRecord.key_of(setting=setting, task=task, model_a=model_a, model_b=model_b),
                    "order": order, "setting": setting, "task": task,
                    "meme": tasks[task]["meme"], "model_a": model_a, "model_b": model_b,
                    "judges": judges, "flips": flips, "failed_judgments": failed, "joint": joint,
                    "judged": joint[OVERALL] is not None})
    return out


def battle_records(battles: list[dict[str, Any]], dimension: str = OVERALL,
                   judge: str | None = None) -> list[dict[str, Any]]:
    """Chatbot Arena format records of one dimension, in battle order: the joint vote, or one judge's
    verdicts when `judge` is given. Battles without that verdict are left out."""
    out = []
    for b in sorted(battles, key=lambda b: b["order"]):
        winner = b["joint"].get(dimension) if judge is None else b["judges"].get(judge, {}).get(dimension)
        if winner is not None:
            out.append({"model_a": b["model_a"], "model_b": b["model_b"], "winner": winner,
                        "judge": judge or "panel", "dimension": dimension})
    return out
