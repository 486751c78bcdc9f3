"""GOAT-Bench keeps one folder per task: each item is asked its own task only (every task is `labelled_only`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import rows
from memegauge.types import InputError


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for task in spec.tasks:
        path = source / task / f"{split}.jsonl"
        if not path.is_file():
            raise InputError(f"GOAT-Bench's {task} file not found: {path}", str(source),
                             "give the folder holding the release's five task folders")
        found += [(where, {"id": f"{task}/{r.get('id')}", "text": r.get("text"),
                           "image": str(path.parent / str(r.get("img"))), "gold": {task: r.get("label")}})
                  for where, r in rows(path, "jsonl")]
    return found
