"""Progress display: calls done / failed, retries in flight, ETA (rich)."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


class CallProgress:
    """Counts calls for the progress bar. Totals grow as stages submit work, so the ETA is for the
    work known so far. Disabled (counting only) when stderr is not a terminal or in --quiet."""

    def __init__(self, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.done = self.failed = self.cached = self.retrying = self.total = 0
        self.stage = ""
        self.progress: Progress | None = None
        if enabled:
            self.progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("failed {task.fields[failed]} · retrying {task.fields[retrying]}"
                           " · cached {task.fields[cached]}"),
                TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self.task = self.progress.add_task("calls", total=0, failed=0, retrying=0, cached=0)

    def __enter__(self) -> CallProgress:
        if self.progress:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress:
            self.progress.stop()

    def submitted(self, stage: str) -> None:
        self.total += 1
        self.stage = stage or self.stage
        self._refresh()

    def finished(self, ok: bool, cached: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        self.cached += 1 if cached else 0
        self._refresh()

    def retry_started(self) -> None:
        self.retrying += 1
        self._refresh()

    def retry_ended(self) -> None:
        self.retrying -= 1
        self._refresh()

    def _refresh(self) -> None:
        if self.progress:
            self.progress.update(self.task, total=self.total, completed=self.done,
                                 failed=self.failed, retrying=self.retrying, cached=self.cached,
                                 description=self.stage or "calls")
