"""The engine layer: run store + response cache, call engine, limits, progress.

`open_run` is the one way a method gets an engine: it opens (or resumes) a named run in the store,
yields the `Run` (stage records) and the `Engine` (model calls), and marks the run done, failed or
interrupted on the way out.
"""

from __future__ import annotations

import hashlib
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from memelens import __version__
from memelens.config import ModelRegistry
from memelens.engine.core import CallOutcome, Engine, cache_key
from memelens.engine.progress import CallProgress
from memelens.engine.store import Store, canonical_json

__all__ = ["CallOutcome", "Engine", "Run", "Store", "cache_key", "config_hash", "open_run"]


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()[:16]


class Run:
    """A named run in the store; stages write their outputs here as (kind, key) → JSON records."""

    def __init__(self, store: Store, run_id: int, execution_id: int, name: str, method: str,
                 seed: int | None) -> None:
        self.store, self.id, self.execution_id = store, run_id, execution_id
        self.name, self.method, self.seed = name, method, seed

    def put(self, kind: str, key: str, data: Any) -> None:
        self.store.put_record(self.id, kind, key, data)

    def put_many(self, kind: str, items: list[tuple[str, Any]]) -> None:
        self.store.put_records(self.id, kind, items)

    def get(self, kind: str, key: str) -> Any | None:
        return self.store.get_record(self.id, kind, key)

    def all(self, kind: str) -> list[Any]:
        return self.store.records(self.id, kind)

    def items(self, kind: str) -> list[tuple[str, Any]]:
        return list(self.store.record_items(self.id, kind))


@asynccontextmanager
async def open_run(store: Store, registry: ModelRegistry, *, name: str, method: str,
                   config: dict[str, Any], seed: int | None = None, progress: bool | None = None,
                   retry_failed: bool = False,
                   vision_models: list[str] | None = None) -> AsyncIterator[tuple[Run, Engine]]:
    """Open or resume the run `name`; the same name with another config is refused.

    `vision_models`: the models the run will show pictures to; each one the registry says sees
    images is probed first, and one whose server refuses images stops the run here, before its
    first stage and before the store changes (`memelens.models.check.preflight_vision`).
    """
    if vision_models:
        from memelens.models.check import preflight_vision

        await preflight_vision(registry, vision_models, store)
    run_id, execution_id = store.open_run(name, method, config, config_hash(config), seed,
                                          __version__)
    run = Run(store, run_id, execution_id, name, method, seed)
    with CallProgress(enabled=progress) as bar:
        engine = Engine(store, registry, run_id=run_id, execution_id=execution_id, progress=bar,
                        retry_failed=retry_failed, seed=seed)
        try:
            yield run, engine
        except (KeyboardInterrupt, GeneratorExit) as exc:
            store.finish_run(run_id, execution_id, "interrupted", type(exc).__name__)
            raise
        except BaseException as exc:
            store.finish_run(run_id, execution_id, "failed", f"{type(exc).__name__}: {exc}"[:2000])
            raise
        else:
            store.finish_run(run_id, execution_id, "done")
        finally:
            await engine.aclose()
