"""Ctrl-C keeps what is paid for.

Without this, Python's first Ctrl-C cancels every call in flight: answers the provider is already
computing (and will bill) are thrown away, and the resumed run asks for them again. While a run is
open (`memegauge.engine.open_run`) the first Ctrl-C instead:

* stops sending: no new call and no retry leaves the process (each waits, then is cancelled);
* waits up to the grace period (`--grace`, default 10 s) for the calls already sent, storing each
  answer as it arrives;
* then leaves the way Python's Ctrl-C does (the run is marked `interrupted`, exit 130).

A second Ctrl-C leaves at once. Outside the main thread nothing is installed and Ctrl-C behaves as
before; when SIGINT is ignored (a job started with `&` from a script, `nohup`) Ctrl-C stays ignored.

SIGTERM (what SLURM, `timeout` and Docker send) is treated as Ctrl-C (`sigterm_as_ctrl_c`): while a run is
open it drains as the first Ctrl-C does, whatever SIGINT's disposition (an ignored SIGINT included), so
the answers in flight are stored, the run is marked `interrupted` and the message says how to resume;
outside a run it is handed to whatever handles SIGINT; the command then exits 143 (128 + SIGTERM)
rather than 130, as such schedulers expect.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from contextlib import contextmanager
from typing import Any
from collections.abc import Callable, Iterator

from memegauge.signals import _DRAINER, terminated  # noqa: F401 (terminated: the engine's API)

log = logging.getLogger(__name__)

DEFAULT_GRACE_S = 10.0
_GRACE_S = [DEFAULT_GRACE_S]


def set_grace(seconds: float | None) -> None:
    """The grace period of the runs this process opens from now on (`memegauge --grace`)."""
    _GRACE_S[0] = DEFAULT_GRACE_S if seconds is None else max(0.0, float(seconds))


def grace() -> float:
    return _GRACE_S[0]


class StopSignal:
    """A run's stop state, shared by every call of its engine: whether sending is stopped, and which
    calls were sent and are not yet stored (`in_flight`)."""

    def __init__(self, grace_s: float | None = None) -> None:
        self.grace_s = grace() if grace_s is None else grace_s
        self.stopping = False
        self.in_flight: set[str] = set()
        self._settled: asyncio.Event | None = None

    async def send(self, key: str) -> None:
        """Called just before a call is sent: parks it (until the run is cancelled) once stopping,
        else counts it in flight until `settled(key)`."""
        if self.stopping:
            await asyncio.get_running_loop().create_future()  # never done: cancelled on the way out
        self.in_flight.add(key)

    def settled(self, key: str) -> None:
        """The call's answer is stored, or its attempt failed (a retry would be sent anew)."""
        self.in_flight.discard(key)
        if self._settled is not None and not self.in_flight:
            self._settled.set()

    async def drain(self) -> int:
        """Stop sending, wait up to the grace period for the calls in flight; returns how many
        were still in flight when it gave up (0: every answer stored)."""
        self.stopping = True
        self._settled = asyncio.Event()
        if self.in_flight:
            try:
                await asyncio.wait_for(self._settled.wait(), timeout=self.grace_s)
            except TimeoutError:
                pass
        return len(self.in_flight)


@contextmanager
def graceful_ctrl_c(stop: StopSignal) -> Iterator[None]:
    """While inside, the first SIGINT drains `stop` and then leaves as Python's own SIGINT handling
    would (the handler installed before, e.g. `asyncio.run`'s, which cancels the main task); a
    second leaves at once. Must be entered inside a running event loop."""
    if threading.current_thread() is not threading.main_thread():
        yield  # a worker thread: leave Ctrl-C as it is
        return
    previous = signal.getsignal(signal.SIGINT)
    ignored = not callable(previous)  # SIG_IGN (a job started with `&`) or SIG_DFL: Ctrl-C stays so,
    if ignored:                        # but SIGTERM still drains, then leaves as Python's Ctrl-C does
        previous = signal.default_int_handler
    loop = asyncio.get_running_loop()
    state: dict[str, Any] = {"count": 0, "draining": None, "left": False}

    def leave(signum: int = signal.SIGINT, frame: Any = None) -> None:
        """Hand over to the handler from before, once: it cancels the run (exit 130)."""
        if not state["left"]:
            state["left"] = True
            previous(signum, frame)

    def on_sigint(signum: int, frame: Any) -> None:
        state["count"] += 1
        if state["count"] > 1 or stop.grace_s <= 0:
            if state["draining"] is not None:
                state["draining"].cancel()
            leave(signum, frame)
            return
        loop.call_soon_threadsafe(lambda: state.__setitem__("draining", loop.create_task(
            _drain_then(stop, leave))))

    if not ignored:
        signal.signal(signal.SIGINT, on_sigint)
    _DRAINER.append(on_sigint)
    try:
        yield
    finally:
        _DRAINER.remove(on_sigint)
        if not ignored:
            signal.signal(signal.SIGINT, previous)
        if state["draining"] is not None:
            state["draining"].cancel()


async def _drain_then(stop: StopSignal, leave: Callable[[], None]) -> None:
    signal_name = "SIGTERM" if terminated() else "Ctrl-C"
    log.warning("%s: sending stopped; waiting up to %g s for the %d answer(s) in flight "
                "(%s again to leave now)", signal_name, stop.grace_s, len(stop.in_flight), signal_name)
    left = await stop.drain()
    if left:
        log.warning("%d answer(s) did not arrive within %g s; they will be asked again on resume",
                    left, stop.grace_s)
    leave()


# SIGTERM handling lives in `memegauge.signals` (the command line installs it before importing the engine);
# a run's first-Ctrl-C handler is pushed onto its `_DRAINER` stack, which SIGTERM calls.
