"""A benchmark folder → a registered `Method` (`benchmark_method`), and the built-in folders' entry points.

A benchmark is registered as every plug-in is (`memegauge.registry`): one entry point of the group
``memegauge.benchmarks``, named after the benchmark, loaded when that name is first asked for, so its
``benchmark.yaml`` is read on first use. MemeGauge's own folders are attributes of this module (a folder
``goat-bench`` is ``family:goat_bench``), built on first access:

    [project.entry-points."memegauge.benchmarks"]
    fhm = "memegauge.benchmarks.kit.family:fhm"
    fifth = "fifthbench:METHOD"          # fifthbench/__init__.py: METHOD = benchmark_method(Path(__file__).parent)

Two benchmarks (or a benchmark and a method) with one name are refused by the registry (`DuplicateMethod`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.spec import SPEC_FILE, Benchmark, load_spec
from memegauge.methods import Method

BENCHMARKS_DIR = Path(__file__).resolve().parents[1]
_SPECS: dict[str, Benchmark] = {}  # every benchmark method built in this process, by name


def benchmark_method(folder: Path) -> Method:
    """The method of the benchmark in `folder` (its `benchmark.yaml` read and checked now; its `hooks.py`, the
    data and the report code when first used)."""
    spec = load_spec(folder)
    _SPECS[spec.name] = spec
    hooks = _Hooks(folder, spec)
    return Method(name=spec.name, title=spec.title, report=hooks.report, view=hooks.view, config=hooks.config,
                  check=hooks.check, run=hooks.run, tables=hooks.call("tables"), models=hooks.call("models"),
                  headline=hooks.call("headline"), exports=hooks.call("exports"), folder=folder,
                  version=spec.version)


class _Hooks:
    """The kit's functions bound to one benchmark; each imports its module when first called."""

    def __init__(self, folder: Path, spec: Benchmark) -> None:
        self.folder, self.spec = folder, spec
        self._module: Any = None
        self._loaded = False

    def hooks_module(self) -> Any:
        if not self._loaded:
            from memegauge.benchmarks.kit.items import load_hooks  # lazy: the registry loads no reader

            self._module, self._loaded = load_hooks(self.folder, self.spec.name), True
        return self._module

    def call(self, name: str) -> Any:
        def hook(*args: Any) -> Any:
            from memegauge.benchmarks.kit import report  # lazy: `memegauge --help` loads no statistics

            return getattr(report, name)(*args)
        return hook

    def report(self, store: Any, run: dict[str, Any]) -> dict[str, Any]:
        from memegauge.benchmarks.kit.report import build  # lazy: numpy and scipy when a report is built

        self.hooks_module()  # the metrics and answer kinds a benchmark's module registers, before its report
        return build(self.spec, store, run)

    def view(self, report: dict[str, Any], store: Any) -> Any:
        from memegauge.benchmarks.kit.report import view  # lazy: as `report`

        return view(report, store)

    def config(self, source: Any) -> Any:
        from memegauge.benchmarks.kit.run import config  # lazy: the run's modules when a run is made

        return config(self.spec, source)

    def check(self, cfg: Any, registry: Any) -> Any:
        from memegauge.benchmarks.kit.run import check  # lazy: as `config`

        return check(self.spec, self.hooks_module(), cfg, registry)

    async def run(self, cfg: Any, **options: Any) -> Any:
        from memegauge.benchmarks.kit.run import run  # lazy: as `config`

        return await run(self.spec, self.hooks_module(), cfg, **options)


def builtin_folders() -> dict[str, Path]:
    """{attribute: folder} of every folder of `memegauge/benchmarks/` holding a `benchmark.yaml` (each is declared
    as an entry point ``NAME = "memegauge.benchmarks.kit.family:ATTRIBUTE"``; tests/test_structure.py checks)."""
    return {folder.name.replace("-", "_"): folder for folder in sorted(BENCHMARKS_DIR.iterdir())
            if (folder / SPEC_FILE).is_file()}


_BUILT: dict[str, Method] = {}


def __getattr__(attribute: str) -> Method:
    """A built-in benchmark's method, built (its YAML read) when its entry point is first loaded."""
    if attribute not in _BUILT:
        folder = builtin_folders().get(attribute) if not attribute.startswith("__") else None
        if folder is None:
            raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
        _BUILT[attribute] = benchmark_method(folder)
    return _BUILT[attribute]


def benchmark_spec(name: str) -> Benchmark | None:
    """The benchmark behind the registered method `name`, or None when it is no benchmark."""
    from memegauge.methods import method  # the registry builds the benchmark's method (and spec) first

    found = method(name)
    return _SPECS.get(name) if found is not None else None


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark (built-in or installed by another package), in name order."""
    from memegauge.methods import BENCHMARKS  # the benchmarks alone: listing them loads no other method

    return [_SPECS[name] for name in BENCHMARKS.all() if name in _SPECS]


__all__ = ["benchmark_method", "benchmark_spec", "benchmarks", "builtin_folders"]
