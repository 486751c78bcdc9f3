"""The HTML report's figures: matplotlib charts rendered to PNG data URLs.

Each function is pure (report numbers in, `data:image/png;base64,...` out, or None when there is
nothing to draw). PNG rather than inline SVG so that no model name or category from the data ever
becomes markup in the page. Figures are built on `matplotlib.figure.Figure` (no pyplot state) with
math-text parsing off, so a `$` in a model name is drawn as a dollar sign instead of failing.
"""

from __future__ import annotations

import base64
import io
import textwrap
from typing import Any
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

_STYLE = {"text.parse_math": False, "font.size": 9, "axes.spines.top": False,
          "axes.spines.right": False, "figure.dpi": 100}
_WIDE = (7.5, 3.2)


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


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


def grouped_bars(groups: Sequence[str], series: dict[str, Sequence[float | None]], ylabel: str,
                 title: str, percent: bool = False, reference: Sequence[float | None] | None = None,
                 reference_label: str = "") -> str | None:
    """Bars per group, one colour per series (e.g. FR per category per target); an optional
    reference value per group is drawn as a black tick (e.g. the random baseline)."""
    if not groups or all(v is None for values in series.values() for v in values):
        return None  # nothing measured: no empty axes
    with matplotlib.rc_context(_STYLE):
        fig, ax = _figure((max(6.0, 0.9 * len(groups) * max(1, len(series)) ** 0.5 + 3), 3.6))
        x = np.arange(len(groups))
        width = 0.8 / len(series)
        scale = 100.0 if percent else 1.0
        for i, (name, values) in enumerate(series.items()):
            heights = np.array([_value(v) for v in values]) * scale
            bars = ax.bar(x - 0.4 + width * (i + 0.5), np.nan_to_num(heights), width, label=name)
            if len(groups) * len(series) <= 12:  # few bars: print the values (a 0% bar is invisible)
                ax.bar_label(bars, labels=["–" if np.isnan(h) else f"{h:.0f}" for h in heights],
                             fontsize=7, padding=1)
        if reference is not None:
            ref = np.array([_value(v) for v in reference]) * scale
            ax.scatter(x, ref, marker="_", s=600, color="black", zorder=3, label=reference_label)
        many = len(groups) > 6
        ax.set_xticks(x, _wrap(groups), rotation=30 if many else 0, ha="right" if many else "center")
        ax.set_ylabel(ylabel + (" (%)" if percent else ""))
        if percent:  # a rate axis starts at 0 and shows 100%, so that all-zero bars read as 0%
            ax.set_ylim(0, 100)
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
