"""Every human rating of a run as `HumanRating` records: those given on the rating page and those the
CSV imports stored in their own kinds (AdamMeme `human_score` / `human_label`, rater "csv"; MemeArena
`human_vote`, matched to its battle, rater "csv"), so older stores need no re-import."""

from __future__ import annotations

from typing import Any

from memegauge.arena.agreement import match_votes
from memegauge.engine.store import Store
from memegauge.rating.items import item_id
from memegauge.rating.records import HumanRating
from memegauge.records import read_records

CSV_RATER = "csv"


def run_ratings(store: Store, run: dict[str, Any]) -> list[HumanRating]:
    rated = read_records(store, run["id"], HumanRating)
    return rated + imported_ratings(store, run)


def imported_ratings(store: Store, run: dict[str, Any]) -> list[HumanRating]:
    run_id = run["id"]
    out = []
    for r in store.records(run_id, "human_score"):
        out.append(HumanRating(rater=CSV_RATER, item=item_id("score", r["sample"]), task="score",
                               source=r["sample"], origin="csv", score=r["score"]))
    for r in store.records(run_id, "human_label"):
        out.append(HumanRating(rater=CSV_RATER, item=item_id("labels", r["meme"]), task="labels",
                               source=r["meme"], origin="csv", categories=r["categories"]))
    votes = store.records(run_id, "human_vote")
    if votes:
        setting = ((run.get("config") or {}).get("settings") or ["fused"])[0]
        battles = [b for b in store.records(run_id, "battle") if b["setting"] == setting]
        for outcome, battle in match_votes(votes, battles):
            out.append(HumanRating(rater=CSV_RATER, item=item_id("pair", battle["battle"]), task="pair",
                                   source=battle["battle"], origin="csv", choices={"overall": outcome}))
    return out
