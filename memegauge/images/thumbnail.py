"""Meme thumbnails stored with a run, so its report shows the pictures from the store alone.

A run writes one ``meme_image`` record per meme when it opens (`meme_image_records`): the image's
sha256 and a JPEG data URL of at most `THUMBNAIL_PX` pixels a side (a few KB). The HTML report reads
those records; it never opens the meme files, so a moved or deleted meme folder still reports with
its pictures, and a report is the same wherever it is made.

Each thumbnail is also kept in the user cache (``$MEMEGAUGE_CACHE_DIR/thumbnails/``, as OCR results are),
named by the picture's sha256 and what shapes the JPEG (size, quality, Pillow's version): a later run of the
same pictures, in any store, reads it back instead of decoding the picture again (issue 44: 190 PNGs took
about 2.1 s of CPU on every `qa eval`). The bytes are the ones made the first time, so a report is the same
either way; a cache that cannot be read or written is skipped.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import secrets
from pathlib import Path
from collections.abc import Iterable

import PIL
from PIL import Image
from pydantic import Field

from memegauge.files import user_cache_root
from memegauge.records import Record
from memegauge.types import Meme, file_sha256

THUMBNAIL_PX = 256
JPEG_QUALITY = 80
_DATA_URL = "data:image/jpeg;base64,"


def thumbnail_data_url(path: str | Path | None, sha256: str | None = None) -> str | None:
    """A ≤256 px JPEG data URL of an image file, or None when it is missing or unreadable (the page
    then shows a placeholder). `sha256`: the file's, when the caller has it (else it is computed, memoised);
    with it the thumbnail is read from the user cache when a run made it before (module docstring)."""
    if not path:
        return None
    try:
        cached = thumbnail_cache_file(sha256 or file_sha256(Path(path)))
    except OSError:  # missing or unreadable: a placeholder, as Pillow's failure below
        return None
    jpeg = _read_cached(cached)
    if jpeg is None:
        jpeg = _thumbnail_jpeg(path)
        if jpeg is None:
            return None
        _write_cached(cached, jpeg)
    return _DATA_URL + base64.b64encode(jpeg).decode("ascii")


def _thumbnail_jpeg(path: str | Path) -> bytes | None:
    try:
        with Image.open(path) as image:
            image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
    except Exception:  # best effort: any picture Pillow cannot draw (16-bit, bomb, broken) is a placeholder
        return None
    return buffer.getvalue()


def thumbnail_cache_file(sha256: str) -> Path:
    """Where the thumbnail of the picture whose bytes hash to `sha256` is cached: named by everything that
    shapes its bytes, so another size, quality or Pillow makes (and keeps) its own."""
    return (user_cache_root() / "thumbnails" / f"{THUMBNAIL_PX}px-q{JPEG_QUALITY}-pillow{PIL.__version__}"
            / sha256[:2] / f"{sha256}.jpg")


def _read_cached(path: Path) -> bytes | None:
    try:
        jpeg = path.read_bytes()
    except OSError:
        return None
    # a whole JPEG (start and end markers): a file cut short by a full disk is made again, not shown broken
    return jpeg if jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9" else None


def _write_cached(path: Path, jpeg: bytes) -> None:
    """Keep `jpeg` at `path` (written beside it, then renamed: never a partial file); a cache that cannot be
    written (read-only, full) is skipped, the run goes on."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(jpeg)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


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
        try:
            sha256 = meme.image_sha256
        except OSError:  # the picture is gone: no record, as for one Pillow cannot draw
            continue
        url = thumbnail_data_url(meme.image, sha256) if meme.image else None
        if url:
            out.append(MemeImage(meme=meme.id, sha256=sha256, thumbnail=url))
    return out
