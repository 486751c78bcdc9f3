"""Toyscore's part of the HTML report (`Method.view`): a facts block and the answers' browser."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.report.blocks import Block, pct


def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    facts = [("memes", str(report["memes"])), ("answered", str(report["answered"])),
             ("found funny", pct(report["funny_share"]).text)]
    return [Block("facts", "Toyscore", facts=facts),
            Block("browser", "Answers", browser="toyscore", text="One row per meme.")], {"rows": report["details"]}
