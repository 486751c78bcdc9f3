"""The models' tiny requests, through the engine: `models --check`'s ping and the picture probe.

The picture probe sends a small picture (a red square) to each model the registry says sees images
and reads how the server answers: a model that answers accepts images; a server that refuses them
(`ErrorClass.NO_VISION`, however it words it) is reported by `refusing_images`, and the preflight
(`memegauge.engine.preflight`) stops the run before its first call with one message naming the model.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any
from collections.abc import Callable

from memegauge.engine.core import Engine
from memegauge.engine.store import Store
from memegauge.files import user_cache_root
from memegauge.models.spec import ModelRegistry
from memegauge.types import ChatRequest, ImagePart, InputError, Message, SamplingParams


async def check_models(registry: ModelRegistry, names: list[str]) -> list[dict[str, Any]]:
    """Ask each model to say OK, and each vision model to say OK about a picture; report ok / error
    class / latency / whether it accepts an image. An in-memory store keeps no trace of it."""
    checked = _quick(registry, names)
    engine = Engine(Store(":memory:"), checked)
    try:
        outcomes = await asyncio.gather(*(engine.chat(_probe(n), detect_refusal=False)
                                          for n in names))
        # a model that did not answer the text probe is not shown a picture: its server is down or
        # rate-limited, and a Retry-After would hold the picture probe for up to a minute
        images = await asyncio.gather(*(_accepts_image(engine, checked.get(n)) if o.ok else _unasked()
                                        for n, o in zip(names, outcomes, strict=True)))
    finally:
        await engine.aclose()
    return [{"model": n, "ok": o.ok, "error_class": o.error_class.value if o.error_class else "",
             "latency_s": o.record.latency_s, "image": image,
             "detail": (o.text or "")[:60].replace("\n", " ") if o.ok else o.record.error[:200]}
            for n, o, image in zip(names, outcomes, images, strict=True)]


async def refusing_images(registry: ModelRegistry, names: list[str], store: Store | None = None,
                          unanswered: Callable[[str, str], None] | None = None) -> dict[str, str]:
    """{model: the server's words} for the models of `names` declared to see images whose server refuses
    a small picture (probed in parallel through `store`'s cache; an unanswered probe is no refusal, told
    to `unanswered(model, why)` when given)."""
    vision = [n for n in dict.fromkeys(names) if registry.get(n).vision and registry.get(n).backend == "openai"]
    if not vision:
        return {}
    engine = Engine(store or Store(":memory:"), _quick(registry, vision))
    try:
        answers = await asyncio.gather(*(_image_answer(engine, n) for n in vision))
    finally:
        await engine.aclose()
    for n, (answer, words) in zip(vision, answers, strict=True):
        if answer == "unknown" and unanswered:
            unanswered(n, words)
    return {n: words for n, (answer, words) in zip(vision, answers, strict=True) if answer == "no"}


async def _image_answer(engine: Engine, name: str) -> tuple[str, str]:
    """'yes' (answered), 'no' (the server refuses pictures, with its words) or 'unknown' (no answer,
    with its error class and message)."""
    try:
        outcome = await engine.chat(_image_probe(name), detect_refusal=False)
    except InputError as exc:
        return "no", exc.what
    if outcome.ok:
        return "yes", ""
    error_class = outcome.error_class.value if outcome.error_class else "no answer"
    return "unknown", (outcome.record.error or error_class)[:120]


async def _unasked() -> str:
    return "unknown"


async def _accepts_image(engine: Engine, spec) -> str:
    """'yes', 'no' (the server refuses pictures), 'text-only' (registry), or 'unknown' (no answer)."""
    if not spec.vision:
        return "text-only"
    answer, _ = await _image_answer(engine, spec.name)
    return answer


def _quick(registry: ModelRegistry, names: list[str]) -> ModelRegistry:
    """The models as probed: one request each, no retry (a rate-limited server's Retry-After would
    otherwise hold the check, silently, for up to a minute per retry)."""
    return ModelRegistry({n: registry.get(n).model_copy(update={"max_retries": 0, "backoff_s": 0.5})
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

