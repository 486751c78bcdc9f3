"""Toyscore's stored record: one per meme."""

from __future__ import annotations

from pydantic import Field

from memegauge.records import Record


class FunnyRecord(Record):
    """The model's answer for one meme."""

    KIND = "toyscore.funny"
    KEY = ("meme",)

    meme: str = Field(description="The meme's id.")
    ok: bool = Field(description="Whether the call answered (a failed call is never scored).")
    funny: bool | None = Field(description="The answer read as yes (True) or no (False); None when failed.")
    error: str = Field(description="The failed call's error ('' when it answered).")
