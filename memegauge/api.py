"""MemeGauge from Python: one entry point per method, of one shape (see docs/api.md); `memegauge.run_NAME`
is `run` of the registered method NAME (`entry_point`), whichever package installed it.

    import memegauge
    result = memegauge.run_arena("arena.yaml", store="memegauge.db", models="models.yaml")
    result.report["ranking"]            # the report dict, as `memegauge report` builds it
    result.to_pandas("ranking")         # its tables as DataFrames (pandas installed)

Every entry point takes the method's config (its pydantic model, a dict, or a YAML path), a store (a
`Store` or a path; default ``./memegauge.db`` or ``$MEMEGAUGE_STORE``), a model registry (a
`ModelRegistry`, a YAML path, or a ``{name: spec}`` dict, on top of the built-in models; default
``$MEMEGAUGE_MODELS``), an optional run name and whether to show a progress bar. The run is resumable like
the CLI's: the same name and config replay every answered call from the store. Inside a running event
loop (a notebook) the sync entry points run the method on a worker thread; `arun` is the async form.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from collections.abc import Callable, Coroutine

from memegauge.config import ENV_STORE, load_registry, registry_from_mapping

from memegauge.models.spec import ModelRegistry
from memegauge.engine.store import Store
from memegauge.extras import install_hint
from memegauge.methods import Method, method, methods
from memegauge.run_path import run_checked
from memegauge.errors import InputError

if TYPE_CHECKING:
    import pandas

    from memegauge.report.header import RunHeader

T = TypeVar("T")


@dataclass
class Result:
    """A finished (or incomplete) run: its name and accounting, its report and the report's tables."""

    name: str
    method: str
    status: str  # done, or incomplete when some calls still failed after their retries
    calls: int
    calls_made: int
    failed_calls: int
    store: Store = field(repr=False)
    _report: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def header(self) -> RunHeader:
        """The run's header, typed: what ran, how it ended, what it cost (the report's `run` section)."""
        from memegauge.report.header import run_header

        return run_header(self.store, self.name)

    @property
    def report(self) -> dict[str, Any]:
        """The run's report (`memegauge report NAME --format json`), built from the store once."""
        if self._report is None:
            from memegauge.report import build_report

            self._report = build_report(self.store, self.name)
        return self._report

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """The report as named flat tables (rows of dicts), e.g. Arena's ``ranking``, MemeQA's
        ``accuracy``, AdamMeme's ``targets`` and ``categories``; and ``headline``: the leaderboard's
        figures with their 95% intervals (`memegauge.report.headline.Headline`), for every method
        that has them."""
        from memegauge.report.headline import headline_rows

        described = _method(self.method)
        if described.tables is None:
            found = {"summary": [{k: v for k, v in self.report.items() if not isinstance(v, (dict, list))}]}
        else:
            found = described.tables(self.report)
        rows = headline_rows(self.report)
        return {**found, "headline": [r.model_dump() for r in rows]} if rows else found

    def to_pandas(self, table: str | None = None) -> pandas.DataFrame | dict[str, pandas.DataFrame]:
        """One table as a DataFrame, or every table (a dict of DataFrames) when `table` is None."""
        try:
            import pandas
        except ImportError:
            raise InputError("to_pandas needs pandas", "Result.to_pandas", install_hint("pandas")) from None
        tables = self.tables()
        if table is None:
            return {name: pandas.DataFrame(rows) for name, rows in tables.items()}
        if table not in tables:
            raise InputError(f"no table {table!r} in a {self.method} report", "Result.to_pandas",
                             f"use one of: {', '.join(tables)}")
        return pandas.DataFrame(tables[table])


def run(method_name: str, config: Any, *, store: Store | str | Path | None = None,
        models: ModelRegistry | str | Path | dict[str, Any] | None = None, name: str | None = None,
        progress: bool = False, preflight: bool = True) -> Result:
    """Run (or resume) the registered method `method_name` on `config`; see the module."""
    return _sync(arun(method_name, config, store=store, models=models, name=name, progress=progress,
                      preflight=preflight))


async def arun(method_name: str, config: Any, *, store: Store | str | Path | None = None,
               models: ModelRegistry | str | Path | dict[str, Any] | None = None, name: str | None = None,
               progress: bool = False, preflight: bool = True) -> Result:
    """`run`, awaitable (for callers that already run an event loop). The CLI's run path
    (`memegauge.run_path.run_checked`): the inputs checked, then every model (`preflight`: False skips
    it, as `--skip-preflight` does), then the store opened and the method run."""
    described = _method(method_name)
    if described.run is None or described.config is None:
        raise InputError(f"method {method_name!r} has no runs", "memegauge.run", f"use {_runnable()}")
    parsed = config if not isinstance(config, (dict, str, Path)) else described.config(config)
    opened: list[Store] = []

    def the_store() -> Store:  # opened once, after the checks (bad input creates no store file)
        if not opened:
            opened.append(open_store(store))
        return opened[0]

    [done] = await run_checked(described, [(parsed, name)], store=the_store, registry=registry_from(models),
                               progress=progress, preflight=preflight)
    return Result(name=done.name, method=described.name, status=done.status, calls=done.calls,
                  calls_made=done.calls_made, failed_calls=done.failed_calls, store=the_store())


def load(name: str, *, store: Store | str | Path | None = None) -> Result:
    """The stored run `name` as a `Result` (its report, `tables()`, `to_pandas()`), read from the store only:
    nothing is run or called, and no store file is created. An unknown name is one `InputError`."""
    if not isinstance(store, Store):
        path = Path(store) if store is not None else Path(os.environ.get(ENV_STORE) or "memegauge.db")
        if not path.exists():
            raise InputError(f"no store at {path}", "memegauge.load", "pass store=PATH: the store the run is in")
    opened = open_store(store)
    summary = opened.run_summary(name)  # an unknown name: InputError with the store's recent runs
    return Result(name=name, method=summary["method"], status=summary["status"], calls=summary["calls"],
                  calls_made=summary["calls_made"], failed_calls=summary["failed_calls"], store=opened)


def entry_point(method_name: str) -> Callable[..., Result]:
    """`memegauge.run_<method_name>`: `run` of that method, `config` first (its config model, a dict or a
    YAML path), the same options."""
    described = _method(method_name)

    def run_method(config: Any, **options: Any) -> Result:
        return run(method_name, config, **options)

    run_method.__name__ = run_method.__qualname__ = f"run_{method_name}"
    run_method.__doc__ = f"{described.title} on `config`; see `memegauge.api.run`."
    return run_method


def open_store(store: Store | str | Path | None = None) -> Store:
    """A `Store`: the one given, the file at the path given, or ``./memegauge.db`` / ``$MEMEGAUGE_STORE``."""
    if isinstance(store, Store):
        return store
    return Store(Path(store) if store is not None else Path(os.environ.get(ENV_STORE) or "memegauge.db"))


def registry_from(models: ModelRegistry | str | Path | dict[str, Any] | None) -> ModelRegistry:
    """A model registry: the one given, a YAML file's, or a ``{name: spec}`` dict's, each on top of the
    built-in models; None: the built-ins plus ``$MEMEGAUGE_MODELS`` when set."""
    if isinstance(models, ModelRegistry):
        return models
    if isinstance(models, dict):
        return registry_from_mapping(models, "models (a dict)")
    return load_registry(models)


def _method(name: str) -> Method:
    described = method(name)
    if described is None:
        raise InputError(f"no installed method {name!r}", "memegauge.run", f"use {_runnable()}")
    return described


def _runnable() -> str:
    """The registered methods that make runs, as the fix of a wrong name."""
    return ", ".join(m.name for m in methods() if m.run is not None) or "an installed method"


def _sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` to the end: here, or on a worker thread when an event loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
