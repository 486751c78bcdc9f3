"""The lower layers import one way: types ← models ← config ← engine. The model spec and backends never
import the config loader or the engine, the config loader never imports the engine, and none of the three
needs a `TYPE_CHECKING` guard or a function-level import to stay acyclic (a function-level import of a
package module says why on its line: it avoids loading a heavy library until it is needed). The engine
imports no method and no method's vocabulary."""

from __future__ import annotations

import ast

import pytest
from helpers.imports import PACKAGE, import_graph

LAYERS = ("memegauge.models", "memegauge.config", "memegauge.engine")  # each may import those before it
METHODS = ("memegauge.adammeme", "memegauge.arena", "memegauge.memeqa", "memegauge.screen", "memegauge.demo")


def _layer(module: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if module == layer or module.startswith(layer + ".")), None)


def _layer_files() -> list:
    return [p for p in PACKAGE.rglob("*.py") if _layer("memegauge." + ".".join(
        p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")) is not None]


def test_models_config_and_engine_import_one_way_lazy_imports_included():
    upward = sorted(f"{module} -> {target}" for module, targets in import_graph().items()
                    if _layer(module) is not None for target in targets
                    if _layer(target) is not None and _layer(target) > _layer(module))
    assert upward == []


def test_the_engine_imports_no_method_and_no_method_vocabulary():
    """Of the parsers, only the shared text helpers (`parse/__init__` re-exports the verdict shape)."""
    graph = import_graph()
    named = sorted(f"{module} -> {target}" for module in graph if module.startswith("memegauge.engine")
                   for target in graph[module] if target.startswith(METHODS)
                   or target in {"memegauge.parse", "memegauge.parse.verdict", "memegauge.arena.verdicts"})
    assert named == []


@pytest.mark.parametrize("path", _layer_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_type_checking_guard_and_every_function_level_import_of_the_package_says_why(path):
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    assert "TYPE_CHECKING" not in source
    unexplained = [node.lineno for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for node in ast.walk(fn) if isinstance(node, ast.ImportFrom)
                   and (node.module or "").startswith("memegauge") and "#" not in lines[node.lineno - 1]]
    assert unexplained == [], f"{path.name}: lines {unexplained} import the package lazily without saying why"


def test_no_runtime_module_imports_the_test_instruments():
    """Test doubles, tiny-model builders, the OCR check engine and the test server live in memegauge.testing,
    which only tests and benchmarks import."""
    graph = import_graph()
    runtime = sorted(f"{module} -> {target}" for module, targets in graph.items()
                     if not module.startswith("memegauge.testing") for target in targets
                     if target.startswith("memegauge.testing"))
    assert runtime == []


def test_the_store_names_no_record_kind():
    """A method's record kinds are its own: the store's SQL selects no kind by name (a method's migration
    step lives in its folder, `Method.migrations`)."""
    store = PACKAGE / "engine" / "store"
    named = [f"{p.name}: {line.strip()}" for p in sorted(store.glob("*.py"))
             for line in p.read_text(encoding="utf-8").splitlines() if "kind='" in line or 'kind="' in line]
    assert named == []
