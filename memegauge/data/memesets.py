"""A data set's rows as released, typed (`ReleaseRow`), and the converted meme sets written from them.

One reader per data set: each catalogue entry's `rows(root, split)` reads its release's own layout into
`ReleaseRow`s; the meme-set conversion (`write_meme_set`, ``converted/SPLIT.jsonl``) and the benchmark kit
(`memegauge.benchmarks.kit.items`, through the benchmark's YAML field names) both consume them, so a converted
meme set and its benchmark count the same rows."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memegauge.files import confined, jsonl_objects, printable, user_cache_root, write_bytes_atomic, write_text_atomic
from memegauge.errors import InputError


@dataclass(frozen=True)
class ReleaseRow:
    """One row of a release, as released: nothing dropped, nothing guessed."""

    where: str  # FILE:LINE (or FILE[ROW]) of the row, for messages
    id: str  # the row's id as the release gives it ('' when it gives none: the kit counts it as left out)
    picture: Path | str | None  # the picture's path (absolute), or None for a text-only row
    text: str  # the meme's text as released
    labels: dict[str, Any]  # label field → the value as released (None: the row carries none)
    groups: dict[str, str] = field(default_factory=dict)  # group field → value (language, source data set, …)
    why: dict[str, str] = field(default_factory=dict)  # label field → why it is absent (reported with its count)
    extra: dict[str, Any] = field(default_factory=dict)  # other fields a prompt may read (question, options, …)


def meme_labels(row: ReleaseRow) -> list[str]:
    """The row's labels as a meme set's flat `labels` list (lists flattened, absent ones left out)."""
    out: list[str] = []
    for value in row.labels.values():
        for label in value if isinstance(value, list) else [value]:
            if label not in (None, "") and str(label) not in out:
                out.append(str(label))
    return out


def write_rows(root: Path, split: str, rows: list[ReleaseRow], source: str,
               labels: Any = meme_labels) -> Path:
    """``root/converted/SPLIT.jsonl`` of `rows` (one meme per row; `labels(row)` its label list); a row without
    a picture is one `InputError` naming its file and line (a meme set's memes are pictures)."""
    for row in rows:
        if row.picture is None:
            raise InputError("the row has no picture", row.where, "give every row its picture, or fix the file "
                             "from the release")
    return write_meme_set(root, split, [
        {"id": row.id, "image": row.picture, "text": row.text, "labels": labels(row), "source": source,
         **({"groups": row.groups} if row.groups else {})} for row in rows])


def write_meme_set(root: Path, split: str, rows: list[dict[str, Any]]) -> Path:
    """``root/converted/SPLIT.jsonl`` from rows whose ``image`` is a path inside `root`."""
    path = root / "converted" / f"{split}.jsonl"
    lines = []
    for number, row in enumerate(rows, start=1):
        where = getattr(row, "where", "") or f"{split} (row {number}, id {printable(row.get('id'))})"
        image = confined(root, Path(row["image"]), where)  # a release's `../` or `/etc/passwd` stays out
        lines.append(json.dumps({**row, "image": str(Path("..") / image.relative_to(root))}, ensure_ascii=False))
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def converted_splits(root: Path) -> dict[str, Path]:
    """Every converted meme set of an installed copy, by split name."""
    return {p.stem: p for p in sorted((root / "converted").glob("*.jsonl"))}


def pictures_by_name(folder: Path) -> dict[str, Path]:
    """Every file under `folder` by its file name (a user's copy may nest its pictures one level deeper)."""
    return {p.name: p for p in sorted(folder.rglob("*")) if p.is_file()}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every row of a release's JSONL file; a broken line, or a key a reader asks of a row that lacks it,
    is one `InputError` naming the file and line (`memegauge.files.jsonl_objects`)."""
    return jsonl_objects(path, "fix that line of the release's file, or import an unaltered copy")


def jsonl_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(FILE:LINE, record) of a release's JSONL file; a line that is not a JSON object, or a key a reader asks
    of a row that lacks it, is one `InputError` naming the file and line (`memegauge.files.jsonl_objects`)."""
    return [(row.where, row) for row in jsonl_objects(path, "give the release's file unchanged")]


def parquet_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(FILE[ROW], record) of a Parquet file, as a Hugging Face release stores it (a picture column is a
    struct {bytes, path}: `picture_file` writes it out)."""
    try:
        import pyarrow.parquet as pq  # lazy: only releases stored as Parquet need it
    except ImportError:
        raise InputError("reading Parquet needs pyarrow", str(path), "pip install 'memegauge[pandas]'") from None
    try:
        records = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises its own classes for a damaged or foreign file
        raise InputError(f"not a readable Parquet file: {exc}", str(path), "give the release's file unchanged "
                         "(`memegauge data verify NAME` re-checks an installed copy)") from None
    return [(f"{path}[{n}]", r) for n, r in enumerate(records)]


_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF8", ".gif"), (b"RIFF", ".webp"), (b"BM", ".bmp"))


def picture_file(value: Any, where: str) -> str | None:
    """A picture stored inside a release's Parquet row (a struct {bytes, path}, or raw bytes), written once to
    the user cache under its sha256 (the installed copy stays as released, so `data verify` still holds), as
    the absolute path the kit reads; None when the row has no picture."""
    data = value.get("bytes") if isinstance(value, dict) else value
    if data in (None, b""):
        return None
    if not isinstance(data, bytes):
        raise InputError(f"picture is not bytes but {type(data).__name__}", where, "give the release's file unchanged")
    suffix = next((ext for magic, ext in _MAGIC if data.startswith(magic)), ".img")
    path = user_cache_root() / "benchmark-pictures" / f"{hashlib.sha256(data).hexdigest()}{suffix}"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data)
    return str(path)
