"""II-Bench as `memegauge data get ii-bench` installs it: the Hub release m-a-p/II-Bench, one Parquet file per
split (data/dev-*.parquet, data/test-*.parquet), one row per question with its picture inside (the `image`
struct {bytes, path}), its six options in option1..option6, the answer letter, and domain, emotion and
difficulty, which become groups. The columns are the dataset card's `dataset_info.features`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import parquet_rows, picture_file
from memegauge.types import InputError

GROUPS = ("domain", "emotion", "difficulty")
OPTIONS = tuple(f"option{n}" for n in range(1, 7))


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    files = sorted(source.glob(spec.splits[split]))
    if not files:
        raise InputError(f"II-Bench's {split} files not found: {source / spec.splits[split]}", str(source),
                         "run `memegauge data get ii-bench`, or give --data the folder holding the release's data/")
    found = []
    for path in files:
        for where, r in parquet_rows(path):
            found.append((where, {
                "id": r.get("id"), "image": picture_file(r.get("image"), where), "text": "",
                "options": [r[o] for o in OPTIONS if r.get(o) not in (None, "")], "gold": {"answer": r.get("answer")},
                "groups": {g: r.get(g) for g in GROUPS}, "extra": {"question": r.get("question") or ""}}))
    return found
