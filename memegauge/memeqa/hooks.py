"""What MemeGauge calls of MemeQA (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.memeqa.config import EvalConfig
from memegauge.memeqa.runs import eval_run
from memegauge.memeqa.cli import register as commands  # noqa: F401
from memegauge.memeqa.demo import demo  # noqa: F401
from memegauge.report.memeqa import build as report  # noqa: F401
from memegauge.report.memeqa import tables  # noqa: F401
from memegauge.report.html import memeqa_view as view  # noqa: F401
from memegauge.config import ModelRegistry, method_config
from memegauge.engine import Store
from memegauge.methods import RunResult


async def run(config: EvalConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """A MemeQA evaluation of `config.model`; see `memegauge.methods.Method`."""
    name = await eval_run(store, registry, **config.model_dump(), run_name=name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> EvalConfig:
    return method_config(source, EvalConfig)
