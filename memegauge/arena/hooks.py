"""What MemeGauge calls of MemeArena (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.arena.config import ArenaConfig
from memegauge.config import ModelRegistry, method_config
from memegauge.methods import RunResult, default_run_name, lazy

if TYPE_CHECKING:
    from memegauge.engine import Store

# imported when called (see `memegauge.methods.lazy`): the CLI's registration loads the CLI module only
commands = lazy("memegauge.arena.cli:register")
demo = lazy("memegauge.arena.demo:demo")
report = lazy("memegauge.report.arena:build")
tables = lazy("memegauge.report.arena:tables")
view = lazy("memegauge.report.html:arena_view")


async def run(config: ArenaConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """MemeArena on `config` as run `name` (default: arena-<targets>-<memes>-<hash>); see `memegauge.methods.Method`."""
    from memegauge.arena.pipeline import run_arena

    name = name or default_run_name("arena", config.targets, config.memes, config.stored())
    outcome = await run_arena(config, store, registry, name, progress=progress)
    return RunResult.of(store, outcome.run)


def config(source: Path | str | dict[str, Any]) -> ArenaConfig:
    return method_config(source, ArenaConfig)
