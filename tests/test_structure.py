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
    assert "memegauge.registry" in graph["memegauge.engine.store.schema"]  # the steps come through the registry
    assert not any(m.startswith("memegauge.engine") for m in graph["memegauge.methods"])  # methods load no store


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
    groups = {"memegauge.backends", "memegauge.methods", "memegauge.benchmarks", "memegauge.sections",
              "memegauge.commands", "memegauge.data", "memegauge.answers", "memegauge.metrics"}
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


# ---- packages: no cycle, no upward arrow; the registry alone loads plug-ins ---------------------------

PACKAGE_LAYERS = (
    # bottom first: a package may import its own layer's and those below, never one above
    ("_version", "errors", "logs", "signals", "types", "records", "samples", "registry", "localserver", "files",
     "extras", "locations"),
    ("parse", "images", "models"),
    ("config",),
    ("engine",),
    ("clikit", "methods", "data", "memes", "prompts", "run_path"),
    ("report", "export"),  # the report knows sections, not who brings them (memegauge.report.sections)
    ("rating", "testing", "demo", "demo_command", "api"),  # the rating kit registers its section and its command
    ("adammeme", "arena", "memeqa", "screen", "benchmarks", "profiles"),
    ("cli", "", "__main__"),  # "": the package's own __init__ (memegauge.run_<method>, the API)
)


def _package(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def package_graph() -> dict[str, set[str]]:
    """The import graph of the package's first-level packages and modules (lazy imports included)."""
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        own = _package(module)
        graph.setdefault(own, set()).update(_package(t) for t in targets if _package(t) != own)
    return graph


def test_no_import_cycle_between_packages_and_no_upward_arrow():
    """report and rating imported each other (issue 44): the rating kit now registers its section, and no
    package imports one of a layer above its own."""
    graph = package_graph()
    layer = {name: i for i, names in enumerate(PACKAGE_LAYERS) for name in names}
    assert set(graph) <= set(layer), f"place these in PACKAGE_LAYERS: {sorted(set(graph) - set(layer))}"
    assert cycles(graph) == []
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer[b] > layer[a])
    assert upward == []
    assert "rating" not in graph["report"] and "report" in graph["rating"]


def test_the_upward_arrow_finder_finds_one():
    graph = package_graph()
    graph["report"] = graph["report"] | {"rating"}  # as report/html.py imported rating.view before issue 44
    layer = {name: i for i, names in enumerate(PACKAGE_LAYERS) for name in names}
    assert [f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer[b] > layer[a]] == [
        "report -> rating"]
    assert cycles(graph) == [["rating", "report"]]


def test_the_registry_is_the_only_module_that_loads_entry_points():
    """`importlib.metadata.entry_points` is called in memegauge/registry.py alone: every plug-in (method,
    benchmark, backend, data set, report section, command) is found one way."""
    callers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            named = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if named in ("entry_points", "iter_entry_points"):
                callers.append(str(path.relative_to(PACKAGE)))
    assert sorted(set(callers)) == ["registry.py"]


def installed_package(tmp_path: Path, name: str, source: str, entry_points: str) -> Path:
    """A folder holding package `name` (its `__init__.py`: `source`) installed with `entry_points` (the text of
    its entry_points.txt), to put on sys.path or $PYTHONPATH."""
    site = tmp_path / "site"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(source)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    return site


def _declared(group: str) -> dict[str, str]:
    from importlib.metadata import entry_points

    return {p.name: p.value for p in entry_points(group=group) if p.value.startswith("memegauge.")}


def test_every_shipped_benchmark_folder_is_one_entry_point_named_after_it():
    """One entry point per folder holding a benchmark.yaml (no folder scan), named as the benchmark."""
    import yaml

    from memegauge.benchmarks.kit.family import BENCHMARKS_DIR, builtin_folders

    declared = _declared("memegauge.benchmarks")
    folders = builtin_folders()
    names = {yaml.safe_load((f / "benchmark.yaml").read_text(encoding="utf-8"))["name"]: attribute
             for attribute, f in folders.items()}
    assert len(folders) == len(list(BENCHMARKS_DIR.glob("*/benchmark.yaml"))) >= 6
    assert declared == {name: f"memegauge.benchmarks.kit.family:{attribute}" for name, attribute in names.items()}


def test_every_declared_plugin_loads_type_checked_under_its_name():
    from memegauge.cli import COMMAND_GROUP, command_group
    from memegauge.data.catalogue import ENTRIES
    from memegauge.methods import BENCHMARKS, METHODS
    from memegauge.models.descriptors import BACKENDS
    from memegauge.report.sections import SECTIONS

    for registry in (METHODS, BENCHMARKS, ENTRIES, SECTIONS, BACKENDS):
        assert list(registry.all()) == registry.names() and registry.names(), registry.kind
    commands = set(command_group().commands)
    assert set(_declared(COMMAND_GROUP)) <= commands
    assert {"runs", "models", "report", "export", "demo", "rate", "eval", "data", "adam", "arena", "qa"} <= commands


def test_a_plugin_of_the_wrong_type_or_name_and_a_duplicate_are_refused(tmp_path, monkeypatch):
    import pytest

    from memegauge.methods import Method
    from memegauge.registry import DuplicatePlugin, PluginError, Registry

    site = installed_package(
        tmp_path, "plug",
        "from memegauge.methods import Method\nGOOD = Method(name='good', title='G', report=lambda s, r: {})\n"
        "WRONG = 'not a method'\nOTHER = Method(name='other', title='O', report=lambda s, r: {})\n",
        "[memegauge.tests-plugins]\ngood = plug:GOOD\nwrong = plug:WRONG\nmisnamed = plug:OTHER\n"
        "broken = plug_nowhere:X\n")
    monkeypatch.syspath_prepend(str(site))
    registry = Registry("method", "memegauge.tests-plugins", Method)
    assert registry.names() == ["broken", "good", "misnamed", "wrong"]  # nothing loaded to list them
    assert registry.get("good").title == "G" and registry.get("absent") is None
    with pytest.raises(PluginError, match="is not a method \\(Method\\): it is str"):
        registry.get("wrong")
    with pytest.raises(PluginError, match="is named 'misnamed' but holds the method 'other'"):
        registry.get("misnamed")
    with pytest.raises(PluginError, match="'broken' \\(entry point plug_nowhere:X of plug.*ModuleNotFoundError"):
        registry.get("broken")
    with pytest.raises(DuplicatePlugin, match="'good' is registered twice: by entry point plug:GOOD of plug and by "
                                              "my notebook"):
        registry.register(Method(name="good", title="G2", report=lambda s, r: {}), "my notebook")



def test_an_unknown_name_is_one_input_error_naming_every_known_one(tmp_path, monkeypatch):
    """`Registry.require`: the one "unknown X" message (what, where, how to fix) of every registry, naming the
    plug-ins declared but not loaded as well; the kit's answer kinds and metrics ask it."""
    import pytest

    from memegauge.benchmarks.kit import answers, metrics
    from memegauge.errors import InputError
    from memegauge.methods import Method
    from memegauge.registry import Registry

    site = installed_package(tmp_path, "plug2", "from memegauge.methods import Method\n"
                             "GOOD = Method(name='good', title='G', report=lambda s, r: {})\n",
                             "[memegauge.tests-plugins2]\ngood = plug2:GOOD\n")
    monkeypatch.syspath_prepend(str(site))
    registry = Registry("answer kind", "memegauge.tests-plugins2", Method)
    assert registry.require("good", "here").title == "G"
    with pytest.raises(InputError) as caught:
        registry.require("absent", "config.yaml", also=("builtin",))
    assert caught.value.what == "unknown answer kind 'absent'" and caught.value.where == "config.yaml"
    assert caught.value.fix == "use one of: builtin, good (or declare yours as an entry point of group " \
                               "'memegauge.tests-plugins2')"
    with pytest.raises(InputError) as caught:
        answers.answer_kind("nope")
    assert caught.value.what == "unknown answer kind 'nope'" and caught.value.where == "answer"
    assert caught.value.fix.startswith("use one of: label, labels, letter, ")
    assert "yes_no" in caught.value.fix and caught.value.fix.endswith("answers.register_answer)")
    with pytest.raises(InputError) as caught:
        metrics.metric("nope")
    assert caught.value.what == "unknown metric 'nope'" and caught.value.where == "metrics"
    assert caught.value.fix.startswith("use one of: accuracy, macro_f1, per_class, auroc, ")
    assert "type_weighted_f1" in caught.value.fix and caught.value.fix.endswith("metrics.register_metric)")

# ---- lazy start ------------------------------------------------------------------------------------------

_IMPORTED = """
import sys
from memegauge.cli import main
code = main(sys.argv[1:])
print("CODE", code)
print("MODULES", " ".join(sorted(m for m in sys.modules if m.startswith(("memegauge", "aiohttp", "pydantic",
                                                                        "numpy", "asyncio", "rich.console",
                                                                        "http", "yaml")))))
"""


def _imported(*args: str, env: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _IMPORTED, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("CODE ", "MODULES ")))
    return int(lines["CODE"]), set(lines["MODULES"].split()), done.stdout + done.stderr


_METHOD_PACKAGES = ("memegauge.adammeme", "memegauge.arena", "memegauge.memeqa", "memegauge.screen",
                    "memegauge.benchmarks", "memegauge.engine", "memegauge.methods")


def test_version_imports_no_method_no_benchmark_no_engine_and_no_pydantic():
    code, modules, output = _imported("--version")
    assert code == 0 and "memegauge 0" in output
    assert sorted(m for m in modules if m.startswith(_METHOD_PACKAGES)) == []
    assert not any(m.startswith(("aiohttp", "pydantic", "numpy", "asyncio")) for m in modules)
    # nor the typed records, the registry or rich's console (memegauge.clikit): typer and the version alone
    assert {"memegauge.types", "memegauge.registry", "memegauge.clikit", "rich.console"}.isdisjoint(modules)
    assert not any(m.startswith(("http", "memegauge.localserver")) for m in modules), modules


def test_help_imports_no_command_module_no_method_and_no_http_server():
    """`memegauge --help` lists every declared command from its descriptor (`memegauge.registry.Command`): no
    command's module (the one its `register` names), no method, no benchmark YAML, no local server."""
    from memegauge.cli import COMMAND_GROUP, _commands

    declared = _commands().all()
    # a command's module, unless it is its descriptor's own (demo_command.py: its `register` imports what the
    # command needs, clikit and rich's console, asserted absent below)
    descriptor_modules = {value.split(":")[0] for value in _declared(COMMAND_GROUP).values()}
    command_modules = {d.register.split(":")[0] for d in declared.values()} - descriptor_modules
    assert len(command_modules) >= 8 and "memegauge.data.cli" in command_modules
    code, modules, output = _imported("--help")
    assert code == 0 and all(f"  {name} " in output for name in declared), output
    assert sorted(command_modules & modules) == []
    # of the methods and the benchmark kit: the descriptors' modules and their packages alone
    packages = {".".join(m.split(".")[:cut]) for m in descriptor_modules for cut in range(1, m.count(".") + 1)}
    assert sorted(m for m in modules if m.startswith(_METHOD_PACKAGES) and m not in descriptor_modules | packages) \
        == []
    assert not any(m.startswith(("http", "memegauge.localserver", "yaml", "rich.console", "memegauge.clikit",
                                 "memegauge.files", "memegauge.data.store")) for m in modules), modules


def test_a_dispatched_command_imports_its_own_module_only():
    """`data list` and `eval --list` read the benchmarks' descriptors (data list names the benchmarks that read
    each set, as eval --list does: issue 43) and import no method's code beyond them, nor the model specs (no
    model is needed to list); neither, nor `--help`, imports the engine or its client (aiohttp)."""
    code, modules, output = _imported("data", "list", env={"MEMEGAUGE_DATA_DIR": "/nonexistent-memegauge-data"})
    assert code == 0 and "eval fhm" in output, output
    assert sorted(m for m in modules if m.startswith(("memegauge.adammeme", "memegauge.arena", "memegauge.screen",
                                                       "memegauge.memeqa.cli", "memegauge.rating"))) == []
    assert "aiohttp" not in modules and not any(m.startswith("memegauge.engine") for m in modules)
    assert {"memegauge.config", "memegauge.models", "memegauge.types"}.isdisjoint(modules)  # no model needed
    code, modules, output = _imported("eval", "--list")
    assert code == 0 and "fhm:" in output, output
    assert {"memegauge.config", "memegauge.models", "memegauge.types"}.isdisjoint(modules)
    assert sorted(m for m in modules if m.startswith(("memegauge.adammeme.cli", "memegauge.arena.cli",
                                                       "memegauge.memeqa.cli", "memegauge.rating"))) == []
    assert "aiohttp" not in modules and not any(m.startswith("memegauge.engine") for m in modules)
    code, modules, output = _imported("--help")  # every command's module, to list them: none imports the engine
    assert code == 0 and "qa" in output and "rate" in output
    assert "aiohttp" not in modules and not any(m.startswith("memegauge.engine") for m in modules)
    # nor the typed records (pydantic), numpy or asyncio: listing a command costs its module's options alone
    assert not any(m.startswith(("pydantic", "numpy", "asyncio", "memegauge.types")) for m in modules), modules


def test_a_broken_third_party_method_breaks_neither_version_nor_help(tmp_path):
    site = tmp_path / "site"
    info = site / "broken_method-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-method\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memegauge.methods]\nbroken = no_such_module_44.method:METHOD\n")
    env = {"PYTHONPATH": str(site)}
    code, modules, _ = _imported("--version", env=env)
    assert code == 0 and "memegauge.methods" not in modules
    code, modules, output = _imported("--help", env=env)
    assert code == 0 and "adam" in output and "eval" in output
    assert "no_such_module_44" not in output and "memegauge.methods" not in modules  # --help loads no method
    code, _, output = _imported("runs", "--help", env=env)
    assert code == 0


def test_a_command_that_opens_an_old_store_first_hands_it_the_methods_migration_steps(tmp_path):
    """`memegauge runs` imports no method module to list runs, yet opening an old store migrates every method's
    records: the store gets the methods' steps before it opens (`clikit.Settings.store`), so the store is the
    same as one opened by `report`."""
    import gzip
    import json
    import shutil
    import subprocess
    import sys

    old = Path(__file__).parent / "data" / "store-v0" / "store.db.gz"
    reports = []
    for first in (["runs", "--json"], ["report", "arena", "--format", "json"]):
        copy = tmp_path / f"{first[0]}.db"
        with gzip.open(old, "rb") as src, open(copy, "wb") as out:
            shutil.copyfileobj(src, out)
        cli = [sys.executable, "-m", "memegauge", "--store", str(copy), "--quiet"]
        assert subprocess.run([*cli, *first], capture_output=True, timeout=120).returncode == 0
        done = subprocess.run([*cli, "report", "arena", "--format", "json"], capture_output=True, text=True,
                              timeout=120)
        reports.append(json.loads(done.stdout))
    for report in reports:
        report["run"].pop("updated", None)
    assert reports[0] == reports[1] and reports[0]["ranking"]


_SIXTH = """name: sixth
title: A sixth benchmark
version: "1"
paper: a test's own
data: sixth
splits: {dev: dev.jsonl}
split: dev
read: {format: jsonl, id: id, image: img, text: text}
tasks:
  funny:
    answer: yes_no
    gold: label
    prompt_source: plain instruction
    prompt: |
      Meme text: "{{ text }}"
      Is this meme funny?
"""


def test_a_benchmark_of_another_package_is_one_entry_point_of_the_benchmarks_group(tmp_path):
    import os
    import subprocess
    import sys

    site = tmp_path / "site"
    (site / "sixthbench").mkdir(parents=True)
    (site / "sixthbench" / "benchmark.yaml").write_text(_SIXTH)
    (site / "sixthbench" / "__init__.py").write_text(
        "from pathlib import Path\nfrom memegauge.benchmarks.kit.family import benchmark_method\n"
        "METHOD = benchmark_method(Path(__file__).parent)\n")
    info = site / "sixthbench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sixthbench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memegauge.benchmarks]\nsixth = sixthbench:METHOD\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "memegauge", "eval", "--list"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0 and "sixth: A sixth benchmark" in done.stdout and "fhm:" in done.stdout
    (info / "entry_points.txt").write_text("[memegauge.benchmarks]\nfhm = sixthbench:METHOD\n")
    (site / "sixthbench" / "benchmark.yaml").write_text(_SIXTH.replace("name: sixth", "name: fhm"))
    done = subprocess.run([sys.executable, "-m", "memegauge", "eval", "--list"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode != 0 and "registered twice" in done.stdout + done.stderr


def test_a_report_section_of_another_package_shows_in_every_format(tmp_path, monkeypatch):
    """The report builds every registered section after the method's figures; JSON holds it, Markdown gives it a
    heading, HTML its blocks: what the rating kit's People vs judges does, from any package."""
    import gzip
    import json
    import shutil

    from memegauge.engine import Store
    from memegauge.report.formats import render_report
    from memegauge.report.sections import SECTIONS, Section

    (tmp_path / "extra_section.py").write_text(
        "from memegauge.report.blocks import Block\n"
        "def build(store, run):\n    return {'of': run['name'], 'method': run['method']}\n"
        "def blocks(section, run):\n    return [Block('note', 'Extra for ' + section['of'], text='extra ok')]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with gzip.open(Path(__file__).parent / "data" / "store-v0" / "store.db.gz", "rb") as src, \
            open(tmp_path / "s.db", "wb") as out:
        shutil.copyfileobj(src, out)
    store = Store(tmp_path / "s.db")
    before = json.loads(render_report(store, "arena", "json"))
    state = SECTIONS.snapshot()
    SECTIONS.register(Section("extra", "An extra section", build="extra_section:build", blocks="extra_section:blocks"))
    try:
        report = json.loads(render_report(store, "arena", "json"))
        markdown = render_report(store, "arena", "md")
        page = render_report(store, "arena", "html")
    finally:
        SECTIONS.restore(state)
    assert "extra" not in before and report["extra"] == {"of": "arena", "method": "arena"}
    assert list(report)[-1] == "extra" and {k: v for k, v in report.items() if k != "extra"} == before
    assert "## An extra section" in markdown and "| extra.of | arena |" in markdown
    assert "Extra for arena" in page and "extra ok" in page


def test_the_command_line_knows_the_engine_defaults_it_need_not_import_to_keep(monkeypatch):
    """`memegauge` sets the engine's --grace and --progress-every only when they differ from the engine's defaults
    (or the engine is loaded already): the defaults it compares with are the engine's, and a second `main()` in one
    process resets what the first set."""
    from memegauge import cli
    from memegauge.engine import interrupt, progress

    assert cli.DEFAULT_GRACE_S == interrupt.DEFAULT_GRACE_S
    assert cli.DEFAULT_PROGRESS_EVERY_S == progress.DEFAULT_EVERY_S
    cli._engine_settings(3.0, 0.5)
    assert (interrupt.grace(), progress._EVERY_S[0]) == (3.0, 0.5)
    cli._engine_settings(cli.DEFAULT_GRACE_S, cli.DEFAULT_PROGRESS_EVERY_S)  # the engine is loaded: reset
    assert (interrupt.grace(), progress._EVERY_S[0]) == (interrupt.DEFAULT_GRACE_S, progress.DEFAULT_EVERY_S)


def test_the_kits_answer_kinds_and_metrics_are_registries_type_checked_and_refusing_duplicates():
    """The benchmark kit's answer kinds and metrics are `memegauge.registry.Registry`s (issue 44: they were two
    hand-made dicts): a function per name, listed in the order registered, a second one under a name refused
    naming both, and a metric named as a figure the kit computes itself refused."""
    import pytest

    from memegauge.benchmarks.kit import answers, metrics
    from memegauge.registry import DuplicatePlugin, PluginError, Registry

    assert isinstance(answers.ANSWER_KINDS, Registry) and isinstance(metrics.METRICS, Registry)
    assert list(answers.ANSWER_KINDS)[:4] == ["yes_no", "label", "letter", "labels"]
    assert metrics.metric_names()[:5] == ["accuracy", "macro_f1", "per_class", "auroc", "type_weighted_f1"]

    def shout(plain, classes, options):
        return plain.upper()

    def whisper(plain, classes, options):
        return plain.lower()

    kinds, known = answers.ANSWER_KINDS.snapshot(), metrics.METRICS.snapshot()
    try:
        assert answers.register_answer("shout", shout) is shout and answers.answer_kind("shout") is shout
        answers.register_answer("shout", shout)  # the same function again: no duplicate
        with pytest.raises(DuplicatePlugin, match=r"answer kind 'shout' is registered twice: by \S+shout and by "
                                                  r"\S+whisper"):
            answers.register_answer("shout", whisper)
        with pytest.raises(PluginError, match="is not an answer kind"):
            answers.register_answer("not-a-function", "yes")
        with pytest.raises(DuplicatePlugin, match="'accuracy' is registered twice: by the benchmark kit"):
            metrics.register_metric("accuracy", shout)
    finally:
        answers.ANSWER_KINDS.restore(kinds)
        metrics.METRICS.restore(known)
    assert "shout" not in answers.ANSWER_KINDS


def test_the_built_in_backends_are_entry_points_and_none_registers_from_code():
    """The model backends MemeGauge ships are entry points loaded by the registry, like every other plug-in
    (issue 44: they registered themselves from code): no module of the package but the descriptors' own calls
    `register_backend`, `@backend(...)` or `BACKENDS.register`."""
    from memegauge.models.builtin import EMBEDDED, HF, OPENAI, SCRIPTED
    from memegauge.models.descriptors import BACKENDS, find_backend

    assert _declared("memegauge.backends") == {d.name: f"memegauge.models.builtin:{attribute}" for attribute, d in
                                               {"OPENAI": OPENAI, "EMBEDDED": EMBEDDED, "SCRIPTED": SCRIPTED,
                                                "HF": HF}.items()}
    assert find_backend("openai") is OPENAI and BACKENDS.source("openai").startswith("entry point ")
    callers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() == "models/descriptors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            function = node.func if isinstance(node, ast.Call) else None
            if (isinstance(function, ast.Name) and function.id in ("register_backend", "backend")) or (
                    isinstance(function, ast.Attribute) and function.attr == "register"
                    and isinstance(function.value, ast.Name) and function.value.id == "BACKENDS"):
                callers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert callers == []


def test_an_answer_kind_and_a_metric_of_another_package_are_entry_points(tmp_path, monkeypatch):
    """docs/engine.md: a package may declare an answer kind (group memegauge.answers) or a metric (group
    memegauge.metrics); each is loaded when a task names it."""
    from memegauge.benchmarks.kit import answers, metrics

    site = installed_package(
        tmp_path, "kitplug",
        "def shout(plain, classes, options):\n    return plain.upper()\n"
        "def always_one(gold, pred, seed):\n    return 1\n",
        "[memegauge.answers]\nshout = kitplug:shout\n\n[memegauge.metrics]\nalways_one = kitplug:always_one\n")
    monkeypatch.syspath_prepend(str(site))
    kinds, known = answers.ANSWER_KINDS.snapshot(), metrics.METRICS.snapshot()
    try:
        assert answers.answer_kind("shout")("yes", [], 0) == "YES"
        assert metrics.metric("always_one")(None, None, 0) == 1
        assert answers.ANSWER_KINDS.source("shout") == "entry point kitplug:shout of kitplug"
    finally:
        answers.ANSWER_KINDS.restore(kinds)
        metrics.METRICS.restore(known)
