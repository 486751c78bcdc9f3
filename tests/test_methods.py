"""The method registry: descriptors found through entry points, duplicates refused, and the CLI, the
demo and the reports reaching methods only through it (a method registered from code is reported)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from memegauge import methods as registry
from memegauge.cli import main
from memegauge.engine import Store, open_run
from memegauge.methods import DuplicateMethod, Method, method, methods
from memegauge.registry import Registry
from memegauge.report import build_report
from memegauge.records import Record, read_records


def test_the_built_in_methods_are_registered_through_entry_points():
    found = {m.name: m for m in methods()}
    assert set(found) >= {"adammeme", "arena", "memeqa", "demo"}
    assert [m.name for m in sorted(methods(), key=lambda m: m.demo_order) if m.demo] == [
        "demo", "adammeme", "arena", "memeqa"]  # the demo's parts, in the order it runs them: the screen first
    assert all(callable(m.report) for m in found.values())


def test_a_second_method_with_a_registered_name_is_refused_naming_both():
    fresh = Registry("method", "memegauge.tests-none", Method, duplicate=DuplicateMethod)
    fresh.register(Method(name="x", title="X", report=lambda s, r: {}), "package a")
    with pytest.raises(DuplicateMethod) as info:
        fresh.register(Method(name="x", title="X again", report=lambda s, r: {}), "package b")
    assert "package a" in str(info.value) and "package b" in str(info.value)


def test_the_registry_refuses_a_duplicate_of_a_built_in_name():
    with pytest.raises(DuplicateMethod):
        registry.register_method(Method(name="arena", title="another arena", report=lambda s, r: {}))


class _Item(Record):
    """A toy method's one record kind: a method outside MemeGauge types its records the same way."""

    KIND = "item"
    KEY = ("name",)

    name: str


@pytest.fixture
def restored_methods():
    """The method registry as it was, after a test that registers a method from code."""
    state = registry.METHODS.snapshot()
    yield
    registry.METHODS.restore(state)


def test_a_method_registered_from_code_is_reported(tmp_path, restored_methods):
    def report(store, run):
        return {"items": len(read_records(store, run["id"], _Item))}

    registry.register_method(Method(name="toy", title="Toy", report=report))
    assert method("toy") is not None
    store = Store(tmp_path / "s.db")

    async def write():
        async with open_run(store, registry_models(), name="t", method="toy", config={}) as (run, _):
            run.put_many([_Item(name="a"), _Item(name="b")])

    asyncio.run(write())
    assert build_report(store, "t")["items"] == 2


def test_a_run_of_a_method_no_longer_installed_is_one_clear_message(tmp_path, capsys):
    store = Store(tmp_path / "s.db")

    async def write():
        async with open_run(store, registry_models(), name="gone", method="vanished", config={}):
            pass

    asyncio.run(write())
    store.close()
    assert main(["--store", str(tmp_path / "s.db"), "report", "gone"]) == 2
    assert "no installed method 'vanished'" in capsys.readouterr().err


def registry_models():
    from memegauge.models.spec import ModelRegistry

    return ModelRegistry({})


def test_every_hook_of_every_registered_method_resolves():
    """A renamed implementation module fails here, not silently at the user's command."""
    from dataclasses import fields

    from memegauge.methods import Lazy

    named = [hook for m in methods() for f in fields(m) if isinstance(hook := getattr(m, f.name), Lazy)]
    named += [step for m in methods() for _, step in m.migrations if isinstance(step, Lazy)]
    assert len(named) >= 35  # the commands are entry points of `memegauge.commands` (tests/test_structure.py)
    for hook in named:
        assert callable(hook.resolve()), hook


def test_every_method_runs_through_one_shape_from_python(tmp_path):
    """config(dict) → run(config, store=, registry=, name=) → RunResult, the same for the three methods."""

    from memegauge.config import load_registry
    from memegauge.methods import RunResult
    from memegauge.testing.server import start_server

    from helpers.memeqa_data import make_dataset
    from helpers.models import served_registry
    from helpers.worlds import arena_world

    store = Store(tmp_path / "s.db")
    with start_server(latency_ms=0, seed=2, style="realistic") as server:
        arena_world(tmp_path, server.base_url, n_memes=3)
        served_registry(tmp_path, server.base_url, ["agent", "gpt-x", "qwen-x", "llava-x", "vlm"])
        registry = load_registry(tmp_path / "models.yaml")
        data, images = make_dataset(tmp_path, memes=("m1", "m2"))
        configs = {
            "adammeme": {"memes": str(tmp_path / "memes.jsonl"), "agent": "agent", "targets": ["gpt-x"],
                         "erase": False, "seeds_per_category": 1, "max_steps": 1, "warn_below": 0},
            "arena": {"memes": str(tmp_path / "memes.jsonl"), "agent": "agent", "targets": ["gpt-x", "qwen-x"],
                      "judges": ["gpt-x"], "bootstrap_rounds": 0, "detection": False},
            "memeqa": {"data": str(data), "images": str(images), "model": "vlm", "version": "none-plus"},
        }
        results = {}
        for name, raw in configs.items():
            m = method(name)
            results[name] = asyncio.run(m.run(m.config(raw), store=store, registry=registry, name=f"py-{name}"))
    for name, result in results.items():
        assert isinstance(result, RunResult) and result.name == f"py-{name}"
        assert result.status == "done" and result.calls_made > 0 and result.failed_calls == 0
        assert build_report(store, result.name)["run"]["method"] == name


def test_a_bad_config_dict_is_one_input_error():
    from memegauge.types import InputError

    with pytest.raises(InputError) as info:
        method("arena").config({"memes": "m.jsonl", "agent": "a", "targets": ["x", "w"], "judges": ["y"],
                                 "seed": "z"})
    assert "seed" in str(info.value)


def test_an_old_store_opens_and_reports_with_a_broken_third_party_method_installed(tmp_path):
    """A third-party method whose entry point fails to import stops only its own runs: opening (and
    migrating) an old store loads only the methods whose runs it holds, and so does reporting a run."""
    import subprocess
    import sys

    site = tmp_path / "site"
    info = site / "broken_method-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-method\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memegauge.methods]\nbroken = no_such_module_35.method:METHOD\n")
    old = Path(__file__).parent / "data" / "store-v0" / "store.db.gz"
    script = f"""
import gzip, shutil, sqlite3
import memegauge.methods as registry
from memegauge.engine import Store
from memegauge.report import build_report
with gzip.open({str(old)!r}, "rb") as src, open({str(tmp_path / "old.db")!r}, "wb") as out:
    shutil.copyfileobj(src, out)
store = Store({str(tmp_path / "old.db")!r})
print("version", sqlite3.connect({str(tmp_path / "old.db")!r}).execute("PRAGMA user_version").fetchone()[0])
print("ranking", len(build_report(store, "arena")["ranking"]))
from memegauge.registry import PluginError
print("listed", "broken" in {{m.name for m in registry.methods()}})  # skipped, named on stderr
try:
    registry.method("broken")
except PluginError as exc:
    print("by name fails:", exc.__cause__.name, "|", exc)
"""
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    from memegauge.engine.store import SCHEMA_VERSION

    assert f"version {SCHEMA_VERSION}" in done.stdout and "ranking " in done.stdout
    assert "by name fails: no_such_module_35" in done.stdout  # the broken method really is installed
    assert "entry point no_such_module_35.method:METHOD of broken-method" in done.stdout  # named, with its package
    assert "listed False" in done.stdout  # a listing skips it (tests/test_broken_plugins.py), saying so once
    assert done.stderr.count("warning: skipped a method: method 'broken'") == 1, done.stderr


@pytest.mark.slow  # mypy: about ten seconds
def test_the_hooks_shapes_are_checked_by_mypy():
    """The hooks are typed (`ReportHook`, `RunHook`, … Protocols in `memegauge.methods`, `RatingPart`'s in
    `memegauge.rating.part`), and every built-in implementation has its hook's shape (tests/hook_types.py)."""
    import subprocess
    import sys

    root = Path(__file__).parents[1]
    done = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
                           "--no-incremental", "memegauge/methods.py", "memegauge/rating/part.py",
                           "tests/hook_types.py"], capture_output=True, text=True, cwd=root, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
