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
meme set given as a folder of images. A second, independent OCR engine (tesseract) checks an erasure
with the engine that did not detect the text: it is an instrument of the tests and `bench/erase_quality.py`,
so it lives in `memegauge.testing.ocr_check`. Why the detector changed (`bench/erase_quality.py`, the 190
SemEval dev memes): after tesseract's word boxes were erased, RapidOCR still read 7.6% of the words it read
before (190 of 2,494); after RapidOCR's lines, 0.0% (0 of 2,494), and tesseract 1 of 2,188.

Images are handled as RGB uint8 arrays (never BGR): numpy arrays passed in are read as RGB / gray.
OpenCV and RapidOCR are imported lazily, so `import memegauge` works without them.
"""

from __future__ import annotations

import os
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


def as_rgb_array(image: Image.Image | np.ndarray) -> np.ndarray:
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


def white_mask(rgb: np.ndarray, min_value: int = 170, max_chroma: int = 60) -> np.ndarray:
    """Near-white, low-saturation pixels (meme lettering), as a bool array."""
    lo = rgb.min(axis=2).astype(np.int16)
    hi = rgb.max(axis=2).astype(np.int16)
    return (lo >= min_value) & ((hi - lo) <= max_chroma)


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
    rgb = load_rgb(image) if isinstance(image, (str, os.PathLike)) else as_rgb_array(image)
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
    white = white_mask(patch)
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
