"""A data set's rows as released, typed (`ReleaseRow`), and the converted meme sets written from them.

One reader per data set: each catalogue entry's `rows(root, split)` reads its release's own layout into
`ReleaseRow`s; the meme-set conversion (`write_meme_set`, ``converted/SPLIT.jsonl``) and the benchmark kit
(`memegauge.benchmarks.kit.items`, through the benchmark's YAML field names) both consume them, so a converted
meme set and its benchmark count the same rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memegauge.files import write_text_atomic


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
    """``root/converted/SPLIT.jsonl`` of `rows` (one meme per row; `labels(row)` its label list)."""
    return write_meme_set(root, split, [
        {"id": row.id, "image": row.picture, "text": row.text, "labels": labels(row), "source": source,
         **({"groups": row.groups} if row.groups else {})} for row in rows])


def write_meme_set(root: Path, split: str, rows: list[dict[str, Any]]) -> Path:
    """``root/converted/SPLIT.jsonl`` from rows whose ``image`` is a path inside `root`."""
    path = root / "converted" / f"{split}.jsonl"
    lines = []
    for row in rows:
        image = Path(row["image"])
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
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def jsonl_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(FILE:LINE, record) of a JSONL file; a line that is not a JSON object is one `InputError` naming it."""
    from memegauge.types import InputError  # light; kept out of the descriptors' import

    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", f"{path}:{n}", "give the release's file unchanged") from None
        if not isinstance(record, dict):
            raise InputError("a line that is not a JSON object", f"{path}:{n}", "give the release's file unchanged")
        out.append((f"{path}:{n}", record))
    return out
