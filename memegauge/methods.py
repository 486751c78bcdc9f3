"""The method registry: every evaluation method is one `Method` descriptor, registered by name.

The demo, the report builder and the HTML report iterate this registry; no shared file lists
the methods' modules. A method package exports its descriptor from a small module (``method.py``) and
declares it as an entry point of the group ``memegauge.methods`` in its distribution's metadata:

    [project.entry-points."memegauge.methods"]
    toxicity = "memegauge_toxicity.method:METHOD"

so a method installed by another package is found the same way as the built-in ones (`memegauge.registry`:
an entry point is named after its method and loaded when that name is first asked for). A descriptor
module stays light: each hook imports its implementation when called, so reporting a run does not load
torch, the embedded model or a method's statistics. A method's commands are plug-ins of their own (entry
points of ``memegauge.commands``, `memegauge.registry.Command`): `memegauge --help` loads no method. Two
descriptors with one name are refused (`DuplicateMethod`), and a declared method that fails to import fails
loudly rather than vanishing.

A benchmark of the kit is a method declared in the group ``memegauge.benchmarks`` (one entry point per
benchmark, `memegauge.benchmarks.kit.family`); `method(name)` and `methods()` see both groups.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, fields
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Awaitable, Callable

from memegauge.files import canonical_json
from memegauge.registry import METHOD_STEPS, DuplicatePlugin, PluginError, Registry, provide
from memegauge.errors import MemeGaugeError

if TYPE_CHECKING:
    import sqlite3

    from memegauge.engine.store import Store
    from memegauge.models.spec import ModelRegistry
    from memegauge.rating.part import RatingPart
    from memegauge.types import Meme

ENTRY_POINT_GROUP = "memegauge.methods"
BENCHMARK_GROUP = "memegauge.benchmarks"


# ---- the hooks' shapes (checked by mypy on this module: tests/test_methods.py) ---------------------

class ReportHook(Protocol):
    def __call__(self, store: Store, run: dict[str, Any], /) -> dict[str, Any]: ...


class ViewHook(Protocol):
    def __call__(self, report: dict[str, Any], store: Store, /) -> tuple[list[Any], dict[str, Any]]: ...


class CheckHook(Protocol):
    def __call__(self, config: Any, registry: ModelRegistry, /) -> Checked: ...


class RunHook(Protocol):
    def __call__(self, config: Any, *, store: Store, registry: ModelRegistry, name: str | None = None,
                 progress: bool | None = None, checked: Checked | None = None) -> Awaitable[RunResult]: ...


class RatingHook(Protocol):
    def __call__(self, run: dict[str, Any], /) -> RatingPart | None: ...


MigrationStep = Callable[["sqlite3.Connection"], None]


@dataclass(frozen=True)
class Method:
    """What MemeGauge needs to know of one method.

    name      The method's name as stored with each of its runs (`runs.method`) and as it is looked up
              when a run is reported; never reused for another method.
    title     A human name for listings ("MemeArena").
    report    `build(store, run) -> dict`: the method's figures of one run, read from the store only;
              `run` is the run header plus its store id. Every report format renders this dict.
    view      `view(report, store) -> (blocks, data)`: the method's part of the HTML report; None
              shows the figures as generic tables.
    demo      `async part(DemoInputs) -> run name`: the method's part of `memegauge demo`; None takes
              no part. Parts run in `demo_order`, lowest first.
    config    `config(source) -> model`: the method's config (a pydantic model) from a YAML path or a
              dict, validated; paths in it resolve from the file. None for a method without runs.
    check     `check(config, registry) -> Checked`: read and check the run's local inputs (its memes,
              questions, files) and name the models it calls; no network, nothing written. A bad input
              is one `InputError`.
    run       `async run(config, *, store, registry, name=None, progress=None, checked=None, **options)
              -> RunResult`: run (or resume) the method on `config` as run `name` (a default name when
              None), on the inputs `checked` (`check` is called when None). The same shape for every
              method; callers go through `memegauge.run_path.run_checked`, the one run path of the CLI and the API.
    tables    `tables(report) -> {name: [row dicts]}`: the report as flat tables (`memegauge.Result`'s
              `to_pandas`); None: one table of the report's top-level scalars.
    models    `models(config) -> {role: [model names]}`: the models a run used, by role (``agent``,
              ``targets``, ``judges``), read from the run's stored config dict; the report header and
              the index page show them. None: no models named.
    folder    The method's folder: its prompt templates are ``folder/prompts/*.j2`` (looked up by file
              name by `memegauge.prompts.render_prompt`) and its report page's browser script is
              ``folder/browser.js`` (inlined into the HTML report of its runs). None: neither.
    headline  `headline(report) -> [Headline]`: the report's leaderboard figures as typed rows, each
              with its 95% interval (`memegauge.report.headline`); `report --format csv|md`,
              `compare` and `view` show these. None: the method has no leaderboard.
    exports   `exports() -> {table name: memegauge.export.ExportTable}`: the run's item tables `memegauge
              export --table` offers (one row per stored record, with a correctness/score column); every
              method with `headline` also offers ``leaderboard``. None: only that.
    migrations  `(version, step)` pairs: `step(connection)` rewrites this method's records when a store
              holding its runs is migrated to `version` (`memegauge.engine.store.schema.migrate`, handed
              the steps from here: `migration_steps`); the store itself knows no method.
    version   The method's own version, stored with each run it makes (`RunHeader.method_version`): bump
              it when what the method computes or stores changes, so an old run is never read as if
              the newer method had made it.
    rating    `rating(run) -> RatingPart | None`: the method's side of `memegauge rate` and of the
              report's "People vs judges" section (`memegauge.rating.part`) for this run; None (or a
              None answer): the run offers nothing to rate.
    """

    name: str
    title: str
    report: ReportHook
    view: ViewHook | None = None
    demo: Callable[[DemoInputs], Awaitable[str]] | None = None
    demo_order: int = 100
    config: Callable[[Any], Any] | None = None
    check: CheckHook | None = None
    run: RunHook | None = None
    tables: Callable[[dict[str, Any]], dict[str, list[dict[str, Any]]]] | None = None
    models: Callable[[dict[str, Any]], dict[str, list[str]]] | None = None
    folder: Path | None = None
    headline: Callable[[dict[str, Any]], list[Any]] | None = None
    exports: Callable[[], dict[str, Any]] | None = None
    migrations: tuple[tuple[int, MigrationStep], ...] = ()
    rating: RatingHook | None = None
    version: str = "1"

    def __post_init__(self) -> None:
        for hook in fields(self):  # a lazy hook that names nothing says which hook of which method it is
            found = getattr(self, hook.name)
            if isinstance(found, Lazy) and found.hook is None:
                found.hook, found.owner = hook.name, self.name


class Lazy:
    """A hook named as `"module:function"`, imported on its first call (`lazy`); `hook` and `owner` are the
    hook's field and its method's name (set by `Method`), for the message when the target names nothing."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.hook: str | None = None
        self.owner: str | None = None

    def resolve(self) -> Callable[..., Any]:
        """The function named, imported now; a target that names no function (its module, or the attribute in
        it, does not exist, or is not callable) is one `PluginError` naming the hook, its method and the target."""
        module_name, _, attribute = self.target.partition(":")
        try:
            module = import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (module_name == exc.name or module_name.startswith(exc.name + ".")):
                raise  # a module the target's module imports is missing: its own error says which
            raise self._names_nothing(f"no module {exc.name!r}") from exc
        found = getattr(module, attribute, None) if attribute else None
        if not callable(found):
            raise self._names_nothing(f"module {module_name!r} has no function {attribute!r}" if found is None
                                      else f"{self.target} is {type(found).__name__}, not a function")
        return found  # type: ignore[no-any-return]

    def _names_nothing(self, why: str) -> PluginError:
        which = f"hook {self.hook!r} of method {self.owner!r}" if self.hook else "a lazy hook"
        return PluginError(f"{which} names nothing: lazy({self.target!r}): {why}; fix the method's descriptor "
                           "to name an existing \"module:function\" (or reinstall the package that declares it)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.target!r})"


def lazy(target: str) -> Any:
    """A hook that imports `"module:function"` on its first call and calls it: a descriptor names
    its implementations this way, so that loading it (to report a run, say) imports
    no pipeline and none of a pipeline's heavy dependencies (issue 24: bm25s brought in JAX, which
    takes most of the GPU's memory). Typed `Any`: it stands for whichever hook it names, whose shape
    the named function has (a `Lazy`, whose `resolve()` tests use to check every name)."""
    return Lazy(target)


@dataclass(frozen=True)
class DemoInputs:
    """What `memegauge demo` gives each method's demo part."""

    store: Store
    registry: ModelRegistry  # a part may add entries (e.g. Arena's personas of the demo model)
    memes: list[Meme]  # the demo's meme set (the bundled samples unless --memes)
    model: str  # the model for every role
    out_dir: Path  # where the part writes its report JSON
    progress: bool | None = None  # a progress bar: None decides by the terminal


@dataclass(frozen=True)
class Checked:
    """A run's inputs, read and checked before anything is sent or written (`Method.check`)."""

    inputs: Any  # what the method's run reads (memes, questions, human files): handed back to its `run`
    models: list[str]  # every model the run calls: each is checked by the preflight
    pictures: list[str]  # those of them the run shows pictures to: each is sent one picture probe


@dataclass(frozen=True)
class RunResult:
    """What every method's `run` returns: the run's name, how it ended, and its call accounting."""

    name: str
    status: str  # done, or incomplete when some calls still failed after their retries
    calls: int  # the run's calls, replayed ones included
    calls_made: int  # of which made (paid) by any execution of this run
    failed_calls: int
    details: Any = None  # what else the method's run tells its command (e.g. Arena's battles judged)

    @classmethod
    def of(cls, store: Store, name: str, details: Any = None) -> RunResult:
        summary = store.run_summary(name)
        return cls(name=name, status=summary["status"], calls=summary["calls"],
                   calls_made=summary["calls_made"], failed_calls=summary["failed_calls"], details=details)


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._+-]+")


def default_run_name(method: str, models: list[str], data: Path | str, config: dict[str, Any]) -> str:
    """``<method>-<models>-<data>[-s<seed>]-<hash>``: what ran, on what, with which seed (when the config
    has one), and which config (6 hex digits of its hash, so two configs never share a run by accident).
    The seed is shown because it is the one key users change alone, to repeat a run."""
    who = "+".join(models) if len(models) <= 3 else f"{'+'.join(models[:3])}+{len(models) - 3}more"
    digest = hashlib.sha256(canonical_json(config).encode()).hexdigest()[:6]  # = config_hash's first 6
    seed = [f"s{config['seed']}"] if config.get("seed") is not None else []
    parts = [method, who[:60], Path(str(data)).stem[:40], *seed, digest]
    return "-".join(_UNSAFE_NAME.sub("_", p).strip("_") or "x" for p in parts)


class DuplicateMethod(DuplicatePlugin):
    """Two method (or benchmark) descriptors claim one name."""


METHODS: Registry[Method] = Registry("method", ENTRY_POINT_GROUP, Method, duplicate=DuplicateMethod)
BENCHMARKS: Registry[Method] = Registry("benchmark", BENCHMARK_GROUP, Method, duplicate=DuplicateMethod)
"""A benchmark of the kit (`memegauge.benchmarks.kit.family`) is a method too, declared in its own group so that
listing the benchmarks (`eval --list`) loads no other method; a method and a benchmark never share a name."""


def register_method(method: Method, source: str = "code") -> Method:
    """Register a method from code (tests, notebooks); see the module docstring for packages."""
    if BENCHMARKS.get(method.name) is not None:
        raise DuplicateMethod(f"method {method.name!r} is registered twice: by {BENCHMARKS.source(method.name)} "
                              f"and by {source}; uninstall or rename one of them")
    return METHODS.register(method, source)


def _one_of(name: str, as_method: Method | None, as_benchmark: Method | None) -> Method | None:
    if as_method is not None and as_benchmark is not None and as_method is not as_benchmark:
        raise DuplicateMethod(f"method {name!r} is registered twice: by {METHODS.source(name)} and by "
                              f"{BENCHMARKS.source(name)}; uninstall or rename one of them")
    return as_method or as_benchmark


def methods() -> list[Method]:
    """Every registered method and benchmark, in name order (each declared one is loaded)."""
    own, benchmarks = METHODS.all(), BENCHMARKS.all()
    if not own:  # the built-in methods are declared in MemeGauge's own metadata
        raise MemeGaugeError("no MemeGauge method is registered: the package's metadata is missing (run "
                             "from a source tree that was never installed?); install it with "
                             "`bash scripts/setup.sh` or `pip install -e .`")
    every = {name: _one_of(name, own.get(name), benchmarks.get(name)) for name in sorted({*own, *benchmarks})}
    return [found for found in every.values() if found is not None]


def method(name: str) -> Method | None:
    """The method (or benchmark) registered as `name`, or None: its entry point alone is loaded, so reporting a
    run imports no other method and a broken third-party method stops only its own runs."""
    return _one_of(name, METHODS.get(name), BENCHMARKS.get(name))


def migration_steps(names: list[str]) -> list[tuple[int, MigrationStep]]:
    """The store migration steps of the methods named (those whose runs a store holds): only their
    entry points are loaded, so another installed method that fails to import does not stop a store
    from opening. A method not installed has no steps here (its runs cannot be read anyway)."""
    return [step for name in names if (found := method(name)) for step in found.migrations]


provide(METHOD_STEPS, migration_steps)  # the store's, through the registry: loading the methods imports no store
