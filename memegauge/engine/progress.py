"""Progress of a run: calls done of a total known before each stage starts, failures, retries and
truncations in flight, and an ETA — a bar on a terminal, plain timestamped lines elsewhere.

Totals come from the plan: a pipeline tells `plan(stage, calls)` how many calls a stage will submit
before it submits them (memes × Miners, questions × rotations …); a stage whose count depends on
earlier answers gives its upper bound and narrows it once known. A stage that submits more than it
planned raises its own total (never hidden). The ETA is the remaining calls at the rate fresh calls
have been answered so far; calls answered from the cache cost no time and do not enter the rate. Where a
stage's count is a bound, the calls left are counted at the planner's expected count (the same as
`--dry-run`'s `expected $`) and the ETA reads `~1m05s (≤ 3m10s)`: the expectation, then the bound.
Work that is no model call (erasing the text of pictures) reports its own progress (`work`): it is shown
as the current step, and its time left at its own rate is added to the ETA.

On a terminal (stderr a TTY) a rich bar shows it; otherwise (nohup, SLURM, a pipe) a plain line with
an ISO timestamp and no ANSI codes is written every `every_s` seconds (`memegauge --progress-every`,
default 10 s) and once at the end. `--quiet` shows neither.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, UTC
from typing import IO, Any
from collections.abc import Callable, Iterable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

DEFAULT_EVERY_S = 10.0
_EVERY_S = [DEFAULT_EVERY_S]


def set_progress_every(seconds: float | None) -> None:
    """How often the runs this process opens write a plain progress line (`memegauge --progress-every`)."""
    _EVERY_S[0] = DEFAULT_EVERY_S if seconds is None else max(0.1, float(seconds))


@dataclass
class StageCount:
    """One stage's calls: planned (None: not planned), submitted and finished."""

    planned: int | None = None
    bound: str = "exact"  # exact, or "at most" while the count depends on answers still to come
    submitted: int = 0
    done: int = 0
    expected: float | None = None  # the expected count where `planned` is a bound (None: the bound)

    @property
    def total(self) -> int:
        return max(self.planned or 0, self.submitted)

    @property
    def likely(self) -> float:
        """The calls the stage will most likely make: its total, or its expectation while a bound."""
        if self.bound == "exact" or self.expected is None or self.submitted >= (self.planned or 0):
            return self.total
        return max(self.expected, self.submitted)


@dataclass
class WorkCount:
    """A step that is no model call (erasing pictures): done of total, since `started`."""

    name: str
    total: int
    done: int = 0
    started: float = 0.0

    def left_s(self) -> float | None:
        """Seconds left at the rate so far; None before the first item is done."""
        return eta_seconds(self.total - self.done, self.done, time.monotonic() - self.started)


def eta_seconds(remaining: int, fresh_done: int, fresh_elapsed: float) -> float | None:
    """Seconds left at the rate fresh calls were answered so far; None before any was."""
    if fresh_done <= 0 or fresh_elapsed <= 0:
        return None
    return remaining * fresh_elapsed / fresh_done


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


class CallProgress:
    """Counts a run's calls per stage and shows them (see the module docstring)."""

    def __init__(self, enabled: bool | None = None, every_s: float | None = None,
                 stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled is not False  # None: a bar on a terminal, plain lines elsewhere
        self.done = self.failed = self.cached = self.retrying = self.truncated = self.fresh = 0
        self._failed_keys: set[str] = set()
        self.stages: dict[str, StageCount] = {}
        self.stage = ""
        self.working: WorkCount | None = None  # a step that is no model call, while it runs
        self.first_fresh: float | None = None  # when the first fresh call was sent
        self.last_fresh: float | None = None  # when the latest fresh call was answered
        self.every_s = _EVERY_S[0] if every_s is None else every_s
        self.progress: Progress | None = None
        self.limits: Callable[[], dict[str, int | str]] | None = None  # the engine's limits in force
        self._ticker: threading.Thread | None = None
        self._closed = threading.Event()
        if self.enabled and _is_terminal(self.stream):
            self.progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"), console=Console(stderr=True), transient=True)
            self.task = self.progress.add_task("calls", total=None, status="")

    # ---- what the pipelines and the engine report ------------------------------------------------

    def plan(self, stage: str, calls: int, bound: str = "exact", expected: float | None = None) -> None:
        """Stage `stage` will submit `calls` calls (`bound`: "exact" or "at most"; `expected`: the
        likely count where `calls` is a bound)."""
        count = self.stages.setdefault(stage, StageCount())
        count.planned, count.bound, count.expected = calls, bound, expected
        self._refresh()

    def plan_calls(self, plans: Iterable[Any]) -> None:
        """Plan every stage of a method's `PlannedCalls` (`memegauge.engine.estimate`), summed per
        stage; a stage is a bound when any of its parts is, and its expectation is its parts'."""
        totals: dict[str, list[Any]] = {}
        for p in plans:
            total = totals.setdefault(p.stage, [0, "exact", 0.0])
            total[0] += p.calls
            total[1] = total[1] if p.bound == "exact" else "at most"
            expected = getattr(p, "expected", None)
            total[2] += p.calls if expected is None else min(expected, p.calls)
        for stage, (calls, bound, expected) in totals.items():
            self.plan(stage, calls, bound, expected)

    def settle(self, *stages: str) -> None:
        """These stages will submit no more calls: each one's count is what it submitted (exact), so a
        bound that was not reached no longer stretches the total and the ETA."""
        for stage in stages:
            count = self.stages.setdefault(stage, StageCount())
            count.planned, count.bound, count.expected = count.submitted, "exact", None
        self._refresh()

    def work(self, name: str, done: int, total: int) -> None:
        """Work that is no model call: `done` of `total` items of `name` (0 starts it, total ends it)."""
        if done >= total:
            self.working = None
        elif self.working is None or self.working.name != name:
            self.working = WorkCount(name, total, done, time.monotonic())
        else:
            self.working.done = done
        self._refresh()

    def submitted(self, stage: str) -> None:
        self.stages.setdefault(stage or "", StageCount()).submitted += 1
        self.stage = stage or self.stage
        self._refresh()

    def sent(self) -> None:
        """A call goes to a model (not the cache): the ETA's clock starts at the first."""
        if self.first_fresh is None:
            self.first_fresh = time.monotonic()

    def finished(self, ok: bool, cached: bool, stage: str = "", truncated: bool = False, key: str = "") -> None:
        """One call answered. `failed` counts the calls (by `key`) whose latest outcome failed, as the run's
        failure summary does: a call asked twice is one call, and one that succeeds later is no longer failed."""
        self.done += 1
        if key:
            (self._failed_keys.discard if ok else self._failed_keys.add)(key)
            self.failed = len(self._failed_keys)
        else:
            self.failed += 0 if ok else 1
        self.cached += 1 if cached else 0
        self.truncated += 1 if truncated else 0
        if not cached:
            self.fresh += 1
            self.last_fresh = time.monotonic()
        if stage in self.stages:
            self.stages[stage].done += 1
        self._refresh()

    def retry_started(self) -> None:
        self.retrying += 1
        self._refresh()

    def retry_ended(self) -> None:
        self.retrying -= 1
        self._refresh()

    # ---- figures ---------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return sum(count.total for count in self.stages.values())

    def eta(self, bound: bool = False) -> float | None:
        """Seconds left: the calls left (at the likely counts, or with `bound` at the bounds) at the
        fresh calls' rate, plus a running non-call step's own time left."""
        if self.first_fresh is None and self.working is None:
            return None
        calls = sum(c.total if bound else c.likely for c in self.stages.values())
        left = max(calls - self.done, 0)
        work = self.working.left_s() if self.working else 0.0
        if work is None or (left and self.first_fresh is None):
            return None
        last = time.monotonic() if self.last_fresh is None else self.last_fresh
        elapsed = last - self.first_fresh if self.first_fresh is not None else 0.0
        calls_s = eta_seconds(left, self.fresh, elapsed) if left else 0.0
        return None if calls_s is None else calls_s + work

    def status(self) -> str:
        """`failed 0 · retrying 1 · truncated 0 · cached 12 · ETA 1m05s` (`ETA ~1m05s (≤ 3m10s)` while
        a count is a bound with a smaller expectation)."""
        if not self.bounded():
            eta = clock(self.eta())
        else:
            likely, most = self.eta(), self.eta(bound=True)
            eta = f"≤ {clock(most)}" if likely is None or most is None or round(likely) >= round(most) \
                else f"~{clock(likely)} (≤ {clock(most)})"
        return (f"failed {self.failed} · retrying {self.retrying} · truncated {self.truncated} · "
                f"cached {self.cached} · ETA {eta}")

    def bounded(self) -> bool:
        """Whether the total still counts calls a stage may not need (an upper bound)."""
        return any(c.bound != "exact" and c.submitted < (c.planned or 0) for c in self.stages.values())

    def line(self) -> str:
        """One plain progress line (no ANSI): time, overall, the current stage, the status."""
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        total = self.total
        share = f" ({100 * self.done / total:.0f}%)" if total else ""
        total_text = f"≤{total}" if self.bounded() else str(total)
        stage = self.stages.get(self.stage)
        current = ""
        if stage is not None:
            bound = "" if stage.bound == "exact" or stage.submitted >= (stage.planned or 0) else "≤"
            current = f" · {self.stage} {stage.done}/{bound}{stage.total}"
        if self.working is not None:
            current += f" · {self.working.name} {self.working.done}/{self.working.total}"
        return f"{now} progress: {self.done}/{total_text} calls{share}{current} · {self.status()}{self.pace()}"

    def pace(self) -> str:
        """` · in flight ≤ m auto:48`: the `auto` concurrency limits in force (none when all are fixed)."""
        auto = {m: v for m, v in (self.limits() if self.limits else {}).items() if isinstance(v, str)}
        return f" · in flight ≤ {', '.join(f'{m} {v}' for m, v in auto.items())}" if auto else ""

    # ---- display ---------------------------------------------------------------------------------

    def __enter__(self) -> CallProgress:
        if self.progress:
            self.progress.start()
        elif self.enabled:
            self._ticker = threading.Thread(target=self._tick, name="memegauge-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        if exc[0] is None:  # the run is over: every stage submitted all it will, bounds become counts
            for count in self.stages.values():
                count.planned, count.bound = count.submitted, "exact"
        if self.progress:
            self.progress.stop()
        elif self._ticker is not None:
            self._ticker.join(timeout=1)
            if self.done:
                self._write(self.line())

    def _tick(self) -> None:
        while not self._closed.wait(self.every_s):
            if self.total:
                self._write(self.line())

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed (a detached job): progress is not worth failing for
            pass

    def _refresh(self) -> None:
        if self.progress:
            stage = self.stages.get(self.stage)
            label = f"{self.stage} {stage.done}/{stage.total}" if stage else "calls"
            if self.working is not None:
                label = f"{self.working.name} {self.working.done}/{self.working.total}"
            self.progress.update(self.task, total=self.total or None, completed=self.done,
                                 status=self.status() + self.pace(), description=label)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
