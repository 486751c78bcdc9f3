"""The demo screen's stored record (see `memegauge.records`), shared by `memegauge.screen.stage`, which
writes it, and `memegauge.screen.report`, which reads it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memegauge.records import Record


class ScreenRecord(Record):
    """One meme screened by the demo: its labels and the model's JSON answer."""

    KIND = "screen"
    KEY = ("meme",)

    meme: str
    labels: list[str] = Field(description="The meme set's own labels (agreement is counted against them).")
    ok: bool
    answer: dict[str, Any] | None = Field(description="{harmful, category}; None when the call failed.")
    error: str = Field(description="The failed call's error ('' when it answered).")
