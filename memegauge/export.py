"""`memegauge export`: a run's items as one tidy table (CSV, JSON Lines or Parquet) for pandas, R or a
spreadsheet.

One row per stored item, read from the store as its typed record (each method's ``records.py``
documents the fields), then the columns every table shares:

* ``run`` — the run's name; ``run_created`` — when the run was first opened, ISO 8601 in UTC;
* the record's own fields, in the record's field order; a nested value (a list, a dict of verdicts)
  is one JSON text in CSV and Parquet, and stays nested in JSON Lines;
* one correctness/score column, named per table (``EXPORT_TABLES`` says which).

A table that does not belong to the run's method is refused, naming the tables it has. The file is
written whole or not at all (a temporary file beside it, then a rename).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import Any
from collections.abc import Callable

from memegauge.engine.store import Store
from memegauge.extras import install_hint
from memegauge.files import write_atomic, write_text_atomic
from memegauge.types import InputError

FORMATS = ("csv", "jsonl", "parquet")
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class ExportTable:
    """One exportable table: what its rows are, and how they are read from the store."""

    describe: str
    rows: Callable[[Store, dict[str, Any]], Rows]


def _record_rows(kind: str) -> Callable[[Store, dict[str, Any]], Rows]:
    """Rows of the run's records of one class (`"module:Class"`), as the records validate them."""
    def rows(store: Store, run: dict[str, Any]) -> Rows:
        from importlib import import_module

        from memegauge.records import read_records

        module, name = kind.split(":")
        return [record.model_dump(mode="json") for record in read_records(store, run["id"],
                                                                          getattr(import_module(module), name))]
    return rows


def _adam_scored(kind: str) -> Callable[[Store, dict[str, Any]], Rows]:
    """AdamMeme samples or steps, with `failure`: the score fails under the run's own rule (None when
    the item has no score: a failed call is never a score)."""
    read = _record_rows(kind)

    def rows(store: Store, run: dict[str, Any]) -> Rows:
        from memegauge.adammeme.records import RunMeta
        from memegauge.records import read_record

        meta = read_record(store, run["id"], RunMeta)
        below = (meta.failure_rule == "below") if meta else False
        threshold = meta.threshold if meta else 4.0
        items = read(store, run)
        for item in items:
            score = item.get("score")
            item["failure"] = None if score is None else (score < threshold if below else score <= threshold)
        return items
    return rows


def _battle_rows(store: Store, run: dict[str, Any]) -> Rows:
    """Arena battles with `winner`: the panel's joint overall verdict (None: not judged)."""
    items = _record_rows("memegauge.arena.records:BattleRecord")(store, run)
    for item in items:
        item["winner"] = (item.get("joint") or {}).get("overall")
    return items


def _judgment_rows(store: Store, run: dict[str, Any]) -> Rows:
    """Arena judgments with `winner`: this judge's overall verdict in this order (None: failed)."""
    items = _record_rows("memegauge.arena.records:JudgmentRecord")(store, run)
    for item in items:
        item["winner"] = (item.get("verdicts") or {}).get("overall")
    return items


def _leaderboard_rows(store: Store, run: dict[str, Any]) -> Rows:
    """The run's headline figures per model (× category or question type), from its report."""
    from memegauge.report import build_report

    report = build_report(store, run["name"])
    if run["method"] == "adammeme":
        return [{"model": target, "category": category, "n": f["n"], "avg_score": f["avg_score"],
                 "failure_rate": f["failure_rate"], "failed_calls": f["failed"]}
                for target, figures in report["targets"].items()
                for category, f in figures["categories"].items()]
    if run["method"] == "arena":
        return [{"rank": rank, **{k: v for k, v in row.items() if k != "bt_ci"},
                 "bt_ci_low": (row.get("bt_ci") or [None, None])[0],
                 "bt_ci_high": (row.get("bt_ci") or [None, None])[1]}
                for rank, row in enumerate(report["ranking"], start=1)]
    return [{"model": report.get("model"), "type": t, "n": report["n"][t], "accuracy": accuracy,
             "random": report["random_baseline"]["by_type"][t]}
            for t, accuracy in report.get("accuracy", {}).items()]


SCORES = "memegauge.adammeme.records:ScoreRecord"
STEPS = "memegauge.adammeme.records:StepRecord"
QUESTIONS = "memegauge.memeqa.records:QuestionRecord"

EXPORT_TABLES: dict[tuple[str, str], ExportTable] = {
    ("adammeme", "samples"): ExportTable("every scored original sample, with `score` and `failure`",
                                         _adam_scored(SCORES)),
    ("adammeme", "steps"): ExportTable("every refinement step, with `score`, `improved` and `failure`",
                                       _adam_scored(STEPS)),
    ("arena", "battles"): ExportTable("every battle, with `winner` (the panel's overall verdict)", _battle_rows),
    ("arena", "judgments"): ExportTable("every judge's verdict in each order, with `winner`", _judgment_rows),
    ("memeqa", "questions"): ExportTable("every question asked, with `correct`", _record_rows(QUESTIONS)),
    **{(m, "leaderboard"): ExportTable("the per-model figures of the report", _leaderboard_rows)
       for m in ("adammeme", "arena", "memeqa")},
}
"""(method, table) → the table: what `memegauge export --table` offers for a run of that method."""


def tables_of(method: str) -> list[str]:
    return [table for (m, table) in EXPORT_TABLES if m == method]


def iso_utc(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def export_rows(store: Store, name: str, table: str) -> Rows:
    """The rows of `table` of run `name`: `run`, `run_created`, then the items' fields."""
    run = store.run_row(name)
    found = EXPORT_TABLES.get((run["method"], table))
    if found is None:
        raise InputError(f"a {run['method']} run has no table {table!r}", where="--table",
                         fix=f"use one of: {', '.join(tables_of(run['method'])) or '(none)'}")
    header = {"run": run["name"], "run_created": iso_utc(run["created"])}
    return [{**header, **row} for row in found.rows(store, {**run, "id": run["id"]})]


def _flat(value: Any) -> Any:
    """A cell for a flat format: nested values as one JSON text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, (dict, list)) else value


def _columns(rows: Rows) -> list[str]:
    return list(dict.fromkeys(column for row in rows for column in row))


def to_csv(rows: Rows) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _flat(v) for k, v in row.items()} for row in rows)
    return buffer.getvalue()


def to_jsonl(rows: Rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_parquet(rows: Rows, path: Path) -> None:
    """Parquet through pyarrow (the `pandas` extra), written beside `path` and renamed onto it."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Parquet export needs pyarrow (not installed)", "--format parquet",
                         f"{install_hint('pandas')}, or use --format csv or jsonl") from None
    columns = _columns(rows)
    table = pa.Table.from_pylist([{c: _flat(row.get(c)) for c in columns} for row in rows])
    write_atomic(path, lambda tmp: pq.write_table(table, tmp))


def export(store: Store, name: str, table: str, fmt: str, out: Path | None) -> tuple[int, str | None]:
    """Export; returns (rows, text) — text for stdout when `out` is None, else None (written)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {', '.join(FORMATS)}")
    if fmt == "parquet" and out is None:
        raise InputError("Parquet is binary: it is not written to the terminal", where="--format parquet",
                         fix="give --out FILE.parquet")
    rows = export_rows(store, name, table)
    if fmt == "parquet":
        write_parquet(rows, Path(out))
        return len(rows), None
    text = to_csv(rows) if fmt == "csv" else to_jsonl(rows)
    if out is None:
        return len(rows), text
    write_text_atomic(Path(out), text)
    return len(rows), None
