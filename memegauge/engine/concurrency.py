"""`max_concurrency: auto`: a concurrency limit that finds a server's pace.

`ConcurrencyController` is pure (no I/O, no asyncio; the clock is injected): the engine tells it what
each attempt found (`on_success(latency, in_flight)`, `on_error(kind, retry_after, in_flight)`, and
where the server publishes it, `on_load(running, waiting)`) and reads back the limit. It is modelled on
Netflix's concurrency-limits (Gradient2, Vegas) with TCP's AIMD on overload:

* **latency** (Gradient2): the limit follows the ratio of the usual latency (`long_rtt`, an average
  over the last ~600 answers) to the current one (`rtt`, over about the last limit's worth):
  ``new = limit × gradient + √limit`` with ``gradient = clamp(tolerance × long_rtt / rtt, ½, 1)``,
  smoothed. While latency holds, the √limit term grows the limit (by about √limit × limit × smoothing
  per round trip: from 8 past 48 in about four); when requests start to queue at the server, the
  current latency outruns the usual one and the gradient holds or cuts the limit. The usual latency,
  not the shortest ever seen (Vegas), is the reference: a client slowed by a busy machine adds the
  same lag to every answer, which the shortest one misses and would read as a queue. The limit grows
  only while it is used (at least half of it in flight), so a stage that sends few calls does not
  inflate it.
* **overload** (429, 503 and other server errors, timeouts): multiplicative decrease (× `backoff` of
  what was in flight), at most once per round trip (the burst of errors one overshoot causes counts
  once); a 429 also makes that the *cap*, so the limit settles under a hard limit instead of probing
  it again at every round trip. The first cut of a storm (overload after `cap_hold_s` of calm) marks
  the level to recover to: while calls succeed the cap doubles each round trip (a limit's worth of
  answers without an overload) back up to it, as TCP's slow start does, so a short 429 storm costs a
  few round trips, not one step per `cap_hold_s`; a 429 met on the way lowers that level. A storm that
  refused even a single call in flight taught nothing about calls in flight (a quota, an outage): the cap
  then doubles back to the limit before the storm and is dropped, and latency leads again. Above it
  the cap is raised by one after `cap_hold_s` without an overload error (a server's limit may have
  been raised). `Retry-After` pauses new sends that long, at most `MAX_PAUSE_S` (a longer or
  non-finite value is clamped: the call then fails as a classified rate-limit error, retried within
  its bounds, and no run waits on a server's word for ever).
* **load published by the server** (vLLM's/SGLang's `/metrics`: requests running and waiting):
  requests waiting means the server's batch is full; the limit is held at what it runs plus a short
  queue (√running), and raised by its square root at each reading that finds none waiting.

Answers never depend on the limit (the engine's cache keys and records do not read it), so figures
are the same at any pace; only wall time changes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from collections.abc import Callable

from memegauge.errors import MAX_PAUSE_S, clamp_pause  # noqa: F401  (MAX_PAUSE_S: documented here too)

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
    tolerance: float = 1.5  # current latency up to this × the usual one counts as no queue
    smoothing: float = 0.2  # the weight of each answer's new limit
    backoff: float = 0.7  # × the limit on an overload error
    cap_hold_s: float = 30.0  # an overload cap is raised by one after this long without overload
    long_window: int = 600  # answers the usual latency is averaged over
    explore: float = 1.5  # the limit grows to at most this × the limit that last raised throughput


@dataclass
class ConcurrencyController:
    """One model endpoint's auto limit (see the module docstring). `limit` is the current limit."""

    settings: ControllerSettings = field(default_factory=ControllerSettings)
    clock: Callable[[], float] = time.monotonic
    value: float = 0.0  # the limit as a float (grows in fractions); `limit` rounds it
    long_rtt: float = 0.0  # the usual latency, averaged over about `long_window` answers
    rtt: float = 0.0  # recent latency, averaged over about `limit` answers
    cap: float = math.inf  # the overload cap (just below what was in flight at the last 429/503)
    paused_until: float = 0.0  # no new sends before this (`Retry-After`)
    load_cap: float = math.inf  # from the server's own queue (`on_load`)
    overloads: int = 0  # overload errors seen
    decreases: int = 0  # times the limit was cut
    peak: int = 0  # the highest limit reached
    load_reports: int = 0  # times the server's own load was read (`on_load`)
    load_holds: int = 0  # of those, times requests were waiting at the server
    best_rate: float = 0.0  # the most answers a second over a round trip (slowly forgotten)
    best_limit: int = 0  # the smallest limit that brought it
    recover_to: float = math.inf  # after a storm, the cap doubles back up to this (its first cut)
    recoveries: int = 0  # times the cap was doubled on the way back
    _wins: int = 0  # answers since the last overload or cap change
    _climbed: bool = False  # the cap has doubled since the last cut
    _before: float = 0.0  # the limit when the storm began
    _not_a_limit: bool = False  # this storm refused even one call in flight (a quota, not a concurrency limit)
    _epoch_start: float = 0.0
    _epoch_n: int = 0
    _last_cut: float = -math.inf
    _last_overload: float = -math.inf

    def __post_init__(self) -> None:
        self.value = self.value or self.settings.initial
        self.peak = self.limit
        self._epoch_start = self.clock()

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
        gradient = min(1.0, max(0.5, self.settings.tolerance * self.long_rtt / self.rtt))
        growth = math.sqrt(self.value) if self._throughput_grows() else 0.0
        target = self.value * gradient + growth
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
        calm = now - self._last_overload >= self.settings.cap_hold_s  # the first overload of a storm
        self._last_overload, self._wins = now, 0
        pause = clamp_pause(retry_after)
        if pause:
            self.paused_until = max(self.paused_until, now + pause)
        if now - self._last_cut >= (self.rtt or 0.0):  # one cut per round trip: one overshoot's burst counts once
            self._last_cut = now
            self.decreases += 1
            cut = max(float(self.settings.floor), min(self.value, in_flight) * self.settings.backoff)
            if kind == "rate_limit":  # the server refused: it takes fewer than were in flight
                if calm or self.recover_to == math.inf:
                    self.recover_to, self._before, self._not_a_limit = cut, float(self.limit), False
                elif self._climbed:  # refused again on the way back: the level to recover to is lower
                    self.recover_to = min(self.recover_to, cut)
                if in_flight <= self.settings.floor:  # refused with one call in flight: a quota or a storm,
                    self._not_a_limit = True  # not a limit on calls in flight: recover to where it was
                self.cap = min(self.cap, cut)
                self._climbed = False
            self.value = self._bounded(cut)
        return self.limit

    def on_load(self, running: int, waiting: int) -> int:
        """The server's own count of requests running and waiting (all its clients')."""
        self.load_reports += 1
        if waiting > 0:
            self.load_holds += 1
            self.load_cap = max(self.settings.floor, running + math.sqrt(max(running, 1)))
            self.value = self._bounded(min(self.value, self.load_cap))
        elif self.load_cap < math.inf:  # none waits: probe higher, as the latency rule does
            self.load_cap += math.sqrt(self.load_cap)
            if self.load_cap >= self.settings.ceiling:
                self.load_cap = math.inf
        return self.limit

    def pause_left(self) -> float:
        """Seconds before a new call may be sent (a `Retry-After` in force), 0 when none."""
        return max(0.0, self.paused_until - self.clock())

    # ---- internals ------------------------------------------------------------------------------

    def _observe(self, latency: float) -> None:
        latency = max(latency, 1e-6)
        weight = 2.0 / (self.limit + 1)  # about the last limit's answers: one round trip
        self.rtt = latency if not self.rtt else self.rtt * (1 - weight) + latency * weight
        long_weight = 2.0 / (self.settings.long_window + 1)
        self.long_rtt = latency if not self.long_rtt else self.long_rtt * (1 - long_weight) + latency * long_weight
        if self.long_rtt > 2 * self.rtt:  # a queue has drained: the usual latency is back to this
            self.long_rtt = 0.95 * self.long_rtt

    def _throughput_grows(self) -> bool:
        """Whether more calls in flight still bring more answers a second: throughput is measured
        over each round trip (`limit` answers); the limit may grow to `explore` × the smallest limit
        that brought the best throughput, and no further until a higher one brings more. A client
        that cannot go faster (a busy machine) or a server past its batch then stops the growth even
        where latency hides it."""
        now = self.clock()
        self._epoch_n += 1
        if self._epoch_n >= max(self.limit, 8) and now > self._epoch_start:
            rate = self._epoch_n / (now - self._epoch_start)
            self._epoch_start, self._epoch_n = now, 0
            if rate >= 1.05 * self.best_rate:
                self.best_limit = self.limit
            self.best_rate = max(rate, self.best_rate * 0.999)  # slowly forgotten: the server may change
        return self.limit < self.settings.explore * max(self.best_limit, self.settings.initial)

    def _raise_cap(self) -> None:
        now = self.clock()
        if self.cap == math.inf:
            return
        self._wins += 1
        goal = max(self.recover_to, self._before) if self._not_a_limit else self.recover_to
        if self.cap < goal and self._wins >= self.cap:  # a round trip of answers, no overload
            self.cap = min(goal, self.cap * 2)
            self.value = max(self.value, self.cap)  # the level recovered to was served before the storm
            self._wins, self._climbed = 0, True
            self.recoveries += 1
            if self._not_a_limit and self.cap >= goal:  # no limit on calls in flight was learnt: none is kept
                self.cap, self.recover_to, self._not_a_limit = math.inf, math.inf, False
        elif now - self._last_overload >= self.settings.cap_hold_s:
            self.cap += 1  # probe: the server's limit may have been raised
            self._last_overload = now
            if self.cap >= self.settings.ceiling:
                self.cap = math.inf

    def _bounded(self, value: float) -> float:
        """Within floor and ceiling, and at most one above a cap (growth beyond it is not used)."""
        top = min(float(self.settings.ceiling), self.cap + 1, self.load_cap + 1)
        return min(top, max(float(self.settings.floor), value))
