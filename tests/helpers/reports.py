"""Reports compared across runs: the clock's own fields (when a run ran, how long it took) differ
between two otherwise identical runs, so comparisons leave them out."""

from __future__ import annotations

CLOCK = {"created", "updated", "timing", "wall_s", "latency_s", "mean_call_latency_s"}


def without_keys(value, keys: set[str]):
    """`value` (a report, or any part of it) without the fields named `keys`, at any depth."""
    if isinstance(value, dict):
        return {k: without_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without_keys(v, keys) for v in value]
    return value


def without_clock(value):
    """`value` without the fields that say when it ran and how long it took."""
    return without_keys(value, CLOCK)
