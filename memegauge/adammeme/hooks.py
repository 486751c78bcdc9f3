"""What MemeGauge calls of AdamMeme (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.pipeline import run_adammeme
from memegauge.adammeme.cli import register as commands  # noqa: F401
from memegauge.adammeme.demo import demo  # noqa: F401
from memegauge.report.adammeme import build as report  # noqa: F401
from memegauge.report.adammeme import tables  # noqa: F401
from memegauge.report.html import adammeme_view as view  # noqa: F401
from memegauge.config import ModelRegistry, method_config
from memegauge.engine import Store
from memegauge.methods import RunResult, default_run_name


async def run(config: AdamConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """AdamMeme on `config` as run `name` (default: adam-<targets>-<memes>-<hash>); see `memegauge.methods.Method`."""
    name = name or default_run_name("adam", config.targets, config.memes, config.config_dict())
    name = await run_adammeme(config, store, registry, name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> AdamConfig:
    return method_config(source, AdamConfig)
