"""What MemeGauge calls of MemeQA (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.memeqa.config import EvalConfig
from memegauge.config import ModelRegistry, method_config
from memegauge.methods import RunResult, lazy, package_hooks

if TYPE_CHECKING:
    from memegauge.engine import Store

# imported when called (`memegauge.methods.lazy`): registering the CLI loads the CLI module only
commands, demo, report, tables, view = package_hooks("memeqa")
headline = lazy("memegauge.memeqa.headline:headline")  # leaderboard rows with intervals


async def run(config: EvalConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """A MemeQA evaluation of `config.model`; see `memegauge.methods.Method`."""
    from memegauge.memeqa.runs import eval_run

    name = await eval_run(store, registry, **config.model_dump(), run_name=name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> EvalConfig:
    return method_config(source, EvalConfig)
