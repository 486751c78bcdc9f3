"""Typed stage records: what a run stores, one pydantic model per record kind.

Every stored stage output is a `Record`: its class names its kind (`KIND`, the store's `records.kind`)
and each instance its key (`key`, unique within the run and kind). Writers store instances
(`Run.put(record)`, `Run.put_many([...])`); readers get instances back (`Run.all(ScoreRecord)`,
`read_records(store, run_id, ScoreRecord)`), validated against the same model, so the shape of a
record is written down once, field by field, in its method's ``records.py``.

Records are stored as the fields they were given (`stored()`). A field added later must have a default,
so records of older stores still validate; a field retired later is kept when read (`read_records`);
a renamed or retyped field needs a store schema version and its migration
(`memelens.engine.store.SCHEMA_VERSION`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from memelens.engine.store import Store

R = TypeVar("R", bound="Record")


class Record(BaseModel):
    """A stored stage output. Subclasses set `KIND` and define `key`."""

    model_config = ConfigDict(extra="forbid")

    KIND: ClassVar[str]

    @property
    def key(self) -> str:
        raise NotImplementedError

    def stored(self) -> dict[str, Any]:
        """The JSON object the store keeps: the fields that were given (a nested part's unused
        optional fields are left out, as the stage wrote them), so a record read back and stored
        again is the same JSON."""
        return self.model_dump(mode="json", exclude_unset=True)


def read_records(store: "Store", run_id: int, cls: type[R]) -> list[R]:
    """Every record of `cls`'s kind in the run, in first-insertion order, validated.

    Writing refuses a field the model does not know (a typo, a stale writer); reading keeps one: a store
    written by an older MemeLens may hold fields since retired (e.g. a guideline's `skipped`), and its
    records must still validate and report as they were stored."""
    stored_as = _as_stored(cls)
    return [stored_as.model_validate(data) for data in store.records(run_id, cls.KIND)]


def read_checked(store: "Store", run_id: int, cls: type[R]) -> list[dict[str, Any]]:
    """The records of `read_records`, as the JSON objects they were stored as: for readers that work
    on plain dicts but must still see only what the model allows."""
    return [record.stored() for record in read_records(store, run_id, cls)]


@lru_cache(maxsize=None)
def _as_stored(cls: type[R]) -> type[R]:
    """`cls` with unknown top-level fields kept rather than refused (a subclass: isinstance holds)."""
    namespace = {"model_config": ConfigDict(extra="allow"), "__module__": cls.__module__,
                 "__qualname__": cls.__qualname__}
    return type(cls.__name__, (cls,), namespace)
