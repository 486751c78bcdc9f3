"""The HTML report's figures: matplotlib charts rendered to PNG data URLs.

Each function is pure (report numbers in, `data:image/png;base64,...` out, or None when there is
nothing to draw). The data URL is a `PlotImage`, a string that keeps its figure, so that
`save_plot` can write it as PNG, SVG and PDF files too (`memegauge report RUN --plots DIR`).
Bar plots show each bar's 95% interval as an error bar and its n, and scale the axis to the data. PNG
rather than inline SVG so that no model name or category from the data ever becomes markup in the page.
Figures are built on `matplotlib.figure.Figure` (no pyplot state) with math-text parsing off, so a `$` in a
model name is drawn as a dollar sign instead of failing.
"""

from __future__ import annotations

import base64
import io
import textwrap
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

_STYLE = {"text.parse_math": False, "font.size": 9, "axes.spines.top": False,
          "axes.spines.right": False, "figure.dpi": 100}
_WIDE = (7.5, 3.2)


class PlotImage(str):
    """A PNG data URL that keeps the figure it was drawn from (for `save_plot`)."""

    figure: Figure


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    image = PlotImage("data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"))
    image.figure = fig
    return image


PLOT_FORMATS = ("png", "svg", "pdf")


def save_plot(image: str, stem: Path) -> list[Path]:
    """Write a plot as `<stem>.png` (200 dpi), `.svg` and `.pdf`, each atomically; the paths."""
    from memegauge.files import write_bytes_atomic

    if not isinstance(image, PlotImage):
        raise TypeError("save_plot needs a plot made by memegauge.report.plots")
    paths = []
    for fmt in PLOT_FORMATS:
        buffer = io.BytesIO()
        with matplotlib.rc_context({**_STYLE, "svg.fonttype": "path"}):  # SVG text as paths: no markup from data
            image.figure.savefig(buffer, format=fmt, dpi=200, metadata=_METADATA[fmt])
        paths.append(write_bytes_atomic(stem.with_name(f"{stem.name}.{fmt}"), buffer.getvalue()))
    return paths


# fixed metadata: the same report writes byte-identical SVG/PDF files (no creation date)
_METADATA = {"png": {}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}


def _figure(size: tuple[float, float] = _WIDE) -> tuple[Figure, Any]:
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.subplots()


def _value(x: float | None) -> float:
    return np.nan if x is None else float(x)


def _wrap(labels: Sequence[str], width: int = 16) -> list[str]:
    """Long tick labels (question types, categories) on several lines instead of overlapping."""
    return [textwrap.fill(str(label), width) for label in labels]


def _legend(ax: Any) -> None:
    """Legend beside the axes, where it can never cover a bar or a line."""
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))


Interval = Sequence[float] | None


def _error_bars(heights: np.ndarray, intervals: Sequence[Interval], scale: float) -> np.ndarray:
    """2 × bars array of (below, above) lengths from [lo, hi] intervals; 0 where there is none."""
    pairs = list(zip(heights, intervals, strict=True))
    below = [h - scale * ci[0] if ci is not None and not np.isnan(h) else 0.0 for h, ci in pairs]
    above = [scale * ci[1] - h if ci is not None and not np.isnan(h) else 0.0 for h, ci in pairs]
    return np.clip(np.vstack([below, above]), 0, None)


def _bar_labels(heights: np.ndarray, counts: Sequence[int | None] | None, percent: bool,
                values: bool = True, missing: Sequence[bool] | None = None) -> list[str]:
    """Each bar's value ("–" when unmeasured) and, with counts, its n below ("n=2, no CI" where the
    bar has no interval: too few items); n alone without values."""
    shown = ["–" if np.isnan(h) else (f"{h:.0f}" if percent else f"{h:.2g}") for h in heights]
    if counts is None:
        return shown
    missing = missing or [False] * len(shown)
    n = ["" if c is None else f"n={c}" + (", no CI" if m else "") for c, m in zip(counts, missing, strict=True)]
    return [f"{v}\n{c}".strip() for v, c in zip(shown, n, strict=True)] if values else n


def _rate_axis(ax: Any, tops: list[float]) -> None:
    """A percent axis from 0 to a little above the highest bar or interval end, so that 1–10% bars
    are readable (not flattened on a fixed 0–100% axis); room above 100% for the bars' labels, but
    no tick there."""
    highest = max([t for t in tops if not np.isnan(t)], default=0.0)
    ax.set_ylim(0, float(min(118.0, max(5.0, highest * 1.18 + 2))))
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= 100])


def grouped_bars(groups: Sequence[str], series: dict[str, Sequence[float | None]], ylabel: str,
                 title: str, percent: bool = False, reference: Sequence[float | None] | None = None,
                 reference_label: str = "", intervals: dict[str, Sequence[Interval]] | None = None,
                 counts: dict[str, Sequence[int | None]] | None = None) -> str | None:
    """Bars per group, one colour per series (e.g. FR per category per target), each with its 95%
    interval as an error bar (`intervals`: per series, [lo, hi] or None per group, in the values'
    unit) and its n under the value (`counts`); an optional reference value per group is drawn as a
    black tick (e.g. the random baseline). A percent axis runs from 0 to just above the data."""
    if not groups or all(v is None for values in series.values() for v in values):
        return None  # nothing measured: no empty axes
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure((max(6.0, 0.9 * len(groups) * max(1, len(series)) ** 0.5 + 3), 3.6))
        x = np.arange(len(groups))
        width = 0.8 / len(series)
        scale = 100.0 if percent else 1.0
        tops: list[float] = []
        for i, (name, values) in enumerate(series.items()):
            heights = np.array([_value(v) for v in values]) * scale
            errors = None
            if intervals is not None and name in intervals:
                errors = _error_bars(heights, intervals[name], scale)
                tops += list(heights + errors[1])
            tops += list(heights)
            bars = ax.bar(x - 0.4 + width * (i + 0.5), np.nan_to_num(heights), width, label=name,
                          yerr=errors, capsize=3 if errors is not None else 0,
                          error_kw={"elinewidth": 1, "ecolor": "#333333"})
            few = len(groups) * len(series) <= 12  # few bars: print the values (a 0% bar is invisible)
            if few or counts:  # many bars: their n only (the table beside has the values)
                missing = None if intervals is None or name not in intervals else \
                    [ci is None and not np.isnan(h) for h, ci in zip(heights, intervals[name], strict=True)]
                ax.bar_label(bars, labels=_bar_labels(heights, (counts or {}).get(name), percent, few, missing),
                             fontsize=7 if few else 6, padding=1)
        if reference is not None:
            ref = np.array([_value(v) for v in reference]) * scale
            tops += list(ref)
            ax.scatter(x, ref, marker="_", s=600, color="black", zorder=3, label=reference_label)
        many = len(groups) > 6
        ax.set_xticks(x, _wrap(groups), rotation=30 if many else 0, ha="right" if many else "center")
        ax.set_ylabel(ylabel + (" (%)" if percent else ""))
        if percent:  # a rate axis starts at 0 and ends just above the data (labels need the room)
            _rate_axis(ax, tops)
        ax.set_title(title)
        if len(series) > 1 or reference is not None:
            _legend(ax)
        return _png(fig)


def lines_by_iteration(series: dict[str, list[dict[str, Any]]], title: str) -> str | None:
    """Average score per refinement iteration: solid = new samples of that iteration, dashed =
    cumulative history H up to it (AdamMeme Fig. 3). `series` maps target → `by_iteration`."""
    if all(r["new"]["avg_score"] is None for rows in series.values() for r in rows):
        return None  # nothing scored: no empty axes
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure()
        for name, rows in series.items():
            x = [r["iteration"] for r in rows]
            new = [_value(r["new"]["avg_score"]) for r in rows]
            cumulative = [_value(r["cumulative"]["avg_score"]) for r in rows]
            (line,) = ax.plot(x, new, marker="o", label=f"{name} (new)")
            ax.plot(x, cumulative, linestyle="--", color=line.get_color(), label=f"{name} (cumulative)")
        iterations = [r["iteration"] for rows in series.values() for r in rows]
        if iterations and max(iterations) - min(iterations) < 1:  # one iteration: not a ±0.04 axis
            ax.set_xlim(min(iterations) - 1, max(iterations) + 1)
        ax.set_xlabel("iteration (0 = original memes)")
        ax.set_ylabel("average score (1-10)")
        ax.set_ylim(0.5, 10.5)  # the whole scale: a flat line reads as a score, not as noise
        ax.set_title(title)
        ax.xaxis.get_major_locator().set_params(integer=True)
        _legend(ax)
        return _png(fig)


def loss_curve(losses: Sequence[float], dev: Sequence[dict[str, Any]], title: str) -> str | None:
    """Fine-tuning: training loss of every step, and dev macro accuracy at each dev point (right
    axis, on the whole 0-100% scale)."""
    if not losses:
        return None
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure()
        ax.plot(range(1, len(losses) + 1), losses, label="training loss (per step)")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("training loss")
        ax.set_title(title)
        right = ax.twinx()
        points = [p for p in dev if p.get("macro") is not None]
        right.plot([p["step"] for p in points], [100 * p["macro"] for p in points], marker="o",
                   color="C1", label="dev macro accuracy")
        right.set_ylabel("dev macro accuracy (%)")
        right.set_ylim(0, 100)
        handles, labels = ax.get_legend_handles_labels()
        more_handles, more_labels = right.get_legend_handles_labels()
        ax.legend(handles + more_handles, labels + more_labels, loc="upper right", frameon=False)
        return _png(fig)


def horizontal_bars(labels: Sequence[str], values: Sequence[float], title: str, xlabel: str,
                    secondary: Sequence[float] | None = None, secondary_label: str = "",
                    primary_label: str = "") -> str | None:
    """Ranked horizontal bars, largest on top (misbelief topics of refined samples)."""
    if not labels:
        return None
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure((7.5, 0.28 * len(labels) + 1.2))
        y = np.arange(len(labels))[::-1]
        height = 0.4 if secondary is not None else 0.7
        ax.barh(y + (height / 2 if secondary is not None else 0), values, height, label=primary_label)
        if secondary is not None:
            ax.barh(y - height / 2, secondary, height, label=secondary_label, color="#bbbbbb")
            _legend(ax)
        ax.set_yticks(y, labels)
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        return _png(fig)


def ratings_with_ci(models: Sequence[str], ratings: Sequence[float], intervals: Sequence[Sequence[float] | None],
                    title: str) -> str | None:
    """Bradley–Terry ratings as points with their bootstrap 95% interval as error bars."""
    if not models:
        return None
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure((6.5, 0.35 * len(models) + 1.3))
        y = np.arange(len(models))[::-1]
        values = np.asarray(ratings, dtype=float)
        lo = np.array([values[i] - ci[0] if ci else 0.0 for i, ci in enumerate(intervals)])
        hi = np.array([ci[1] - values[i] if ci else 0.0 for i, ci in enumerate(intervals)])
        ax.errorbar(values, y, xerr=np.vstack([np.clip(lo, 0, None), np.clip(hi, 0, None)]), fmt="o",
                    capsize=4)
        ax.set_yticks(y, models)
        ax.set_xlabel("Bradley-Terry rating (95% bootstrap interval)")
        ax.set_title(title)
        return _png(fig)


def rank_heatmap(rows: Sequence[str], columns: Sequence[str], ranks: Sequence[Sequence[float | None]],
                 title: str) -> str | None:
    """Rank position (1 = best) of each model (columns) by each judge (rows); blank = unranked."""
    if not rows or not columns:
        return None
    matrix = np.array([[_value(v) for v in row] for row in ranks], dtype=float)
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure((0.9 * len(columns) + 2.5, 0.45 * len(rows) + 1.4))
        image = ax.imshow(np.ma.masked_invalid(matrix), cmap="viridis_r", aspect="auto",
                          vmin=1, vmax=max(len(columns), 2))
        ax.set_xticks(np.arange(len(columns)), columns, rotation=30, ha="right")
        ax.set_yticks(np.arange(len(rows)), rows)
        middle = (1 + max(len(columns), 2)) / 2  # viridis_r is light at rank 1, dark at the last rank
        for (i, j), v in np.ndenumerate(matrix):
            if not np.isnan(v):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", color="black" if v < middle else "white",
                        fontsize=9)
        fig.colorbar(image, ax=ax, label="rank (1 = best)", ticks=range(1, max(len(columns), 2) + 1))
        ax.set_title(title)
        return _png(fig)
