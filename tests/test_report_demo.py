"""`memegauge demo` ends by writing one HTML report per run plus an index and printing their paths.

The demo runs for real with a test-server model in place of the embedded one (every stage of every
method, small): the printed paths must be the files written, one per run in the store, and each page
must be that run's report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.report.html import INDEX_NAME, report_file_name
from memegauge.testing.server import start_server


def test_demo_writes_and_prints_an_html_report_per_run_and_an_index(tmp_path, capsys):
    out = tmp_path / "demo-out"
    with start_server() as server:
        models = tmp_path / "models.yaml"
        models.write_text(f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, max_concurrency: 8, "
                          "backoff_s: 0.01, backoff_max_s: 0.05}\n")
        assert main(["--store", str(tmp_path / "store.db"), "--models", str(models), "--quiet", "demo",
                     "--model", "tsrv", "--out", str(out)]) == 0
    printed = [Path(line.split("  (")[0]) for line in capsys.readouterr().out.splitlines()
               if line.strip().endswith(".html") or line.strip().endswith("(index of the reports above)")]
    store = Store(tmp_path / "store.db")
    runs = [r["name"] for r in store.list_runs()]
    store.close()
    assert {r.split("-")[1] for r in runs} == {"screen", "adammeme", "arena", "memeqa"}
    assert printed == [(out / report_file_name(r)).resolve() for r in runs] + [(out / INDEX_NAME).resolve()]
    for run, path in zip(runs, printed, strict=False):  # printed ends with the index page
        assert f"<title>MemeGauge report: {run} (" in path.read_text()
    index = printed[-1].read_text()
    assert all(f'href="{report_file_name(r)}"' in index for r in runs)


@pytest.mark.slow
def test_demo_rerun_into_another_out_dir_replays_every_call(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))
    with start_server() as server:
        models = tmp_path / "models.yaml"
        models.write_text(f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, max_concurrency: 8, "
                          "backoff_s: 0.01, backoff_max_s: 0.05}\n")
        args = ["--store", str(tmp_path / "store.db"), "--models", str(models), "--quiet", "demo", "--model", "tsrv"]
        assert main([*args, "--out", str(tmp_path / "first")]) == 0
        requests = server.stats["requests"]
        assert requests > 0
        assert main([*args, "--out", str(tmp_path / "second")]) == 0
        assert server.stats["requests"] == requests
    store = Store(tmp_path / "store.db")
    try:
        assert all(store.run_summary(r["name"])["last_execution_new_calls"] == 0 for r in store.list_runs())
    finally:
        store.close()
