"""The AdamMeme method descriptor (see `memegauge.methods`), written as docs/engine.md teaches: every hook
names its implementation as `"module:function"`, imported on its first call (`lazy`), so loading the
descriptor (to report a run, say) imports none of the method's pipeline."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method, lazy

METHOD = Method(name="adammeme", title="AdamMeme", folder=Path(__file__).parent, demo_order=0,
                report=lazy("memegauge.adammeme.report:build"), tables=lazy("memegauge.adammeme.report:tables"),
                view=lazy("memegauge.adammeme.view:view"),
                demo=lazy("memegauge.adammeme.demo:demo"), config=lazy("memegauge.adammeme.hooks:config"),
                check=lazy("memegauge.adammeme.hooks:check"), run=lazy("memegauge.adammeme.hooks:run"),
                models=lazy("memegauge.adammeme.hooks:models"), headline=lazy("memegauge.adammeme.headline:headline"),
                exports=lazy("memegauge.adammeme.exports:tables"), rating=lazy("memegauge.adammeme.rating:part"),)
