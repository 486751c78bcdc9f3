"""MemeLens as `memegauge data get memelens` installs it: the Hub release QCRI/MemeLens, one folder per config
named TASK_LANG__SOURCE (e.g. stereotype_en__MAMI) holding SPLIT-*.parquet (test, train, validation), as the
card's `configs:` lists them. The task, language and source come from the folder's name and become groups.

The columns other than `id` could not be read from here: this reader ASSUMES `image` (the picture's bytes,
as a Hub Image column stores them), `text`, `label` and an optional `question`. A row whose label is not
yes/no (a multi-class config) is not asked: the report's `asked` counts what was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.items import parquet_rows, picture_file
from memegauge.types import InputError

BINARY = {"yes": "yes", "no": "no", "true": "yes", "false": "no", "1": "yes", "0": "no"}


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    files = sorted(source.glob(spec.splits[split]))
    if not files:
        raise InputError(f"MemeLens' {split} files not found: {source / spec.splits[split]}", str(source),
                         "run `memegauge data get memelens`, or give --data the folder holding its config folders")
    found = []
    for path in files:
        task, language, origin = config_groups(path.parent.name)
        for where, r in parquet_rows(path):
            found.append((where, {
                "id": f"{path.parent.name}/{r.get('id')}", "image": picture_file(r.get("image"), where),
                "text": r.get("text") or "", "gold": {"label": BINARY.get(str(r.get("label")).strip().lower())},
                "groups": {"task": task, "language": language, "source": origin},
                "extra": {"question": r.get("question") or f"Is this meme an instance of {task.replace('_', ' ')}?"}}))
    return found


def config_groups(name: str) -> tuple[str, str, str]:
    """(task, language, source) of a config folder: TASK_LANG__SOURCE, the task may hold underscores
    (sentiment_degree_en__MET_Meme); a few configs join the source with one underscore (propoganda_ar_ArMeme)."""
    if "__" in name:
        left, origin = name.split("__", 1)
        task, _, language = left.rpartition("_")
        return task or left, language, origin
    task, _, rest = name.partition("_")
    language, _, origin = rest.partition("_")
    return task, language, origin
