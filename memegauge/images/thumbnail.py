"""Meme thumbnails stored with a run, so its report shows the pictures from the store alone.

A run writes one ``meme_image`` record per meme when it opens (`meme_image_records`): the image's
sha256 and a JPEG data URL of at most `THUMBNAIL_PX` pixels a side (a few KB). The HTML report reads
those records; it never opens the meme files, so a moved or deleted meme folder still reports with
its pictures, and a report is the same wherever it is made.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from collections.abc import Iterable

from PIL import Image
from pydantic import Field

from memegauge.records import Record
from memegauge.types import Meme

THUMBNAIL_PX = 256


def thumbnail_data_url(path: str | Path | None) -> str | None:
    """A ≤256 px JPEG data URL of an image file, or None when it is missing or unreadable (the page
    then shows a placeholder)."""
    if not path:
        return None
    try:
        with Image.open(path) as image:
            image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=80)
    except Exception:  # best effort: any picture Pillow cannot draw (16-bit, bomb, broken) is a placeholder
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class MemeImage(Record):
    """A meme's picture as its run's report shows it."""

    KIND = "meme_image"
    KEY = ("meme",)

    meme: str
    sha256: str | None = Field(description="sha256 of the image file the run used.")
    thumbnail: str = Field(description="A JPEG data URL, at most THUMBNAIL_PX a side.")


def meme_image_records(memes: Iterable[Meme]) -> list[MemeImage]:
    """A `MemeImage` for every meme with a readable picture."""
    out = []
    for meme in memes:
        url = thumbnail_data_url(meme.image) if meme.image else None
        if url:
            out.append(MemeImage(meme=meme.id, sha256=meme.image_sha256, thumbnail=url))
    return out
