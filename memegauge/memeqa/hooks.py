"""What MemeGauge calls of MemeQA (`memegauge.methods.Method`): imported when first needed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.memeqa.config import EvalConfig
from memegauge.config import ModelRegistry, method_config
from memegauge.methods import Checked, RunResult, lazy, package_hooks

if TYPE_CHECKING:
    from memegauge.engine import Store

# imported when called (`memegauge.methods.lazy`): registering the CLI loads the CLI module only
commands, demo, report, tables, view = package_hooks("memeqa")
headline = lazy("memegauge.memeqa.headline:headline")  # leaderboard rows with intervals
exports = lazy("memegauge.memeqa.exports:tables")  # the item tables of `memegauge export`


def check(config: EvalConfig, registry: ModelRegistry) -> Checked:
    """The questions and their memes read (`read_eval_inputs`), the model known; it sees pictures."""
    from memegauge.memeqa.runs import read_eval_inputs

    inputs = read_eval_inputs(config)  # the local files first: their own message, whatever the model
    registry.get(config.model)
    return Checked(inputs=inputs, models=[config.model], pictures=[config.model])


async def run(config: EvalConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None, checked: Checked | None = None) -> RunResult:
    """A MemeQA evaluation of `config.model`; see `memegauge.methods.Method`."""
    from memegauge.memeqa.runs import eval_run

    name = await eval_run(store, registry, config, run_name=name, progress=progress,
                          inputs=checked.inputs if checked else None)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> EvalConfig:
    return method_config(source, EvalConfig)


def models(config: dict[str, Any]) -> dict[str, list[str]]:
    """The run's models by role, from its stored config: the evaluated (or fine-tuned) model; for a `qa
    score` run, its predictions file (by the hash its config keeps), what `compare` compares."""
    target = config.get("model") or config.get("predictions")
    return {"agent": [], "targets": [target] if target else [], "judges": []}
