"""The embedded model answers a request the same whatever else is asked at the same time, in whatever order,
with whatever was asked before and on however many threads (issue 44: two runs of `memegauge demo` gave
MemeQA 50% and 25% on this machine).

llama.cpp computes a token's logits differently by the batch it is computed in, so a prompt batched with
other requests' tokens, or continued from a cached prefix that was computed in another batch, got other
logits: up to 0.56 nats on a token's log-probability on this machine (`memegauge.models.embedded`, "Same
answers"; docs/models.md, `extra`). The backend now computes each request alone (one slot, no cached
prefix) unless `extra.batched`.

Both runs here are on this machine in one process, so their log-probabilities must agree to the last bit; the
tolerance is only the brief's habit for floats. Another machine may pick other kernels and other last bits.
"""

from __future__ import annotations

import asyncio

import pytest

from memegauge.config import load_registry
from memegauge.models import create_backend
from memegauge.models.embedded import shutdown_all
from memegauge.types import ChatRequest, Message, OutputKind, OutputSpec, SamplingParams, TextPart

PREFIX = ("Read the meme and answer the multiple-choice question with the letter of the best option.\n"
          "Meme text: \"WHEN THE CODE WORKS ON THE FIRST TRY\" — a cat stares at a laptop, eyes wide.\n")
QUESTIONS = [
    "What emotion does the cat show? A. surprise B. boredom C. anger D. sadness",
    "Who is the meme's audience? A. programmers B. chefs C. pilots D. farmers",
    "What is the meme's tone? A. ironic B. solemn C. angry D. fearful",
    "What does the picture add? A. a reaction B. a date C. a map D. a price",
]


def _requests() -> list[ChatRequest]:
    output = OutputSpec(kind=OutputKind.CHOICE, n_options=4, logprobs=True)
    return [ChatRequest(model="embedded", messages=[Message(role="user", content=[
                TextPart(text=f"{PREFIX}{question}\nAnswer:")])],
                        params=SamplingParams(temperature=0.0, max_tokens=2), output=output)
            for question in QUESTIONS]


def _answers(n_threads: int, n_parallel: int, together: bool) -> dict[int, tuple[str, dict[str, float]]]:
    """Each question's answer and first-token log-probabilities from a fresh server: one at a time in order
    (each continuing the previous prompt's cached prefix), or all at once in reverse order."""
    shutdown_all()
    spec = load_registry(None).get("embedded")
    spec = spec.model_copy(update={"serving": spec.serving.model_copy(
        update={"n_threads": n_threads, "n_parallel": n_parallel})})
    backend = create_backend(spec)
    requests = _requests()

    async def ask() -> dict[int, tuple[str, dict[str, float]]]:
        if together:
            order = list(reversed(range(len(requests))))
            results = await asyncio.gather(*(backend.complete(requests[i]) for i in order))
            return {i: (r.text, r.logprobs) for i, r in zip(order, results, strict=True)}
        return {i: ((r := await backend.complete(q)).text, r.logprobs) for i, q in enumerate(requests)}

    try:
        return asyncio.run(ask())
    finally:
        shutdown_all()


@pytest.mark.embedded
def test_answers_do_not_depend_on_neighbours_order_cached_prefixes_or_threads() -> None:
    alone = _answers(n_threads=1, n_parallel=1, together=False)
    together = _answers(n_threads=2, n_parallel=4, together=True)
    for i in range(len(QUESTIONS)):
        (text_a, logprobs_a), (text_b, logprobs_b) = alone[i], together[i]
        assert text_a == text_b, (i, text_a, text_b)
        assert logprobs_a and set(logprobs_a) == set(logprobs_b), (i, logprobs_a, logprobs_b)
        for token, value in logprobs_a.items():
            assert logprobs_b[token] == pytest.approx(value, rel=1e-9, abs=1e-9), (i, token, logprobs_a, logprobs_b)
