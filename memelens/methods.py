"""The method registry: every evaluation method is one `Method` descriptor, registered by name.

The CLI, the demo, the report builder and the HTML report iterate this registry; no shared file lists
the methods' modules. A method package exports its descriptor from a small module (``method.py``) and
declares it as an entry point of the group ``memelens.methods`` in its distribution's metadata:

    [project.entry-points."memelens.methods"]
    toxicity = "memelens_toxicity.method:METHOD"

so a method installed by another package is found the same way as the built-in ones. A descriptor
module stays light: each hook imports its implementation when called, so `memelens --help` does not
load torch, the embedded model or a method's statistics. Two descriptors with one name are refused
(`DuplicateMethod`), and a declared method that fails to import fails loudly rather than vanishing.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from memelens.types import MemeLensError

if TYPE_CHECKING:
    import typer

    from memelens.engine.store import Store

ENTRY_POINT_GROUP = "memelens.methods"


@dataclass(frozen=True)
class Method:
    """What MemeLens needs to know of one method.

    name      The method's name as stored with each of its runs (`runs.method`) and as it is looked up
              when a run is reported; never reused for another method.
    title     A human name for listings ("MemeArena").
    report    `build(store, run) -> dict`: the method's figures of one run, read from the store only;
              `run` is the run header plus its store id. Every report format renders this dict.
    view      `view(report, store) -> (blocks, data)`: the method's part of the HTML report; None
              shows the figures as generic tables.
    commands  `commands(app)`: adds the method's CLI commands to the `memelens` Typer app; None adds
              none (a method that only reports, such as the demo's screen).
    demo      `async part(settings, memes, model, out_dir) -> run name`: the method's part of
              `memelens demo`; None takes no part. Parts run in `demo_order`, lowest first.
    """

    name: str
    title: str
    report: Callable[["Store", dict[str, Any]], dict[str, Any]]
    view: Callable[[dict[str, Any], "Store"], tuple[list[Any], dict[str, Any]]] | None = None
    commands: Callable[["typer.Typer"], None] | None = None
    demo: Callable[..., Awaitable[str]] | None = None
    demo_order: int = 100


    @classmethod
    def from_hooks(cls, name: str, title: str, hooks: Callable[[], Any], demo_order: int = 100) -> "Method":
        """A method with all four hooks, taken from the functions `report`, `view`, `commands` and
        `demo` of the module `hooks()` returns. That module is imported on the first call of a hook,
        so the descriptor module stays light."""
        def hook(attribute: str) -> Callable[..., Any]:
            return lambda *args: getattr(hooks(), attribute)(*args)

        return cls(name=name, title=title, report=hook("report"), view=hook("view"), commands=hook("commands"),
                   demo=hook("demo"), demo_order=demo_order)


class DuplicateMethod(MemeLensError):
    """Two method descriptors claim one name."""


class _Registry:
    def __init__(self) -> None:
        self._methods: dict[str, tuple[Method, str]] = {}
        self._loaded = False

    def register(self, method: Method, source: str = "code") -> Method:
        """Add a method; a second descriptor under a registered name is refused, naming both."""
        if method.name in self._methods:
            _, first = self._methods[method.name]
            raise DuplicateMethod(f"method {method.name!r} is registered twice: by {first} and by {source}; "
                                  "rename one of them (a run's method name must say which code reads it)")
        self._methods[method.name] = (method, source)
        return method

    def load(self) -> None:
        """Register every method declared as an entry point (once)."""
        if self._loaded:
            return
        self._loaded = True
        points = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name)
        if not points:  # the built-in methods are declared in MemeLens's own metadata
            raise MemeLensError("no MemeLens method is registered: the package's metadata is missing (run "
                                "from a source tree that was never installed?); install it with "
                                "`bash scripts/setup.sh` or `pip install -e .`")
        for point in points:
            method = point.load()
            if not isinstance(method, Method) or method.name != point.name:
                raise MemeLensError(f"entry point {point.name!r} = {point.value!r} of group "
                                    f"{ENTRY_POINT_GROUP!r} is not a Method named {point.name!r}")
            self.register(method, f"entry point {point.value}")

    def all(self) -> list[Method]:
        self.load()
        return [method for method, _ in self._methods.values()]

    def get(self, name: str) -> Method | None:
        self.load()
        found = self._methods.get(name)
        return found[0] if found else None


REGISTRY = _Registry()


def register_method(method: Method, source: str = "code") -> Method:
    """Register a method from code (tests, notebooks); see the module docstring for packages."""
    return REGISTRY.register(method, source)


def methods() -> list[Method]:
    """Every registered method, in name order."""
    return sorted(REGISTRY.all(), key=lambda m: m.name)


def method(name: str) -> Method | None:
    """The method registered as `name`, or None."""
    return REGISTRY.get(name)
