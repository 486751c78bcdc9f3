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
    """The run's models by role, from its stored config: the evaluated (or fine-tuned) model; for a `qa
    score` run, its predictions file (by the hash its config keeps), what `compare` compares."""
    target = config.get("model") or config.get("predictions")
    return {"agent": [], "targets": [target] if target else [], "judges": []}


# ---- the other run kinds: a dataset build and a scoring of answers made elsewhere --------------------
# Each is a descriptor of its own (`memegauge.memeqa.method.BUILD`, `SCORE`) whose runs are stored under
# the method's name, so `memegauge qa build` and `qa score` make their runs through the one run path too.

def check_build(config: Any, registry: ModelRegistry) -> Checked:
    """The three models known, the annotations read and their memes found: bad input before any call."""
    from memegauge.memeqa.build import annotation_memes
    from memegauge.memeqa.construct import load_annotations

    models = [config.generator, config.discriminator, config.trivial_model]
    for model in models:
        registry.get(model)
    annotations = load_annotations(config.annotations)
    annotation_memes(annotations, config.annotations.parent)
    return Checked(inputs=annotations, models=list(dict.fromkeys(models)), pictures=[])


async def run_build(config: Any, *, store: Store, registry: ModelRegistry, name: str | None = None,
                    progress: bool | None = None, checked: Checked | None = None) -> RunResult:
    """A MemeQA construction (`memegauge.memeqa.build.run_build`) as run `name` (default: the config's
    `run`, else ``memeqa-build-<annotations>``)."""
    from memegauge.memeqa.build import run_build as build

    config = config if name is None else config.model_copy(update={"run": name})
    return RunResult.of(store, await build(store, registry, config, progress=progress))


def build_models(config: dict[str, Any]) -> dict[str, list[str]]:
    """A build's models by role, from its stored config."""
    return {role: [config[key]] for role, key in (("generator", "generator"), ("discriminator", "discriminator"),
                                                  ("trivial filter", "trivial_model")) if config.get(key)}


def check_score(config: Any, registry: ModelRegistry) -> Checked:
    """The predictions file present; no model is called."""
    from memegauge.errors import InputError

    if not config.predictions.is_file():
        raise InputError("predictions file not found", str(config.predictions), "check the path")
    return Checked(inputs=None, models=[], pictures=[])


async def run_score(config: Any, *, store: Store, registry: ModelRegistry, name: str | None = None,
                    progress: bool | None = None, checked: Checked | None = None) -> RunResult:
    """A scoring of `config.predictions` (`memegauge.memeqa.runs.score_run`) as run `name`."""
    from memegauge.memeqa.runs import score_run

    done = await score_run(store, registry, data=config.data, version=config.version, split=config.split,
                           predictions=config.predictions, run_name=name, limit=config.limit, types=config.types,
                           seed=config.seed)
    return RunResult.of(store, done)


def score_models(config: dict[str, Any]) -> dict[str, list[str]]:
    """A scoring calls no model: its answers were made elsewhere."""
    return {}


def check_finetune(config: Any, registry: ModelRegistry) -> Checked:
    """A fine-tuning reads its own files when it trains; it calls no registry model."""
    return Checked(inputs=None, models=[], pictures=[])


async def run_finetune(config: Any, *, store: Store, registry: ModelRegistry, name: str | None = None,
                       progress: bool | None = None, checked: Checked | None = None,
                       on_eval: Any = None, on_start: Any = None) -> RunResult:
    """LoRA fine-tuning (`memegauge.memeqa.finetune.finetune`) as run `name` (default
    ``memeqa-finetune-<out folder>``); `on_eval(state)` after each dev evaluation, `on_start(settings)`
    once the model is loaded. The run stores its outcome (`FinetuneInfo`)."""
    import asyncio

    from memegauge.engine import open_run
    from memegauge.memeqa.finetune import finetune
    from memegauge.memeqa.records import FinetuneInfo

    name = name or f"memeqa-finetune-{config.out.name}"
    async with open_run(store, registry, name=name, method="memeqa",
                        config={"task": "finetune", **config.model_dump(mode="json")},
                        seed=config.seed, progress=False) as (stage_run, _engine):
        state = await asyncio.to_thread(finetune, config, on_eval, on_start)
        stage_run.put(FinetuneInfo(task="finetune", out=str(config.out), best_step=state["best_step"],
                                   best_macro=state["best_macro"], dev=state["history"], losses=state["curve"],
                                   vision=state["vision"], settings=state["settings"]))
    return RunResult.of(store, name)
