"""Typed stage records: what a run stores, one pydantic model per record kind.

Every stored stage output is a `Record`: its class names its kind (`KIND`, the store's `records.kind`)
and each instance its key (`key`, unique within the run and kind). Writers store instances
(`Run.put(record)`, `Run.put_many([...])`); readers get instances back (`Run.all(ScoreRecord)`,
`read_records(store, run_id, ScoreRecord)`), validated against the same model, so the shape of a
record is written down once, field by field, in its method's ``records.py``.

Keys: a record names the fields its key is made of (`KEY`), and each method spells every key of its
records one way (`KEYS`, one `KeySpelling` per method: AdamMeme ``a/b/c``, MemeArena ``a|b|c``). A key is
never assembled by hand: `ScoreRecord.key_of(target=…, repeat=…, category=…, meme=…)` builds the key a
lookup needs, and a record's `key` is the same function of its own fields. A record a run holds once
(the run's meta, the final taxonomy) has a fixed key instead (`KEY = "run"`).

Records are stored as the fields they were given (`stored()`). A field added later must have a default,
so records of older stores still validate; a field retired later is kept when read (`read_records`);
a renamed or retyped field needs a store schema version and its migration
(`memegauge.engine.store.SCHEMA_VERSION`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from memegauge.engine.store import Store

R = TypeVar("R", bound="Record")


@dataclass(frozen=True)
class KeySpelling:
    """How one method spells its record keys: the key fields' values joined by `sep`, the numbered
    parts named in `widths` zero-padded (so keys sort in step order)."""

    sep: str
    widths: Mapping[str, int] = field(default_factory=dict)

    def join(self, parts: Mapping[str, Any]) -> str:
        return self.sep.join(self._spell(name, value) for name, value in parts.items())

    def split(self, key: str, names: tuple[str, ...]) -> dict[str, str]:
        """The parts of `key` by name; the last part takes the rest (a meme id may hold the separator)."""
        values = key.split(self.sep, len(names) - 1)
        if len(values) != len(names):
            raise ValueError(f"key {key!r} does not have the parts {', '.join(names)}")
        return dict(zip(names, values, strict=True))

    def _spell(self, name: str, value: Any) -> str:
        width = self.widths.get(name)
        return f"{value:0{width}d}" if width and isinstance(value, int) else str(value)


class Record(BaseModel):
    """A stored stage output. Subclasses set `KIND`, `KEY` and (per method) `KEYS`."""

    model_config = ConfigDict(extra="forbid")

    KIND: ClassVar[str]
    KEY: ClassVar[tuple[str, ...] | str]
    """The fields the key is made of, in order; or the fixed key of a record a run holds once."""
    KEYS: ClassVar[KeySpelling] = KeySpelling("/")

    @property
    def key(self) -> str:
        if isinstance(self.KEY, str):
            return self.KEY
        return self.KEYS.join({name: getattr(self, name) for name in self.KEY})

    @classmethod
    def key_of(cls, **parts: Any) -> str:
        """The key of the record whose key fields have these values (for lookups)."""
        if isinstance(cls.KEY, str) or set(parts) != set(cls.KEY):
            raise TypeError(f"{cls.__name__}'s key is made of {cls.KEY!r}, not {sorted(parts)}")
        return cls.KEYS.join({name: parts[name] for name in cls.KEY})

    @classmethod
    def from_stored(cls: type[R], key: str, data: dict[str, Any]) -> R:
        """Validate a stored record. A key field it lacks is read from its key: records stored before
        the field existed kept it in the key only (e.g. an AdamMeme reference's repeat and meme)."""
        if not isinstance(cls.KEY, str) and isinstance(data, dict) and not all(n in data for n in cls.KEY):
            data = {**cls.KEYS.split(key, cls.KEY), **data}
        return cls.model_validate(data)

    def stored(self) -> dict[str, Any]:
        """The JSON object the store keeps: the fields that were given (a nested part's unused
        optional fields are left out, as the stage wrote them), so a record read back and stored
        again is the same JSON."""
        return self.model_dump(mode="json", exclude_unset=True)


def write_records(store: Store, run_id: int, records: list[Record]) -> None:
    """Store records of one kind in one transaction (`Run.put_many`, and importers that write a
    finished run without opening one)."""
    kinds = {r.KIND for r in records}
    if len(kinds) > 1:
        raise ValueError(f"write_records takes records of one kind, not {sorted(kinds)}")
    if records:
        store.put_records(run_id, records[0].KIND, [(r.key, r.stored()) for r in records])


def read_records(store: Store, run_id: int, cls: type[R]) -> list[R]:
    """Every record of `cls`'s kind in the run, in first-insertion order, validated.

    Writing refuses a field the model does not know (a typo, a stale writer); reading keeps one: a store
    written by an older MemeGauge may hold fields since retired (e.g. a guideline's `skipped`), and its
    records must still validate and report as they were stored."""
    stored_as = _as_stored(cls)
    return [stored_as.from_stored(key, data) for key, data in store.record_items(run_id, cls.KIND)]


def read_record(store: Store, run_id: int, cls: type[R], key: str | None = None) -> R | None:
    """One record of `cls`'s kind (`key` defaults to the fixed key of a record a run holds once)."""
    key = key if key is not None else cls.KEY
    data = store.get_record(run_id, cls.KIND, key)
    return None if data is None else read_stored(cls, key, data)


def read_stored(cls: type[R], key: str, data: dict[str, Any]) -> R:
    """One stored record's data through `cls`, keeping fields retired since (as `read_records` does)."""
    return _as_stored(cls).from_stored(key, data)


def read_checked(store: Store, run_id: int, cls: type[R]) -> list[dict[str, Any]]:
    """The records of `read_records`, as the JSON objects they were stored as: for readers that work
    on plain dicts but must still see only what the model allows."""
    return [record.stored() for record in read_records(store, run_id, cls)]


@cache
def _as_stored(cls: type[R]) -> type[R]:
    """`cls` with unknown top-level fields kept rather than refused (a subclass: isinstance holds)."""
    namespace = {"model_config": ConfigDict(extra="allow"), "__module__": cls.__module__,
                 "__qualname__": cls.__qualname__}
    return type(cls.__name__, (cls,), namespace)
