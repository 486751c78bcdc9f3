"""What MemeLens calls of AdamMeme (`memelens.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memelens.adammeme.config import AdamConfig
from memelens.adammeme.pipeline import run_adammeme
from memelens.adammeme.cli import register as commands  # noqa: F401
from memelens.adammeme.demo import demo  # noqa: F401
from memelens.report.adammeme import build as report  # noqa: F401
from memelens.report.adammeme import tables  # noqa: F401
from memelens.report.html import adammeme_view as view  # noqa: F401
from memelens.config import ModelRegistry, method_config
from memelens.engine import Store
from memelens.methods import RunResult, default_run_name


async def run(config: AdamConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """AdamMeme on `config` as run `name` (default: adam-<targets>-<memes>-<hash>); see `memelens.methods.Method`."""
    name = name or default_run_name("adam", config.targets, config.memes, config.config_dict())
    name = await run_adammeme(config, store, registry, name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> AdamConfig:
    return method_config(source, AdamConfig)
