"""Where MemeGauge's own messages go: the `memegauge` loggers, shown on stderr by the CLI.

`memegauge -v` shows each run's executions and every failed attempt as it happens (INFO); `-vv` also
shows every call as it completes (DEBUG); `--quiet` shows errors only. Python warnings (a small
category, memes without pictures) are routed here too, so the terminal shows one line per warning
rather than Python's file:line and source echo. A library caller configures `logging` as it likes.
"""

from __future__ import annotations

import logging
import warnings

from rich.console import Console
from rich.logging import RichHandler

LEVELS = {0: logging.WARNING, 1: logging.INFO}  # -vv and more: DEBUG


def configure(verbose: int = 0, quiet: bool = False) -> None:
    """Show the `memegauge` loggers and Python warnings on stderr at the level `-v`/`--quiet` ask for."""
    level = logging.ERROR if quiet else LEVELS.get(verbose, logging.DEBUG)
    handler = RichHandler(console=Console(stderr=True), show_path=False, show_time=verbose > 1,
                          markup=False, rich_tracebacks=False)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in ("memegauge", "py.warnings"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
    logging.captureWarnings(True)
    warnings.formatwarning = _one_line


def _one_line(message, category, filename, lineno, line=None) -> str:  # noqa: ANN001 (warnings' hook)
    return str(message)
