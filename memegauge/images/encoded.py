"""A picture as a model is sent it — read, downscaled to the model's `max_image_pixels` when larger, and
base64-encoded into a data URL — made once per process and reused by every call that shows it.

MemeQA asks about ten questions per picture, so encoding each picture per call made most of a run's
base64 and JSON work (bench/cpu_per_call.py). The encoded pictures are kept in a least-recently-used cache
bounded in bytes (`CACHE_BYTES`), keyed by the file's path, its sha256 as the request holds it (else its
modification time and size: an edited file is read afresh) and the pixel limit: a run over more pictures
than fit is slower, never larger.

A `PictureURL` is the data URL itself (a `str`) and carries its JSON form (`json`, the quoted bytes), so a
request body is assembled around it (`memegauge.models.openai_backend.body_json`) without escaping and
copying the picture again.
"""

from __future__ import annotations

import base64
import mimetypes
import threading
from collections import OrderedDict
from pathlib import Path

CACHE_BYTES = 256 * 2**20  # encoded pictures kept at most (data URL + its JSON form), per process

_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
               (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"), (b"BM", "image/bmp"))


def image_mime(data: bytes, path: Path | str = "") -> str:
    """The MIME type of image bytes, read from the bytes (a JPEG named .png is image/jpeg)."""
    for magic, mime in _SIGNATURES:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return mimetypes.guess_type(str(path))[0] or "application/octet-stream"


class PictureURL(str):
    """A picture's data URL; `json` is the same as a JSON string (base64 needs no escaping)."""

    __slots__ = ("json",)
    json: bytes

    def __new__(cls, url: str) -> PictureURL:
        made = super().__new__(cls, url)
        made.json = b'"' + url.encode("ascii") + b'"'
        return made

    @property
    def size(self) -> int:
        """Bytes held: the URL (one byte a character, being ASCII) and its JSON form."""
        return 2 * len(self.json)


class _Cache:
    """Least recently used first out, within `limit` bytes; one lock (backends may encode in threads)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held = limit, 0
        self.items: OrderedDict[tuple, PictureURL] = OrderedDict()
        self.lock = threading.Lock()
        self.encoded = 0  # pictures read and encoded (a miss); the rest were served from the cache

    def get(self, key: tuple) -> PictureURL | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: tuple, picture: PictureURL) -> None:
        with self.lock:
            self.encoded += 1
            if picture.size > self.limit or key in self.items:
                return
            self.items[key] = picture
            self.held += picture.size
            while self.held > self.limit:
                _, dropped = self.items.popitem(last=False)
                self.held -= dropped.size

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.held = self.encoded = 0


CACHE = _Cache(CACHE_BYTES)


def picture_url(path: Path, max_pixels: int | None = None, sha256: str = "") -> PictureURL:
    """The picture at `path` as a data URL, downscaled to at most `max_pixels` when it is larger; read
    and encoded on its first use only. `sha256`, the file's hash as the request holds it (`ImagePart`),
    names the version of the file without a `stat` per call; without it the file's modification time and
    size do. Raises what reading or decoding raises (the caller classifies)."""
    if sha256:
        key: tuple = (str(path), sha256, max_pixels or 0)
    else:
        stat = Path(path).stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size, max_pixels or 0)
    found = CACHE.get(key)
    if found is not None:
        return found
    data = None
    if max_pixels:
        from memegauge.images.check import downscaled_picture  # Pillow only when a limit applies

        data = downscaled_picture(path, max_pixels)
    if data is None:
        data = Path(path).read_bytes()
    picture = PictureURL(f"data:{image_mime(data, path)};base64,{base64.b64encode(data).decode('ascii')}")
    CACHE.put(key, picture)
    return picture
