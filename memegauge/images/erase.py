"""Text erasure: find the text lines written on a meme (RapidOCR) and paint them out (OpenCV inpainting).

AdamMeme scores a meme on its picture with the text erased and the meme text in the prompt,
so an original and a rewritten text are judged against the same picture. The pipeline is:

1. `detect_text` finds the text lines with PP-OCRv4's detector (RapidOCR; the ONNX models ship in the
   `rapidocr-onnxruntime` wheel, nothing is downloaded): captions of any colour, outline, size or angle.
2. `erase_regions` fills each line's quadrilateral, grows it by 0.3 × the line height (outlines,
   shadows, anti-aliasing), inpaints it (`cv2.inpaint`, Telea or Navier-Stokes; only masked pixels
   change), then detects again and erases what is left of those lines (a second pass).
3. `erase_text` writes the result as PNG, atomically; `erase_dir` / `iter_erase_dir` do a folder,
   resumably; `erased_image_for` is the content-addressed cache the scoring stage uses, so each image
   is erased once.

`read_text` / `ocr_text` / `cached_ocr_text` read the text (detection, angle, recognition), e.g. for a
meme set given as a folder of images. The tesseract functions (`find_text_boxes`, `ocr_words`) remain
as a second, independent engine: `bench/erase_quality.py` and the tests check an erasure with the
engine that did not detect the text. Why the detector changed (`bench/erase_quality.py`, the 190 SemEval
dev memes): after tesseract's word boxes were erased, RapidOCR still read 7.6% of the words it read
before (190 of 2,494); after RapidOCR's lines, 0.0% (0 of 2,494), and tesseract 1 of 2,188.

Images are handled as RGB uint8 arrays (never BGR): numpy arrays passed in are read as RGB / gray.
OpenCV, RapidOCR and pytesseract are imported lazily, so `import memegauge` works without them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from memegauge.extras import install_hint
from memegauge.types import InputError, file_sha256

Box = tuple[int, int, int, int]  # (x, y, w, h) in pixels of the original image

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
METHODS = ("telea", "ns")

_WHERE = "text erasure"
_NO_TESSERACT_FIX = (
    "run `apt-get install tesseract-ocr` (the project's setup script does this) and "
    f"{install_hint('erase')}, or score on original images with --no-erase"
)
_OCR_TARGET_SIDE = 1000  # images whose longer side is smaller are upscaled for OCR (small print)
_OCR_MAX_SCALE = 3.0


@dataclass(frozen=True)
class EraseResult:
    """What erasing one image did.

    `boxes_found` is the number of (merged) text boxes painted out; it is None when the image was
    skipped because its output was already up to date (`skipped=True`)."""

    boxes_found: int | None
    out_path: Path
    source: Path | None = None
    skipped: bool = False


# --------------------------------------------------------------------------------------------------
# Dependencies
# --------------------------------------------------------------------------------------------------


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


def _cv2() -> Any:
    try:
        import cv2
    except ImportError as exc:
        raise InputError(
            f"text erasure needs the `erase` extra (OpenCV: {exc})",
            where=_WHERE,
            fix=f"{install_hint('erase')}, or score on original images with --no-erase",
        ) from None
    return cv2


# --------------------------------------------------------------------------------------------------
# Loading and saving
# --------------------------------------------------------------------------------------------------


def load_rgb(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an image file as an RGB uint8 array (EXIF orientation applied, alpha dropped).

    Raises InputError naming the file when it is missing or not a readable image. The format is
    sniffed from the bytes, so a JPEG named `.png` (common in meme corpora) reads fine."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            f"image file {path} does not exist",
            where=_WHERE,
            fix="check the path (image paths in a meme set are relative to the meme-set file)",
        )
    try:
        with Image.open(path) as img:
            img.load()
            img = ImageOps.exif_transpose(img)
            if img.mode in ("RGBA", "LA") or (img.mode == "P" and "transparency" in img.info):
                rgba = img.convert("RGBA")
                canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                img = Image.alpha_composite(canvas, rgba)
            rgb = img.convert("RGB")
    except Exception as exc:  # UnidentifiedImageError, truncated files, decompression bombs, ...
        raise InputError(
            f"{path} is not a readable image ({type(exc).__name__}: {exc})",
            where=_WHERE,
            fix=f"replace {path.name} with a valid PNG/JPEG/WebP file or remove it from the meme set",
        ) from None
    return np.asarray(rgb, dtype=np.uint8).copy()


def _as_rgb_array(image: Image.Image | np.ndarray) -> np.ndarray:
    if isinstance(image, Image.Image):
        return np.asarray(image.convert("RGB"), dtype=np.uint8)
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        if np.issubdtype(arr.dtype, np.floating) and arr.size and arr.max() <= 1.0:
            arr = arr * 255.0
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    if arr.ndim == 2:
        return np.stack([arr] * 3, axis=-1)
    if arr.ndim == 3 and arr.shape[2] in (3, 4):
        return arr[:, :, :3]
    if arr.ndim == 3 and arr.shape[2] == 1:
        return np.repeat(arr, 3, axis=2)
    raise InputError(
        f"expected an RGB/gray image array, got shape {arr.shape}",
        where=_WHERE,
        fix="pass a PIL image or an (H, W), (H, W, 3) or (H, W, 4) uint8 array",
    )


def _write_png_atomic(rgb: np.ndarray, out_path: Path) -> None:
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            Image.fromarray(rgb, mode="RGB").save(handle, format="PNG")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, out_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# --------------------------------------------------------------------------------------------------
# Finding text
# --------------------------------------------------------------------------------------------------


def _white_mask(rgb: np.ndarray, min_value: int = 170, max_chroma: int = 60) -> np.ndarray:
    """Near-white, low-saturation pixels (meme lettering), as a bool array."""
    lo = rgb.min(axis=2).astype(np.int16)
    hi = rgb.max(axis=2).astype(np.int16)
    return (lo >= min_value) & ((hi - lo) <= max_chroma)


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
    white_text = np.where(_white_mask(rgb), 0, 255).astype(np.uint8)
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
    rgb = _as_rgb_array(image)
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
    rgb = load_rgb(image) if isinstance(image, (str, os.PathLike)) else _as_rgb_array(image)
    _, words = _find_words(rgb, min_conf, lang, psm)
    unique: list[_Word] = []
    for word in sorted(words, key=lambda w: -w.conf):
        if all(_iou(word.box, kept.box) < 0.3 for kept in unique):
            unique.append(word)
    line_height = max((w.box[3] for w in unique), default=1)
    unique.sort(key=lambda w: (round(w.box[1] / line_height), w.box[0]))
    return [w.text for w in unique]


# --------------------------------------------------------------------------------------------------
# Text detection and reading: RapidOCR (PP-OCRv4 detection and recognition, ONNX models inside the
# `rapidocr-onnxruntime` wheel: nothing is downloaded at run time)
# --------------------------------------------------------------------------------------------------

Quad = tuple[tuple[float, float], ...]  # a text line's four corners, clockwise from top left


@lru_cache(maxsize=1)
def _rapidocr() -> Any:
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:
        raise InputError(f"text detection needs the `erase` extra ({exc})", where=_WHERE,
                         fix=f"{install_hint('erase')}, or score on original images with --no-erase") from None
    return RapidOCR(print_verbose=False)


def text_detection_available() -> bool:
    """True when RapidOCR and OpenCV import (erasure and OCR can run)."""
    try:
        _rapidocr()
        _cv2()
    except InputError:
        return False
    return True


def _bgr(image: Image.Image | np.ndarray | str | os.PathLike[str]) -> np.ndarray:
    """The image as the BGR colour array RapidOCR (OpenCV) reads; a gray image is given three channels."""
    rgb = load_rgb(image) if isinstance(image, (str, os.PathLike)) else _as_rgb_array(image)
    if rgb.ndim == 2:
        rgb = np.repeat(rgb[:, :, None], 3, axis=2)
    return np.ascontiguousarray(rgb[:, :, ::-1])


def detect_text(image: Image.Image | np.ndarray | str | os.PathLike[str]) -> list[Quad]:
    """The text lines of an image as quadrilaterals (PP-OCRv4 detection): captions of any colour,
    outline, size and angle, and small print."""
    found, _ = _rapidocr()(_bgr(image), use_det=True, use_cls=False, use_rec=False)
    return [tuple((float(x), float(y)) for x, y in quad) for quad in (found or [])]


def read_text(image: Image.Image | np.ndarray | str | os.PathLike[str],
              min_score: float = 0.5) -> list[tuple[Quad, str, float]]:
    """The text lines of an image, read (detection, angle classification and recognition): `(quad, text,
    score)` in reading order, lines scored below `min_score` left out."""
    found, _ = _rapidocr()(_bgr(image))
    lines = [(tuple((float(x), float(y)) for x, y in quad), str(text), float(score))
             for quad, text, score in (found or []) if float(score) >= min_score]
    height = np.median([_quad_height(q) for q, _, _ in lines]) if lines else 1.0
    return sorted(lines, key=lambda line: (round(min(y for _, y in line[0]) / max(height, 1.0)),
                                           min(x for x, _ in line[0])))


def ocr_text(image: Image.Image | np.ndarray | str | os.PathLike[str]) -> str:
    """The text written on an image, one line per detected text line (for a folder of memes)."""
    return "\n".join(text for _, text, _ in read_text(image))


def cached_ocr_text(image_path: str | os.PathLike[str]) -> str:
    """`ocr_text` of an image file, read once per picture: kept under the user cache by the file's
    sha256 (a folder of memes is read again at every run; its pictures are OCR'd once)."""
    from memegauge.files import user_cache_root, write_text_atomic

    cached = user_cache_root() / "ocr" / f"{file_sha256(Path(image_path))}-ppocrv4.txt"  # per engine
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    text = ocr_text(image_path)
    write_text_atomic(cached, text)
    return text


def _quad_height(quad: Quad) -> float:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = quad
    return (float(np.hypot(x3 - x0, y3 - y0)) + float(np.hypot(x2 - x1, y2 - y1))) / 2


def region_mask(shape: tuple[int, ...], quads: Sequence[Quad], grow: float = 0.3,
                min_grow: int = 3) -> np.ndarray:
    """The inpainting mask (uint8, 255 = erase) of text lines: each quadrilateral filled and grown by
    `grow` × its line height (at least `min_grow` px), so outlines, shadows and anti-aliasing go too."""
    cv2 = _cv2()
    height, width = shape[:2]
    mask = np.zeros((height, width), dtype=np.uint8)
    for quad in quads:
        g = max(min_grow, int(round(grow * _quad_height(quad))))
        points = np.round(np.array(quad, dtype=np.float64)).astype(np.int32)
        x0, y0 = np.maximum(points.min(axis=0) - g, 0)
        x1, y1 = np.minimum(points.max(axis=0) + g + 1, [width, height])
        if x1 <= x0 or y1 <= y0:
            continue
        window = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
        cv2.fillPoly(window, [points - [x0, y0]], 255)
        window = cv2.dilate(window, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * g + 1, 2 * g + 1)))
        region = mask[y0:y1, x0:x1]
        np.maximum(region, window, out=region)
    return mask


def erase_regions(rgb: np.ndarray, *, passes: int = 2, method: str = "telea", grow: float = 0.3
                  ) -> tuple[np.ndarray, np.ndarray, int]:
    """(erased image, union of the masks painted, lines found): detect, mask, inpaint; then detect
    again on the result and erase what is still found of the text already erased (a line a first
    pass left half visible), up to `passes` times. Only masked pixels change.

    A later pass keeps only lines no taller than the first pass's tallest and lying mostly on what was
    painted: an inpainted smear can look like one huge text line to the detector, and erasing it
    would wipe the picture."""
    current, painted, found = rgb, np.zeros(rgb.shape[:2], dtype=np.uint8), 0
    tallest = None
    for _ in range(passes):
        quads = detect_text(current)
        if tallest is not None:
            quads = [q for q in quads if _quad_height(q) <= tallest and _share_on(painted, q) >= 0.5]
        if not quads:
            break
        tallest = tallest or max(_quad_height(q) for q in quads)
        found += len(quads)
        mask = region_mask(current.shape, quads, grow=grow)
        current = inpaint(current, mask, method=method)
        np.maximum(painted, mask, out=painted)
    return current, painted, found


def _share_on(mask: np.ndarray, quad: Quad) -> float:
    """The share of the quadrilateral's pixels that `mask` covers."""
    own = region_mask(mask.shape, [quad], grow=0, min_grow=0)
    area = int((own > 0).sum())
    return float(((own > 0) & (mask > 0)).sum()) / area if area else 0.0


# --------------------------------------------------------------------------------------------------
# Erasing
# --------------------------------------------------------------------------------------------------


def _otsu_minority(cv2: Any, gray: np.ndarray) -> np.ndarray:
    """The less frequent class of an Otsu split: the ink of text on a plainer background."""
    _, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    bright = binary > 0
    return bright if bright.mean() <= 0.5 else ~bright


def _box_text_mask(cv2: Any, patch: np.ndarray) -> np.ndarray:
    """Text pixels inside one box: white lettering plus its outline, else the Otsu minority class."""
    h, w = patch.shape[:2]
    white = _white_mask(patch)
    frac = float(white.mean()) if white.size else 0.0
    if 0.03 <= frac <= 0.65:
        # white letters; grow them over the dark outline (a few % of the text height thick)
        grow = max(2, round(0.08 * h))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1))
        grown = cv2.dilate(white.astype(np.uint8), kernel) > 0
        gray = cv2.cvtColor(patch, cv2.COLOR_RGB2GRAY)
        outline = grown & (gray < 110)
        mask = white | outline
    else:
        mask = _otsu_minority(cv2, cv2.cvtColor(patch, cv2.COLOR_RGB2GRAY))
    if mask.mean() < 0.02:  # refinement found nothing usable: paint out the whole box
        mask = np.ones((h, w), dtype=bool)
    return mask


def build_mask(rgb: np.ndarray, boxes: Sequence[Box], dilate: int = 5) -> np.ndarray:
    """The inpainting mask (uint8, 255 = erase) for the given boxes, refined to the text pixels
    and dilated by `dilate` pixels (kept within each box grown by `dilate`)."""
    cv2 = _cv2()
    height, width = rgb.shape[:2]
    mask = np.zeros((height, width), dtype=np.uint8)
    dilate = max(0, int(dilate))
    kernel = (
        cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * dilate + 1, 2 * dilate + 1)) if dilate else None
    )
    for box in boxes:
        x, y, w, h = (int(round(v)) for v in box)
        x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
        if x1 <= x0 or y1 <= y0:
            continue
        local = _box_text_mask(cv2, rgb[y0:y1, x0:x1]).astype(np.uint8) * 255
        # dilate inside a window grown by `dilate` so the text edge (and JPEG halo) is covered
        gx0, gy0 = max(0, x0 - dilate), max(0, y0 - dilate)
        gx1, gy1 = min(width, x1 + dilate), min(height, y1 + dilate)
        window = np.zeros((gy1 - gy0, gx1 - gx0), dtype=np.uint8)
        window[y0 - gy0 : y1 - gy0, x0 - gx0 : x1 - gx0] = local
        if kernel is not None:
            window = cv2.dilate(window, kernel)
        region = mask[gy0:gy1, gx0:gx1]
        np.maximum(region, window, out=region)
    return mask


def inpaint(rgb: np.ndarray, mask: np.ndarray, method: str = "telea", radius: int = 5) -> np.ndarray:
    """Fill the masked pixels (mask > 0) from their surroundings; unmasked pixels are unchanged."""
    cv2 = _cv2()
    if method not in METHODS:
        raise InputError(
            f"unknown inpainting method {method!r}", where=_WHERE, fix=f"use one of {', '.join(METHODS)}"
        )
    if not mask.any():
        return rgb.copy()
    flag = cv2.INPAINT_TELEA if method == "telea" else cv2.INPAINT_NS
    bgr = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
    out = cv2.inpaint(bgr, (mask > 0).astype(np.uint8) * 255, radius, flag)
    out = cv2.cvtColor(out, cv2.COLOR_BGR2RGB)
    out[mask == 0] = rgb[mask == 0]  # guarantee: only masked pixels change
    return out


def erase_text(
    image_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    boxes: Sequence[Box] | None = None,
    method: str = "telea",
    dilate: int = 5,
) -> EraseResult:
    """Erase the text of one image and write the result to `out_path` as PNG (atomically).

    With `boxes=None` the text lines are found by RapidOCR's detector and erased in up to two passes
    (`erase_regions`); with explicit boxes `(x, y, w, h)` no detection runs and the letters inside them
    are painted out (`build_mask`, grown by `dilate` px). An image without text is written unchanged."""
    image_path, out_path = Path(image_path), Path(out_path)
    if method not in METHODS:
        raise InputError(
            f"unknown inpainting method {method!r}", where=_WHERE, fix=f"use one of {', '.join(METHODS)}"
        )
    _cv2()  # fail before reading when OpenCV is missing
    if boxes is None:
        _rapidocr()
    rgb = load_rgb(image_path)
    if boxes is None:
        result, _, found = erase_regions(rgb, method=method)
    else:
        boxes = list(boxes)
        found = len(boxes)
        result = inpaint(rgb, build_mask(rgb, boxes, dilate=dilate), method=method) if boxes else rgb
    _write_png_atomic(result, out_path)
    return EraseResult(boxes_found=found, out_path=out_path, source=image_path)


# --------------------------------------------------------------------------------------------------
# Folders and the cache
# --------------------------------------------------------------------------------------------------


def list_images(in_dir: str | os.PathLike[str]) -> list[Path]:
    """The png/jpg/jpeg/webp files directly in `in_dir`, sorted by name."""
    in_dir = Path(in_dir)
    if not in_dir.is_dir():
        raise InputError(
            f"image folder {in_dir} does not exist", where=_WHERE, fix="pass a folder of meme images"
        )
    return sorted(
        p for p in in_dir.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")
    )


def _output_names(images: Sequence[Path]) -> dict[Path, str]:
    """`<stem>.png`, or `<name>.png` where two inputs share a stem (a.jpg and a.png)."""
    stems: dict[str, int] = {}
    for p in images:
        stems[p.stem] = stems.get(p.stem, 0) + 1
    return {p: (f"{p.stem}.png" if stems[p.stem] == 1 else f"{p.name}.png") for p in images}


def iter_erase_dir(
    in_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    method: str = "telea",
) -> Iterator[EraseResult]:
    """Erase every image of `in_dir` into `out_dir/<stem>.png`, yielding one result per image.

    Resumable: an output newer than its input is skipped (`skipped=True`). Use `len(list_images(d))`
    for a progress total, e.g. `for r in track(iter_erase_dir(a, b), total=n)`."""
    images = list_images(in_dir)
    if images:
        _rapidocr()
    out_dir = Path(out_dir)
    names = _output_names(images)
    for src in images:
        dst = out_dir / names[src]
        try:
            if dst.stat().st_mtime_ns >= src.stat().st_mtime_ns:
                yield EraseResult(boxes_found=None, out_path=dst, source=src, skipped=True)
                continue
        except FileNotFoundError:
            pass
        yield erase_text(src, dst, method=method)


def erase_dir(
    in_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    method: str = "telea",
) -> list[EraseResult]:
    """`iter_erase_dir` run to the end."""
    return list(iter_erase_dir(in_dir, out_dir, method=method))


def erased_image_for(
    image_path: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str],
    *,
    method: str = "telea",
) -> Path:
    """The text-erased version of an image, from `cache_dir/<sha256>-lines.png` (erased once, then
    reused). Keyed by the image's sha256, so the same picture under two names is erased once; the
    `-lines` tag keeps pictures erased by the earlier word-box method (`<sha256>.png`) from being
    reused; another inpainting method gets its own file (`<sha256>-lines-ns.png`)."""
    image_path = Path(image_path)
    if not image_path.is_file():
        load_rgb(image_path)  # raises the InputError naming the file
    digest = file_sha256(image_path)
    suffix = "-lines" if method == "telea" else f"-lines-{method}"
    out = Path(cache_dir) / f"{digest}{suffix}.png"
    if not out.is_file():
        erase_text(image_path, out, method=method)
    return out
