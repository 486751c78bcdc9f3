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
from collections.abc import Callable, Iterable
from typing import Any

from memegauge.files import (Row, confined, jsonl_lines, printable, read_user_text, user_cache_root,
                             write_bytes_atomic, write_text_atomic)
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
    unreadable: str = ""  # why the reader could not interpret the row ("unreadable line (FILE:LINE: …)"), or ""


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
    a picture is one `InputError` naming its file and line (a meme set's memes are pictures). A row the reader
    could not interpret (`ReleaseRow.unreadable`) is no meme: it is listed, one ``FILE:LINE<TAB>reason`` line
    each, in ``root/converted/SPLIT.unreadable.txt``, so the meme set and that list count the benchmark's rows."""
    readable = [row for row in rows if not row.unreadable]
    for row in readable:
        if row.picture is None:
            raise InputError("the row has no picture", row.where, "give every row its picture, or fix the file "
                             "from the release")
    path = write_meme_set(root, split, [
        {"id": row.id, "image": row.picture, "text": row.text, "labels": labels(row), "source": source,
         **({"groups": row.groups} if row.groups else {})} for row in readable])
    listed = path.with_name(f"{split}.unreadable.txt")
    if len(readable) < len(rows):
        write_text_atomic(listed, "".join(f"{row.where}\t{row.unreadable}\n" for row in rows if row.unreadable))
    elif listed.exists():
        listed.unlink()  # a copy imported again without its bad lines
    return path


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


class MissingFile(InputError):
    """A release's file for the split asked is not in the copy (the kit names the benchmark's splits in its fix)."""


class Unreadable(ValueError):
    """Raised by a reader's row function for a row it cannot interpret (a field of the wrong type): the row is
    counted as left out with this reason and its line (`release_jsonl`), never a crash, never a silent skip."""


def scalar(r: dict[str, Any], key: str) -> str | None:
    """The row's `key` as text (a number as its digits), None when absent or null; a list, object or boolean
    there is `Unreadable`."""
    value = r.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise Unreadable(f"{key!r} is {type(value).__name__}, not text or a number")
    return str(value)


def texts(r: dict[str, Any], key: str) -> list[str]:
    """The row's `key` as a list of texts ([] when absent or null); anything else there is `Unreadable`."""
    value = r.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Unreadable(f"{key!r} is not a list of texts")
    return value


def unreadable_row(where: str, problem: str, fields: Iterable[str]) -> ReleaseRow:
    """The row standing for a line the reader cannot interpret: its label `fields` None, each said as
    "unreadable line (NAME:LINE: problem)" (NAME the file's name, or the zip's listing)."""
    place = where.rsplit("/", 1)[-1]
    reason = f"unreadable line ({place}: {problem})"
    keys = list(fields)
    return ReleaseRow(where=where, id="", picture=None, text="", labels=dict.fromkeys(keys),
                      why=dict.fromkeys(keys, reason), unreadable=reason)


def release_jsonl(path: Path, fields: Iterable[str], make: Callable[[str, Row], ReleaseRow],
                  text: str | None = None) -> list[ReleaseRow]:
    """Every non-blank line of a release's JSONL file as `make(FILE:LINE, record)`; a line that is not JSON, not
    a JSON object, or that `make` finds `Unreadable`, is a `ReleaseRow` of its own with its label `fields` None
    and `unreadable` saying "unreadable line (NAME:LINE: what)", which the kit counts as left out of each task
    (and the meme-set conversion lists): the other rows are still read and asked.

    The rule for a whole file: when more than half its lines cannot be read, it is not the release's JSONL
    (another format, a damaged copy) and that is one `InputError` naming the first bad line. A file that is not
    text in its encoding stops at `read_user_text`, before any line. `text`: the file's content when it is
    not on disk (a listing inside a zip)."""
    if text is None and not Path(path).is_file():
        raise MissingFile("the release's file for this split is not in the copy", str(path),
                          "give the release's folder as released (its splits' files in place)")
    out, bad = [], []
    for where, value, problem in jsonl_lines(read_user_text(path) if text is None else text, str(path)):
        if not problem and not isinstance(value, dict):
            problem = f"the line is {type(value).__name__}, not a JSON object"
        if not problem:
            record = Row(value)
            record.where = where
            try:
                out.append(make(where, record))
                continue
            except Unreadable as exc:
                problem = str(exc)
        bad.append((where, problem))
        out.append(unreadable_row(where, problem, fields))
    if bad and len(bad) * 2 > len(out):
        raise InputError(f"{len(bad)} of {len(out)} lines cannot be read as the release's rows (first, line "
                         f"{bad[0][0].rsplit(':', 1)[1]}: {bad[0][1]}): not the release's JSONL", bad[0][0],
                         "give the release's file unchanged (a file with one bad line in two is not read; one "
                         "with fewer is, each bad line counted as left out)")
    return out


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
