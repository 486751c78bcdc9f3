"""HarMeme's `labels` list holds the harmfulness and, for a harmful meme, its target: split them into two fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import rows, split_file

HARM = ("not harmful", "somewhat harmful", "very harmful")


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    path = split_file(spec, source, split)
    found = []
    for where, r in rows(path, "jsonl"):
        labels = [str(label).strip().lower() for label in r.get("labels") or []]
        harm = next((label for label in labels if label in HARM), None)
        target = next((label for label in labels if label not in HARM), None)
        found.append((where, {"id": r.get("id"), "text": r.get("text"), "image": str(path.parent.parent / "images" /
                              str(r.get("image"))), "gold": {"harmfulness": harm, "target": target}}))
    return found
