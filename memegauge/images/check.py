"""The one check every meme picture passes before a run uses it (readable, not too large to decode),
and the downscaling of a picture larger than a model accepts.

Pillow refuses to open a picture of more pixels than its decompression-bomb limit (a 20000×20000 PNG
of a few KB would take 1.2 GB to decode). That limit is MemeGauge's setting here: a picture over it
is one `InputError` naming its size, the limit and the variable that raises it, never "corrupt".
A model's own limit (`max_image_pixels` in the registry) is met by sending the picture smaller.
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import Image

from memegauge.errors import InputError

#: Environment variable: the most pixels (width × height) a meme picture may have.
ENV_MAX_PIXELS = "MEMEGAUGE_MAX_IMAGE_PIXELS"
#: Pillow's own refusal point (2 × its warning limit of 89,478,485 pixels, ~ 13,377 × 13,377).
DEFAULT_MAX_PIXELS = 2 * 89_478_485
_BOMB = re.compile(r"\((\d+) pixels\)")


def max_pixels() -> int:
    """The limit in force: `$MEMEGAUGE_MAX_IMAGE_PIXELS`, else `DEFAULT_MAX_PIXELS`."""
    raw = os.environ.get(ENV_MAX_PIXELS, "").strip().replace("_", "").replace(",", "")
    if not raw:
        return DEFAULT_MAX_PIXELS
    if not raw.isdigit() or int(raw) < 1:
        raise InputError(f"{ENV_MAX_PIXELS}={os.environ[ENV_MAX_PIXELS]!r} is not a whole number of "
                         "pixels", ENV_MAX_PIXELS, f"set it to e.g. {2 * DEFAULT_MAX_PIXELS}, or unset it")
    return int(raw)


def apply_pixel_limit() -> int:
    """Make Pillow refuse exactly above `max_pixels()` (it refuses above twice its MAX_IMAGE_PIXELS
    and only warns between: the warning is silenced, the refusal is ours to word)."""
    limit = max_pixels()
    Image.MAX_IMAGE_PIXELS = max(1, limit // 2)
    warnings.simplefilter("ignore", Image.DecompressionBombWarning)
    return limit


def verify_picture(image: Path, where: str) -> None:
    """Pillow's verify() reads the structure (and PNG checksums) without decoding all pixels; a
    picture it cannot read, or one over the pixel limit, is one `InputError`."""
    limit = apply_pixel_limit()
    try:
        with Image.open(image) as handle:
            handle.verify()
    except Image.DecompressionBombError as exc:
        found = _BOMB.search(str(exc))
        size = f"{int(found.group(1)):,} pixels" if found else "more pixels than allowed"
        raise InputError(
            f"picture too large to decode safely: {image} has {size}, over the limit of {limit:,}",
            where, f"if you trust the file, raise the limit (export {ENV_MAX_PIXELS}="
                   f"{int(found.group(1)) if found else 2 * limit}), or downscale the picture "
                   "(e.g. to 4096 pixels a side)") from None
    except Exception as exc:  # Pillow raises many types here (OSError, SyntaxError, ValueError...)
        raise InputError(f"image is corrupt or not an image: {image} ({exc})", where,
                         "replace the file with a readable PNG/JPEG/WebP image") from None


def fitted_size(size: tuple[int, int], max_pixels: int) -> tuple[int, int] | None:
    """The largest (width, height) of the same aspect within `max_pixels`, or None when `size` fits."""
    width, height = size
    if width * height <= max_pixels:
        return None
    scale = math.sqrt(max_pixels / (width * height))
    fitted = (max(1, math.floor(width * scale)), max(1, math.floor(height * scale)))
    while fitted[0] * fitted[1] > max_pixels:  # floor of a product can still overshoot by a row
        fitted = (fitted[0], fitted[1] - 1) if fitted[1] > 1 else (fitted[0] - 1, 1)
    return fitted


def downscale_plan(image: Path, max_pixels: int | None) -> dict[str, Any] | None:
    """What sending `image` to a model of `max_pixels` does to it: {from: [w, h], to: [w, h]}, or None
    when it is sent as it is (no limit, it fits, or it cannot be read: the backend then reports it)."""
    if not max_pixels:
        return None
    apply_pixel_limit()
    try:
        with Image.open(image) as handle:
            size = handle.size
    except Exception:  # unreadable here: the backend's own read reports it as a failed call
        return None
    fitted = fitted_size(size, max_pixels)
    return {"from": list(size), "to": list(fitted)} if fitted else None


def downscaled_picture(image: Path, max_pixels: int) -> bytes | None:
    """The picture re-encoded at most `max_pixels` (PNG when it has transparency or is PNG, else
    JPEG), or None when it already fits. Memoised on the file's path, mtime and size: a meme is
    sent in many calls."""
    stat = Path(image).stat()
    return _downscaled(str(image), stat.st_mtime_ns, stat.st_size, max_pixels)


@lru_cache(maxsize=64)
def _downscaled(image: str, mtime_ns: int, size: int, max_pixels: int) -> bytes | None:
    apply_pixel_limit()
    with Image.open(image) as handle:
        fitted = fitted_size(handle.size, max_pixels)
        if fitted is None:
            return None
        lossless = handle.format == "PNG" or "A" in handle.getbands() or "transparency" in handle.info
        picture = handle.convert("RGBA" if lossless else "RGB").resize(fitted, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG" if lossless else "JPEG", quality=90)
    return buffer.getvalue()
