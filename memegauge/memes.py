"""Load a meme set into validated `Meme` records.

Three layouts are read:

* **JSONL** (`.jsonl`, `.ndjson`): one JSON object per line with `id` (string or integer), `image`
  (path relative to the file — or to the pictures folder `images`, when one is given — or absolute),
  `text`, and optionally `caption`, `labels` (a list of strings) and `source`. A line without an `id`
  key takes its image's file name without the suffix (MemeQA's `memes.jsonl` is `{image, text}` per
  line). An absent or null string field reads as "". Blank lines are skipped; other keys (FHM's
  integer `label`, a `target`) are kept as given in `Meme.extra`; known keys must have the right type.
* **CSV** (`.csv`): a header row naming the same columns (case and surrounding spaces ignored);
  `labels` holds the labels separated by `|` or `;`. Empty cells count as absent.
* **A folder of images** (`.png .jpg .jpeg .gif .bmp .webp .tif .tiff`, not recursive, sorted by name):
  id = file stem; text from a sidecar `<stem>.txt` (UTF-8) when present, else from the `ocr` callable,
  else empty — with one warning for the whole folder, because empty texts starve every text-reading stage.

Every problem is raised as one `InputError` naming what is wrong, where (`FILE:LINE`, or the file and
meme id) and how to fix it, before anything is returned: a half-loaded meme set would silently change
which memes a run evaluates. Image paths in the result are absolute, and every image is checked with
Pillow's `verify()` so a corrupt file fails here rather than deep inside a model call.

`require_images=False` loads a meme set whose image files are not (all) at hand, for text-only runs: a
meme with no `image` or a missing file gets `image=None` (one warning says how many). Images that are
present are still verified. `images=DIR` names a separate pictures folder that relative `image` names
resolve from (the SemEval-2021 Task 6 layout: `memes.jsonl` beside `images/`); given the corpus folder
itself (one holding `images/`), the pictures are read from its `images/` (`picture_folder`), as
`memegauge qa eval --images` reads them. `limit=N` keeps the first N memes in file order and stops reading there, so
problems after them are not reported (and the folder loader does not OCR the rest).
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterator

from memegauge.extras import install_hint
from memegauge.files import check_meme_text, find_file, jsonl_rows, read_user_text
from memegauge.images.check import verify_picture
from memegauge.types import InputError, Meme

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
TEXT_FIELDS = ("text", "caption", "source")
KNOWN_KEYS = frozenset(("id", "image", "labels", *TEXT_FIELDS))  # the rest of a record goes to `Meme.extra`
_LABEL_SPLIT = re.compile(r"[|;]")
_FORMATS_FIX = (
    "give a .jsonl file (one JSON object per line), a .csv file with a header row, "
    "or a folder of images"
)

Ocr = Callable[[Path], str]


def load_memes(path: str | Path, *, require_images: bool = True, limit: int | None = None,
               ocr: Ocr | None = None, images: str | Path | None = None) -> list[Meme]:
    """Read the meme set at `path` (JSONL, CSV or a folder of images) into `Meme` records.

    `ocr(image_path) -> text` is used only for folder memes without a sidecar `.txt`. `images`: the
    folder relative `image` names resolve from (default: the meme-set file's folder).
    Raises `InputError` (exit code 2) on the first problem found; see the module docstring.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(f"limit must be a whole number of at least 1, not {limit!r}", "limit",
                         "pass a positive limit, or None for every meme")
    try:
        source = Path(path).expanduser()
        exists = source.exists()
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a name too long, an unknown ~user
        source, exists = Path(str(path)), False
    if not exists and _data_name(source):  # `NAME:SPLIT`: an installed data set's meme set (docs/data.md)
        from memegauge.data import resolve_data  # the catalogue imports every entry: only for a data set name

        source = resolve_data(*source.name.split(":", 1))
        exists = source.exists()
    if not exists:
        raise InputError("meme set not found", str(path), f"check the path; {_FORMATS_FIX}")
    ctx = _Context(source, require_images, limit, picture_folder(images) if images is not None else None)
    if source.is_dir():
        if images is not None:
            raise InputError("a pictures folder was given for a meme set that is itself a folder of pictures",
                             str(images), "drop `images:` (--images), or give a .jsonl/.csv meme set")
        memes = _load_folder(ctx, ocr)
    elif source.suffix.lower() in JSONL_SUFFIXES:
        memes = _collect(ctx, _jsonl_rows(source))
    elif source.suffix.lower() == ".csv":
        memes = _collect(ctx, _csv_rows(source))
    else:
        raise InputError(f"unsupported meme set format {source.suffix or '(no suffix)'!r}",
                         str(path), _FORMATS_FIX)
    if not memes:
        raise InputError(f"no memes in {path}", str(path),
                         "add at least one meme" + ("" if source.is_dir() else " (one per line)"))
    ctx.report_missing_images()
    return memes


# --------------------------------------------------------------------------------------------------
# Shared record handling
# --------------------------------------------------------------------------------------------------


@dataclass
class _Context:
    """What every record needs while one meme set is read: its file, options and the ids seen."""

    source: Path
    require_images: bool
    limit: int | None
    pictures: Path | None = None  # the separate pictures folder (`images=`), if any
    seen: dict[str, str] = field(default_factory=dict)  # id -> where it was first defined
    missing_images: int = 0

    @property
    def base_dir(self) -> Path:
        """Where relative `image` names resolve from."""
        if self.pictures is not None:
            return self.pictures
        return self.source if self.source.is_dir() else self.source.parent

    @property
    def relative_to(self) -> str:
        """How a fix names the folder relative image names resolve from."""
        return f"the pictures folder {self.pictures}" if self.pictures is not None else "the meme-set file"

    def report_missing_images(self) -> None:
        # one warning for the set, not one per meme: a text-only run may lack hundreds of images
        if self.missing_images:
            warnings.warn(f"{self.source}: {self.missing_images} meme(s) have no image file; "
                          "loaded as text-only memes (require_images=False)", stacklevel=3)


def _data_name(source: Path) -> bool:
    """Whether a missing path's last part reads ``NAME:SPLIT`` with NAME a catalogue data set (a config's
    relative path has the config's folder in front of it)."""
    from memegauge.data import is_data_name  # the catalogue imports every entry: only for a missing path

    return ":" in source.name and is_data_name(source.name)


def _collect(ctx: _Context, rows: Iterator[tuple[str, dict[str, Any]]]) -> list[Meme]:
    """Turn (where, raw record) pairs into memes, stopping at `ctx.limit`."""
    memes: list[Meme] = []
    for where, raw in rows:
        memes.append(_make_meme(ctx, raw, where))
        if ctx.limit is not None and len(memes) >= ctx.limit:
            break
    return memes


def _make_meme(ctx: _Context, raw: dict[str, Any], where: str) -> Meme:
    """Validate one raw record (types, id, image) and build its `Meme`."""
    meme_id = _check_id(ctx, raw["id"] if "id" in raw else _id_from_image(raw.get("image")), where)
    where_id = f"{where} (meme {meme_id!r})"
    values = {name: _optional_str(raw.get(name), name, where_id) for name in TEXT_FIELDS}
    for name in ("text", "caption"):  # sent in prompts: a bounded size
        check_meme_text(values[name], where_id, f"meme {name}")
    labels = _check_labels(raw.get("labels"), where_id)
    image = _resolve_image(ctx, raw.get("image"), where_id)
    extra = {key: value for key, value in raw.items() if key not in KNOWN_KEYS and value is not None}
    return Meme(id=meme_id, image=image, labels=labels, extra=extra, **values)


def _id_from_image(image: Any) -> Any:
    """A record without an `id` is named by its picture's file name (`memes/0042.png` → `0042`)."""
    return Path(image.strip()).stem if isinstance(image, str) and image.strip() else None


def _check_id(ctx: _Context, value: Any, where: str) -> str:
    """Ids may be strings or integers (many data sets number their memes); they must be unique."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("meme has no id", where, 'give every meme a unique, non-empty "id" (or an "image", '
                         "whose file name then names it)")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f'"id" must be a string or an integer, not {_type_name(value)}', where,
                         'write the id as a string, e.g. "id": "meme-001"')
    meme_id = str(value).strip()
    if meme_id in ctx.seen:
        raise InputError(f"duplicate id {meme_id!r} (first used at {ctx.seen[meme_id]})", where,
                         "give every meme a unique id")
    ctx.seen[meme_id] = where
    return meme_id


def _optional_str(value: Any, name: str, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f'"{name}" must be a string, not {_type_name(value)}', where,
                         f'write "{name}" as a JSON string (or leave it out)')
    return value


def _check_labels(value: Any, where: str) -> list[str]:
    """JSON labels must be a list of strings; CSV rows arrive already split into one."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f'"labels" must be a list of strings, not {_type_name(value)}', where,
                         'write labels as a list, e.g. "labels": ["harmful", "gender"]')
    return [v.strip() for v in value if v.strip()]


def _resolve_image(ctx: _Context, value: Any, where: str) -> Path | None:
    """Make the image path absolute (relative to the meme-set file) and check the file."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if ctx.require_images:
            raise InputError("meme has no image", where,
                             'add "image": "<path relative to the meme-set file>", '
                             "or load with require_images=False for text-only memes")
        ctx.missing_images += 1
        return None
    if not isinstance(value, str):
        raise InputError(f'"image" must be a string path, not {_type_name(value)}', where,
                         'write "image" as a path string relative to the meme-set file')
    image, found = find_file(ctx.base_dir, value.strip())
    if not found:
        if ctx.require_images:
            other = ("" if ctx.pictures is not None else "; pictures kept in a separate folder: name it "
                     "with `images:` in the config (or --images DIR)")
            raise InputError(f"image file not found: {image}", where,
                             f"fix the path (relative to {ctx.relative_to}) or add the image{other}; "
                             "require_images=False loads the meme without it")
        ctx.missing_images += 1
        return None
    verify_picture(image, where)
    return image


def picture_folder(folder: str | Path) -> Path:
    """The folder a meme set's pictures are in, given the pictures folder or the corpus folder holding
    it as `images/` (SemEval-2021 Task 6: `images/` beside `memes.jsonl`); every method reads it so."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise InputError("pictures folder not found", str(folder),
                         "give the folder holding the memes' pictures (`images:` in the config, or --images)")
    return path / "images" if (path / "images").is_dir() else path


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------------------------------
# Files: UTF-8 text, JSONL, CSV
# --------------------------------------------------------------------------------------------------


_read_text = read_user_text  # UTF-8 (BOM allowed) or --encoding; errors name file, line and byte


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (FILE:LINE, object) for every non-blank line."""
    for where, raw in jsonl_rows(path, "write exactly one JSON object per line"):
        if not isinstance(raw, dict):
            raise InputError(f"expected a JSON object, got {_type_name(raw)}", where,
                             'write one object per line: {"id": ..., "image": ..., "text": ...}')
        yield where, raw


def _csv_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (FILE:LINE, record) per data row; LINE is where the row starts (quoted cells may span
    lines). Empty cells become None so they read as absent, and labels are split on | or ;."""
    reader = csv.reader(io.StringIO(_read_text(path), newline=""))
    header, start = None, 1
    try:
        for row in reader:
            where, start = f"{path}:{start}", reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = _csv_header(row, where)
                continue
            yield where, _csv_record(header, row, where)
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", f"{path}:{start}",
                         'quote cells that hold commas, quotes or line breaks ("...")') from None


def _csv_header(row: list[str], where: str) -> list[str]:
    header = [cell.strip().lower() for cell in row]
    if "id" not in header:
        raise InputError(f"the CSV header has no 'id' column (columns: {', '.join(header)})", where,
                         "start the file with a header row such as: id,image,text,caption,labels,source")
    return header


def _csv_record(header: list[str], row: list[str], where: str) -> dict[str, Any]:
    if len(row) > len(header):
        raise InputError(f"row has {len(row)} cells but the header has {len(header)}", where,
                         "quote cells that contain commas, or add the missing column names")
    raw = {name: (cell.strip() or None) for name, cell in zip(header, row, strict=False)}  # a short row: cells missing
    if raw.get("labels") is not None:
        raw["labels"] = [label for label in _LABEL_SPLIT.split(raw["labels"])]
    return raw


# --------------------------------------------------------------------------------------------------
# A folder of images
# --------------------------------------------------------------------------------------------------


def _load_folder(ctx: _Context, ocr: Ocr | None) -> list[Meme]:
    """One meme per image file; text from `<stem>.txt`, else `ocr` (by default RapidOCR, read once per
    picture and cached by its content: `memegauge.images.erase.cached_ocr_text`), else empty (warned once)."""
    if ocr is None:
        from memegauge.images.erase import cached_ocr_text, text_detection_available

        ocr = cached_ocr_text if text_detection_available() else None
    images = sorted(p for p in ctx.source.iterdir()
                    if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not images:
        raise InputError(f"no memes in {ctx.source}: no image files ({' '.join(IMAGE_SUFFIXES)})",
                         str(ctx.source), "put meme images in the folder, or give a .jsonl/.csv file")
    memes, without_text = [], 0
    for image in images[: ctx.limit]:
        raw = {"id": image.stem, "image": image.name, "source": ctx.source.name}
        meme = _make_meme(ctx, raw, f"{ctx.source} ({image.name})")  # verifies the image first
        text = _folder_text(image, ocr)
        without_text += text is None
        memes.append(meme.model_copy(update={"text": text or ""}))
    if without_text:
        warnings.warn(f"{ctx.source}: {without_text} image(s) have no sidecar .txt and OCR is not "
                      f"installed ({install_hint('erase')}); their meme text is empty", stacklevel=3)
    return memes


def _folder_text(image: Path, ocr: Ocr | None) -> str | None:
    """The meme's text, or None when there is no way to get it (the caller warns once).
    Errors raised by `ocr` propagate unchanged: they are tool failures, not bad input."""
    sidecar = image.with_suffix(".txt")
    if sidecar.is_file():
        return check_meme_text(_read_text(sidecar).strip(), str(sidecar))
    if ocr is None:
        return None
    return ocr(image).strip()
