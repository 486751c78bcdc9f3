"""The demo screen's part of the HTML report: the screen's figures and every answer."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.report.blocks import Block, pct, table, text

def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    screen = report.get("screen", {})
    rows = [[text(r.get("meme")), text(", ".join(r.get("labels", []))),
             text((r.get("answer") or {}).get("harmful")), text((r.get("answer") or {}).get("category")),
             text("answered" if r.get("ok") else f"failed: {r.get('error')}")]
            for r in report.get("details", [])]
    return [Block("facts", "Harmfulness screen", facts=[
        ("memes", str(screen.get("memes"))), ("answered", str(screen.get("answered"))),
        ("agreement with sample labels", pct(screen.get("agreement_with_labels")).text)]),
        Block("table", "Answers", table=table(["meme", "labels", "harmful", "category", "call"], rows))], {}
