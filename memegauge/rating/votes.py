"""Every human rating of a run as `HumanRating` records: those given on the rating page and those the
method's own CSV imports stored in their own kinds (`RatingPart.imported`, rater "csv"), so older
stores need no re-import."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.rating.part import RatingPart
from memegauge.rating.records import HumanRating
from memegauge.records import read_records

CSV_RATER = "csv"


def run_ratings(store: Store, run: dict[str, Any], part: RatingPart) -> list[HumanRating]:
    rated = read_records(store, run["id"], HumanRating)
    return rated + part.imported(store, run)
