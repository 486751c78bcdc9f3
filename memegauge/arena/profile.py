"""MemeArena's profile part (`memegauge.profiles.part`). An arena rating is relative to its opponents and judges,
so a run's kind names its meme set, judges and contestants: only runs of one kind are comparable. A model's items
are its battles in the headline setting, won or not by the panel's overall verdict (a tie is not a win, as the
report's win rate counts it), and per judged dimension; the items two models share are their battles against each
other, so their paired difference is their head-to-head record. No published figure: the paper's ratings are of
its own contestants and judges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.profiles.part import ProfilePart
from memegauge.profiles.records import Outcome
from memegauge.report.headline import Headline


def kind(report: dict[str, Any]) -> str | None:
    config = report["run"].get("config") or {}
    if not report.get("ranking"):
        return None
    memes = Path(str(config.get("memes") or "memes")).name
    return (f"MemeArena · {memes} · vs {', '.join(sorted(config.get('targets') or []))} · judged by "
            f"{', '.join(config.get('judges') or [])} ({report.get('setting')})")


def sample(report: dict[str, Any]) -> str | None:
    config = report["run"].get("config") or {}
    return f"first {config['limit']} memes" if config.get("limit") else None


def headline(rows: list[Headline]) -> list[Headline]:
    return [r for r in rows if r.group == "overall"]


def groups(rows: list[Headline]) -> list[Headline]:
    return [r for r in rows if r.group != "overall" and r.figure == "win_rate"]


def _side(battle: dict[str, Any], model: str) -> str:
    return "model_a" if battle["model_a"] == model else "model_b"


def outcomes(store: Any, report: dict[str, Any], model: str) -> list[Outcome]:
    from memegauge.arena.common import DIMENSIONS
    from memegauge.arena.records import AnswerRecord, BattleRecord, TaskRecord
    from memegauge.records import read_checked

    rid = store.run_row(report["run"]["name"])["id"]
    battles = [b for b in read_checked(store, rid, BattleRecord)
               if b["setting"] == report.get("setting") and model in (b["model_a"], b["model_b"])]
    prompts = {t["task"]: t["prompt"] for t in read_checked(store, rid, TaskRecord)}
    answers = {(a["task"], a["target"]): a.get("text") for a in read_checked(store, rid, AnswerRecord)}
    out = []
    for b in sorted(battles, key=lambda b: b["battle"]):
        mine = _side(b, model)
        other = b["model_b"] if mine == "model_a" else b["model_a"]
        for dimension in ("overall", *DIMENSIONS):
            winner = b["joint"].get(dimension)
            said = ("not judged" if winner is None else "a tie" if winner not in ("model_a", "model_b")
                    else f"the panel preferred {b[winner]}'s answer" + ("" if winner == mine else
                                                                         f": {answers.get((b['task'], other)) or '–'}"))
            out.append(Outcome(key=b["battle"] if dimension == "overall" else f"{b['battle']}|{dimension}",
                               meme=str(b["meme"]), groups=[] if dimension == "overall" else [dimension],
                               correct=None if winner is None else winner == mine, overall=dimension == "overall",
                               miss="got it wrong" if winner in ("model_a", "model_b") else "a tie",
                               text=prompts.get(b["task"]), answer=answers.get((b["task"], model)),
                               expected=f"against {other}: {said}"))
    return out


def sources(report: dict[str, Any]) -> dict[str, str]:
    config = report["run"].get("config") or {}
    return {k: str(config[k]) for k in ("memes", "limit", "agent", "seed") if config.get(k) is not None}


def configs(base: dict[str, Any], models: list[str]) -> list[tuple[dict[str, Any], list[str]]]:
    """One arena: the base config's reference targets and every model not among them."""
    targets = list(base.get("targets") or [])
    return [({**base, "targets": targets + [m for m in models if m not in targets]}, list(models))]


def plan(config: Any, checked: Any, name: str) -> list[Any]:
    from memegauge.arena.pipeline import repeat_runs
    from memegauge.arena.plan import plan_calls

    return [p for _, seed in repeat_runs(config, name)
            for p in plan_calls(config.model_copy(update={"seed": seed}), checked.inputs.memes)]


PART = ProfilePart(kind=kind, sample=sample, headline=headline, groups=groups, outcomes=outcomes, sources=sources,
                   configs=configs, plan=plan, radar=True,
                   paired_figure="head-to-head win rate (their battles against each other; a tie is neither's win)")
