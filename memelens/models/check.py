"""`memelens models --check`: one tiny request per model, through the engine, stored nowhere."""

from __future__ import annotations

import asyncio
from typing import Any

from memelens.config import ModelRegistry
from memelens.engine.core import Engine
from memelens.engine.store import Store
from memelens.types import ChatRequest, Message, SamplingParams


async def check_models(registry: ModelRegistry, names: list[str]) -> list[dict[str, Any]]:
    """Ask each model to say OK; report ok / error class / latency. Uses an in-memory store so a
    health check leaves no trace in the user's run store."""
    checked = ModelRegistry({n: registry.get(n).model_copy(update={"max_retries": 1,
                                                                    "backoff_s": 0.5})
                             for n in names}, registry.source)
    engine = Engine(Store(":memory:"), checked)
    try:
        outcomes = await asyncio.gather(*(engine.chat(_probe(n), detect_refusal=False)
                                          for n in names))
    finally:
        await engine.aclose()
    return [{"model": n, "ok": o.ok, "error_class": o.error_class.value if o.error_class else "",
             "latency_s": o.record.latency_s,
             "detail": (o.text or "")[:60].replace("\n", " ") if o.ok else o.record.error[:200]}
            for n, o in zip(names, outcomes)]


def _probe(name: str) -> ChatRequest:
    return ChatRequest(model=name, messages=[Message.user("Reply with the single word OK.")],
                       params=SamplingParams(temperature=0, max_tokens=5), stage="check")
