"""`memegauge models --check` and the vision preflight: tiny requests through the engine, stored nowhere.

The vision probe sends a small picture (a red square) to each model the registry says sees images
and reads how the server answers: a model that answers accepts images; a server that refuses them
(`ErrorClass.NO_VISION`, however it words it) makes `preflight_vision` stop the run before its first
stage with one message naming the model and the fix.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from memegauge.config import ModelRegistry
from memegauge.engine.core import Engine
from memegauge.engine.store import Store
from memegauge.files import user_cache_root
from memegauge.types import ChatRequest, ImagePart, InputError, Message, SamplingParams


async def check_models(registry: ModelRegistry, names: list[str]) -> list[dict[str, Any]]:
    """Ask each model to say OK, and each vision model to say OK about a picture; report ok / error
    class / latency / whether it accepts an image. An in-memory store keeps no trace of it."""
    checked = _quick(registry, names)
    engine = Engine(Store(":memory:"), checked)
    try:
        outcomes = await asyncio.gather(*(engine.chat(_probe(n), detect_refusal=False)
                                          for n in names))
        images = await asyncio.gather(*(_accepts_image(engine, checked.get(n)) for n in names))
    finally:
        await engine.aclose()
    return [{"model": n, "ok": o.ok, "error_class": o.error_class.value if o.error_class else "",
             "latency_s": o.record.latency_s, "image": image,
             "detail": (o.text or "")[:60].replace("\n", " ") if o.ok else o.record.error[:200]}
            for n, o, image in zip(names, outcomes, images)]


async def preflight_vision(registry: ModelRegistry, names: list[str], store: Store | None = None) -> None:
    """Stop (`PreflightFailed`, one message per model) when models declared to see images refuse them;
    say nothing otherwise (an endpoint that is down is the run's recorded failure, not a registry
    error). With `store`, an answered probe is cached there like any call (linked to no run), so a
    rerun (and the run after the command's preflight) sends none."""
    refusing = await refusing_images(registry, names, store)
    if refusing:
        from memegauge.models.preflight import PreflightFailed, Problem

        raise PreflightFailed([Problem(n, "its server refuses images", f"{registry.source}: {n}.vision",
                                       "add `vision: false` to its registry entry (it then reads meme text "
                                       "and caption), or serve a vision model") for n in refusing])


async def refusing_images(registry: ModelRegistry, names: list[str], store: Store | None = None) -> list[str]:
    """The models of `names` declared to see images whose server refuses a small picture (probed in
    parallel through `store`'s cache; an unanswered probe is no refusal)."""
    vision = [n for n in dict.fromkeys(names) if registry.get(n).vision and registry.get(n).backend == "openai"]
    if not vision:
        return []
    engine = Engine(store or Store(":memory:"), _quick(registry, vision))
    try:
        answers = await asyncio.gather(*(_image_answer(engine, n) for n in vision))
    finally:
        await engine.aclose()
    return [n for n, answer in zip(vision, answers) if answer == "no"]


async def _image_answer(engine: Engine, name: str) -> str:
    """'yes' (answered), 'no' (the server refuses pictures) or 'unknown' (no answer)."""
    try:
        outcome = await engine.chat(_image_probe(name), detect_refusal=False)
    except InputError:
        return "no"
    return "yes" if outcome.ok else "unknown"


async def _accepts_image(engine: Engine, spec) -> str:
    """'yes', 'no' (the server refuses pictures), 'text-only' (registry), or 'unknown' (no answer)."""
    if not spec.vision:
        return "text-only"
    return await _image_answer(engine, spec.name)


def _quick(registry: ModelRegistry, names: list[str]) -> ModelRegistry:
    return ModelRegistry({n: registry.get(n).model_copy(update={"max_retries": 1, "backoff_s": 0.5})
                          for n in names}, registry.source)


def _probe(name: str) -> ChatRequest:
    return ChatRequest(model=name, messages=[Message.user("Reply with the single word OK.")],
                       params=SamplingParams(temperature=0, max_tokens=5), stage="check")


def _image_probe(name: str) -> ChatRequest:
    return ChatRequest(model=name, messages=[Message.user(ImagePart.of(probe_image()),
                                                          "What colour is this square? One word.")],
                       params=SamplingParams(temperature=0, max_tokens=5), stage="check.image")


def probe_image() -> Path:
    """A 32×32 red PNG in the user cache (made once)."""
    path = user_cache_root() / "probe-red-32.png"
    if not path.exists():
        from PIL import Image

        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        Image.new("RGB", (32, 32), (220, 30, 30)).save(tmp, format="PNG")
        os.replace(tmp, path)
    return path


async def check_listed(registry: ModelRegistry, names: list[str]) -> list[dict[str, Any]]:
    """`models --check`: the preflight's free checks for every model, then the tiny requests for those
    that passed. A model whose extra (or weights package) is missing is reported `not installed` with
    its install command and not asked; the others are checked all the same."""
    from memegauge.models.preflight import find_problems

    found = await asyncio.gather(*(find_problems(registry, [n]) for n in names))
    problems = {n: p[0] for n, p in zip(names, found) if p}
    asked = {r["model"]: r for r in await check_models(registry, [n for n in names if n not in problems])} \
        if len(problems) < len(names) else {}
    return [asked.get(n) or _not_ready(problems[n]) for n in names]


def _not_ready(problem) -> dict[str, Any]:
    return {"model": problem.model, "ok": False, "latency_s": 0.0, "image": "unknown",
            "error_class": "preflight" if problem.installed else "not installed",
            "installed": problem.installed,
            "detail": f"{problem.what} (fix: {problem.fix})" if problem.installed else f"({problem.fix})"}


def user_named(registry: ModelRegistry) -> list[str]:
    """The models the user wrote: every entry of the registry file (a built-in it redefines too); with
    no file, the built-ins themselves (then they are what the user asks about)."""
    from memegauge.models.preflight import is_builtin

    if registry.source == "<built-in>":
        return registry.names()
    return [n for n in registry.names() if not is_builtin(registry, n)]
