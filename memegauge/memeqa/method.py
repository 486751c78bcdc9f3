"""The MemeQA method descriptor (see `memegauge.methods`), written as docs/engine.md teaches: every hook
names its implementation as `"module:function"`, imported on its first call (`lazy`), so loading the
descriptor (to report a run, say) imports none of the method's pipeline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from memegauge.methods import Method, lazy

METHOD = Method(name="memeqa", title="MemeQA", folder=Path(__file__).parent, demo_order=2,
                report=lazy("memegauge.memeqa.report:build"), tables=lazy("memegauge.memeqa.report:tables"),
                view=lazy("memegauge.memeqa.view:view"),
                demo=lazy("memegauge.memeqa.demo:demo"), config=lazy("memegauge.memeqa.hooks:config"),
                check=lazy("memegauge.memeqa.hooks:check"), run=lazy("memegauge.memeqa.hooks:run"),
                models=lazy("memegauge.memeqa.hooks:models"), headline=lazy("memegauge.memeqa.headline:headline"),
                exports=lazy("memegauge.memeqa.exports:tables"), rating=lazy("memegauge.memeqa.rating:part"),)

# MemeQA's other run kinds, each a descriptor of the run path (`memegauge.run_path.run_checked`) whose runs
# are stored and reported as the method's (same name, same report): not registered, as they add no
# method; `qa build` and `qa score` run them.
BUILD = replace(METHOD, title="MemeQA dataset build", check=lazy("memegauge.memeqa.hooks:check_build"),
                run=lazy("memegauge.memeqa.hooks:run_build"), models=lazy("memegauge.memeqa.hooks:build_models"),
                demo=None, rating=None)
FINETUNE = replace(METHOD, title="MemeQA fine-tuning", check=lazy("memegauge.memeqa.hooks:check_finetune"),
                   run=lazy("memegauge.memeqa.hooks:run_finetune"), demo=None, rating=None)
SCORE = replace(METHOD, title="MemeQA scoring", check=lazy("memegauge.memeqa.hooks:check_score"),
                run=lazy("memegauge.memeqa.hooks:run_score"), models=lazy("memegauge.memeqa.hooks:score_models"),
                demo=None, rating=None)
