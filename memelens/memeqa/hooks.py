"""What MemeLens calls of MemeQA (`memelens.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memelens.memeqa.config import EvalConfig
from memelens.memeqa.runs import eval_run
from memelens.memeqa.cli import register as commands  # noqa: F401
from memelens.memeqa.demo import demo  # noqa: F401
from memelens.report.memeqa import build as report  # noqa: F401
from memelens.report.memeqa import tables  # noqa: F401
from memelens.report.html import memeqa_view as view  # noqa: F401
from memelens.config import ModelRegistry, method_config
from memelens.engine import Store
from memelens.methods import RunResult


async def run(config: EvalConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """A MemeQA evaluation of `config.model`; see `memelens.methods.Method`."""
    name = await eval_run(store, registry, **config.model_dump(), run_name=name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> EvalConfig:
    return method_config(source, EvalConfig)
