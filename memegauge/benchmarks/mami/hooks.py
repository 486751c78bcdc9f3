"""MAMI's rows: the gold answers come from five 0/1 columns (sub-task A and the four sub-task B types), and the
test split's labels from the separate test_labels.txt; each file is found by name anywhere in the copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import rows, split_file
from memegauge.files import confined

TYPES = ("shaming", "stereotype", "objectification", "violence")


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    given = source / spec.splits[split]
    path = given if given.is_file() else next(iter(sorted(source.rglob(given.name))), None) or split_file(
        spec, source, split)  # folder names vary by release; none found: split_file says what is missing
    labels = _test_labels(next(iter(sorted(source.rglob("test_labels.txt"))), source / "test_labels.txt"))
    found = []
    for where, r in rows(path, "tsv"):
        gold = labels.get(r.get("file_name", ""), r)
        picture = confined(path.parent, r.get("file_name", ""), where)  # inside the release
        found.append((where, {"id": r.get("file_name"), "image": str(picture),
                              "text": r.get("Text Transcription", ""),
                              "gold": {"misogynous": gold.get("misogynous"),
                                       "subtypes": [t for t in TYPES if gold.get(t) == "1"]}}))
    return found


def _test_labels(path: Path) -> dict[str, dict[str, str]]:
    if not path.is_file():
        return {}
    columns = ("misogynous", *TYPES)
    return {cells[0]: dict(zip(columns, cells[1:], strict=False))
            for line in path.read_text(encoding="utf-8").splitlines() if (cells := line.split("\t"))[0]}
