"""The report's commands: `compare`, `view`, as `memegauge --help` lists them (`memegauge.registry.Command`); the
commands are in `memegauge.report.cli`, imported when dispatched."""

from memegauge.registry import Command

COMPARE = Command(
    name="compare", register="memegauge.report.cli:register",
    summary="One leaderboard across runs of one method, every figure with its 95% interval.")
VIEW = Command(
    name="view", register="memegauge.report.cli:register",
    summary="Serve the store's reports on 127.0.0.1: every run, each report, comparisons; Ctrl-C stops.")
