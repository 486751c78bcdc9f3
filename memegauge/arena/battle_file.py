"""The `memegauge arena rank` side of MemeArena ranking: read a battles file (JSON array or JSONL),
rank it overall and per dimension, and write the Markdown table. Errors name the file, the row and
the fix; the maths is `memegauge.arena.ranking`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from memegauge.arena.battles import WINNERS, Battles, BattleRecordError, battles_from_records
from memegauge.arena.ranking import rank_by_dimension, rank_table

#: Dimension values (case-insensitive) that `rank_battle_file` folds into the overall ranking.
OVERALL_DIMENSIONS = frozenset({"overall"})


def _input_error(what: str, where: str, fix: str) -> Exception:
    from memegauge.errors import InputError  # the contract module (pydantic) only when a file is bad

    return InputError(what, where, fix)


_FIX_RECORD = (
    'each battle must be an object like {"model_a": "m1", "model_b": "m2", "winner": "model_a"} '
    "with winner one of " + ", ".join(repr(x) for x in WINNERS)
)


def _read_battle_file(path: Path) -> tuple[list[Any], list[int]]:
    """Parse a JSON array or JSONL battles file; returns the records and each one's 1-based line."""
    from memegauge.files import parse_json, read_user_text  # pydantic only when a file is read

    if not path.is_file():
        raise _input_error(
            "battles file not found", str(path), "give the path of a .jsonl or .json file"
        )
    text = read_user_text(path)
    records: list[Any] = []
    lines: list[int] = []
    stripped = text.lstrip()
    if stripped.startswith("["):
        decoder = json.JSONDecoder()
        pos = len(text) - len(stripped) + 1
        try:
            while True:
                while pos < len(text) and text[pos] in " \t\r\n":
                    pos += 1
                if pos < len(text) and text[pos] == "]" and not records:
                    pos += 1
                    break
                value, end = decoder.raw_decode(text, pos)
                records.append(value)
                lines.append(text.count("\n", 0, pos) + 1)
                pos = end
                while pos < len(text) and text[pos] in " \t\r\n":
                    pos += 1
                if pos < len(text) and text[pos] == ",":
                    pos += 1
                    continue
                if pos < len(text) and text[pos] == "]":
                    pos += 1
                    break
                raise json.JSONDecodeError("expected ',' or ']' in the JSON array", text, pos)
            if text[pos:].strip():
                raise json.JSONDecodeError("extra data after the JSON array", text, pos)
        except json.JSONDecodeError as exc:
            raise _input_error(
                f"invalid JSON: {exc.msg}",
                f"{path}:{exc.lineno}",
                "fix the JSON syntax on that line",
            ) from exc
        except (RecursionError, ValueError) as exc:  # nested too deeply; an integer of > 4,300 digits
            raise _input_error(f"invalid JSON: {exc or 'nested too deeply'}", str(path),
                               "fix the JSON: no deeper than a battle record, numbers of usual size") from None
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            records.append(parse_json(line, f"{path}:{number}",
                                      "write one JSON object per line (JSONL), or a single JSON array"))
            lines.append(number)
    if not records:
        raise _input_error("the battles file holds no battles", str(path), _FIX_RECORD)
    return records, lines


def _split_overall(battles: Battles) -> tuple[Battles, Battles | None]:
    """Overall battles (no dimension, or a dimension in `OVERALL_DIMENSIONS`) and the rest.

    When every battle has a non-overall dimension the overall ranking uses all of them."""
    if battles.dimension is None:
        return battles, None
    overall = np.array(
        [d is None or d.strip().lower() in OVERALL_DIMENSIONS for d in battles.dimension.tolist()],
        dtype=bool,
    )
    if not overall.any():
        return battles, battles
    return battles.select(overall), battles.select(~overall)


def _fmt_rating(value: float) -> str:
    return f"{value:.1f}"


def with_intervals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rank_table` rows with the win rate's 95% interval and n (`win_rate_ci95`: Wilson over the
    model's battles, taken as independent: a battles file names no meme to cluster them by) and
    `bt_note`, why `bt_ci` is None where the bootstrap cannot support one (under 2 battles: too few
    items; every resample equal: no spread), as a run's report gives them (`memegauge.arena.headline`)."""
    from memegauge.report import intervals as ci  # scipy: only when a file is ranked

    out = []
    for row in rows:
        wins = round(row["win_rate"] * row["battles"])
        win = ci.rate([1.0] * wins + [0.0] * (row["battles"] - wins))
        flat = row.get("bt_ci") is not None and row["bt_ci"][0] == row["bt_ci"][1]
        note = ci.TOO_FEW if win["n"] < 2 or win["clusters"] < 2 else (ci.NO_SPREAD if flat else None)
        out.append({**row, "bt_ci": None if note else row.get("bt_ci"), "bt_note": note, "win_rate_ci95": win})
    return out


def _markdown_rows(rows: list[dict[str, Any]]) -> list[str]:
    from memegauge.report.intervals import shown

    out = [
        "| # | Model | BT | BT 95% CI | Elo | Win rate [95% CI] | Score | Battles (n) |",
        "|---:|:---|---:|:---:|---:|---:|---:|---:|",
    ]
    for rank, row in enumerate(rows, start=1):
        ci = row["bt_ci"]
        ci_text = (row.get("bt_note") or "–") if ci is None else f"{_fmt_rating(ci[0])} – {_fmt_rating(ci[1])}"
        name = row["model"].replace("|", "\\|")
        win = shown(row["win_rate_ci95"], percent=True) if row.get("win_rate_ci95") else f"{100 * row['win_rate']:.1f}%"
        out.append(
            f"| {rank} | {name} | {_fmt_rating(row['bt'])} | {ci_text} | {_fmt_rating(row['elo'])} "
            f"| {win} | {100 * row['score']:.1f}% | {row['battles']} |"
        )
    return out


def ranking_markdown(result: Mapping[str, Any], title: str = "MemeArena ranking") -> str:
    """Markdown for a ``{"ranking": rows, "dimensions": {D: rows}}`` result."""
    out = [f"# {title}", "", "## Overall", ""]
    out += _markdown_rows(result["ranking"])
    for dimension, rows in result.get("dimensions", {}).items():
        out += ["", f"## {dimension}", ""]
        out += _markdown_rows(rows)
    out.append("")
    out.append(
        "BT: Bradley–Terry maximum-likelihood rating (mean = 1000; ties = half a win each way); "
        "95% CI: percentile bootstrap; Elo: online, in file order; win rate: wins / battles (a tie is no "
        "win, as in the paper) with its Wilson 95% interval over the model's battles; score: a tie counts "
        "half; n: the model's battles."
    )
    return "\n".join(out) + "\n"


def rank_battle_file(
    path: str | Path,
    fmt: str = "json",
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    k: float = 4.0,
) -> str:
    """Rank the battles of a Chatbot Arena format file (JSON array or JSONL; format by content).

    Returns JSON text ``{"ranking": [rows], "dimensions": {D: [rows]}}`` (rows as `rank_table`, with
    `win_rate_ci95` and `bt_note`: `with_intervals`) for
    ``fmt="json"``, or a Markdown report for ``fmt="md"``. `ranking` uses the battles without a
    dimension or with dimension "overall" (any case); `dimensions` ranks every other dimension. If
    every battle names a non-overall dimension, `ranking` uses them all.

    Raises `memegauge.types.InputError` for a missing/unreadable file, bad JSON or a bad record,
    naming ``path:line``.
    """
    path = Path(path)
    if fmt not in ("json", "md"):
        raise _input_error(f"unknown format {fmt!r}", "--format", "use json or md")
    records, lines = _read_battle_file(path)
    try:
        battles = battles_from_records(records)
    except BattleRecordError as exc:
        raise _input_error(exc.reason, f"{path}:{lines[exc.index]}", _FIX_RECORD) from exc
    overall, per_dimension = _split_overall(battles)
    result = {
        "ranking": with_intervals(rank_table(overall, k=k, bootstrap_rounds=bootstrap_rounds, seed=seed)),
        "dimensions": {}
        if per_dimension is None
        else {d: with_intervals(rows) for d, rows in
              rank_by_dimension(per_dimension, k=k, bootstrap_rounds=bootstrap_rounds, seed=seed).items()},
    }
    if fmt == "md":
        return ranking_markdown(result, title=f"MemeArena ranking — {path.name}")
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
