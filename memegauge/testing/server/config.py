"""What the test server is set to do (`ServerConfig`) and what it counts (`Stats`); hashing helpers."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any



HOST = "127.0.0.1"
FAULT_KINDS: tuple[str, ...] = ("429", "500", "timeout", "truncated", "garbage")
DEFAULT_MODELS: tuple[str, ...] = ("memegauge-test",)
MAX_BODY_BYTES = 64 * 1024 * 1024  # base64 images make big bodies


@dataclass
class ServerConfig:
    """How the server behaves. Fields may be changed while it runs (they are read per request)."""

    latency_ms: float = 0.0
    fault_rate: float = 0.0
    seed: int = 0
    faults: tuple[str, ...] = FAULT_KINDS
    hang_s: float = 30.0
    retry_after: float = 0.1
    models: tuple[str, ...] = DEFAULT_MODELS
    shutdown_timeout: float = 0.5  # stop() waits this long for in-flight (e.g. hanging) requests
    style: str = "strict"  # "realistic": replies shaped like real models' (memegauge.testing.realistic)
    text_only: tuple[str, ...] = ()  # models that answer an image with HTTP 500, as llama.cpp does
    refusers: tuple[str, ...] = ()  # realistic style: models that refuse 30% of analysis prompts
    no_logprobs: tuple[str, ...] = ()  # models whose server ignores `logprobs` (as Ollama and many servers do)
    capacity: int = 0  # batching: at most this many requests served at once, each for latency_ms (a
    # step); the rest wait their turn, so latency grows beyond it (0: no limit, every request latency_ms)
    hard_cap: int = 0  # a request arriving with this many already in flight gets 429 (0: never)

    def __post_init__(self) -> None:
        if isinstance(self.faults, str):
            self.faults = tuple(f.strip() for f in self.faults.split(",") if f.strip())
        self.faults = tuple(self.faults)
        self.text_only, self.refusers = tuple(self.text_only), tuple(self.refusers)
        self.no_logprobs = tuple(self.no_logprobs)
        if self.style not in ("strict", "realistic"):
            raise ValueError(f"unknown style {self.style!r}; choose strict or realistic")
        self.models = tuple(self.models)
        unknown = [f for f in self.faults if f not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; choose from {','.join(FAULT_KINDS)}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be in [0, 1], got {self.fault_rate}")
        if self.capacity < 0 or self.hard_cap < 0:
            raise ValueError("capacity and hard_cap must be >= 0")
        if self.latency_ms < 0 or self.hang_s < 0 or self.retry_after < 0:
            raise ValueError("latency_ms, hang_s and retry_after must be >= 0")


class Stats:
    """Counters, mutated on the server's loop and read (as a snapshot) from any thread.

    Snapshot keys: ``requests`` (chat requests received), ``completed`` (chat answers sent with 200,
    including truncated/garbage/late ones), ``bad_requests``, ``faults`` ({kind: n} for all five
    kinds), ``models`` ({model: n}), ``images``, ``formats`` ({answer generator: n}),
    ``prompt_tokens``, ``completion_tokens``, ``in_flight``, ``max_in_flight``, ``cancelled``
    (handlers ended because the client went away), ``streamed``, ``overloaded`` (429s for ``hard_cap``,
    not counted in ``faults``), ``waiting`` (requests queued for a batching slot right now).
    """

    _INTS = (
        "requests",
        "completed",
        "bad_requests",
        "images",
        "prompt_tokens",
        "completion_tokens",
        "in_flight",
        "max_in_flight",
        "cancelled",
        "streamed",
        "image_mime_mismatch",
        "overloaded",
        "waiting",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            for name in self._INTS:
                setattr(self, name, 0)
            self.faults: dict[str, int] = {kind: 0 for kind in FAULT_KINDS}
            self.models: dict[str, int] = {}
            self.formats: dict[str, int] = {}
            self.requests_with_image: dict[str, int] = {}
            self.truths: dict[str, dict[str, Any]] = {}

    def record_truth(self, key: str, truth: dict[str, Any]) -> None:
        with self._lock:
            self.truths[key] = truth

    def add(self, name: str, value: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + value)

    def count(self, table: str, key: str) -> None:
        with self._lock:
            counts = getattr(self, table)
            counts[key] = counts.get(key, 0) + 1

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            if self.in_flight > self.max_in_flight:
                self.max_in_flight = self.in_flight

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {name: getattr(self, name) for name in self._INTS}
            out["faults"] = dict(self.faults)
            out["models"] = dict(self.models)
            out["formats"] = dict(self.formats)
            out["requests_with_image"] = dict(self.requests_with_image)
            out["truths"] = dict(self.truths)
            return out


def _h64(*parts: str) -> int:
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def model_quality(model: str) -> float:
    """A stable per-model quality in [0, 1), from the model name only (independent of the seed)."""
    return (_h64("quality", model) % 10_000) / 10_000
