"""The MemeArena battles table (Chatbot Arena format): validation and the compact column form the
ratings in `memegauge.arena.ranking` compute on. One record per pairwise judgment::

    {"model_a": "gpt-4o", "model_b": "llava-next-8b", "winner": "model_a",
     "judge": "qwen2.5-vl-32b", "dimension": "Correctness"}          # judge, dimension optional

``winner`` is one of ``"model_a"``, ``"model_b"``, ``"tie"`` (both strong) or ``"tie (bothbad)"``
(both weak). Pure: no files, no store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["WINNERS", "Battles", "BattleRecordError", "battles_from_records", "as_battles"]

#: Allowed ``winner`` values; a battle's outcome code is its index in this tuple.
WINNERS: tuple[str, ...] = ("model_a", "model_b", "tie", "tie (bothbad)")
#: Score of model_a for each outcome code (win 1, loss 0, either tie ½).
_SCORE_A = np.array([1.0, 0.0, 0.5, 0.5])


# --------------------------------------------------------------------------------------------------
# The battles table
# --------------------------------------------------------------------------------------------------


class BattleRecordError(ValueError):
    """A battle record is invalid. `index` is its 0-based row in the input sequence."""

    def __init__(self, index: int, message: str) -> None:
        self.index = index
        self.reason = message
        super().__init__(f"row {index}: {message}")


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Battles:
    """An immutable battles table: parallel numpy arrays plus the model names they index.

    `models` holds exactly the models that occur, sorted by name; `model_a` / `model_b` are int64
    indices into it; `outcome` is an int8 code into `WINNERS`; `judge` / `dimension` are object
    arrays of ``str | None`` (None where a record had none), or None when no record had the field.
    """

    models: tuple[str, ...]
    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray
    judge: np.ndarray | None = None
    dimension: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.model_a.shape[0])

    @property
    def score_a(self) -> np.ndarray:
        """model_a's score per battle: 1 win, 0 loss, 0.5 either tie."""
        return _SCORE_A[self.outcome]

    @classmethod
    def from_arrays(
        cls,
        model_a: Sequence[Any] | np.ndarray,
        model_b: Sequence[Any] | np.ndarray,
        winner: Sequence[Any] | np.ndarray,
        models: Sequence[str] | None = None,
        judge: Sequence[str | None] | None = None,
        dimension: Sequence[str | None] | None = None,
    ) -> Battles:
        """Build a table from parallel arrays.

        `model_a` / `model_b` are model names, or integer indices into `models` (then required).
        `winner` holds `WINNERS` strings or their integer codes 0–3. Models that never occur are
        dropped. Raises `BattleRecordError` (a ValueError) naming the first bad row.
        """
        a = np.asarray(model_a)
        b = np.asarray(model_b)
        w = np.asarray(winner)
        n = a.shape[0]
        for name, arr in (("model_b", b), ("winner", w)):
            if arr.shape != (n,):
                raise ValueError(f"{name} has shape {arr.shape}, expected ({n},) like model_a")
        if a.ndim != 1:
            raise ValueError(f"model_a must be one-dimensional, got shape {a.shape}")
        if np.issubdtype(a.dtype, np.integer) or np.issubdtype(b.dtype, np.integer) or n == 0:
            if models is None and n:
                raise ValueError("integer model indices need `models` (the names they index)")
            names = list(models or [])
            a_idx, b_idx = a.astype(np.int64), b.astype(np.int64)
            for arr, field in ((a_idx, "model_a"), (b_idx, "model_b")):
                bad = np.flatnonzero((arr < 0) | (arr >= len(names)))
                if bad.size:
                    raise BattleRecordError(
                        int(bad[0]), f"{field} index {arr[bad[0]]} is outside 0..{len(names) - 1}"
                    )
        else:
            a_list, b_list = [str(x) for x in a.tolist()], [str(x) for x in b.tolist()]
            names = sorted(set(a_list) | set(b_list))
            position = {name: i for i, name in enumerate(names)}
            a_idx = np.fromiter((position[x] for x in a_list), dtype=np.int64, count=n)
            b_idx = np.fromiter((position[x] for x in b_list), dtype=np.int64, count=n)
        if np.issubdtype(w.dtype, np.integer):
            codes = w.astype(np.int64)
            bad = np.flatnonzero((codes < 0) | (codes >= len(WINNERS)))
            if bad.size:
                raise BattleRecordError(int(bad[0]), f"winner code {codes[bad[0]]} is not in 0..3")
        else:
            lookup = {value: code for code, value in enumerate(WINNERS)}
            values = w.tolist()
            try:
                codes = np.fromiter((lookup[v] for v in values), dtype=np.int64, count=n)
            except (KeyError, TypeError):
                bad = next(
                    i for i, v in enumerate(values) if not isinstance(v, str) or v not in lookup
                )
                raise BattleRecordError(bad, _bad_winner(values[bad])) from None
        same = np.flatnonzero(a_idx == b_idx)
        if same.size:
            raise BattleRecordError(
                int(same[0]), f"model_a and model_b are the same model {names[a_idx[same[0]]]!r}"
            )
        extra = {}
        for field, values in (("judge", judge), ("dimension", dimension)):
            if values is None:
                extra[field] = None
                continue
            arr = np.empty(n, dtype=object)
            values = list(values)
            if len(values) != n:
                raise ValueError(f"{field} has {len(values)} entries, expected {n}")
            arr[:] = values
            extra[field] = arr
        return _compact(
            names, a_idx, b_idx, codes.astype(np.int8), extra["judge"], extra["dimension"]
        )

    def select(self, mask: np.ndarray) -> Battles:
        """The battles where boolean `mask` is true (models that no longer occur are dropped)."""
        mask = np.asarray(mask, dtype=bool)
        return _compact(
            list(self.models),
            self.model_a[mask],
            self.model_b[mask],
            self.outcome[mask],
            None if self.judge is None else self.judge[mask],
            None if self.dimension is None else self.dimension[mask],
        )


def _compact(names, a_idx, b_idx, codes, judge, dimension) -> Battles:
    used = np.unique(np.concatenate([a_idx, b_idx])) if len(a_idx) else np.zeros(0, np.int64)
    remap = np.full(max(len(names), 1), -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    return Battles(
        models=tuple(names[i] for i in used),
        model_a=_readonly(remap[a_idx].astype(np.int64)),
        model_b=_readonly(remap[b_idx].astype(np.int64)),
        outcome=_readonly(np.asarray(codes, dtype=np.int8).copy()),
        judge=None if judge is None else _readonly(judge.copy()),
        dimension=None if dimension is None else _readonly(dimension.copy()),
    )


def _bad_winner(value: Any) -> str:
    allowed = ", ".join(repr(x) for x in WINNERS)
    return f"winner {value!r} is not one of {allowed}"


def battles_from_records(records: Iterable[Mapping[str, Any]]) -> Battles:
    """Validate Chatbot Arena format records and build a `Battles` table.

    Each record is a mapping with non-empty string ``model_a`` and ``model_b`` (different models),
    ``winner`` in `WINNERS`, and optional ``judge`` / ``dimension`` (string or null). Other keys are
    ignored. Raises `BattleRecordError` (a ValueError) whose message starts with ``row <index>:``.
    """
    records = records if isinstance(records, list) else list(records)
    columns = _fast_columns(records)
    if columns is None:  # something is wrong: find and name the first bad row
        _validate_rows(records)
        raise AssertionError("fast path and row validator disagree")  # pragma: no cover
    model_a, model_b, winner, judge, dimension = columns
    return Battles.from_arrays(
        model_a,
        model_b,
        winner,
        judge=judge if any(v is not None for v in judge) else None,
        dimension=dimension if any(v is not None for v in dimension) else None,
    )


def _fast_columns(records: list[Any]):
    """Columns of well-formed records, checking values on the sets of distinct values (fast);
    None when any record is malformed. Same-model battles are caught by `Battles.from_arrays`."""
    try:
        model_a = [r["model_a"] for r in records]
        model_b = [r["model_b"] for r in records]
        winner = [r["winner"] for r in records]
        judge = [r.get("judge") for r in records]
        dimension = [r.get("dimension") for r in records]
        if not all(isinstance(r, Mapping) for r in records):
            return None
        names = set(model_a) | set(model_b)
        optional = (set(judge) | set(dimension)) - {None}
        if not set(winner) <= set(WINNERS):
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    if not all(isinstance(v, str) and v.strip() for v in names | optional):
        return None
    return model_a, model_b, winner, judge, dimension


def _validate_rows(records: list[Any]) -> None:
    """Raise `BattleRecordError` for the first malformed record (the slow, precise path)."""
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise BattleRecordError(
                i, f"expected an object with model_a, model_b, winner; got {type(record).__name__}"
            )
        for field in ("model_a", "model_b", "winner"):
            if field not in record:
                raise BattleRecordError(i, f"missing field {field!r}")
        for field in ("model_a", "model_b"):
            value = record[field]
            if not isinstance(value, str) or not value.strip():
                raise BattleRecordError(i, f"{field} must be a non-empty string, got {value!r}")
        if record["model_a"] == record["model_b"]:
            raise BattleRecordError(
                i, f"model_a and model_b are the same model {record['model_a']!r}"
            )
        if not isinstance(record["winner"], str) or record["winner"] not in WINNERS:
            raise BattleRecordError(i, _bad_winner(record["winner"]))
        for field in ("judge", "dimension"):
            value = record.get(field)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise BattleRecordError(
                    i, f"{field} must be a non-empty string or null, got {value!r}"
                )


def as_battles(battles: Battles | Iterable[Mapping[str, Any]]) -> Battles:
    return battles if isinstance(battles, Battles) else battles_from_records(battles)


# --------------------------------------------------------------------------------------------------
# Online Elo
