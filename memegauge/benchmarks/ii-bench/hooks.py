"""II-Bench's JSON lists one picture per entry with its questions: one item per question, the picture shared;
its domain, emotion and difficulty (where the entry or the question gives them) become groups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import rows, split_file

GROUPS = ("domain", "emotion", "difficulty")


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    path = split_file(spec, source, split)
    found = []
    for where, entry in rows(path, "json"):
        for n, q in enumerate(entry.get("questions") or []):
            merged = {**entry, **q}
            found.append((f"{where}.questions[{n}]", {
                "id": q.get("id"), "image": str(source / str(entry.get("local_path"))), "text": "",
                "options": q.get("options") or [], "gold": {"answer": q.get("answer")},
                "groups": {g: merged.get(g) for g in GROUPS}, "extra": {"question": q.get("question", "")}}))
    return found
