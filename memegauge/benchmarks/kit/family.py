"""A benchmark folder → a registered `Method` (`benchmark_method`), and the built-in folders' one entry point.

MemeGauge declares one entry point for all of its benchmarks, ``benchmarks = "memegauge.benchmarks.kit.family:
BUILTIN"``, a `MethodFamily` yielding a method per folder of `memegauge/benchmarks/` that holds a
``benchmark.yaml``: adding a folder edits no shared file. Another package ships a benchmark the way it ships a
method, with an entry point naming one method:

    [project.entry-points."memegauge.methods"]
    fifth = "fifthbench:METHOD"          # fifthbench/__init__.py: METHOD = benchmark_method(Path(__file__).parent)

Two benchmarks (or a benchmark and a method) with one name are refused by the registry (`DuplicateMethod`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.benchmarks.kit.spec import SPEC_FILE, Benchmark, load_spec
from memegauge.methods import Method, MethodFamily

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


def builtin_methods() -> list[Method]:
    """A method per folder of `memegauge/benchmarks/` holding a `benchmark.yaml`, in name order."""
    return [benchmark_method(folder) for folder in sorted(BENCHMARKS_DIR.iterdir())
            if (folder / SPEC_FILE).is_file()]


BUILTIN = MethodFamily(builtin_methods)


def benchmark_spec(name: str) -> Benchmark | None:
    """The benchmark behind the registered method `name`, or None when it is no benchmark."""
    from memegauge.methods import method  # the registry builds every benchmark's method (and spec) first

    found = method(name)
    return _SPECS.get(name) if found is not None else None


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark (built-in or installed by another package), in name order."""
    from memegauge.methods import methods  # as `benchmark_spec`

    return [_SPECS[m.name] for m in methods() if m.name in _SPECS]


__all__ = ["BUILTIN", "benchmark_method", "benchmark_spec", "benchmarks"]
