"""What MemeGauge calls of AdamMeme (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.adammeme.config import AdamConfig
from memegauge.config import ModelRegistry, method_config
from memegauge.methods import RunResult, default_run_name, lazy, package_hooks

if TYPE_CHECKING:
    from memegauge.engine import Store

# imported when called (`memegauge.methods.lazy`): registering the CLI loads the CLI module only
commands, demo, report, tables, view = package_hooks("adammeme")
headline = lazy("memegauge.adammeme.headline:headline")  # leaderboard rows with intervals


async def run(config: AdamConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """AdamMeme on `config` as run `name` (default: adam-<targets>-<memes>-<hash>); see `memegauge.methods.Method`."""
    from memegauge.adammeme.pipeline import run_adammeme

    name = name or default_run_name("adam", config.targets, config.memes, config.config_dict())
    name = await run_adammeme(config, store, registry, name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> AdamConfig:
    return method_config(source, AdamConfig)
