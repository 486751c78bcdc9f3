"""What MemeGauge calls of MemeArena (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.arena.config import ArenaConfig
from memegauge.arena.pipeline import run_arena
from memegauge.arena.cli import register as commands  # noqa: F401
from memegauge.arena.demo import demo  # noqa: F401
from memegauge.report.arena import build as report  # noqa: F401
from memegauge.report.arena import tables  # noqa: F401
from memegauge.report.html import arena_view as view  # noqa: F401
from memegauge.config import ModelRegistry, method_config
from memegauge.engine import Store
from memegauge.methods import RunResult, default_run_name


async def run(config: ArenaConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """MemeArena on `config` as run `name` (default: arena-<targets>-<memes>-<hash>); see `memegauge.methods.Method`."""
    name = name or default_run_name("arena", config.targets, config.memes, config.stored())
    outcome = await run_arena(config, store, registry, name, progress=progress)
    return RunResult.of(store, outcome.run)


def config(source: Path | str | dict[str, Any]) -> ArenaConfig:
    return method_config(source, ArenaConfig)
