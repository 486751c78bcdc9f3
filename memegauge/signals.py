"""SIGTERM as Ctrl-C, for the whole command line: a scheduler's SIGTERM drains a run's calls in flight as the
first Ctrl-C does (`memegauge.engine.interrupt.graceful_ctrl_c`), and the exit status says it was terminated (143).

Apart from the engine so that `memegauge` installs it at start without importing the engine (and aiohttp):
it imports only the standard library.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any
from collections.abc import Callable, Iterator

_TERMINATED = [False]
_DRAINER: list[Callable[[int, Any], None]] = []  # the open run's first-Ctrl-C handler, for SIGTERM
_RUN_OPENED = [False]  # a run was opened in the store by this command (its Ctrl-C message says so)


def run_opened(opened: bool | None = None) -> bool:
    """Whether this command opened a run (`run_opened(True)`: the engine says it did). A Ctrl-C before
    any run (during the preflight, while reading data) has no run to mark `interrupted`."""
    if opened is not None:
        _RUN_OPENED[0] = opened
    return _RUN_OPENED[0]


def terminated() -> bool:
    """Whether this process received SIGTERM (inside `sigterm_as_ctrl_c`)."""
    return _TERMINATED[0]


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """While inside, SIGTERM does what SIGINT does at that moment: drain a run's calls in flight
    (`graceful_ctrl_c`), cancel `asyncio.run`'s main task, or raise KeyboardInterrupt. A second
    SIGTERM is a second Ctrl-C: it leaves at once. Main thread only; an ignored SIGTERM stays ignored."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return
    _TERMINATED[0] = False
    _RUN_OPENED[0] = False

    def on_sigterm(signum: int, frame: Any) -> None:
        _TERMINATED[0] = True
        handler = _DRAINER[-1] if _DRAINER else signal.getsignal(signal.SIGINT)
        if not callable(handler):  # no run open and SIGINT ignored (a background job): Python's own Ctrl-C
            handler = signal.default_int_handler
        handler(signal.SIGINT, frame)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
