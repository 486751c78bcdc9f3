"""The demo's harmfulness screen as a method (see `memegauge.methods`): runs named `demo-screen-MODEL`,
stored under the method name ``demo``, with their own report and HTML view. It has no commands and no
config of its own: `memegauge demo` runs it as its first part (lowest `demo_order`)."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method, lazy

METHOD = Method(name="demo", title="demo screen", report=lazy("memegauge.screen.report:build"),
                view=lazy("memegauge.screen.view:view"), tables=lazy("memegauge.screen.report:tables"),
                demo=lazy("memegauge.screen.stage:demo"), demo_order=-100,
                models=lazy("memegauge.screen.report:models"), folder=Path(__file__).parent)
