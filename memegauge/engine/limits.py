"""Per-model admission control: a concurrency cap and a requests-per-minute pacer."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from contextlib import asynccontextmanager
from collections.abc import AsyncIterator


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

    def __init__(self, max_concurrency: int, rpm: float | None) -> None:
        self.capacity = max_concurrency
        self.in_use = 0
        self.waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # (-priority, arrival, future)
        self.arrivals = itertools.count()
        self.pacer = RequestPacer(rpm)

    @asynccontextmanager
    async def slot(self, priority: int = 0) -> AsyncIterator[ModelGate]:
        await self._acquire(priority)
        try:
            await self.pacer.wait()
            yield self
        finally:
            self._release()

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
        """Hand the slot to the first live waiter by priority, or free it."""
        while self.waiters:
            _, _, waiter = heapq.heappop(self.waiters)
            if not waiter.done():
                waiter.set_result(None)  # the slot passes on: `in_use` is unchanged
                return
        self.in_use -= 1
