"""The demo screen's part of the HTML report: the screen's figures and every answer."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.report.blocks import Block, pct, table, text
from memegauge.report.intervals import shown


def agreement(screen: dict[str, Any]) -> str:
    """The screen's agreement with the sample labels, "38.5% [17.7, 64.5] (n=13 answered)"; a report
    stored before intervals has only the value."""
    fig = screen.get("agreement_ci95")
    if fig is None:
        return pct(screen.get("agreement_with_labels")).text
    text = shown(fig, percent=True)
    return text if "n=" in text else f"{text} (n={fig['n']} answered)"


def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    screen = report.get("screen", {})
    rows = [[text(r.get("meme")), text(", ".join(r.get("labels", []))),
             text((r.get("answer") or {}).get("harmful")), text((r.get("answer") or {}).get("category")),
             text("answered" if r.get("ok") else f"failed: {r.get('error')}")]
            for r in report.get("details", [])]
    return [Block("facts", "Harmfulness screen", facts=[
        ("memes", str(screen.get("memes"))), ("answered", str(screen.get("answered"))),
        ("agreement with sample labels, 95% CI", agreement(screen))]),
        Block("table", "Answers", table=table(["meme", "labels", "harmful", "category", "call"], rows))], {}
