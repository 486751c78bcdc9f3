"""Headline rows: a run's leaderboard figures as typed, flat rows, the same for every method.

Each method's descriptor names a `headline(report) -> list[Headline]` hook (`memegauge.methods.Method`);
`report --format csv|md`, `memegauge compare` and `memegauge view`'s run list are built from these rows
only, so every place that shows a leaderboard shows the same numbers, each with its 95% interval
(`memegauge.report.intervals`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memegauge.report.intervals import Figure

Unit = Literal["rate", "score", "rating"]


class Headline(BaseModel):
    """One figure of one model in one group (a category, a question type, or `overall`) of one run."""

    model_config = ConfigDict(extra="forbid")

    method: str = Field(description="The run's method (its registered name).")
    run: str = Field(description="The run's name in the store.")
    date: str = Field(description="When the run was created, ISO 8601 in UTC (2026-11-26T07:12:23Z).")
    model: str = Field(description="The model measured: an AdamMeme target, an Arena contestant, the "
                                   "MemeQA model.")
    group: str = Field(description="`overall`, or the category (AdamMeme) / question type (MemeQA) / "
                                   "dimension the figure is about.")
    figure: str = Field(description="The figure's name: failure_rate, avg_score, bt, win_rate, accuracy, "
                                    "macro, micro, …")
    value: float | None = Field(description="The figure on all its items; None when nothing was scored.")
    ci95_lo: float | None = Field(description="Lower end of the 95% interval; None when there is none "
                                              "(see `note`).")
    ci95_hi: float | None = Field(description="Upper end of the 95% interval.")
    n: int = Field(description="Items behind the figure (scored samples, battles, questions).")
    memes: int = Field(description="Distinct memes among those items (the clusters the interval "
                                   "resamples or corrects for).")
    unit: Unit = Field(description="rate: a fraction 0–1 (shown as %); score: AdamMeme's 1–10 scale; "
                                   "rating: a Bradley–Terry rating.")
    interval: str = Field(description="How the interval was made: wilson, wilson-clustered, bootstrap.")
    note: str | None = Field(default=None, description="Why there is no interval (too few items, no "
                                                       "spread) or no value (not computed: its n is 0), why n is "
                                                       "below the items answered (an AUROC's answers without "
                                                       "log-probabilities), or None.")
    higher_is_better: bool = Field(description="Whether a larger value is a better model (FR: no).")


def iso_date(stamp: float | None) -> str:
    """A store timestamp (seconds since the epoch) as an ISO 8601 UTC string; '' for None."""
    if stamp is None:
        return ""
    return dt.datetime.fromtimestamp(float(stamp), dt.UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


def row(run: dict[str, Any], model: str, group: str, figure: str, fig: Figure, unit: Unit,
        higher_is_better: bool = True) -> Headline:
    """A headline row from a run header and one interval figure."""
    ci = fig.get("ci95")
    return Headline(method=run["method"], run=run["name"], date=iso_date(run.get("created")), model=model,
                    group=group, figure=figure, value=fig.get("value"), ci95_lo=ci[0] if ci else None,
                    ci95_hi=ci[1] if ci else None, n=int(fig.get("n") or 0),
                    memes=int(fig.get("clusters") or 0), unit=unit,
                    interval=str(fig.get("method") or ""), note=fig.get("note"),
                    higher_is_better=higher_is_better)


def headline_rows(report: dict[str, Any]) -> list[Headline]:
    """The headline rows of a built report (`memegauge.report.build_report`); [] for a method that
    names no headline hook."""
    from memegauge.methods import method

    found = method(report["run"]["method"])
    if found is None or found.headline is None:
        return []
    return list(found.headline(report))
