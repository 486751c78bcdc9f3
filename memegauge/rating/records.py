"""What `memegauge rate` stores: one `HumanRating` per rater and item, written the moment it is given.

A rating names its item by the item's opaque id (what the page knows) and by `source`, the key of the
rated thing in the run (a `ScoreRecord` id, a meme id, a battle key, a question id), which only the
store sees. The CSV imports of earlier versions (`import adammeme-human`, an arena's `human_votes:`)
are read as ratings of the same type by `memegauge.rating.votes`, so one report section covers both.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from memegauge.records import KeySpelling, Record

TASKS = ("score", "labels", "pair", "answer", "reference", "refined", "guideline", "guideline_round", "context")
Task = Literal["score", "labels", "pair", "answer", "reference", "refined", "guideline", "guideline_round", "context"]
Choice = Literal["model_a", "model_b", "tie"]
RATER_NAME = re.compile(r"^[\w.@+-][\w .@+-]{0,39}$")


class HumanRating(Record):
    """One person's rating of one sampled item (`memegauge rate`), or one imported CSV row."""

    KIND = "human_rating"
    KEY = ("rater", "item")
    KEYS = KeySpelling("|")

    rater: str = Field(description="Who rated: letters, digits, space and . @ + - _ (at most 40).")
    item: str = Field(description="The item's opaque id (task and a hash of its source; no model name).")
    task: Task = Field(description="score (AdamMeme 1–10), labels (AdamMeme categories), pair (MemeArena "
                                   "A/B/tie), answer (MemeQA options); the quality studies (`criteria`): "
                                   "reference (AdamMeme Table 9), refined (Table 10), guideline (MemeArena "
                                   "Table 3), guideline_round (Figure 6), context (Table 4).")
    source: str = Field(description="Key of the rated thing in the run: ScoreRecord id, meme id, battle key "
                                    "or question id.")
    origin: Literal["page", "csv"] = Field(default="page", description="The rating page, or a CSV import.")
    created: float | None = Field(default=None, description="Unix time the rating was given.")
    score: float | None = Field(default=None, ge=1, le=10, description="task score: the 1–10 score.")
    categories: list[str] | None = Field(default=None, description="task labels: the chosen categories "
                                                                    "(empty = harmless).")
    shown: dict[str, Literal["A", "B", "tie"]] | None = Field(
        default=None, description="task pair: the clicks as the page showed them, per dimension and overall.")
    swapped: bool | None = Field(default=None, description="task pair: True when answer A on the page was "
                                                           "the battle's model_b.")
    choices: dict[str, Choice] | None = Field(default=None, description="task pair: `shown` in the battle's "
                                                                        "orientation.")
    answer: list[int] | None = Field(default=None, description="task answer: the chosen option indices.")
    criteria: dict[str, int] | None = Field(default=None, description="quality tasks: criterion → the point "
                                                                       "given on the study's scale (1 = low end).")

    @field_validator("rater")
    @classmethod
    def _rater_name(cls, value: str) -> str:
        if not RATER_NAME.match(value):
            raise ValueError("a rater name is 1–40 letters, digits, spaces or . @ + - _")
        return value
