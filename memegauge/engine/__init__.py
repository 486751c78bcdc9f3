"""The engine layer: run store + response cache, call engine, limits, progress.

`open_run` is the one way a method gets an engine: it opens (or resumes) a named run in the store,
yields the `Run` (stage records) and the `Engine` (model calls), and marks the run done, failed or
interrupted on the way out.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import logging
import json
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from collections.abc import AsyncIterator, Iterator

from memegauge._version import __version__
from memegauge.engine.core import BudgetReached, CallOutcome, Engine, cache_key, call_priority
from memegauge.engine.interrupt import StopSignal, graceful_ctrl_c
from memegauge.signals import run_opened
from memegauge.engine.preflight import preflight_vision
from memegauge.engine.progress import CallProgress
from memegauge.engine.store import HEARTBEAT_S, RunBusy, Store, StoreError, canonical_json
from memegauge.models.spec import ModelRegistry
from memegauge.records import R, Record, read_record, read_records, write_records
from memegauge.errors import ErrorClass, MemeGaugeError

__all__ = ["BudgetReached", "CallOutcome", "Engine", "RUN_GC_THRESHOLD", "Run", "RunBusy", "RunIncomplete",
           "Store", "StoreError",
           "cache_key", "call_priority", "config_hash",
           "ensure_complete", "failure_text", "open_run", "set_budget"]


log = logging.getLogger(__name__)


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()[:16]


class Run:
    """A named run in the store. Stages' outputs are stored here as typed records only
    (`memegauge.records`): `put(record)`, `put_many(records)`, `all(RecordClass)`, `get(RecordClass, key)`."""

    def __init__(self, store: Store, run_id: int, execution_id: int, name: str, method: str,
                 seed: int | None) -> None:
        self.store, self.id, self.execution_id = store, run_id, execution_id
        self.name, self.method, self.seed = name, method, seed

    def put(self, record: Record) -> None:
        write_records(self.store, self.id, [record])

    def put_many(self, records: list[Record]) -> None:
        """Records of one kind, in one transaction."""
        write_records(self.store, self.id, records)

    def get(self, kind: type[R], key: str | None = None) -> R | None:
        return read_record(self.store, self.id, kind, key)

    def all(self, kind: type[R]) -> list[R]:
        return read_records(self.store, self.id, kind)


@asynccontextmanager
async def open_run(store: Store, registry: ModelRegistry, *, name: str, method: str,
                   config: dict[str, Any], seed: int | None = None, progress: bool | None = None,
                   vision_models: list[str] | None = None) -> AsyncIterator[tuple[Run, Engine]]:
    """Open or resume the run `name`; the same name with another config is refused.

    `vision_models`: the models the run will show pictures to; each one the registry says sees
    images is probed first, and one whose server refuses images stops the run here, before its
    first stage and before the store changes (`memegauge.engine.preflight.preflight_vision`).
    """
    if vision_models:
        await preflight_vision(registry, vision_models, store)
    run_id, execution_id = store.open_run(name, method, config, config_hash(config), seed,
                                          __version__)
    run_opened(True)
    run = Run(store, run_id, execution_id, name, method, seed)
    log.info("run %r (%s): execution %d started", name, method, execution_id)
    beating = asyncio.create_task(_heartbeat(store, run_id, execution_id))
    stop = StopSignal()
    with CallProgress(enabled=progress) as bar, _collector_for_many_calls(), graceful_ctrl_c(stop):
        engine = Engine(store, registry, run_id=run_id, execution_id=execution_id, progress=bar,
                        seed=seed, stop=stop, budget=_BUDGET[0])
        try:
            yield run, engine
        except BudgetReached as exc:
            await stop.drain()  # the answers already paid for are stored before the run stops
            _record_end(store, run_id, execution_id, "stopped", str(exc))
            raise BudgetReached(engine.spent, exc.budget, engine.calls_made, run=name) from None
        except (KeyboardInterrupt, GeneratorExit, asyncio.CancelledError) as exc:
            _record_end(store, run_id, execution_id, "interrupted", type(exc).__name__)
            raise
        except BaseException as exc:
            _record_end(store, run_id, execution_id, "failed", f"{type(exc).__name__}: {exc}"[:2000])
            raise
        else:
            summary = engine.failure_summary()
            if summary["failed"]:  # not every planned item has its result: not done
                store.finish_run(run_id, execution_id, "incomplete", canonical_json(summary))
            else:
                store.finish_run(run_id, execution_id, "done")
        finally:
            beating.cancel()
            await engine.aclose()


_BUDGET: list[float | None] = [None]


def set_budget(usd: float | None) -> None:
    """The budget of each run this process opens from now on (`--budget USD`; None: none): the cost
    of the fresh calls one execution may make before the run stops, resumable."""
    _BUDGET[0] = usd


RUN_GC_THRESHOLD = 10_000
"""Allocations between the cyclic collector's young passes while a run is open (Python's default: 700)."""


@contextmanager
def _collector_for_many_calls() -> Iterator[None]:
    """Run with fewer young-generation collections, then restore the process's setting.

    Every call in flight holds objects across many young passes, so at the default threshold they are
    promoted to the oldest generation and trigger full passes over everything the run keeps (all its
    results): 55 full passes took 15 s of an 86 s, 60k-call run. At 10,000 the in-flight objects die
    young; the same run spent 0.2 s in full passes, with the same peak memory (bench/store_scale.py).
    """
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], RUN_GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _record_end(store: Store, run_id: int, execution_id: int, status: str, error: str) -> None:
    """Record how a run ended, unless the store itself is what failed (disk full, damaged): then the
    original error is the one to report, and the dead lease already reads as `interrupted`."""
    try:
        store.finish_run(run_id, execution_id, status, error)
    except StoreError:
        pass


async def _heartbeat(store: Store, run_id: int, execution_id: int) -> None:
    """Keep the run's lease fresh while it executes (see `Store.heartbeat`)."""
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        try:
            store.heartbeat(run_id, execution_id)
        except StoreError:  # a full disk: the run's own next write reports it, once; beat again later
            log.debug("heartbeat of run %d not written", run_id, exc_info=False)


class RunIncomplete(MemeGaugeError):
    """A run ended without every result: some calls still failed after their retries (exit 1)."""


def failure_text(summary: dict[str, Any]) -> str:
    """'3 of 40 calls failed: adammeme.scoring.scorer: server 2; …' from a failure summary."""
    parts = "; ".join(f"{stage or '?'}: " + ", ".join(f"{c} {n}" for c, n in classes.items())
                      for stage, classes in summary["by_stage"].items())
    present = {c for classes in summary["by_stage"].values() for c in classes}
    fixes = "".join(f". {c}: {ErrorClass(c).fix}" for c in sorted(present)
                    if c in ErrorClass._value2member_map_ and ErrorClass(c).fix)
    return f"{summary['failed']} of {summary['asked']} calls failed ({parts}){fixes}"


def ensure_complete(store: Store, name: str, max_failure_rate: float = 0.0) -> str:
    """The run's final word: '' when done; raises `RunIncomplete` (exit 1) when calls still failed,
    unless their share is at most `max_failure_rate` — then the run is marked done and the returned
    sentence says what was accepted."""
    row = store.run_row(name)
    if row["status"] != "incomplete":
        return ""
    summary = json.loads(row["error"])
    rate = summary["failed"] / max(summary["asked"], 1)
    if rate <= max_failure_rate:
        note = f"{failure_text(summary)}; accepted under --max-failure-rate {max_failure_rate:g}"
        store.accept_run(row["id"], note)
        return note
    raise RunIncomplete(
        f"run {name!r} is incomplete: {failure_text(summary)}. Rerun the same command to retry them "
        "(answers already stored are replayed, not paid again), or accept the gaps with "
        f"--max-failure-rate {rate:.3g}")
