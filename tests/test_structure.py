"""The package's shape: no import cycle anywhere (lazy imports inside functions count too: a cycle closed
through one is still a cycle), methods reach the CLI, the demo and the reports through the registry
only, the shared kits (engine, models, report, prompts) name no method, and a method's folder imports
no other method."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memegauge.methods import methods

PACKAGE = Path(__file__).resolve().parents[1] / "memegauge"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The package modules `path` imports anywhere in it, except under `if TYPE_CHECKING:`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)

    Visitor().visit(ast.parse(path.read_text(encoding="utf-8")))
    resolved = set()
    for target in found:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            resolved.add(target)
    return resolved


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path, name, set(paths)) for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


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
