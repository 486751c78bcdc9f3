"""The one record of a published figure's own fields, shared by a benchmark's `benchmark.yaml` (`benchmarks.kit.spec.
Published`, which adds its task), what a benchmark entry hands the leaderboard (`benchmarks.kit.entries.Published`,
which adds what the paper says of an n it does not give) and the profile (`profiles.records.PublishedFigure`, which
adds where it sits): a figure a paper publishes is always shown with its n, or `n not stated`."""

from __future__ import annotations

from pydantic import BaseModel, Field


class PublishedValue(BaseModel):
    """A figure a paper publishes for a model or baseline, set beside ours (never mixed with them)."""

    system: str = Field(description="The model or baseline it is of.")
    metric: str = Field(description="accuracy, macro_f1, auroc, …: as our own figure of that metric is named.")
    value: float = Field(description="The published value, as a fraction (0.647 for 64.7%).")
    split: str = Field(description="The split it was measured on.")
    n: int | None = Field(default=None, description="The items it was measured on, as the source states (None: "
                                                    "the source does not say; shown as `n not stated`).")
    source: str = Field(description="Where it is published (paper, table), with its address, quoted.")

    @property
    def n_text(self) -> str:
        """`n=1000`, or `n not stated`: every published figure is shown with its n, as our own are."""
        return "n not stated" if self.n is None else f"n={self.n}"
