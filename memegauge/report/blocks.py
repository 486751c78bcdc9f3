"""The report page's view toolkit: blocks (facts, tables, plots, browsers, notes), table cells and the
formatting of numbers, tables of any nested dict, and the meme thumbnails a browser shows. A method's
view (`<method>/view.py`, `memegauge.methods.Method.view`) builds its page from these; the page itself
is rendered by `memegauge.report.html`. Nothing here names a method."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from memegauge.engine.store import Store
from memegauge.images.thumbnail import MemeImage
from memegauge.images.thumbnail import thumbnail_data_url as thumbnail  # only for runs stored before MemeImage
from memegauge.records import read_records
from memegauge.errors import MemeGaugeError


# ---- view model ---------------------------------------------------------------------------------

@dataclass
class Cell:
    """A table cell: the text shown, the value sorted on, and whether it is the column's best."""

    text: str
    sort: float | str | None = None
    best: bool = False
    href: str | None = None  # a link to a file beside the page (the index's reports)


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Cell]]
    numeric: list[bool] = field(default_factory=list)


@dataclass
class Block:
    """One piece of a report page: kind is facts | table | plot | browser | note | items (a list of items, each
    opened for its parts: the benchmark kit's item browser, rendered without script)."""

    kind: str
    title: str = ""
    table: Table | None = None
    facts: list[tuple[str, str]] = field(default_factory=list)
    src: str | None = None
    text: str = ""
    browser: str = ""
    items: list[dict[str, Any]] = field(default_factory=list)  # kind "items": each {id, picture, summary, parts}


def num(value: float | None, digits: int = 2) -> Cell:
    return Cell("–" if value is None else f"{value:.{digits}f}", value)


def pct(value: float | None) -> Cell:
    return Cell("–" if value is None else f"{100 * value:.1f}%", value)


def text(value: Any) -> Cell:
    shown = "–" if value is None else str(value)
    return Cell(shown, shown)


def count(value: int | None) -> Cell:
    return Cell("–" if value is None else str(value), value)


def interval_cell(fig: dict[str, Any] | None, percent: bool = False, fallback: float | None = None) -> Cell:
    """A figure with its 95% interval ("25.0% [10.3, 49.4]") or the reason it has none
    (`memegauge.report.intervals.shown`); a report built before intervals shows `fallback` alone."""
    from memegauge.report.intervals import shown

    if fig is None:
        return pct(fallback) if percent else num(fallback)
    return Cell(shown(fig, percent=percent), fig.get("value"))


def mark_best(table: Table, column: int, higher: bool) -> None:
    """Highlight the best value of a column (only when there are rows to compare)."""
    values = [row[column].sort for row in table.rows if isinstance(row[column].sort, (int, float))]
    if len(table.rows) < 2 or len(set(values)) < 2:
        return  # nothing to compare, or all equal: a highlight would single nothing out
    best = max(values) if higher else min(values)
    for row in table.rows:
        row[column].best = row[column].sort == best


def table(columns: list[str], rows: list[list[Cell]]) -> Table:
    numeric = [all(isinstance(r[i].sort, (int, float)) or r[i].sort is None for r in rows) and i > 0
               for i in range(len(columns))]
    return Table(columns, rows, numeric)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _row_like(value: Any) -> bool:
    """A flat dict (scalars or lists of scalars): one row of a table."""
    return isinstance(value, dict) and bool(value) and all(
        _scalar(v) or (isinstance(v, list) and all(map(_scalar, v))) for v in value.values())


def value_cell(value: Any) -> Cell:
    """A cell for a value of unknown meaning: floats to 4 significant digits, lists joined."""
    if isinstance(value, float):
        return Cell(f"{value:.4g}", value)
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    if isinstance(value, list):
        return text(", ".join(map(str, value)))
    return text(value)


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts → (dotted.path, value) rows; a list of scalars stays one value."""
    if isinstance(value, dict):
        return [row for k, v in value.items() for row in _flat(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list) and not all(map(_scalar, value)):
        return [row for i, v in enumerate(value) for row in _flat(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


def kv_table(mapping: dict[str, Any]) -> Table:
    """Any nested dict as (field, value) rows — for sections without a dedicated view."""
    return table(["field", "value"], [[text(k), value_cell(v)] for k, v in _flat(mapping)])


def matrix_table(mapping: dict[str, dict[str, Any]], corner: str = "") -> Table:
    """{row: {column: value}} as one table, columns in order of first appearance."""
    columns = list(dict.fromkeys(c for row in mapping.values() for c in row))
    return table([corner, *columns], [[text(k), *[value_cell(row.get(c)) for c in columns]]
                                      for k, row in mapping.items()])


def data_blocks(title: str, mapping: dict[str, Any]) -> list[Block]:
    """A section without a dedicated view as readable tables: a dict of flat dicts is one table
    (rows × fields); otherwise each such dict under it gets its own table and the rest is listed as
    (field, value) rows."""
    if mapping and all(_row_like(v) for v in mapping.values()):
        return [Block("table", title, table=matrix_table(mapping))]
    blocks, rest = [], {}
    for key, value in mapping.items():
        if isinstance(value, dict) and value and all(_row_like(v) for v in value.values()):
            blocks.append(Block("table", f"{title}: {key}", table=matrix_table(value)))
        else:
            rest[key] = value
    return ([Block("table", title, table=kv_table(rest))] if rest else []) + blocks


# ---- meme thumbnails ----------------------------------------------------------------------------

def thumbnails(paths: dict[str, str | Path | None]) -> dict[str, str]:
    return {meme: url for meme, url in ((m, thumbnail(p)) for m, p in paths.items()) if url}


def run_images(store: Store, run: dict[str, Any]) -> dict[str, str] | None:
    """{meme id: thumbnail data URL} as the run stored them (`memegauge.images.thumbnail`); None for a
    run made before runs stored their thumbnails, whose pictures can only come from the meme files."""
    run_id = store.run_row(run["name"])["id"]
    stored = {r.meme: r.thumbnail for r in read_records(store, run_id, MemeImage)}
    return stored or None


def meme_set_images(memes_path: str | None, wanted: Iterable[str]) -> dict[str, str]:
    """Thumbnails of the wanted meme ids, looked up in the run's meme set: only for a run made before
    runs stored their thumbnails. A meme set that moved or no longer loads gives placeholders."""
    if not memes_path:
        return {}
    from memegauge.memes import load_memes

    try:
        memes = load_memes(memes_path, require_images=False)
    except (MemeGaugeError, OSError):
        return {}
    wanted = set(wanted)
    return thumbnails({m.id: m.image for m in memes if m.id in wanted})


def diff(a: float | None, b: float | None) -> float | None:
    """`a - b`, None when either is missing."""
    return None if a is None or b is None else a - b


def plot_block(title: str, src: str | None) -> Block | None:
    """A plot block for a rendered plot (`memegauge.report.plots`); None when there was nothing to plot."""
    return Block("plot", title, src=src) if src else None
