"""Toyscore's descriptor: what MemeGauge calls. Declared once, as an entry point of the group
``memegauge.methods`` (``toyscore = "toyscore.method:METHOD"``); each hook imports its code when called."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method, lazy

METHOD = Method(
    name="toyscore", title="Toyscore",
    config=lazy("toyscore.run:config"), check=lazy("toyscore.run:check"), run=lazy("toyscore.run:run"),
    commands=lazy("toyscore.cli:register"),
    report=lazy("toyscore.report:build"), tables=lazy("toyscore.report:tables"),
    models=lazy("toyscore.report:models"), view=lazy("toyscore.view:view"),
    exports=lazy("toyscore.exports:tables"),
    folder=Path(__file__).parent,  # prompts/toyscore_*.j2 and browser.js
)
