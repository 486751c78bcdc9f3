"""HarMeme's `labels` list holds the harmfulness and, for a harmful meme, its target: split into two fields. Its
pictures are a folder of their own (`pictures/`, PNGs named as the annotations' `image`, at any depth)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import rows, split_file
from memegauge.files import confined

HARM = ("not harmful", "somewhat harmful", "very harmful")


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    path = split_file(spec, source, split)
    pictures = {p.name: p for p in (source / "pictures").rglob("*") if p.is_file()}
    found = []
    for where, r in rows(path, "jsonl"):
        labels = [str(label).strip().lower() for label in r.get("labels") or []]
        image = str(r.get("image") or "")
        found.append((where, {"id": r.get("id"), "text": r.get("text"),
                              "image": str(pictures.get(image) or confined(source / "pictures", image, where)),
                              "gold": {"harmfulness": next((x for x in labels if x in HARM), None),
                                       "target": next((x for x in labels if x not in HARM), None)}}))
    return found
