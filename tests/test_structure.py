"""The package's shape: no import cycle anywhere (lazy imports inside functions count too: a cycle closed
through one is still a cycle), methods reach the CLI, the demo and the reports through the registry
only, the shared kits (engine, models, report, prompts) name no method, and a method's folder imports
no other method."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.imports import PACKAGE, cycles, import_graph
from memegauge.methods import methods

def test_no_import_cycle_in_the_package():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle_closed_through_a_lazy_import():
    graph = import_graph()
    graph["memegauge.types"] = graph["memegauge.types"] | {"memegauge.cli"}  # as if types imported the CLI
    assert any("memegauge.types" in c and "memegauge.cli" in c for c in cycles(graph))


def test_shared_modules_name_no_method_module():
    """The CLI, the demo and the reports find methods through `memegauge.methods` only."""
    shared = ["cli.py", "clikit.py", "demo.py", "methods.py", "report/__init__.py", "report/formats.py"]
    for name in shared:
        text = (PACKAGE / name).read_text(encoding="utf-8")
        for method in ("adammeme", "arena", "memeqa"):
            assert f"memegauge.{method}" not in text, f"{name} names memegauge.{method}"


# ---- a method is one folder ---------------------------------------------------------------------

SHARED_KITS = ("engine", "models", "report", "prompts")
_COMMENTS = re.compile(r"\{#.*?#\}|/\*.*?\*/|^\s*//.*?$", re.S | re.M)  # Jinja, CSS/JS block, JS line


def _method_words() -> set[str]:
    """The name and folder (package) of every registered method that has a folder: what a kit must not
    name (a method some other test registers from code, without a folder, is not one to look for)."""
    return {word for m in methods() if m.folder is not None for word in (m.name, m.folder.name)}


def _method_packages() -> dict[str, Path]:
    """{package name: folder} of the registered methods that live in this package."""
    return {m.folder.name: m.folder for m in methods()
            if m.folder is not None and m.folder.resolve().parent == PACKAGE}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {id(node.body[0].value) for node in ast.walk(tree) if isinstance(node, kinds) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def names_of_methods(path: Path, words: set[str]) -> list[str]:
    """Where a source file names a method: an import of a method's package, or a string (code, not a
    docstring or comment) holding a method's name as a word (`"arena"`, `"adammeme_"`, `f"{x}.memeqa"`)."""
    pattern = re.compile(rf"(?<![A-Za-z0-9]){'|'.join(map(re.escape, sorted(words)))}(?![a-z0-9])")
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [f"{path.name}: {m.group(0)!r}" for m in pattern.finditer(_COMMENTS.sub("", text))]
    tree = ast.parse(text)
    docstrings, found = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
            found += [f"{path.name}:{node.lineno} imports {m}" for m in modules
                      if any(m == f"memegauge.{w}" or m.startswith(f"memegauge.{w}.") for w in words)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [f"{path.name}:{node.lineno} says {node.value[:60]!r}" for _ in pattern.finditer(node.value)]
    return found


def test_the_shared_kits_name_no_method():
    """engine/, models/, report/ and prompts/ work for any method: none imports a method or names one."""
    words = _method_words()
    assert {"adammeme", "arena", "memeqa", "demo", "screen"} <= words
    for kit in SHARED_KITS:
        for path in sorted((PACKAGE / kit).rglob("*")):
            if path.suffix in (".py", ".js", ".j2", ".css") and "__pycache__" not in path.parts:
                assert names_of_methods(path, words) == [], f"{kit}/{path.relative_to(PACKAGE / kit)}"


def test_the_method_name_finder_finds_an_import_and_a_string(tmp_path):
    words = _method_words()
    source = tmp_path / "kit.py"
    source.write_text('"""Docstrings may say arena."""\nfrom memegauge.arena.view import view\nKIND = "memeqa"\n')
    assert names_of_methods(source, words) == ["kit.py:2 imports memegauge.arena.view", "kit.py:3 says 'memeqa'"]
    script = tmp_path / "page.js"
    script.write_text("/* arena's helpers */\nvar x = {adammeme: 1};\n")
    assert names_of_methods(script, words) == ["page.js: 'adammeme'"]


def test_no_method_folder_imports_another_method():
    graph = import_graph()
    packages = _method_packages()
    assert set(packages) >= {"adammeme", "arena", "memeqa", "screen"}
    for own in packages:
        others = {f"memegauge.{p}" for p in packages if p != own}
        for module, imported in graph.items():
            if module == f"memegauge.{own}" or module.startswith(f"memegauge.{own}."):
                crossing = sorted(i for i in imported if any(i == o or i.startswith(f"{o}.") for o in others))
                assert crossing == [], f"{module} imports {crossing}"


def test_each_method_folder_holds_its_report_view_and_prompts():
    for name, folder in _method_packages().items():
        assert (folder / "report.py").is_file() and (folder / "view.py").is_file(), name
        assert list((folder / "prompts").glob("*.j2")), name


# ---- the rating kit, the API and the store ------------------------------------------------------

def test_the_rating_kit_and_the_api_name_no_method():
    """rating/ is the method-neutral kit (a method's side is its `rating.py`, `Method.rating`); api.py
    serves `memegauge.run_<method>` for any registered method."""
    words = _method_words()
    files = [p for p in sorted((PACKAGE / "rating").rglob("*")) if p.suffix in (".py", ".js", ".j2", ".css")
             and "__pycache__" not in p.parts] + [PACKAGE / "api.py", PACKAGE / "__init__.py"]
    assert len(files) >= 10
    for path in files:
        assert names_of_methods(path, words) == [], str(path.relative_to(PACKAGE))


def test_the_store_imports_neither_the_method_registry_nor_any_method():
    """Opening a store imports no method: nothing the store imports, directly or through others (lazy
    imports included), is `memegauge.methods` or a method's package; the methods hand it their steps."""
    graph = import_graph()
    seen, todo = set(), [m for m in graph if m.startswith("memegauge.engine.store")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += [t for t in graph.get(module, ()) if t.startswith("memegauge.")]
    packages = {f"memegauge.{p}" for p in _method_packages()}
    reached = sorted(m for m in seen if m == "memegauge.methods" or any(m == p or m.startswith(p + ".")
                                                                         for p in packages))
    assert reached == []
    assert "memegauge.engine.store.schema" in graph["memegauge.methods"]  # the registry hands the steps down


def _resolves(reference: str) -> bool:
    """Whether `memegauge.a.b.c` names a module, or an attribute (a dataclass field included) of one."""
    import importlib

    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            fields = getattr(found, "__dataclass_fields__", {})
            if not hasattr(found, name) and name not in fields:
                return False
            found = getattr(found, name, None)
        return True
    return False


def test_every_module_a_docstring_points_at_exists():
    """A `memegauge.x.y` in backquotes names a module or attribute that exists (a moved module leaves
    no pointer behind); entry point groups and `run_<method>` placeholders are names, not modules."""
    groups = {"memegauge.backends", "memegauge.methods"}
    stale = [f"{path.relative_to(PACKAGE)}: {ref}" for path in sorted(PACKAGE.rglob("*.py"))
             for ref in re.findall(r"`(memegauge(?:\.[A-Za-z_]\w*)+)", path.read_text(encoding="utf-8"))
             if ref not in groups and not ref.startswith("memegauge.run_") and not _resolves(ref)]
    assert stale == []


def test_model_registry_is_imported_from_where_it_lives():
    """`memegauge.models.spec` defines `ModelRegistry` and `ModelSpec`; `memegauge.config` loads them."""
    roots = [PACKAGE, PACKAGE.parent / "tests", PACKAGE.parent / "bench", PACKAGE.parent / "scripts"]
    old = re.compile(r"from memegauge\.config import [^\n]*\bModel(Registry|Spec)\b")
    found = [str(p) for root in roots for p in sorted(root.rglob("*.py")) if old.search(p.read_text(encoding="utf-8"))]
    assert found == []
