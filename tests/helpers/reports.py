"""Reports compared across runs: the clock's own fields (when a run ran, how long it took) differ
between two otherwise identical runs, so comparisons leave them out; figures held against a file made on
another machine are compared with a tolerance (`assert_same_figures`)."""

from __future__ import annotations

import math

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


# BLAS kernels differ between CPU types (OPENBLAS_CORETYPE=Haswell vs Prescott, AVX-512 or not): a
# bootstrap interval computed on one machine may end in ...8018 where another's ends in ...802. A figure
# held against a file made elsewhere is compared within this relative tolerance; everything else exactly.
REL_TOL = 1e-9
ABS_TOL = 1e-12  # for figures that are zero on one machine and 1e-17 on another


def figure_differences(actual, expected, rel: float = REL_TOL, path: str = "") -> list[str]:
    """Where two JSON-like values differ, one line per difference ("path: expected -> actual").

    Floats (an int beside a float too) are equal within `rel` relative (or `ABS_TOL` absolute) tolerance,
    two NaNs are equal; every other value (strings, ints, bools, None, keys, list lengths) must be
    exactly equal."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        return [d for k in dict.fromkeys([*expected, *actual]) for d in (
            [f"{path}.{k}: only in {'actual' if k in actual else 'expected'}"] if (k in actual) != (k in expected)
            else figure_differences(actual[k], expected[k], rel, f"{path}.{k}"))]
    if isinstance(actual, list | tuple) and isinstance(expected, list | tuple) and len(actual) == len(expected):
        return [d for i, (a, e) in enumerate(zip(actual, expected, strict=True))
                for d in figure_differences(a, e, rel, f"{path}[{i}]")]
    if _is_number(actual) and _is_number(expected) and (isinstance(actual, float) or isinstance(expected, float)):
        same = (math.isnan(actual) and math.isnan(expected)) or math.isclose(actual, expected, rel_tol=rel,
                                                                              abs_tol=ABS_TOL)
        return [] if same else [f"{path}: {expected!r} -> {actual!r}"]
    same = actual == expected and type(actual) is type(expected)
    return [] if same else [f"{path}: {expected!r} -> {actual!r}"]


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def assert_same_figures(actual, expected, rel: float = REL_TOL) -> None:
    """Assert `actual` equals `expected` (see `figure_differences`); the message lists the first differences."""
    found = figure_differences(actual, expected, rel)
    assert not found, f"{len(found)} figures differ, e.g.:\n" + "\n".join(found[:10])
