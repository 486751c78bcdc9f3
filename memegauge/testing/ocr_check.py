"""A second OCR engine that checks text erasure: tesseract word boxes read on two views of a meme.

Erasure (`memegauge.images.erase`) finds text with RapidOCR's detector; an erasure is checked with the
engine that did not find the text (`tests/test_erase.py`, `bench/erase_quality.py`): few words should
survive. This is a checking instrument, not run by any command, so it lives under `memegauge.testing`.
pytesseract is imported lazily, and the `tesseract` binary is found at run time (`tesseract_available`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image

from memegauge.extras import install_hint
from memegauge.images.erase import Box, as_rgb_array, load_rgb, white_mask
from memegauge.errors import InputError

_WHERE = "text erasure"
_NO_TESSERACT_FIX = (
    "run `apt-get install tesseract-ocr` (the project's setup script does this) and "
    f"{install_hint('erase')}, or score on original images with --no-erase"
)
_OCR_TARGET_SIDE = 1000  # images whose longer side is smaller are upscaled for OCR (small print)
_OCR_MAX_SCALE = 3.0


@lru_cache(maxsize=1)
def _tesseract_version() -> str | None:
    try:
        import pytesseract
    except ImportError:
        return None
    cmd = pytesseract.pytesseract.tesseract_cmd
    if not (os.path.isfile(cmd) or shutil.which(cmd)):
        return None
    try:
        return str(pytesseract.get_tesseract_version())
    except Exception:  # TesseractNotFoundError, OSError, a broken install
        return None


def tesseract_available() -> bool:
    """True when pytesseract is importable and the `tesseract` binary runs."""
    return _tesseract_version() is not None


def _require_tesseract() -> Any:
    if not tesseract_available():
        raise InputError("tesseract is not installed", where=_WHERE, fix=_NO_TESSERACT_FIX)
    import pytesseract

    return pytesseract



def _gray(rgb: np.ndarray) -> np.ndarray:
    return (0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]).astype(np.uint8)


def _ocr_views(rgb: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """The views OCR reads, with their extra tesseract options.

    - grayscale, tesseract's own (global Otsu) binarisation: dark print, screenshots, most captions;
    - the white-text view, an inverted binary image where near-white low-saturation pixels are black
      and all else white, read with Sauvola (local) thresholding: white-with-black-outline meme
      lettering over a busy photo, and light print the global threshold loses.
    Measured on 16 SemEval-2021 memes against their annotated text: gray alone reads 142 of 165 words,
    the white view 147, both together 160 (adding inverted/Sauvola-gray views: at most +1, 2x time)."""
    white_text = np.where(white_mask(rgb), 0, 255).astype(np.uint8)
    return [(_gray(rgb), ""), (white_text, "-c thresholding_method=2")]


def _ocr_scale(h: int, w: int) -> float:
    side = max(h, w)
    if side <= 0 or side >= _OCR_TARGET_SIDE:
        return 1.0
    return min(_OCR_MAX_SCALE, _OCR_TARGET_SIDE / side)


@dataclass(frozen=True)
class _Word:
    text: str
    conf: float
    box: Box

    @property
    def n_alnum(self) -> int:
        return sum(ch.isalnum() for ch in self.text)


def _run_ocr(view: np.ndarray, scale: float, lang: str, psm: int, options: str = "") -> list[_Word]:
    """Every non-empty word tesseract reports on one view, with boxes in original-image pixels."""
    pytesseract = _require_tesseract()
    img = Image.fromarray(view)
    if scale != 1.0:
        img = img.resize((round(img.width * scale), round(img.height * scale)), Image.Resampling.LANCZOS)
    data = pytesseract.image_to_data(
        img, lang=lang, config=f"--psm {psm} {options}".strip(), output_type=pytesseract.Output.DICT
    )
    words: list[_Word] = []
    for text, conf, x, y, w, h in zip(
        data["text"], data["conf"], data["left"], data["top"], data["width"], data["height"], strict=True
    ):
        text = (text or "").strip()
        try:
            conf_value = float(conf)
        except (TypeError, ValueError):
            continue
        if not text or conf_value < 0:
            continue
        box = (int(x / scale), int(y / scale), max(1, round(w / scale)), max(1, round(h / scale)))
        words.append(_Word(text, conf_value, box))
    return words


def _same_line(a: Box, b: Box) -> bool:
    """b sits on a's text line, next to it: similar height, vertical overlap, small gap."""
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    if not (0.6 <= bh / ah <= 1.6):
        return False
    overlap = min(ay + ah, by + bh) - max(ay, by)
    if overlap < 0.5 * min(ah, bh):
        return False
    gap = max(bx - (ax + aw), ax - (bx + bw), 0)
    return gap <= 1.5 * ah


def _iou(a: Box, b: Box) -> float:
    ix = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    iy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def _select_words(words: Sequence[tuple[int, _Word]], min_conf: float, width: int, height: int) -> list[_Word]:
    """Keep what is text, drop what OCR hallucinates on photographs. `words` are (view, word) pairs.

    - words with 3+ letters/digits: confidence >= min_conf; a mostly alphanumeric word of 4+ also at
      >= min_conf - 20 when it is corroborated — another view read a word at the same place, or it
      sits on the line of a confident word (meme lettering touching a drawing, an X or an arrow,
      lowers tesseract's confidence; garbage read off a face is rarely seen twice);
    - words with 1-2 letters/digits ("I", "OF", but also "2" read off a face): confidence >= 90, or
      >= min_conf when on the line of a kept longer word (similar height, close by).
    """

    def plausible(w: _Word) -> bool:
        _, _, bw, bh = w.box
        if bh < 4 or (bw >= 0.9 * width and bh >= 0.5 * height):
            return False
        return w.n_alnum >= 1

    candidates = [(v, w) for v, w in words if plausible(w)]
    confident = [w for _, w in candidates if w.n_alnum >= 3 and w.conf >= min_conf]

    def corroborated(view: int, w: _Word) -> bool:
        if any(_same_line(k.box, w.box) for k in confident if k is not w):
            return True
        return any(
            v != view and o.conf >= min_conf - 20 and _iou(o.box, w.box) >= 0.3 for v, o in candidates
        )

    weak = [
        w
        for v, w in candidates
        if min_conf - 20 <= w.conf < min_conf
        and w.n_alnum >= 4
        and w.n_alnum >= 0.6 * len(w.text)
        and corroborated(v, w)
    ]
    long_kept = confident + weak
    short_kept = [
        w
        for _, w in candidates
        if w.n_alnum <= 2
        and (w.conf >= 90 or (w.conf >= min_conf and any(_same_line(k.box, w.box) for k in long_kept)))
    ]
    return long_kept + short_kept


def _pad(box: Box, width: int, height: int, pad_ratio: float) -> Box:
    """Grow a box by `pad_ratio` of its height up and down and twice that left and right
    (tesseract often clips a word's first or last letter when it touches a drawing)."""
    x, y, w, h = box
    pad_y = max(2, round(pad_ratio * h))
    pad_x = 2 * pad_y
    x0, y0 = max(0, x - pad_x), max(0, y - pad_y)
    return (x0, y0, min(width, x + w + pad_x) - x0, min(height, y + h + pad_y) - y0)


def _merge_boxes(boxes: Sequence[Box], width: int, height: int, pad_ratio: float = 0.15) -> list[Box]:
    """Pad every box (`_pad`), then merge the same word seen twice: boxes that
    overlap with IoU >= 0.5, or a box lying (80%+) inside one of similar height (a word split in two).
    Neighbouring words and lines are not merged, so every box stays about one text-line high."""
    rects = [_pad(b, width, height, pad_ratio) for b in boxes if b[2] > 0 and b[3] > 0]

    def same_word(a: Box, b: Box) -> bool:
        if _iou(a, b) >= 0.5:
            return True
        ix = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
        iy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
        if ix <= 0 or iy <= 0:
            return False
        small = min(a[2] * a[3], b[2] * b[3])
        return ix * iy >= 0.8 * small and max(a[3], b[3]) <= 1.4 * min(a[3], b[3])

    changed = True
    while changed:
        changed = False
        merged: list[Box] = []
        for r in rects:
            for i, m in enumerate(merged):
                if same_word(r, m):
                    x0, y0 = min(m[0], r[0]), min(m[1], r[1])
                    x1, y1 = max(m[0] + m[2], r[0] + r[2]), max(m[1] + m[3], r[1] + r[3])
                    merged[i] = (x0, y0, x1 - x0, y1 - y0)
                    changed = True
                    break
            else:
                merged.append(r)
        rects = merged
    return sorted(set(rects), key=lambda b: (b[1], b[0]))


def _find_words(
    image: Image.Image | np.ndarray, min_conf: float, lang: str, psm: int
) -> tuple[np.ndarray, list[_Word]]:
    rgb = as_rgb_array(image)
    height, width = rgb.shape[:2]
    scale = _ocr_scale(height, width)
    words: list[tuple[int, _Word]] = []
    for index, (view, options) in enumerate(_ocr_views(rgb)):
        words.extend((index, w) for w in _run_ocr(view, scale, lang, psm, options))
    return rgb, _select_words(words, min_conf, width, height)


def find_text_boxes(
    image: Image.Image | np.ndarray, min_conf: float = 50, *, lang: str = "eng", psm: int = 11
) -> list[Box]:
    """Boxes `(x, y, w, h)` around the words of an image, slightly padded, duplicates merged.

    OCR runs on a grayscale and an inverted white-text view (meme lettering is white with a black
    outline; see `_ocr_views`); words with tesseract confidence >= `min_conf` count (short words need more, see
    `_select_words`). `psm` 11 = sparse text. A numpy array is read as RGB (or gray). Raises
    InputError when tesseract is not installed."""
    _require_tesseract()
    rgb, words = _find_words(image, min_conf, lang, psm)
    return _merge_boxes([w.box for w in words], rgb.shape[1], rgb.shape[0])


def ocr_words(
    image: Image.Image | np.ndarray | str | os.PathLike[str],
    min_conf: float = 50,
    *,
    lang: str = "eng",
    psm: int = 11,
) -> list[str]:
    """The words `find_text_boxes` would keep, in reading order (top to bottom, left to right).

    Both OCR views are read; a word seen by both views at the same place is listed once (the more
    confident reading). Used to check an erasure (few words should survive) and to read text off a
    folder of images."""
    _require_tesseract()
    rgb = load_rgb(image) if isinstance(image, (str, os.PathLike)) else as_rgb_array(image)
    _, words = _find_words(rgb, min_conf, lang, psm)
    unique: list[_Word] = []
    for word in sorted(words, key=lambda w: -w.conf):
        if all(_iou(word.box, kept.box) < 0.3 for kept in unique):
            unique.append(word)
    line_height = max((w.box[3] for w in unique), default=1)
    unique.sort(key=lambda w: (round(w.box[1] / line_height), w.box[0]))
    return [w.text for w in unique]
