"""The call engine's scripted models: `m` (rates 7 and counts its calls), `flaky` (rate-limited two
calls in three), `bad` (a bad request), `refuser`, `garbled` (no rating) and `slow` (registered by the
test that needs it). `register_engine_scripts()` registers them and returns the call counter; the
`engine_scripts` fixture (tests/conftest.py) does it per test."""

from __future__ import annotations

from helpers.models import scripted_registry
from memegauge.models.spec import ModelRegistry
from memegauge.models.scripted import register_script
from memegauge.types import ChatRequest, ErrorClass, Message, ModelCallError

ENGINE_MODELS = ("m", "flaky", "bad", "slow", "refuser", "garbled")


def engine_registry(**overrides) -> ModelRegistry:
    """The engine's models, scripted, with millisecond backoffs; `overrides` apply to every entry."""
    return scripted_registry(*ENGINE_MODELS, **{"backoff_s": 0.001, "backoff_max_s": 0.01, **overrides})


def request(text: str = "Rate this. End with Rating: [[n]]", model: str = "m", **kw) -> ChatRequest:
    return ChatRequest(model=model, messages=[Message.user(text)], **{"stage": "test", **kw})


def register_engine_scripts() -> dict[str, int]:
    counter = {"flaky": 0, "m": 0}

    def m(req: ChatRequest) -> str:
        counter["m"] += 1
        return f"Fine answer #{req.sample_index}. Rating: [[7]]"

    def flaky(req: ChatRequest) -> str:
        counter["flaky"] += 1
        if counter["flaky"] % 3:
            raise ModelCallError(ErrorClass.RATE_LIMIT, "slow down", retry_after=0.001)
        return "Rating: [[5]]"

    def bad(req: ChatRequest) -> str:
        raise ModelCallError(ErrorClass.BAD_REQUEST, "context too long")

    def refuser(req: ChatRequest) -> str:
        return "I'm sorry, but I can't help with that."

    def garbled(req: ChatRequest) -> str:
        return "no number here"

    for name, fn in {"m": m, "flaky": flaky, "bad": bad, "refuser": refuser,
                     "garbled": garbled}.items():
        register_script(name, fn)
    return counter
