"""Whether a model's server returns log-probabilities, asked before a run whose figures need them (AUROC).

One tiny yes/no question with `logprobs` asked, through the engine and the run's store (so the run, and every
rerun, replays it: a second eval sends no probe). A model that answers without them is named; one that does not
answer at all is not (its failure is the run's own, recorded and retried there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from memegauge.types import ChatRequest, Message, OutputSpec, SamplingParams

PROBE = "Is the sky blue on a clear day? Answer format: yes or no."


def _probe(model: str) -> ChatRequest:
    return ChatRequest(model=model, messages=[Message.user(PROBE)], params=SamplingParams(temperature=0, max_tokens=1),
                       output=OutputSpec(logprobs=True), stage="check.logprobs")


async def without_logprobs(registry: Any, models: list[str], open_store: Callable[[], Any] | None = None) -> list[str]:
    """The models of `models` whose answer to the probe came without log-probabilities, in order."""
    if not models:
        return []
    from memegauge.engine.core import Engine  # lazy: the engine only when a run needs the probe
    from memegauge.engine.store import Store

    engine = Engine(open_store() if open_store else Store(":memory:"), registry)
    try:
        outcomes = await asyncio.gather(*(engine.chat(_probe(m), detect_refusal=False) for m in models))
    finally:
        await engine.aclose()
    return [m for m, o in zip(models, outcomes, strict=True) if o.ok and not o.record.logprobs]
