"""`max_concurrency: auto`: a concurrency limit that finds a server's pace.

`ConcurrencyController` is pure (no I/O, no asyncio; the clock is injected): the engine tells it what
each attempt found (`on_success(latency, in_flight)`, `on_error(kind, retry_after, in_flight)`, and
where the server publishes it, `on_load(running, waiting)`) and reads back the limit. It is modelled on
Netflix's concurrency-limits (Gradient2, Vegas) with TCP's AIMD on overload:

* **latency**: the limit follows the ratio of the shortest latency seen lately (`min_rtt`, the
  server's pace with no queue) to the current one (an average over about the last limit's worth of
  answers): ``new = limit × gradient + √limit`` with ``gradient = clamp(tolerance × min_rtt / rtt,
  ½, 1)``, smoothed. While latency holds, the √limit term grows the limit (by about √limit × limit ×
  smoothing per round trip: fast from 8 to a batching server's hundreds); once requests queue at the
  server, latency rises with the queue and the gradient holds the limit where the queue stays short.
  The limit grows only while it is used (at least half of it in flight), so a stage that sends few
  calls does not inflate it.
* **overload** (429, 503 and other server errors, timeouts): multiplicative decrease (× `backoff`), at
  most once per round trip (the burst of errors one overshoot causes counts once), and a *cap* just
  below the number in flight when it happened, so the limit settles under a hard limit instead of
  probing it again at every round trip; the cap is raised by one after `cap_hold_s` without an
  overload error (a server's limit may have been raised). `Retry-After` pauses new sends that long.
* **load published by the server** (vLLM's/SGLang's `/metrics`: requests running and waiting):
  requests waiting means the server's batch is full; the limit is held at what it runs plus a short
  queue (√running) until none wait.

Answers never depend on the limit (the engine's cache keys and records do not read it), so figures
are the same at any pace; only wall time changes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from collections.abc import Callable

DEFAULT_CEILING = 256
"""`max_concurrency_ceiling` when the registry names none: auto never goes above it."""
DEFAULT_FIXED = 8
"""The limit of `auto` for a model served in this process (no server to pace): today's default."""
OVERLOAD = ("rate_limit", "server", "timeout")
"""Error classes (`ErrorClass` values) that mean the server is overloaded."""


@dataclass
class ControllerSettings:
    """How an auto limit moves (defaults tuned on bench/concurrency.py's batching server)."""

    initial: float = 8.0  # the limit before anything is known (today's fixed default)
    ceiling: int = DEFAULT_CEILING  # never above (the registry's `max_concurrency_ceiling`)
    floor: int = 1  # never below
    tolerance: float = 1.1  # latency up to this × min_rtt counts as no queue (client jitter)
    smoothing: float = 0.2  # the weight of each answer's new limit
    backoff: float = 0.7  # × the limit on an overload error
    cap_hold_s: float = 30.0  # an overload cap is raised by one after this long without overload
    min_rtt_window: int = 10_000  # answers per window of min_rtt (the shorter of two windows is used):
    # long, because under a steady queue no answer shows the unloaded pace, and a short window would
    # let the queue become the new "no queue" and the limit creep up


@dataclass
class ConcurrencyController:
    """One model endpoint's auto limit (see the module docstring). `limit` is the current limit."""

    settings: ControllerSettings = field(default_factory=ControllerSettings)
    clock: Callable[[], float] = time.monotonic
    value: float = 0.0  # the limit as a float (grows in fractions); `limit` rounds it
    min_rtt: float = math.inf  # shortest latency of the current and the previous window
    rtt: float = 0.0  # recent latency, averaged over about `limit` answers
    cap: float = math.inf  # the overload cap (just below what was in flight at the last 429/503)
    paused_until: float = 0.0  # no new sends before this (`Retry-After`)
    load_cap: float = math.inf  # from the server's own queue (`on_load`)
    overloads: int = 0  # overload errors seen
    decreases: int = 0  # times the limit was cut
    peak: int = 0  # the highest limit reached
    load_reports: int = 0  # times the server's own load was read (`on_load`)
    _window_min: float = math.inf
    _previous_min: float = math.inf
    _window_n: int = 0
    _last_cut: float = -math.inf
    _last_overload: float = -math.inf

    def __post_init__(self) -> None:
        self.value = self.value or self.settings.initial
        self.peak = self.limit

    @property
    def limit(self) -> int:
        """The calls that may be in flight now."""
        bound = min(self.value, self.cap, self.load_cap, self.settings.ceiling)
        return max(self.settings.floor, int(bound))

    def on_success(self, latency: float, in_flight: int) -> int:
        """An answer came after `latency` seconds with `in_flight` calls (it included) under way."""
        self._observe(latency)
        self._raise_cap()
        if in_flight * 2 < self.limit:  # not using the limit: its latency says nothing about more
            return self.limit
        gradient = min(1.0, max(0.5, self.settings.tolerance * self.min_rtt / self.rtt))
        target = self.value * gradient + math.sqrt(self.value)
        self.value = self._bounded(self.value * (1 - self.settings.smoothing) + target * self.settings.smoothing)
        self.peak = max(self.peak, self.limit)
        return self.limit

    def on_error(self, kind: str, retry_after: float | None, in_flight: int) -> int:
        """An attempt failed with error class `kind` (an `ErrorClass` value); only overload errors
        (`OVERLOAD`) move the limit."""
        if kind not in OVERLOAD:
            return self.limit
        now = self.clock()
        self.overloads += 1
        self._last_overload = now
        if retry_after:
            self.paused_until = max(self.paused_until, now + retry_after)
        if kind == "rate_limit":  # the server refused: it takes fewer than this many at once
            self.cap = max(self.settings.floor, min(self.cap, in_flight - 1))
        if now - self._last_cut >= (self.rtt or 0.0):  # one cut per round trip
            self._last_cut = now
            self.decreases += 1
            self.value = self._bounded(min(self.value, in_flight) * self.settings.backoff)
        return self.limit

    def on_load(self, running: int, waiting: int) -> int:
        """The server's own count of requests running and waiting (all its clients')."""
        self.load_reports += 1
        if waiting > 0:
            self.load_cap = max(self.settings.floor, running + math.sqrt(max(running, 1)))
            self.value = self._bounded(min(self.value, self.load_cap))
        else:
            self.load_cap = math.inf
        return self.limit

    def pause_left(self) -> float:
        """Seconds before a new call may be sent (a `Retry-After` in force), 0 when none."""
        return max(0.0, self.paused_until - self.clock())

    # ---- internals ------------------------------------------------------------------------------

    def _observe(self, latency: float) -> None:
        latency = max(latency, 1e-6)
        self._window_min = min(self._window_min, latency)
        self._window_n += 1
        if self._window_n >= self.settings.min_rtt_window:  # forget old minima: the server may slow
            self._previous_min, self._window_min, self._window_n = self._window_min, math.inf, 0
        self.min_rtt = min(self._window_min, self._previous_min)
        weight = 2.0 / (self.limit + 1)  # about the last limit's answers: one round trip
        self.rtt = latency if not self.rtt else self.rtt * (1 - weight) + latency * weight

    def _raise_cap(self) -> None:
        now = self.clock()
        if self.cap < math.inf and now - self._last_overload >= self.settings.cap_hold_s:
            self.cap += 1  # probe: the server's limit may have been raised
            self._last_overload = now
            if self.cap >= self.settings.ceiling:
                self.cap = math.inf

    def _bounded(self, value: float) -> float:
        """Within floor and ceiling, and at most one above a cap (growth beyond it is not used)."""
        top = min(float(self.settings.ceiling), self.cap + 1, self.load_cap + 1)
        return min(top, max(float(self.settings.floor), value))
