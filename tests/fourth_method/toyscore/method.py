"""Toyscore's descriptors: what MemeGauge calls. The method is declared as an entry point of the group
``memegauge.methods`` (``toyscore = "toyscore.method:METHOD"``), each hook importing its code when called; its
command as one of ``memegauge.commands`` (``toyscore = "toyscore.method:COMMAND"``): `memegauge --help` lists it
from here, and imports `toyscore.cli` only when it is dispatched."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method, lazy
from memegauge.registry import Command

METHOD = Method(
    name="toyscore", title="Toyscore",
    config=lazy("toyscore.run:config"), check=lazy("toyscore.run:check"), run=lazy("toyscore.run:run"),
    report=lazy("toyscore.report:build"), tables=lazy("toyscore.report:tables"),
    models=lazy("toyscore.report:models"), view=lazy("toyscore.view:view"),
    exports=lazy("toyscore.exports:tables"),
    folder=Path(__file__).parent,  # prompts/toyscore_*.j2 and browser.js
)

COMMAND = Command(name="toyscore", summary="Ask one model whether each meme is funny.",
                  register="toyscore.cli:register")
