"""What MemeGauge calls of MemeArena (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.arena.config import ArenaConfig
from memegauge.config import ModelRegistry, method_config
from memegauge.methods import RunResult, default_run_name, lazy, package_hooks

if TYPE_CHECKING:
    from memegauge.engine import Store

# imported when called (`memegauge.methods.lazy`): registering the CLI loads the CLI module only
commands, demo, report, tables, view = package_hooks("arena")
headline = lazy("memegauge.arena.headline:headline")  # leaderboard rows with intervals


async def run(config: ArenaConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """MemeArena on `config` as run `name` (default: arena-<targets>-<memes>-<hash>); see `memegauge.methods.Method`."""
    from memegauge.arena.pipeline import run_arena

    name = name or default_run_name("arena", config.targets, config.memes, config.stored())
    outcome = await run_arena(config, store, registry, name, progress=progress)
    return RunResult.of(store, outcome.run)


def config(source: Path | str | dict[str, Any]) -> ArenaConfig:
    return method_config(source, ArenaConfig)
