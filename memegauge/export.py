"""`memegauge export`: a run's items as one tidy table (CSV, JSON Lines or Parquet) for pandas, R or a
spreadsheet.

One row per stored item, read from the store as its typed record (each method's ``records.py``
documents the fields), then the columns every table shares:

* ``run`` — the run's name; ``run_created`` — when the run was first opened, ISO 8601 in UTC (in
  Parquet a UTC timestamp);
* the record's own fields, in the record's field order; a nested value (a list, a dict of verdicts)
  stays nested in JSON Lines and is one JSON text in CSV (`json.loads` reads it back); in Parquet a list
  of numbers or of texts is a list column of that type, and anything deeper (a dict) a JSON text;
* one correctness/score column, named per table.

Each method offers its own tables (`Method.exports`: name → `ExportTable`, in the method's folder); every
method with headline figures also offers ``leaderboard`` (its `Headline` rows). A table that does not
belong to the run's method is refused, naming the tables it has. The file is written whole or not at all
(a temporary file beside it, then a rename).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from memegauge.engine.store import Store
from memegauge.extras import install_hint
from memegauge.files import write_atomic, write_text_atomic
from memegauge.methods import method
from memegauge.records import Record, read_records
from memegauge.errors import InputError

FORMATS = ("csv", "jsonl", "parquet")
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class ExportTable:
    """One exportable table: what its rows are, how they are read from the store, and its columns (the
    header an empty table still has, so that pandas reads it as a frame with no rows)."""

    describe: str
    rows: Callable[[Store, dict[str, Any]], Rows]
    columns: tuple[str, ...] = ()
    types: tuple[tuple[str, str], ...] = ()  # (column, pyarrow type: float64, string, bool_, int64, list<string>) for
    # Parquet, so a column keeps its type in a run where it has no value (P(positive) without log-probabilities:
    # float64, not text; a yes/no benchmark's `classes`, all [], list<string> as a multi-class one's)


def record_columns(record: type[Record], *score: str) -> tuple[str, ...]:
    """The columns of a table of `record`s: the record's fields in order, then its score column(s)."""
    return (*record.model_fields, *score)


def record_rows(record: type[Record], score: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                ) -> Callable[[Store, dict[str, Any]], Rows]:
    """Rows of the run's records of one type, as the records validate them; `score(row)` (when given)
    returns the table's correctness/score column(s) for one row."""
    def rows(store: Store, run: dict[str, Any]) -> Rows:
        items = [r.model_dump(mode="json") for r in read_records(store, run["id"], record)]
        return [{**item, **score(item)} for item in items] if score else items
    return rows


def _headline_rows(store: Store, run: dict[str, Any]) -> Rows:
    """The run's headline figures (`memegauge.report.headline.Headline`), one row per model × group ×
    figure with its 95% interval; the run's name and date are the shared columns."""
    from memegauge.report import build_report
    from memegauge.report.headline import headline_rows

    return [row.model_dump(exclude={"run", "date"}) for row in headline_rows(build_report(store, run["name"]))]


def _headline_columns() -> tuple[str, ...]:
    from memegauge.report.headline import Headline

    return tuple(c for c in Headline.model_fields if c not in ("run", "date"))


LEADERBOARD = ExportTable("the run's headline figures: one row per model × group × figure, with value, "
                          "ci95_lo, ci95_hi and n", _headline_rows)


def tables_of(method_name: str) -> dict[str, ExportTable]:
    """The tables `memegauge export` offers for a run of this method: the method's own (`Method.exports`)
    and `leaderboard` for every method with headline figures."""
    found = method(method_name)
    if found is None:
        return {}
    tables = dict(found.exports()) if found.exports is not None else {}
    if found.headline is not None:
        tables.setdefault("leaderboard", LEADERBOARD)
    return tables


def iso_utc(epoch: float | None) -> str | None:
    """The one date spelling of exports, reports and comparisons: 2026-11-26T07:12:23Z."""
    from memegauge.report.headline import iso_date

    return None if epoch is None else iso_date(epoch)


def export_rows(store: Store, name: str, table: str) -> Rows:
    """The rows of `table` of run `name`: `run`, `run_created`, then the items' fields."""
    run = store.run_row(name)
    offered = tables_of(run["method"])
    found = offered.get(table)
    if found is None:
        raise InputError(f"run {name!r} ({run['method']}) has no table {table!r}", where="--table",
                         fix=f"use one of: {', '.join(offered) or '(none)'}")
    header = {"run": run["name"], "run_created": iso_utc(run["created"])}
    rows = [{**header, **row} for row in found.rows(store, {**run, "id": run["id"]})]
    if not rows and found is LEADERBOARD:
        raise InputError("this run has no leaderboard figures (nothing was scored, or a build or "
                         "fine-tuning run)", where=f"run {name!r}", fix="export one of its other tables")
    return rows


def columns_of(store: Store, name: str, table: str) -> list[str]:
    """The header of `table` of run `name` (what an empty export still writes)."""
    found = tables_of(store.run_row(name)["method"])[table]
    return ["run", "run_created", *(found.columns or (_headline_columns() if found is LEADERBOARD else ()))]


def _flat(value: Any) -> Any:
    """A cell for a flat format: nested values as one JSON text."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, (dict, list)) else value


def _columns(rows: Rows, empty: list[str] | None = None) -> list[str]:
    return list(dict.fromkeys(column for row in rows for column in row)) or list(empty or [])


def to_csv(rows: Rows, empty: list[str] | None = None) -> str:
    """CSV with a header row always (`empty`: the columns of a table with no rows)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(rows, empty), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _flat(v) for k, v in row.items()} for row in rows)
    return buffer.getvalue()


def to_jsonl(rows: Rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_parquet(rows: Rows, path: Path, empty: list[str] | None = None,
                  types: tuple[tuple[str, str], ...] = ()) -> None:
    """Parquet through pyarrow (the `pandas` extra), written beside `path` and renamed onto it."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Parquet export needs pyarrow (not installed)", "--format parquet",
                         f"{install_hint('pandas')}, or use --format csv or jsonl") from None
    columns = _columns(rows, empty)
    typed = {c: _arrow_type(pa, kind) for c, kind in types}
    table = pa.table({c: pa.array([row.get(c) for row in rows], typed[c]) if c in typed else
                      _parquet_column(c, [row.get(c) for row in rows]) for c in columns})
    write_atomic(path, lambda tmp: pq.write_table(table, tmp))


def _arrow_type(pa: Any, kind: str) -> Any:
    """A pyarrow type by name: ``float64``, ``string``, ``bool_``, ``int64`` …, or ``list<KIND>``."""
    if kind.startswith("list<") and kind.endswith(">"):
        return pa.list_(_arrow_type(pa, kind[5:-1]))
    return getattr(pa, kind)()


def _parquet_column(name: str, values: list[Any]) -> Any:
    """One typed Parquet column: `run_created` a UTC timestamp; scalars and lists of scalars as pyarrow
    types them (a list of option texts is list<string>, gold indices list<int64>); a dict, a list of
    lists, or a column whose values disagree in type, JSON text (as in CSV); a column with no value, text."""
    import pyarrow as pa

    stamp = pa.timestamp("ms", tz="UTC")  # Parquet's coarsest unit (a run's date is whole seconds)
    if name == "run_created":
        return pa.array([None if v is None else _utc(v) for v in values], stamp)
    if all(v is None for v in values):  # no value to type it by (an empty table, a field never set): text
        return pa.array(values, pa.string())
    if all(v is None or v == [] for v in values):  # lists with no element to type them by: list<string>, not
        return pa.array(values, pa.list_(pa.string()))  # list<null>, which readers cannot append a run to
    if all(_scalar_or_flat_list(v) for v in values):
        try:
            return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # e.g. a list of texts in one row, numbers in another
            pass
    return pa.array([_flat(v) for v in values], pa.string())


def _scalar_or_flat_list(value: Any) -> bool:
    flat = (str, int, float, bool, type(None))
    return isinstance(value, flat) or (isinstance(value, list) and all(isinstance(v, flat) for v in value))


def _utc(stamp: str) -> Any:
    """An export's ISO 8601 date (`iso_utc`) as an aware datetime."""
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def export(store: Store, name: str, table: str, fmt: str, out: Path | None) -> tuple[int, str | None]:
    """Export; returns (rows, text) — text for stdout when `out` is None, else None (written)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {', '.join(FORMATS)}")
    if fmt == "parquet" and out is None:
        raise InputError("Parquet is binary: it is not written to the terminal", where="--format parquet",
                         fix="give --out FILE.parquet")
    rows = export_rows(store, name, table)
    empty = None if rows else columns_of(store, name, table)
    if fmt == "parquet":
        write_parquet(rows, Path(out), empty, tables_of(store.run_row(name)["method"])[table].types)
        return len(rows), None
    text = to_csv(rows, empty) if fmt == "csv" else to_jsonl(rows)
    if out is None:
        return len(rows), text
    write_text_atomic(Path(out), text)
    return len(rows), None
