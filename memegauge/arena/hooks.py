"""The run hooks of MemeArena (`memegauge.methods.Method`: config, check, run, models), named
by its descriptor (`method.py`) and imported when first called."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memegauge.arena.config import ArenaConfig
from memegauge.config import method_config
from memegauge.models.spec import ModelRegistry
from memegauge.methods import Checked, RunResult

if TYPE_CHECKING:
    from memegauge.engine import Store



def check(config: ArenaConfig, registry: ModelRegistry) -> Checked:
    """Models, judge families, memes and the optional human files; every model called sees pictures."""
    from memegauge.arena.pipeline import read_inputs

    return Checked(inputs=read_inputs(config, registry), models=config.models(), pictures=config.models())


async def run(config: ArenaConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None, checked: Checked | None = None) -> RunResult:
    """MemeArena on `config` as run `name` (default: arena-<targets>-<memes>-<hash>); see `memegauge.methods.Method`.
    The result's `details` is the pipeline's `ArenaOutcome` (battles judged, calls made now)."""
    from memegauge.arena.pipeline import run_arena

    name = name or config.default_name()
    outcome = await run_arena(config, store, registry, name, progress=progress,
                              inputs=checked.inputs if checked else None)
    return RunResult.of(store, outcome.run, details=outcome)


def config(source: Path | str | dict[str, Any]) -> ArenaConfig:
    return method_config(source, ArenaConfig)


def models(config: dict[str, Any]) -> dict[str, list[str]]:
    """The run's models by role, from its stored config: the agent, the targets (those an `--extend`
    added too) and the judges."""
    return {"agent": [config["agent"]] if config.get("agent") else [],
            "targets": [*config.get("targets", []), *config.get("added_targets", [])],
            "judges": list(config.get("judges", []))}
