"""A benchmark's items, read from its release's own layout: where the data is (`data_folder`), the release's rows
(`ReleaseRow`: by the data catalogue entry's `rows` when the YAML says `read: {rows: catalogue}`, by the folder's
module's `rows`, or by the generic reader of the YAML's `read:` section), and what each task asks of each row
(`read_split`): a row is asked a task when it carries that task's gold answer, its picture is found and its id is
new; every other row is counted, per task, under the reason it was left out (`Split.left_out`), never dropped
silently, and a split that leaves nothing to ask is one `InputError` saying why.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from memegauge.benchmarks.kit.spec import HOOKS_FILE, Benchmark, Task
from memegauge.data.memesets import MissingFile, ReleaseRow, release_jsonl  # the releases' readers' helpers
from memegauge.files import confined, find_file, printable, read_user_text
from memegauge.errors import InputError


@runtime_checkable
class BenchmarkModule(Protocol):
    """What a benchmark folder's optional module (`hooks.py`) may bring: its own row reader. (It may also
    register answer kinds and metrics of its own when imported: `answers.register_answer`,
    `metrics.register_metric`.)"""

    def rows(self, source: Path, split: str, spec: Benchmark) -> list[ReleaseRow]:
        """The split's rows as released, typed; a label absent from a row is None, with `why` saying why."""
        ...


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
    classes: dict[str, list[str]] = field(default_factory=dict)  # task → this item's classes (`labels_from`)


@dataclass(frozen=True)
class Split:
    """A split as read: the items asked, how many rows it holds, and per task why the others were left out."""

    items: list[Item]
    rows: int  # rows in the split as released
    left_out: dict[str, dict[str, int]]  # task → reason → rows left out of it for that reason
    rows_of: dict[str, int] = field(default_factory=dict)  # task → rows that are its own (GOAT-Bench: a task's
    # listing); a row whose labels lack a task's field altogether is another task's, neither asked nor left out
    group_rows: dict[str, dict[str, int]] = field(default_factory=dict)  # task → "field=value" → its rows

    def asked(self, task: str) -> int:
        return sum(item.gold.get(task) is not None for item in self.items)


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


def read_split(spec: Benchmark, source: Path, split: str, module: ModuleType | None,
               tasks: dict[str, Task], limit: int | None = None) -> Split:
    """The split's items for `tasks`, checked; every row left out of a task counted under its reason. A split
    where no task has a row to ask is one `InputError` giving the counts."""
    if split not in spec.splits:
        raise InputError(f"{spec.name} has no split {split!r}", "--split", f"use one of: {', '.join(spec.splits)}")
    released = release_rows(spec, source, split, module)
    left_out: dict[str, Counter[str]] = {name: Counter() for name in tasks}
    rows_of: Counter[str] = Counter()
    group_rows: dict[str, Counter[str]] = {name: Counter() for name in tasks}
    items: list[Item] = []
    seen: set[str] = set()
    for n, row in enumerate(released):
        own = [name for name, task in tasks.items() if task.gold in row.labels or name in row.labels]
        rows_of.update(own)
        for name in own:
            group_rows[name].update(f"{g}={row.groups[g]}" for g in tasks[name].groups if g in row.groups)
        if limit is not None and n >= limit:
            for name in own:
                left_out[name]["beyond --limit"] += 1
            continue
        item, reasons = _item(spec, tasks, source, row, seen)
        for name, reason in reasons.items():
            left_out[name][reason] += 1
        if item is not None:
            seen.add(item.id)
            items.append(item)
    found = Split(items, len(released), {name: dict(counter) for name, counter in left_out.items()},
                  {name: rows_of[name] for name in tasks}, {name: dict(c) for name, c in group_rows.items()})
    if not any(found.asked(name) for name in tasks):
        raise InputError(nothing_to_ask(found, tasks), str(source / spec.splits[split]),
                         "give the release's labelled split, unchanged (`memegauge eval --list` names the splits)")
    return found


def nothing_to_ask(found: Split, tasks: dict[str, Task]) -> str:
    """One line: why no row could be asked (the reasons and their counts, per task)."""
    if not found.rows:
        return "0 items to ask: the split holds no rows"
    reasons = "; ".join(f"{name}: " + ", ".join(f"{count} {reason}" for reason, count in
                                               sorted(found.left_out[name].items(), key=lambda kv: -kv[1]))
                        for name in tasks)
    return f"0 items to ask of {found.rows} rows ({reasons})"


def release_rows(spec: Benchmark, source: Path, split: str, module: ModuleType | None) -> list[ReleaseRow]:
    """The split's rows as released: the catalogue entry's reader, the module's, or the generic one."""
    if spec.read.rows == "catalogue":
        from memegauge.data.catalogue import entry  # lazy: only benchmarks read by their catalogue entry need it

        reader = entry(spec.data).rows
        if reader is None:
            raise InputError(f"data set {spec.data!r} has no row reader", spec.name,
                             "set the YAML's `read:` fields instead of `rows: catalogue`")
        try:
            return reader(source, split)
        except MissingFile as exc:  # the split asked is not in this copy: name those that are
            present = [name for name, file in spec.splits.items() if (source / file).is_file()]
            raise InputError(exc.what, exc.where, f"{spec.name}'s splits are {', '.join(spec.splits)}; this copy "
                             f"({printable(source)}) holds {', '.join(present) or 'none of them'}: "
                             "pick one with --split, or give --data the folder holding the split's file") from None
    if module is not None and isinstance(module, BenchmarkModule):
        return module.rows(source, split, spec)
    return _generic(spec, source, split)


def split_file(spec: Benchmark, source: Path, split: str) -> Path:
    path = source / spec.splits[split]
    if not path.is_file():
        raise InputError(f"{spec.title}'s {split} file not found: {path}", str(source),
                         f"give the folder holding the release's files ({', '.join(spec.splits.values())})")
    return path


def rows(path: Path, fmt: str) -> list[tuple[str, dict[str, Any]]]:
    """(FILE:LINE, record) of a JSON (a list, or an object of records), CSV or TSV file (a JSONL file is read
    by `release_jsonl`, which counts an unreadable line rather than refusing the file)."""
    text = read_user_text(path)
    if fmt == "json":
        data = _json(text, str(path))
        records = list(data.values()) if isinstance(data, dict) else data
        return [(f"{path}[{n}]", r) for n, r in enumerate(records)]
    reader = csv.DictReader(text.splitlines(), delimiter="\t" if fmt == "tsv" else ",")
    return [(f"{path}:{n + 2}", {k.strip(): (v or "").strip() for k, v in r.items() if k})
            for n, r in enumerate(reader)]


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", where, "give the release's file unchanged") from None


def _generic(spec: Benchmark, source: Path, split: str) -> list[ReleaseRow]:
    """The YAML's `read:` fields applied to each row; a JSONL file's unreadable line is counted as left out
    (`release_jsonl`: more than half of them, the file is refused)."""
    read = spec.read
    path = split_file(spec, source, split)
    if read.format == "jsonl":
        golds = [t.gold for t in spec.tasks.values()]
        return release_jsonl(path, golds, lambda where, r: _generic_row(spec, source, where, r))
    return [_generic_row(spec, source, where, r) for where, r in rows(path, read.format)]


def _generic_row(spec: Benchmark, source: Path, where: str, r: dict[str, Any]) -> ReleaseRow:
    read = spec.read
    image = r.get(read.image) if read.image else None
    return ReleaseRow(
        where=where, id=str(r.get(read.id) if r.get(read.id) is not None else ""),
        text=str(r.get(read.text) or "") if read.text else "",
        # a release's picture path stays inside the release (`../`, /etc/passwd)
        picture=confined(source, f"{read.image_dir}/{image}" if read.image_dir else str(image), where)
        if image not in (None, "") else None,
        labels={t.gold: r.get(t.gold) for t in spec.tasks.values()},
        groups={g: str(r[g]) for t in spec.tasks.values() for g in t.groups if r.get(g) not in (None, "")},
        extra={**r, **({"options": r.get(read.options)} if read.options else {})})


def _item(spec: Benchmark, tasks: dict[str, Task], source: Path, row: ReleaseRow,
          seen: set[str]) -> tuple[Item | None, dict[str, str]]:
    """The row as an item and, per task of its own it is not asked, why (an item asked no task is None)."""
    tasks = {name: task for name, task in tasks.items() if task.gold in row.labels or name in row.labels}
    if row.unreadable:  # a line the reader could not interpret: counted under its reason and line
        return None, dict.fromkeys(tasks, row.unreadable)
    if row.id in ("", "None"):
        return None, dict.fromkeys(tasks, "no id")
    if row.id in seen:
        return None, dict.fromkeys(tasks, "duplicate id")
    image, found = _image(source, row.picture)
    if not found:
        return None, dict.fromkeys(tasks, "picture not found")
    gold, classes, reasons = {}, {}, {}
    for name, task in tasks.items():
        raw = row.labels.get(task.gold, row.labels.get(name))
        own = [str(c) for c in row.extra.get(task.labels_from) or []] if task.labels_from else task.classes
        value, reason = _gold(task, raw, own)
        gold[name] = value
        if value is None:
            reasons[name] = row.why.get(task.gold) or row.why.get(name) or reason
        elif task.labels_from:
            classes[name] = own
    if all(value is None for value in gold.values()):
        return None, reasons
    gold = {name: gold.get(name) for name in gold}
    options = row.extra.get("options") or []
    return Item(id=row.id, image=image, text=row.text, gold=gold, groups=dict(row.groups),
                options=[str(o) for o in options], extra=dict(row.extra), classes=classes), reasons


def _gold(task: Task, raw: Any, classes: list[str]) -> tuple[str | list[str] | None, str]:
    """The gold answer as the task's kind, or None and why it cannot be asked (no gold, or a value that is not
    one of the task's classes: counted, never a crash)."""
    if raw is None or raw == "" or (raw == [] and task.answer != "labels"):
        return None, f"no {task.gold}"
    value: Any = task.values.get(str(raw), raw) if task.values else raw
    if task.answer == "letter":
        value = str(value).strip().upper()
        return (value, "") if len(value) == 1 and value.isalpha() else (None, f"{task.gold} is not a letter")
    if task.answer in ("labels", "label") and isinstance(value, list):
        value = [str(v).strip().lower() for v in value]
        wrong = [v for v in value if v not in classes]
        if task.answer == "label" and not value:
            return None, f"no {task.gold}"
    else:
        value = str(value).strip().lower()
        if task.answer == "labels":
            value = [v.strip() for v in value.split(",") if v.strip()]
            wrong = [v for v in value if v not in classes]
        else:
            wrong = [] if value in classes else [value]
    if wrong:
        return None, f"{task.gold} not one of the task's classes"
    return value, ""


def _image(source: Path, value: Any) -> tuple[Path | None, bool]:
    if value in (None, ""):
        return None, True
    path, found = find_file(source, str(value).strip())
    return path, found
