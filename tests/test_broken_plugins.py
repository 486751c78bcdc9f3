"""A broken third-party plug-in stops only what uses it (docs/engine.md): a listing or a lookup over all plug-ins
skips it, naming it once on stderr with the fix; asking for it by name fails with its one clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memegauge.testing.server import start_server

from helpers.memeqa_data import make_dataset
from test_structure import installed_package

_BROKEN = ("[memegauge.methods]\nbrokenm = brokenpkg.method:METHOD\nwrongm = brokenpkg:NOT_A_METHOD\n"
           "[memegauge.benchmarks]\nbrokenb = brokenpkg.benchmark:BENCHMARK\n"
           "[memegauge.data]\nbrokend = brokenpkg.data:ENTRY\n")


def _site(tmp_path: Path) -> Path:
    site = installed_package(tmp_path, "brokenpkg", "NOT_A_METHOD = 'a string'\n", _BROKEN)
    for module in ("method", "benchmark", "data"):
        (site / "brokenpkg" / f"{module}.py").write_text("raise ImportError('boom')\n")
    return site


def _cli(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "MEMEGAUGE_DATA_DIR": str(tmp_path / "data"), "NO_COLOR": "1",
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "memegauge", "--store", str(tmp_path / "s.db"), "--models",
                           str(tmp_path / "models.yaml"), *args], capture_output=True, text=True, timeout=300, env=env)


def _warned_once(stderr: str, kind: str, name: str) -> None:
    lines = [line for line in stderr.splitlines() if line.startswith("warning: skipped")
             and f"{kind} {name!r}" in line]
    assert len(lines) == 1, stderr
    assert "failed to load: ImportError: boom" in lines[0] and "brokenpkg" in lines[0]
    assert "pip uninstall brokenpkg" in lines[0] and "pip install --force-reinstall brokenpkg" in lines[0]


def test_listings_and_lookups_over_all_plugins_skip_a_broken_one_and_say_so_once(tmp_path):
    site = _site(tmp_path)
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    with start_server(seed=1) as server:
        (tmp_path / "models.yaml").write_text(f"vlm: {{backend: openai, model: vlm, base_url: {server.base_url}, "
                                              "max_retries: 1, backoff_s: 0.01, timeout_s: 5}\n")
        done = _cli(site, tmp_path, "qa", "eval", "--data", str(data), "--images", str(images), "--version",
                    "none-minus", "--split", "dev", "--model", "vlm", "--run", "r")
    assert done.returncode == 0, done.stderr
    _warned_once(done.stderr, "method", "brokenm")  # the prompt folders are those of every method that loads
    assert sum("is not a method (Method): it is str" in line for line in done.stderr.splitlines()) == 1
    assert "failed:" not in done.stderr

    html = _cli(site, tmp_path, "report", "r", "--format", "html")
    assert html.returncode == 0 and "<html" in html.stdout.lower(), html.stderr
    _warned_once(html.stderr, "method", "brokenm")  # the page's script holds every loaded method's browser

    listed = _cli(site, tmp_path, "eval", "--list")
    assert listed.returncode == 0 and "fhm" in listed.stdout, listed.stderr
    _warned_once(listed.stderr, "benchmark", "brokenb")

    for args in (["data", "list"], ["data", "info", "fhm"]):
        shown = _cli(site, tmp_path, *args)
        assert shown.returncode == 0 and "fhm" in shown.stdout, (args, shown.stderr)
        _warned_once(shown.stderr, "benchmark", "brokenb")  # which benchmark reads each data set
    _warned_once(_cli(site, tmp_path, "data", "list").stderr, "data set", "brokend")


def test_asking_for_a_broken_plugin_by_name_fails_with_one_message(tmp_path):
    site = _site(tmp_path)
    (tmp_path / "models.yaml").write_text("{}\n")
    info = _cli(site, tmp_path, "data", "info", "brokend")
    assert info.returncode == 1
    failed = [line for line in info.stderr.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1 and "data set 'brokend' (entry point brokenpkg.data:ENTRY of brokenpkg" in failed[0]
    assert "ImportError: boom" in failed[0] and "Traceback" not in info.stderr
    asked = _cli(site, tmp_path, "eval", "brokenb", "--model", "m")  # its load error, not "unknown benchmark"
    failed = [line for line in asked.stderr.splitlines() if line.startswith("failed:")]
    assert asked.returncode == 1 and len(failed) == 1, asked.stderr
    assert "benchmark 'brokenb'" in failed[0] and "ImportError: boom" in failed[0] and "unknown" not in asked.stderr
    code = ("from memegauge.methods import method\nfrom memegauge.registry import PluginError\n"
            "for name in ('brokenm', 'brokenm', 'wrongm'):\n"
            "    try:\n        method(name)\n    except PluginError as exc:\n        print('REFUSED', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(site)})
    refused = [line for line in done.stdout.splitlines() if line.startswith("REFUSED")]
    assert len(refused) == 3, done.stdout + done.stderr
    assert refused[0] == refused[1] and "method 'brokenm'" in refused[0] and "ImportError: boom" in refused[0]
    assert "is not a method (Method): it is str" in refused[2]


def test_the_registry_skips_a_broken_plugin_in_all_warns_once_and_refuses_it_by_name(tmp_path, monkeypatch,
                                                                                     capsys):
    from memegauge.methods import Method
    from memegauge.registry import DuplicatePlugin, PluginError, Registry

    site = installed_package(
        tmp_path, "plug3",
        "from memegauge.methods import Method\nGOOD = Method(name='good', title='G', report=lambda s, r: {})\n"
        "WRONG = 'not a method'\n",
        "[memegauge.tests-plugins3]\ngood = plug3:GOOD\nwrong = plug3:WRONG\nbroken = plug3_nowhere:X\n")
    monkeypatch.syspath_prepend(str(site))
    registry = Registry("method", "memegauge.tests-plugins3", Method)
    assert list(registry.all()) == ["good"] and list(registry.all()) == ["good"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("warning: skipped a method: ") for line in err), err
    assert "'broken' (entry point plug3_nowhere:X of plug3" in err[0] and "ModuleNotFoundError" in err[0]
    assert "is not a method (Method): it is str" in err[1] and "pip uninstall plug3" in err[1]
    assert sorted(registry.broken()) == ["broken", "wrong"]
    assert registry.names() == ["broken", "good", "wrong"]  # still declared: listed by name, not loaded
    for _ in range(2):  # asked again: the same message, never "unknown"
        with pytest.raises(PluginError, match="'broken' \\(entry point plug3_nowhere:X.*ModuleNotFoundError"):
            registry.get("broken")
        with pytest.raises(PluginError, match="is not a method"):
            registry.require("wrong", "here")
    assert capsys.readouterr().err == ""  # said once
    with pytest.raises(DuplicatePlugin):  # duplicates are still refused
        registry.register(Method(name="good", title="G2", report=lambda s, r: {}), "my notebook")


_SHADOWS = """
from memegauge.registry import Command

RUNS = Command(name="runs", summary="Another package's runs.", register="cmdpkg:register")
EVAL = Command(name="eval", summary="Another package's eval.", register="cmdpkg:register")


def register(app):
    @app.command("runs")
    def runs() -> None:
        print("the plug-in's runs ran")

    @app.command("eval")
    def eval_() -> None:
        print("the plug-in's eval ran")
"""


def test_a_command_named_as_one_of_memegauges_own_is_skipped_with_one_warning_whichever_it_is(tmp_path):
    """`runs` (a command of memegauge's own group) and `eval` (one MemeGauge declares as an entry point) alike:
    the package's command is named once on stderr and MemeGauge's own runs."""
    site = installed_package(tmp_path, "cmdpkg", _SHADOWS, "[memegauge.commands]\nruns = cmdpkg:RUNS\n"
                                                          "eval = cmdpkg:EVAL\n")
    (tmp_path / "models.yaml").write_text("{}\n")

    def warned(stderr: str, name: str) -> int:
        return sum(line.startswith("warning: skipped a command: entry point cmdpkg:") and f"named {name!r}, the name "
                   "of MemeGauge's own command, which is kept" in line and "pip uninstall cmdpkg" in line
                   for line in stderr.splitlines())

    shown = _cli(site, tmp_path, "--help")
    assert shown.returncode == 0 and warned(shown.stderr, "runs") == warned(shown.stderr, "eval") == 1, shown.stderr
    listed = {line.split()[0] for line in shown.stdout.splitlines() if line.startswith("  ") and line.split()}
    assert {"runs", "eval"} <= listed and "Another package" not in shown.stdout
    runs = _cli(site, tmp_path, "runs")
    assert warned(runs.stderr, "runs") == 1 and "ran" not in runs.stdout and "no store here yet" in runs.stderr
    benchmarks = _cli(site, tmp_path, "eval", "--list")
    assert benchmarks.returncode == 0 and "fhm" in benchmarks.stdout and warned(benchmarks.stderr, "eval") == 1


def test_a_lazy_hook_that_names_nothing_is_one_message_naming_the_hook_its_method_and_target():
    from memegauge.methods import Method, lazy
    from memegauge.registry import PluginError

    toy = Method(name="toy", title="T", report=lazy("memegauge.methods:biuld"), view=lazy("memegauge.no_such:view"),
                 tables=lazy("memegauge.methods:ENTRY_POINT_GROUP"))
    with pytest.raises(PluginError, match="hook 'report' of method 'toy' names nothing: "
                                          "lazy\\('memegauge.methods:biuld'\\): module 'memegauge.methods' has no "
                                          "function 'biuld'; fix the method's descriptor"):
        toy.report(None, {})
    with pytest.raises(PluginError, match="hook 'view' of method 'toy' names nothing: .*no module "
                                          "'memegauge.no_such'"):
        toy.view({}, None)
    with pytest.raises(PluginError, match="hook 'tables' .* is str, not a function"):
        toy.tables({})
    broken_inside = lazy("memegauge.testing.no_such_module_44:x")
    with pytest.raises(PluginError, match="a lazy hook names nothing"):
        broken_inside()


def test_reporting_a_run_whose_method_names_a_missing_report_function_is_one_clear_message(tmp_path):
    """Toyscore (the worked example of docs/engine.md) runs; its descriptor then misspells its report hook
    (`lazy("toyscore.report:biuld")`): `memegauge report RUN` fails with one line, not a traceback."""
    from helpers.worlds import toyscore_site

    site = toyscore_site(tmp_path)
    with start_server() as server:
        (tmp_path / "models.yaml").write_text(f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, "
                                              "backoff_s: 0.01, backoff_max_s: 0.05}\n")
        assert _cli(site, tmp_path, "--quiet", "toyscore", "-c", str(tmp_path / "toy.yaml"), "--run", "t")\
            .returncode == 0
    assert _cli(site, tmp_path, "report", "t", "--format", "json").returncode == 0
    descriptor = site / "toyscore" / "method.py"
    descriptor.write_text(descriptor.read_text().replace('"toyscore.report:build"', '"toyscore.report:biuld"'))
    done = _cli(site, tmp_path, "report", "t")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert ("hook 'report' of method 'toyscore' names nothing: lazy('toyscore.report:biuld'): module "
            "'toyscore.report' has no function 'biuld'") in " ".join(done.stderr.split())
