"""Writing converted meme sets: the JSONL layout `memegauge.memes` reads (id, image relative to the
file, text, labels), one file per split under ``ROOT/converted/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memegauge.files import confined, jsonl_objects, printable, write_text_atomic


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
