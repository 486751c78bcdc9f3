"""The run hooks of AdamMeme (`memegauge.methods.Method`: config, check, run, models), named
by its descriptor (`method.py`) and imported when first called."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.adammeme.config import AdamConfig
from memegauge.config import method_config
from memegauge.models.spec import ModelRegistry
from memegauge.methods import Checked, RunResult

if TYPE_CHECKING:
    from memegauge.engine import Store



def check(config: AdamConfig, registry: ModelRegistry) -> Checked:
    """The meme set read, the models known, text detection present when the run erases; the agent and
    every target are called, and every one of them is shown pictures."""
    from memegauge.adammeme.pipeline import check_inputs

    return Checked(inputs=check_inputs(config, registry), models=config.models(), pictures=config.models())


async def run(config: AdamConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None, checked: Checked | None = None) -> RunResult:
    """AdamMeme on `config` as run `name` (default: adam-<targets>-<memes>-<hash>); see `memegauge.methods.Method`."""
    from memegauge.adammeme.pipeline import run_adammeme

    name = name or config.default_name()
    memes = checked.inputs if checked else None
    name = await run_adammeme(config, store, registry, name, progress=progress, memes=memes)
    return RunResult.of(store, name)


def config(source: Path | str | dict[str, Any]) -> AdamConfig:
    return method_config(source, AdamConfig)


def models(config: dict[str, Any]) -> dict[str, list[str]]:
    """The run's models by role, from its stored config: the agent and the targets."""
    return {"agent": [config["agent"]] if config.get("agent") else [], "targets": list(config.get("targets", [])),
            "judges": []}
