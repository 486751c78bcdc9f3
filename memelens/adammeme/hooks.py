"""What MemeLens calls of AdamMeme (`memelens.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memelens.adammeme.config import AdamConfig
from memelens.adammeme.pipeline import run_adammeme
from memelens.adammeme.cli import register as commands  # noqa: F401
from memelens.adammeme.demo import demo  # noqa: F401
from memelens.report.adammeme import build as report  # noqa: F401
from memelens.report.html import adammeme_view as view  # noqa: F401
from memelens.config import ModelRegistry, method_config
from memelens.engine import Store, config_hash
from memelens.methods import RunResult


async def run(config: AdamConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """AdamMeme on `config` as run `name` (default: adam-<config hash>); see `memelens.methods.Method`."""
    name = name or f"adam-{config_hash(config.config_dict())[:6]}"
    name = await run_adammeme(config, store, registry, name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> AdamConfig:
    return method_config(source, AdamConfig)
