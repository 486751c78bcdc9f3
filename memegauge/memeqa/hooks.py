"""What MemeGauge calls of MemeQA (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.memeqa.config import EvalConfig
from memegauge.config import ModelRegistry, method_config
from memegauge.methods import RunResult, lazy

if TYPE_CHECKING:
    from memegauge.engine import Store

# imported when called (see `memegauge.methods.lazy`): the CLI's registration loads the CLI module only
commands = lazy("memegauge.memeqa.cli:register")
demo = lazy("memegauge.memeqa.demo:demo")
report = lazy("memegauge.report.memeqa:build")
tables = lazy("memegauge.report.memeqa:tables")
view = lazy("memegauge.report.html:memeqa_view")


async def run(config: EvalConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None) -> RunResult:
    """A MemeQA evaluation of `config.model`; see `memegauge.methods.Method`."""
    from memegauge.memeqa.runs import eval_run

    name = await eval_run(store, registry, **config.model_dump(), run_name=name, progress=progress)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> EvalConfig:
    return method_config(source, EvalConfig)
