"""Per-model admission control: a concurrency cap (fixed, or `auto`: moved by a controller per
replica, `memegauge.engine.concurrency`) and a requests-per-minute pacer."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from contextlib import asynccontextmanager
from collections.abc import AsyncIterator

from memegauge.engine.concurrency import ConcurrencyController


class RequestPacer:
    """Spaces request starts at least 60/rpm seconds apart (a leaky bucket with no burst).

    No burst on purpose: providers count rpm over sliding windows, and a burst at start is the
    classic way to earn a 429 storm.
    """

    def __init__(self, rpm: float | None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


URGENT = 1_000_000
"""The priority of a critical path's calls (above any bulk priority a method uses)."""


class ModelGate:
    """Concurrency cap + rpm pacer for one model; a slot is held only while a request is in flight.

    Waiters are served by priority, then in arrival order: a critical-path call (an AdamMeme
    refinement step, whose chain waits for it) goes ahead of bulk calls queued for the same slots.
    With one priority it is a plain FIFO semaphore. `async with gate.slot(p):` holds a slot, taken at
    priority p. (Keeping slots free for urgent calls was measured and
    did not shorten AdamMeme's wall time: a waiting urgent call gets the next slot freed.)"""

    def __init__(self, max_concurrency: int, rpm: float | None,
                 controllers: dict[str, ConcurrencyController] | None = None) -> None:
        self.fixed = max_concurrency
        self.controllers = controllers or {}  # `auto`: one per replica (URL); their limits add up
        self.in_use = 0
        self.watcher: asyncio.Task[str] | None = None  # reads the server's published load (auto)
        self.waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # (-priority, arrival, future)
        self.arrivals = itertools.count()
        self.pacer = RequestPacer(rpm)

    @property
    def capacity(self) -> int:
        """The calls that may be in flight now: the fixed limit, or the replicas' auto limits."""
        if not self.controllers:
            return self.fixed
        return sum(c.limit for c in self.controllers.values())

    def limits(self) -> dict[str, int]:
        """The auto limit in force per replica URL ({} for a fixed limit)."""
        return {url: c.limit for url, c in self.controllers.items()}

    @asynccontextmanager
    async def slot(self, priority: int = 0) -> AsyncIterator[ModelGate]:
        await self._acquire(priority)
        try:
            pause = min((c.pause_left() for c in self.controllers.values()), default=0.0)
            if pause:  # a Retry-After in force: the server asked for a pause
                await asyncio.sleep(pause)
            await self.pacer.wait()
            yield self
        finally:
            self._release()

    def succeeded(self, replica: str, latency: float) -> None:
        """An attempt was answered: the replica's auto limit learns from its latency."""
        controller = self._controller(replica)
        if controller is not None:
            controller.on_success(latency, self._in_flight(controller))
            self._wake()

    def failed(self, replica: str, kind: str, retry_after: float | None) -> None:
        """An attempt failed with error class `kind`: an overload lowers the replica's auto limit."""
        controller = self._controller(replica)
        if controller is not None:
            controller.on_error(kind, retry_after, self._in_flight(controller))

    def loaded(self, replica: str, running: int, waiting: int) -> None:
        """A replica's own count of requests running and waiting (its `/metrics`)."""
        controller = self._controller(replica)
        if controller is not None:
            controller.on_load(running, waiting)
            self._wake()

    def _controller(self, replica: str) -> ConcurrencyController | None:
        if not self.controllers:
            return None
        return self.controllers.get(replica) or next(iter(self.controllers.values()))

    def _in_flight(self, controller: ConcurrencyController) -> int:
        """Calls in flight at this replica: its share of the gate's (replicas are picked by load)."""
        if len(self.controllers) == 1:
            return self.in_use
        return max(1, round(self.in_use * controller.limit / max(self.capacity, 1)))

    async def _acquire(self, priority: int) -> None:
        if self.in_use < self.capacity:  # a free slot means no live waiter: slots pass on at release
            self.in_use += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self.waiters, (-priority, next(self.arrivals), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # the slot was handed over as we were cancelled
                self._release()
            else:
                waiter.cancel()  # left in the heap, skipped when reached
            raise

    def _release(self) -> None:
        """Free the slot and hand free slots to the first live waiters by priority."""
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand slots to live waiters, by priority, while the capacity (which `auto` moves) allows."""
        while self.waiters and self.in_use < self.capacity:
            _, _, waiter = heapq.heappop(self.waiters)
            if not waiter.done():
                waiter.set_result(None)
                self.in_use += 1
