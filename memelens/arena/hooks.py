"""What MemeLens calls of MemeArena (`memelens.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memelens.arena.config import ArenaConfig
from memelens.arena.pipeline import run_arena
from memelens.arena.cli import register as commands  # noqa: F401
from memelens.arena.demo import demo  # noqa: F401
from memelens.report.arena import build as report  # noqa: F401
from memelens.report.arena import tables  # noqa: F401
from memelens.report.html import arena_view as view  # noqa: F401
from memelens.config import ModelRegistry, method_config
from memelens.engine import Store
from memelens.methods import RunResult, default_run_name


async def run(config: ArenaConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """MemeArena on `config` as run `name` (default: arena-<targets>-<memes>-<hash>); see `memelens.methods.Method`."""
    name = name or default_run_name("arena", config.targets, config.memes, config.stored())
    outcome = await run_arena(config, store, registry, name, progress=progress)
    return RunResult.of(store, outcome.run)


def config(source: Path | str | dict[str, Any]) -> ArenaConfig:
    return method_config(source, ArenaConfig)
