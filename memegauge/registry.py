"""The one registry of plug-ins: methods, benchmarks, model backends, data sets, report sections and commands
(`Command`: a command's name, one-line help and where it is, so that `memegauge --help` imports no command).

Every kind of plug-in is a `Registry` of one descriptor type, filled one way: an installed distribution declares
each plug-in as an entry point of the kind's group, *named after the plug-in*, and the registry loads that entry
point when the name is first asked for (Inspect's `ensure_entry_points`):

    [project.entry-points."memegauge.methods"]
    toxicity = "memegauge_toxicity.method:METHOD"

so asking for one plug-in imports no other (reporting a run loads its method alone; a broken third-party plug-in
stops only what uses it), and `names()` lists every declared plug-in without importing any. Whatever is loaded is
type-checked (the entry point's object must be the kind's descriptor type, named as its entry point), and two
plug-ins under one name are refused, naming both sources (`DuplicatePlugin`). Code may register a descriptor too
(`Registry.register`: tests, notebooks, the built-in backends), under the same checks.

This module is the only one that loads entry points (tests/test_structure.py keeps it so); it imports nothing
of MemeGauge but `memegauge.errors` (no pydantic: the command line loads its commands through it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import FunctionType
from typing import Any, Generic, TypeVar

from memegauge.errors import InputError, MemeGaugeError, printable

T = TypeVar("T")


class DuplicatePlugin(MemeGaugeError):
    """Two plug-ins of one kind claim one name."""


class PluginError(MemeGaugeError):
    """A declared plug-in that cannot be loaded, or is not what its group holds."""


_DECLARED: dict[tuple[str, ...], Any] = {}


def _declared(group: str) -> Iterable[EntryPoint]:
    """The entry points of `group`, from one scan of the installed distributions per process (per `sys.path`:
    a folder added to it, as a test or a notebook does, is scanned again). `entry_points(group=…)` reads every
    distribution's metadata on each call, and `memegauge --help` asked it 14 times (bench/startup.py)."""
    key = tuple(sys.path)
    if key not in _DECLARED:
        _DECLARED.clear()
        _DECLARED[key] = entry_points()  # every group's; `select` picks one (Python 3.11 and later alike)
    return _DECLARED[key].select(group=group)


def _origin(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return f"entry point {point.value}" + (f" of {dist.name}" if dist is not None else "")


class _Origin:
    """Where a loaded plug-in came from (`_origin`), spelled when a message or `Registry.source` asks for it:
    a distribution's name is read by parsing its whole metadata file, once per plug-in loaded otherwise."""

    def __init__(self, point: EntryPoint) -> None:
        self.point = point

    def __str__(self) -> str:
        return _origin(self.point)


class Registry(Generic[T]):
    """The plug-ins of one kind, by name.

    kind      What they are, in words ("method", "data set"): messages name it.
    group     The entry point group that declares them.
    expected  Their descriptor type: a loaded object of another type is refused.
    name_of   A descriptor's name (default: its `name` attribute); None: a descriptor has no name of its own
              and is known by its entry point's (code registers it with `register(plugin, source, name)`).
    duplicate The error a second plug-in under a registered name raises (a `DuplicatePlugin`).
    """

    def __init__(self, kind: str, group: str, expected: type | tuple[type, ...],
                 name_of: Callable[[Any], str] | None = lambda plugin: plugin.name,
                 duplicate: type[DuplicatePlugin] = DuplicatePlugin, own: str | None = None) -> None:
        self.kind, self.group, self.expected, self.name_of = kind, group, expected, name_of
        self.duplicate = duplicate
        self.own = own
        """The module prefix of MemeGauge's own plug-ins of this kind ("memegauge."), or None. Given, another
        package's plug-in under the name of one of these is skipped with a warning (`refuse`) and the own one
        kept, where two plug-ins of other packages under one name are still refused (`DuplicatePlugin`)."""
        self._plugins: dict[str, tuple[T, str | _Origin]] = {}
        self._loaded_points: set[tuple[str, str, Any]] = set()
        self._all_loaded = False
        self._broken: dict[str, PluginError] = {}
        self._warned: set[str] = set()
        self.generation = 0
        """Counts the changes to what is registered (a caller may keep what it derived until it moves)."""

    # ---- registering ----------------------------------------------------------------------------------

    def register(self, plugin: T, source: str | _Origin = "code", name: str | None = None) -> T:
        """Add a descriptor; one of another type, or a second one under a registered name, is refused."""
        if not isinstance(plugin, self.expected):
            raise PluginError(f"{source} is not {_a(self.kind)} ({_type_names(self.expected)}): it is "
                              f"{type(plugin).__name__}")
        name = name if name is not None or self.name_of is None else self.name_of(plugin)
        if name is None:
            raise PluginError(f"{source}: {_a(self.kind)} is registered under a name")
        known = self._plugins.get(name)
        if known is not None and known[0] is not plugin:
            raise self.duplicate(f"{self.kind} {name!r} is registered twice: by {known[1]} and by {source}; "
                                  "uninstall or rename one of them")
        if known is None:
            self.generation += 1
        self._plugins[name] = (plugin, source)
        return plugin

    def unregister(self, name: str) -> None:
        """Forget a descriptor registered from code (tests)."""
        self._plugins.pop(name, None)
        self.generation += 1

    # ---- loading --------------------------------------------------------------------------------------

    def _points(self, name: str | None = None) -> Iterable[EntryPoint]:
        found = [p for p in _declared(self.group) if name is None or p.name == name]
        if self.own is not None:
            found = self._unshadowed(found)
        return sorted(found, key=lambda p: (p.name, p.value))

    def _unshadowed(self, found: list[EntryPoint]) -> list[EntryPoint]:
        """`found` less the entry points of other packages that take the name of one of MemeGauge's own."""
        own = {p.name for p in found if p.value.startswith(self.own or "")}
        shadows = [p for p in found if p.name in own and not p.value.startswith(self.own or "")]
        for point in shadows:
            self._refused(point, f"the name of MemeGauge's own {self.kind}")
        return [p for p in found if p not in shadows]

    def refuse(self, name: str, why: str) -> None:
        """Skip every declared entry point `name` (the caller keeps that name for one of its own), each named
        once on stderr with `why` and the fix (a command named as one of `memegauge`'s own, `runs` say)."""
        for point in self._points(name):
            self._refused(point, why)

    def _refused(self, point: EntryPoint, why: str) -> None:
        key = f"{point.name} = {point.value}"
        if key not in self._warned:
            self._warned.add(key)
            dist = getattr(point, "dist", None)
            uninstall = f" (pip uninstall {dist.name})" if dist is not None else ""
            _warn(f"skipped {_a(self.kind)}: {_origin(point)} (group {self.group!r}) is named {point.name!r}, "
                  f"{why}, which is kept; rename it in that package's entry points, or uninstall the package"
                  f"{uninstall}, to silence this")

    def _load(self, point: EntryPoint) -> None:
        key = (point.name, point.value, getattr(point, "dist", None))  # the distribution itself (hashed by
        # identity), not its name, which would be read from its metadata file
        if key in self._loaded_points:
            return
        self._loaded_points.add(key)
        try:
            self._load_new(point)
        except PluginError as exc:
            dist = getattr(point, "dist", None)
            exc.distribution = dist.name if dist is not None else None  # type: ignore[attr-defined]  # the fix
            self._broken[point.name] = exc
            raise

    def _load_new(self, point: EntryPoint) -> None:
        try:
            plugin = point.load()
        except MemeGaugeError:
            raise
        except Exception as exc:  # noqa: BLE001 - any import error of a plug-in becomes one clear message
            raise PluginError(f"{self.kind} {point.name!r} ({_origin(point)}, group {self.group!r}) failed to "
                              f"load: {type(exc).__name__}: {exc}") from exc
        named = self.name_of(plugin) if self.name_of is not None and isinstance(plugin, self.expected) else None
        if named is not None and named != point.name:
            raise PluginError(f"{_origin(point)} (group {self.group!r}) is named {point.name!r} but holds the "
                              f"{self.kind} {named!r}: an entry point is named after its plug-in")
        if self.name_of is None and not callable(plugin):
            raise PluginError(f"{_origin(point)} (group {self.group!r}) is not a function: {_a(self.kind)} entry "
                              "point names the function that adds it")
        self.register(plugin, _Origin(point), point.name)

    def get(self, name: str) -> T | None:
        """The plug-in `name`: registered, or loaded now from its entry point alone; None when none is declared."""
        if name not in self._plugins:
            for point in self._points(name):
                self._load(point)
            if name not in self._plugins and name in self._broken:
                raise self._broken[name]  # asked again: the same message, not "unknown"
        found = self._plugins.get(name)
        return found[0] if found else None

    def require(self, name: str, where: str, how: str = "", also: Iterable[str] = ()) -> T:
        """The plug-in `name`, as `get`; an unknown name is one `InputError` at `where` naming every known one
        (`also`, names the caller knows besides, first; then each registered or declared, none loaded to list
        them) and `how` (else registering or declaring one)."""
        found = self.get(name)
        if found is None:
            known = ", ".join(dict.fromkeys([*also, *self.names()])) or "none"
            raise InputError(f"unknown {self.kind} {name!r}", where, f"use one of: {known} ("
                             + (how or f"or declare yours as an entry point of group {self.group!r}") + ")")
        return found

    def all(self) -> dict[str, T]:
        """Every plug-in that loads, by name in name order: each declared one loaded (once). A broken one (its
        import fails, or it is not what the group holds) is skipped and named once on stderr (`broken`), so
        that a listing or a lookup over all plug-ins still works; asking for it by name (`get`) still fails
        with its `PluginError`. Two plug-ins under one name are still refused (`DuplicatePlugin`)."""
        if not self._all_loaded:
            for point in self._points():
                try:
                    self._load(point)
                except PluginError:
                    pass  # kept in `_broken` and named below
            self._all_loaded = True
        for name in sorted(self.broken()):
            if name not in self._warned:
                self._warned.add(name)
                _warn(f"skipped {_a(self.kind)}: {self._broken[name]}; {_fix(self._broken[name])}")
        return {name: self._plugins[name][0] for name in sorted(self._plugins)}

    def broken(self) -> dict[str, PluginError]:
        """The declared plug-ins that failed to load so far (by name: their errors), none registered since."""
        return {name: exc for name, exc in self._broken.items() if name not in self._plugins}

    def names(self) -> list[str]:
        """Every plug-in's name, declared or registered, without loading any."""
        return sorted({*self._plugins, *(p.name for p in self._points())})

    def __iter__(self) -> Iterator[str]:
        """The names registered or loaded so far, in the order they came (a declared entry point not yet loaded
        is not among them: `names()` lists those too)."""
        return iter(list(self._plugins))

    def __contains__(self, name: object) -> bool:
        """Whether `name` is registered or loaded (nothing is loaded to answer: `declared` also asks the
        entry points)."""
        return name in self._plugins

    def declared(self, name: str) -> bool:
        """Whether `name` is registered or declared (nothing is loaded)."""
        return name in self._plugins or any(True for _ in self._points(name))

    def source(self, name: str) -> str | None:
        """Where the registered plug-in `name` came from (an entry point, or "code")."""
        found = self._plugins.get(name)
        return str(found[1]) if found else None

    def snapshot(self) -> tuple[dict[str, tuple[T, str | _Origin]], set[tuple[str, str, Any]], bool]:
        """The registry's state, for `restore` (tests that register from code)."""
        return dict(self._plugins), set(self._loaded_points), self._all_loaded

    def restore(self, state: tuple[dict[str, tuple[T, str | _Origin]], set[tuple[str, str, Any]], bool]) -> None:
        self._plugins, self._loaded_points, self._all_loaded = dict(state[0]), set(state[1]), state[2]
        self.generation += 1


@dataclass(frozen=True)
class Command:
    """A top-level command of `memegauge` (an entry point of group "memegauge.commands", named after it): what
    `memegauge --help` lists, held apart from the command's module so that listing it imports nothing of it.

    name      The command's name.
    summary   Its one-line help: the first paragraph of the command's own help, as `--help` lists it (whole,
              wrapped to the terminal's width); tests/test_cli_help.py keeps the two equal.
    register  "module:function": `function(app)` adds the command (and any other of its module) to a Typer
              app; imported when the command is dispatched or its own `--help` asked for (`load`).
    """

    name: str
    summary: str
    register: str

    def load(self) -> Callable[[Any], None]:
        """The function that adds the command, its module imported now; one that cannot be is a `PluginError`."""
        try:
            found = EntryPoint(self.name, self.register, "memegauge.commands").load()
        except MemeGaugeError:
            raise
        except Exception as exc:  # noqa: BLE001 - any import error of a command becomes one clear message
            raise PluginError(f"command {self.name!r} ({self.register}) failed to load: "
                              f"{type(exc).__name__}: {exc}") from exc
        if not callable(found):
            raise PluginError(f"command {self.name!r}: {self.register} is not a function: a command names the "
                              "function that adds it to a Typer app")
        return found  # type: ignore[no-any-return]


_PROVIDED: dict[str, Callable[..., Any]] = {}


def provide(name: str, function: Callable[..., Any]) -> None:
    """Offer `function` as `name` to the layers below, which may not import its module: the methods' migration
    steps are handed to the store this way (`memegauge.methods` provides them when it is imported, so the store
    imports no method and loading the methods imports no store)."""
    _PROVIDED[name] = function


PROVIDERS: Registry[Callable[..., Any]] = Registry("provider", "memegauge.providers", FunctionType, name_of=None)
"""Functions a higher layer offers to a lower one by entry point, loaded when first asked for (a package that is
not imported yet can still answer: `data list` asks which benchmarks read each data set, `compare` asks for the
suite leaderboard of benchmark runs)."""


def provided(name: str) -> Callable[..., Any] | None:
    """What `provide` offered as `name`, else the function declared as entry point `name` of group
    "memegauge.providers", or None."""
    return _PROVIDED.get(name) or PROVIDERS.get(name)


EVALUATED_BY = "evaluated-by"
"""() -> {data set: [benchmarks `memegauge eval` reads it for]} (`memegauge data list` and `data info`)."""

PROFILE_PAGE = "profile-page"
"""(store, page) -> the HTML of one page of `memegauge profile --site`, or None (`memegauge view`'s /profiles/)."""

SUITE_BOARD = "suite-board"
"""(store, reports) -> the suite leaderboard of these runs when all are benchmark runs, else None (`compare`)."""

EVAL_BENCHMARKS = "eval-benchmarks"
"""([(method, stored config)]) -> for each run, the benchmark `eval` made it for, or None (`memegauge view`'s compare
form offers benchmark runs of any benchmarks together, as `compare` accepts them)."""


METHOD_STEPS = "method migration steps"
"""The name the methods' migration steps are provided under (`memegauge.engine.store.schema`)."""


def code_source(plugin: Any) -> str:
    """Where a plug-in registered from code comes from, for messages: its module and name (a function's
    `module.qualname`), else "code"."""
    module, name = getattr(plugin, "__module__", None), getattr(plugin, "__qualname__", None)
    return f"{module}.{name}" if module and name else "code"


def _warn(message: str) -> None:
    """One line on stderr, control characters (a terminal's escape sequences) taken out: this module imports
    no console (the command line loads its commands through it)."""
    print(f"warning: {printable(message)}", file=sys.stderr, flush=True)


def _fix(error: PluginError) -> str:
    """How to mend a broken plug-in: reinstall or uninstall the distribution that declares it."""
    dist = getattr(error, "distribution", None)
    if dist:
        return (f"reinstall {dist} (pip install --force-reinstall {dist}) or uninstall it (pip uninstall {dist}) "
                "to silence this")
    return "reinstall or uninstall the package that declares it to silence this"


def _a(kind: str) -> str:
    """`kind` with its indefinite article: "a method", "an answer kind"."""
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _type_names(expected: type | tuple[type, ...]) -> str:
    types = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(t.__name__ for t in types)


__all__ = ["METHOD_STEPS", "Command", "DuplicatePlugin", "PluginError", "Registry", "code_source", "provide",
           "provided"]
