"""Toyscore's config, input check and run (`Method.config`, `check`, `run`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from memegauge.config import MethodConfig, method_config

from memegauge.models.spec import ModelRegistry
from memegauge.engine import Store, open_run
from memegauge.memes import load_memes
from memegauge.methods import Checked, RunResult, default_run_name
from memegauge.parse import starts_yes_no
from memegauge.prompts import render_prompt
from memegauge.types import ChatRequest, Message, SamplingParams
from toyscore.records import FunnyRecord


class ToyConfig(MethodConfig):
    """`memegauge toyscore -c CONFIG`: which memes, which model (unknown keys refused and `memes`
    resolved from the config file's folder by `MethodConfig`)."""

    memes: Path = Field(description="The meme set (JSONL), relative to the config file.")
    model: str = Field(description="The registry name of the model asked.")

    def roles(self) -> dict[str, list[str]]:
        return {"targets": [self.model]}


def config(source: Path | str | dict[str, Any]) -> ToyConfig:
    return method_config(source, ToyConfig)


def check(config: ToyConfig, registry: ModelRegistry) -> Checked:
    registry.get(config.model)
    memes = load_memes(config.memes, require_images=False)
    return Checked(inputs=memes, models=[config.model], pictures=[])


async def run(config: ToyConfig, *, store: Store, registry: ModelRegistry, name: str | None = None,
              progress: bool | None = None, checked: Checked | None = None) -> RunResult:
    memes = (checked or check(config, registry)).inputs
    stored = config.stored()
    name = name or default_run_name("toyscore", [config.model], config.memes, stored)
    params = SamplingParams(temperature=0, max_tokens=8)
    requests = [ChatRequest(model=config.model, stage="toyscore.ask", params=params,
                            messages=[Message.user(render_prompt("toyscore_ask", text=m.as_text()))]) for m in memes]
    async with open_run(store, registry, name=name, method="toyscore", config=stored,
                        progress=progress) as (opened, engine):
        # read as yes or no, or failed: an answer that says neither (cut off, a refusal, prose) is asked again
        # within the model's content retries, then recorded as a failed call, never scored as "not funny"
        outcomes = await engine.chat_many(requests, parse=starts_yes_no)
        opened.put_many([FunnyRecord(meme=m.id, ok=o.ok, error=o.record.error, funny=o.value if o.ok else None)
                         for m, o in zip(memes, outcomes, strict=True)])
    return RunResult.of(store, name)
