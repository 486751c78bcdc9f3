"""Per-model admission control: a concurrency cap and a requests-per-minute pacer."""

from __future__ import annotations

import asyncio
import time


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


class ModelGate:
    """Concurrency semaphore + rpm pacer for one model; held only while a request is in flight."""

    def __init__(self, max_concurrency: int, rpm: float | None) -> None:
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.pacer = RequestPacer(rpm)

    async def __aenter__(self) -> "ModelGate":
        await self.semaphore.acquire()
        try:
            await self.pacer.wait()
        except BaseException:
            self.semaphore.release()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.semaphore.release()
