"""MemeArena's intervals and headline rows (see `memegauge.report.intervals`, `memegauge.report.headline`).

`annotate(ranking, battles, dimension)` adds to each row of a `rank_table` the win rate's 95% interval
(`win_rate_ci95`, a Wilson interval clustered by meme: the battles of one meme's tasks are not
independent) and, where the Bradley–Terry bootstrap interval rests on fewer than two battles of the
model or on a single meme, drops it (`bt_ci: None`) and says so in `bt_note`: a 1-battle run used to
print "BT 95% CI [1459.9, 1459.9]", a certainty it does not have.
"""

from __future__ import annotations

from typing import Any

from memegauge.arena.common import OVERALL
from memegauge.report import intervals as ci
from memegauge.report.headline import Headline, row


def _won(battle: dict[str, Any], model: str, dimension: str) -> float:
    winner = battle["joint"].get(dimension)
    return float((winner == "model_a" and battle["model_a"] == model)
                 or (winner == "model_b" and battle["model_b"] == model))


def annotate(ranking: list[dict[str, Any]], battles: list[dict[str, Any]],
             dimension: str = OVERALL) -> list[dict[str, Any]]:
    """The ranking rows with `win_rate_ci95` and `bt_note` (see the module docstring)."""
    judged = [b for b in battles if b["joint"].get(dimension) is not None]
    out = []
    for entry in ranking:
        model = entry["model"]
        mine = [b for b in judged if model in (b["model_a"], b["model_b"])]
        win = ci.rate([_won(b, model, dimension) for b in mine], [b["meme"] for b in mine])
        few = win["n"] < 2 or win["clusters"] < 2  # under 2 battles, or all from one meme
        flat = entry.get("bt_ci") is not None and entry["bt_ci"][0] == entry["bt_ci"][1]
        note = ci.TOO_FEW if few else (ci.NO_SPREAD if flat else None)
        out.append({**entry, "bt_ci": None if note else entry.get("bt_ci"), "bt_note": note,
                    "win_rate_ci95": win})
    return out


def headline(report: dict[str, Any]) -> list[Headline]:
    """Per model: the Bradley–Terry rating (with its bootstrap interval) and the win rate (with its
    clustered Wilson interval) from the panel's overall vote in the headline setting; the same per
    judged dimension."""
    run, out = report["run"], []
    tables = {"overall": report.get("ranking", []), **report.get("dimensions", {})}
    for group, ranking in tables.items():
        for entry in ranking:
            if "win_rate_ci95" not in entry:  # a report built before intervals existed
                continue
            win = entry["win_rate_ci95"]
            bt = ci.figure(entry["bt"], entry.get("bt_ci"), entry["battles"], win["clusters"], "bootstrap",
                           entry.get("bt_note") or (None if entry.get("bt_ci") else ci.TOO_FEW))
            out.append(row(run, entry["model"], group, "bt", bt, "rating"))
            out.append(row(run, entry["model"], group, "win_rate", win, "rate"))
    return out
