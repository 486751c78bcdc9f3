"""The run hooks of MemeQA (`memegauge.methods.Method`: config, check, run, models), named
by its descriptor (`method.py`) and imported when first called."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.memeqa.config import EvalConfig
from memegauge.config import method_config
from memegauge.models.spec import ModelRegistry
from memegauge.methods import Checked, RunResult

if TYPE_CHECKING:
    from memegauge.engine import Store



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
    """The run's models by role, from its stored config: the evaluated (or fine-tuned) model."""
    return {"agent": [], "targets": [config["model"]] if config.get("model") else [], "judges": []}
