"""The demo screen's stage: each meme screened once for harmfulness by the demo's model; results stored
as `screen` records (`memegauge.screen.records`). `memegauge demo` runs it first (its `demo` part)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from memegauge.clikit import stdout_console
from memegauge.engine import Store, open_run
from memegauge.methods import DemoInputs
from memegauge.parse import parse_json
from memegauge.prompts import render_prompt
from memegauge.records import read_checked
from memegauge.screen.records import ScreenRecord
from memegauge.types import ChatRequest, ImagePart, Meme, Message, OutputKind, OutputSpec, SamplingParams

if TYPE_CHECKING:
    from memegauge.models.spec import ModelRegistry

SEED_CATEGORIES = ["race", "gender", "religion", "nationality", "disability", "animal"]


def screen_schema() -> dict[str, Any]:
    return {"type": "object", "properties": {
        "harmful": {"type": "boolean"},
        "category": {"type": "string", "enum": [*SEED_CATEGORIES, "none"]}},
        "required": ["harmful", "category"]}


def screen_request(meme: Meme, model: str) -> ChatRequest:
    prompt = render_prompt("demo_screen", meme=meme.as_text(), categories=SEED_CATEGORIES)
    parts: list[Any] = [prompt]
    if meme.image:
        parts.append(ImagePart.of(meme.image, alt_text=""))
    return ChatRequest(model=model, messages=[Message.user(*parts)], stage="demo.screen",
                       params=SamplingParams(temperature=0, max_tokens=24),
                       output=OutputSpec(kind=OutputKind.JSON, json_schema=screen_schema(),
                                         schema_name="screen"))


async def screen_memes(memes: list[Meme], model: str, store: Store, registry: ModelRegistry,
                       progress: bool | None = None) -> str:
    """The engine demo stage: each meme screened once; results stored as `screen` records."""
    config = {"method": "demo", "model": model, "memes": [m.id for m in memes]}
    name = f"demo-screen-{model}"
    async with open_run(store, registry, name=name, method="demo", config=config,
                        progress=progress) as (run, engine):
        outcomes = await engine.chat_many([screen_request(m, model) for m in memes], parse=parse_json)
        run.put_many([ScreenRecord(meme=m.id, labels=m.labels, ok=o.ok, answer=o.value, error=o.record.error)
                      for m, o in zip(memes, outcomes, strict=True)])
    return name


async def demo(inputs: DemoInputs) -> str:
    """The screen's part of `memegauge demo`: screen the demo's memes, print the answers."""
    name = await screen_memes(inputs.memes, inputs.model, inputs.store, inputs.registry, inputs.progress)
    _print_screen(inputs.store, name)
    return name


def _print_screen(store: Store, name: str) -> None:
    rows = read_checked(store, store.run_row(name)["id"], ScreenRecord)
    table = Table(title="harmfulness screen (embedded model)")
    for column in ("meme", "labels", "harmful", "category"):
        table.add_column(column)
    for row in rows:
        answer = row["answer"] or {}
        table.add_row(row["meme"], ",".join(row["labels"]), str(answer.get("harmful", "-")),
                      str(answer.get("category", row["error"][:40])))
    stdout_console().print(table)
    from memegauge.report import build_report
    from memegauge.screen.view import agreement

    stdout_console().print(f"agreement with the sample labels: {agreement(build_report(store, name)['screen'])}")
