"""Reports compared across runs: the clock's own fields (when a run ran, how long it took) differ
between two otherwise identical runs, so comparisons leave them out."""

from __future__ import annotations

CLOCK = {"created", "updated", "timing", "wall_s", "latency_s", "mean_call_latency_s"}


def without_clock(value):
    """`value` (a report, or any part of it) without the fields that say when it ran and how long it took."""
    if isinstance(value, dict):
        return {k: without_clock(v) for k, v in value.items() if k not in CLOCK}
    if isinstance(value, list):
        return [without_clock(v) for v in value]
    return value
