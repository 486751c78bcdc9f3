"""A benchmark's items, read from its release's own layout: where the data is (`data_folder`), and what each
item holds (`Item`), by the generic reader of the YAML's `read:` section or by the folder's `hooks.items`.

A hook's `items(source: Path, split: str, spec: Benchmark) -> [(where, raw item)]` returns items shaped as the generic
reader's: ``{"id", "image" (path relative to source, or absolute, or None), "text", "gold": {task: raw value},
"groups": {field: value}, "options": [..], "extra": {..}}``; the kit checks and maps them the same way.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from memegauge.benchmarks.kit.spec import HOOKS_FILE, Benchmark, Task
from memegauge.files import confined, find_file, read_user_text, user_cache_root, write_bytes_atomic
from memegauge.types import InputError


@dataclass(frozen=True)
class Item:
    """One item of a split, as the run asks it."""

    id: str  # unique within the split
    image: Path | None  # the picture (absolute), or None for a text-only item
    text: str  # the meme's text, as the release gives it
    gold: dict[str, str | list[str] | None]  # task → gold answer (a class, a letter, a list; None: not asked)
    groups: dict[str, str] = field(default_factory=dict)  # group field → value (language, source, …)
    options: list[str] = field(default_factory=list)  # a letter task's options, in letter order
    extra: dict[str, Any] = field(default_factory=dict)  # other fields a prompt may read


def data_folder(spec: Benchmark, data: Path | None) -> Path:
    """The folder holding the release's files: `data` (a user's copy, in the release's layout) or the installed
    copy from the data catalogue (`memegauge data`)."""
    if data is not None:
        if not data.is_dir():
            raise InputError(f"data folder not found: {data}", "--data",
                             f"give the folder holding {spec.title}'s files as released "
                             f"({', '.join(spec.splits.values())})")
        return data
    try:
        from memegauge.data import installed_dir  # lazy: the data catalogue is optional for --data runs
    except ImportError:
        raise InputError(f"{spec.title} is not at hand: this MemeGauge has no data catalogue", spec.name,
                         "give its folder with --data DIR (the release's own layout)") from None
    return installed_dir(spec.data) / spec.source_id


def load_hooks(folder: Path, name: str) -> ModuleType | None:
    """The folder's `hooks.py`, imported under a name of its own (it is not a package module), or None."""
    path = folder / HOOKS_FILE
    if not path.is_file():
        return None
    module_spec = importlib.util.spec_from_file_location(f"memegauge_benchmark_{name.replace('-', '_')}", path)
    assert module_spec is not None and module_spec.loader is not None  # a .py file always has a loader
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def read_items(spec: Benchmark, source: Path, split: str, hooks: ModuleType | None,
               limit: int | None = None) -> list[Item]:
    """The split's items, checked: ids unique, gold answers mapped and valid, pictures found."""
    if split not in spec.splits:
        raise InputError(f"{spec.name} has no split {split!r}", "--split", f"use one of: {', '.join(spec.splits)}")
    raw = hooks.items(source, split, spec) if hooks and hasattr(hooks, "items") else _generic(spec, source, split)
    tasks = spec.tasks_of(split)
    items, seen = [], set()
    for where, record in raw:
        item = _item(spec, tasks, source, record, where)
        if item.id in seen:
            raise InputError(f"duplicate id {item.id!r}", where, "give every item a unique id")
        seen.add(item.id)
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise InputError(f"no items in split {split!r}", str(source / spec.splits[split]),
                         "check the file is the release's own")
    return items


def split_file(spec: Benchmark, source: Path, split: str) -> Path:
    path = source / spec.splits[split]
    if not path.is_file():
        raise InputError(f"{spec.title}'s {split} file not found: {path}", str(source),
                         f"give the folder holding the release's files ({', '.join(spec.splits.values())})")
    return path


def rows(path: Path, fmt: str) -> list[tuple[str, dict[str, Any]]]:
    """(FILE:LINE, record) of a JSONL, JSON (a list, or an object of records), CSV or TSV file."""
    text = read_user_text(path)
    if fmt == "jsonl":
        return [(f"{path}:{n}", _json(line, f"{path}:{n}")) for n, line in enumerate(text.split("\n"), 1)
                if line.strip()]
    if fmt == "json":
        data = _json(text, str(path))
        records = list(data.values()) if isinstance(data, dict) else data
        return [(f"{path}[{n}]", r) for n, r in enumerate(records)]
    reader = csv.DictReader(text.splitlines(), delimiter="\t" if fmt == "tsv" else ",")
    return [(f"{path}:{n + 2}", {k.strip(): (v or "").strip() for k, v in r.items() if k})
            for n, r in enumerate(reader)]


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


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", where, "give the release's file unchanged") from None


def _generic(spec: Benchmark, source: Path, split: str) -> list[tuple[str, dict[str, Any]]]:
    read = spec.read
    found = []
    for where, r in rows(split_file(spec, source, split), read.format):
        image = r.get(read.image) if read.image else None
        if image not in (None, ""):  # a release's picture path stays inside the release (`../`, /etc/passwd)
            image = str(confined(source, f"{read.image_dir}/{image}" if read.image_dir else str(image), where))
        found.append((where, {"id": r.get(read.id), "text": r.get(read.text) if read.text else "",
                              "image": image,
                              "gold": {t.gold: r.get(t.gold) for t in spec.tasks.values()},
                              "groups": {g: r.get(g) for t in spec.tasks.values() for g in t.groups},
                              "options": r.get(read.options) if read.options else [], "extra": r}))
    return found


def _item(spec: Benchmark, tasks: dict[str, Task], source: Path, r: dict[str, Any], where: str) -> Item:
    if r.get("id") in (None, ""):
        raise InputError("item has no id", where, f"give every item its {spec.read.id!r}")
    gold_raw = r.get("gold") or {}
    gold = {name: _gold(task, gold_raw.get(task.gold, gold_raw.get(name)), where, name) for name, task in tasks.items()}
    return Item(id=str(r["id"]), image=_image(source, r.get("image"), where), text=str(r.get("text") or ""),
                gold=gold, groups={k: str(v) for k, v in (r.get("groups") or {}).items() if v not in (None, "")},
                options=[str(o) for o in r.get("options") or []], extra=dict(r.get("extra") or {}))


def _gold(task: Task, raw: Any, where: str, name: str) -> str | list[str] | None:
    if (raw is None or raw == "") and task.labelled_only:
        return None
    if raw is None or raw == "":
        raise InputError(f"task {name!r}: the item has no gold answer ({task.gold!r})", where,
                         "this split carries no labels for it (a test split as first released?); use a labelled split")
    value: Any = task.values.get(str(raw), raw) if task.values else raw
    if task.answer == "labels":
        value = value if isinstance(value, list) else [v for v in str(value).split(",") if v.strip()]
        value = [str(v).strip().lower() for v in value]
        wrong = [v for v in value if v not in task.classes]
    elif task.answer == "letter":
        value = str(value).strip().upper()
        wrong = [] if len(value) == 1 and value.isalpha() else [value]
    else:
        value = str(value).strip().lower()
        wrong = [] if value in task.classes else [value]
    if wrong:
        raise InputError(f"task {name!r}: gold answer {wrong} is not one of {task.classes or 'A-Z'}", where,
                         "map the release's values in the task's `values:`")
    return value


def _image(source: Path, value: Any, where: str) -> Path | None:
    if value in (None, ""):
        return None
    path, found = find_file(source, str(value).strip())
    if not found:
        raise InputError(f"picture not found: {path}", where, "give the release's images folder beside its files")
    return path
