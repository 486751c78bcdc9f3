"""The MemeArena method descriptor (see `memegauge.methods`), written as docs/engine.md teaches: every hook
names its implementation as `"module:function"`, imported on its first call (`lazy`), so loading the
descriptor (to report a run, say) imports none of the method's pipeline."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method, lazy

METHOD = Method(name="arena", title="MemeArena", folder=Path(__file__).parent, demo_order=1,
                report=lazy("memegauge.arena.report:build"), tables=lazy("memegauge.arena.report:tables"),
                view=lazy("memegauge.arena.view:view"),
                demo=lazy("memegauge.arena.demo:demo"), config=lazy("memegauge.arena.hooks:config"),
                check=lazy("memegauge.arena.hooks:check"), run=lazy("memegauge.arena.hooks:run"),
                models=lazy("memegauge.arena.hooks:models"), headline=lazy("memegauge.arena.headline:headline"),
                exports=lazy("memegauge.arena.exports:tables"), rating=lazy("memegauge.arena.rating:part"),
                migrations=((2, lazy("memegauge.arena.store_migrations:repeat_keys_from_field")),))
