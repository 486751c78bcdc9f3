"""MemeArena's part of `memegauge demo`: the whole method, shrunk to ~3 minutes on 2 idle CPU cores.

Every stage runs for real — context simulation, task formulation, three targets' answers, multi-view
fusion, pairwise judgment on the five dimensions plus overall, Elo / Bradley–Terry ranking and the
per-judge NDCG — on one bundled sample meme, one context-specific task. The three targets
are the demo model playing three personas (system prompts, registered in code as derived registry
entries); two of them form the judge panel. To fit the budget each task samples two answers (one
battle) instead of three, the guideline is fused from the two judges' answers only (`fusion_pool:
judges`, one round per task instead of two: fusion calls have the longest prompts and answers), and
with a two-judge panel of one model's personas self-judging is allowed so that every battle gets both
verdicts: 8 calls in all (`python bench/arena_demo.py` times this part alone).
The figures show the pipeline working, not how
well the small offline model understands memes; the detection baseline is left out to stay in budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from memegauge.arena.config import ArenaConfig, StageTokens
from memegauge.arena.method import METHOD
from memegauge.clikit import notes, stdout_console
from memegauge.models.spec import ModelRegistry
from memegauge.demo import demo_meme_file
from memegauge.report import build_report

if TYPE_CHECKING:
    from memegauge.methods import DemoInputs

DEMO_MEMES = ("parking",)  # one meme: the whole demo must fit 10 minutes on 2 cores
PERSONAS = {
    "analyst": "You are a careful media analyst. Ground every claim in the meme's text and picture.",
    "skeptic": "You are a skeptical reviewer. Question the obvious reading and name who could be hurt.",
    "hasty": "You answer in a hurry, in as few words as possible.",
}
JUDGES = ("analyst", "skeptic")
DEMO_BUDGET = StageTokens(contexts=90, tasks=110, answers=80, fusion=150, judging=90, detection=8)


def register_personas(registry: ModelRegistry, model: str) -> list[str]:
    """Add `<model>-<persona>` entries (the model with a persona's system prompt); return their names."""
    base = registry.get(model)
    names = []
    for persona, prompt in PERSONAS.items():
        name = f"{model}-{persona}"
        registry.add(base.model_copy(update={"name": name, "system_prompt": prompt}))
        names.append(name)
    return names


def demo_config(memes_path: Path, model: str, targets: list[str]) -> ArenaConfig:
    return ArenaConfig(memes=memes_path, agent=model, targets=targets,
                       judges=[f"{model}-{j}" for j in JUDGES], tasks_per_meme=1, answers_per_task=2,
                       fusion_pool="judges", self_judging=True, allow_same_family=True,
                       detection=False, bootstrap_rounds=200, max_tokens=DEMO_BUDGET)


async def demo(inputs: DemoInputs) -> str:
    """Run MemeArena on one sample meme; write `arena-report.json` to out_dir; return the run name."""
    model = inputs.model
    chosen = [m for m in inputs.memes if m.id in DEMO_MEMES]
    memes_path = demo_meme_file(chosen, "arena")
    config = demo_config(memes_path, model, register_personas(inputs.registry, model))
    name = f"demo-arena-{model}"
    await METHOD.run(config, store=inputs.store, registry=inputs.registry, name=name, progress=inputs.progress)
    report = build_report(inputs.store, name)
    (inputs.out_dir / "arena-report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str),
                                               encoding="utf-8")
    _print(report)
    return name


def _print(report: dict) -> None:
    table = Table(title="MemeArena ranking (embedded model as three personas; functional demo only)")
    from memegauge.report.intervals import shown

    for column in ("model", "BT (95% CI)", "Elo", "win rate (95% CI)", "battles"):
        table.add_column(column)
    for row in report["ranking"]:  # every figure with its interval, or the reason it has none
        ci = row.get("bt_ci")
        why = row.get("bt_note") or "no interval"
        bt = f"{row['bt']:.0f} [{ci[0]:.0f}, {ci[1]:.0f}]" if ci else f"{row['bt']:.0f} ({why})"
        win = row.get("win_rate_ci95")
        table.add_row(row["model"], bt, f"{row['elo']:.0f}",
                      shown(win, percent=True) if win else f"{row['win_rate']:.2f}", str(row["battles"]))
    stdout_console().print(table)
    ndcg = ", ".join(f"{j}: {v['ndcg']:.2f}" if v["ndcg"] is not None else f"{j}: -"
                     for j, v in report["judges"].items())
    notes.print(f"judge NDCG vs the joint ranking: {ndcg}")
