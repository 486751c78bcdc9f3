"""Issue 43, items 8 and 9: every figure shown with its interval and n (or why it has none), and the smaller
promises: a cached rerun priced $0 (tests/test_eval_front_door.py), `models --check` without arguments loading no
weights, "exists with a different config" naming the differences, and `memegauge.load(RUN)`."""

from __future__ import annotations

import asyncio
import json
import re

import numpy as np
import pytest

from helpers.memeqa_data import make_dataset
from helpers.models import served_registry
from helpers.reused_run import rerun_with
from memegauge.cli import main
from memegauge.engine import Store
from memegauge.memeqa.config import EvalConfig
from memegauge.memeqa.runs import eval_run
from memegauge.report import build_report
from memegauge.report.formats import render_report
from memegauge.report.pages import runs_page
from memegauge.testing.server import start_server
from test_benchmarks import fhm

INTERVAL = re.compile(r"\d+\.\d%? \[-?\d+\.\d, -?\d+\.\d\]")


@pytest.fixture
def served(tmp_path):
    with start_server(seed=2) as server:
        served_registry(tmp_path, server.base_url, ["qa-m"])
        yield tmp_path, server


def test_one_model_qa_eval_gives_the_macro_rows_n_and_parse_failures_with_their_interval(served, capsys):
    tmp, _ = served
    data, images = make_dataset(tmp, memes=("m1", "m2", "m3", "m4"))
    code = main(["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "qa", "eval", "--data", str(data),
                 "--images", str(images), "--model", "qa-m", "--skip-preflight"])
    said = capsys.readouterr()
    assert code == 0, said.err
    macro = next(line for line in said.out.splitlines() if "macro" in line)
    assert "│ 44 " in macro or " 44 " in macro, macro  # 11 types × 4 memes scored: the macro row's n
    failures = re.search(r"parse failures (\S+ \[[\d.]+, [\d.]+\] \(n=\d+\))", said.err)
    assert failures and failures.group(1).endswith("(n=44)"), said.err


def test_memeqa_page_gives_none_versions_differences_and_above_baseline_with_intervals(served):
    tmp, server = served
    data, images = make_dataset(tmp, memes=tuple(f"m{i}" for i in range(5)))
    store = Store(tmp / "s.db")
    from memegauge.config import load_registry

    registry = load_registry(tmp / "models.yaml")
    names = [asyncio.run(eval_run(store, registry, EvalConfig(data=data, images=images, version=v, split="dev",
                                                               model="qa-m"))) for v in ("none-minus", "none-plus")]
    page = render_report(store, names[0], "html")
    section = page[page.index("None− vs None+"):]
    section = section[:section.index("</table>")]
    assert "None+ − None− (95% CI, paired)" in section and "pairs" in section
    rows = re.findall(r"<tr>(.*?)</tr>", section, flags=re.S)
    assert len(rows) >= 12  # 11 types, micro, macro
    micro = next(r for r in rows if ">micro<" in r.replace(" ", "").replace("\n", ""))
    assert len(INTERVAL.findall(re.sub(r"\s+", " ", micro))) == 3  # None−, None+ and their paired difference
    # the paired difference equals the mean of per-question differences
    minus, plus = build_report(store, names[0]), build_report(store, names[1])
    theirs = {d["id"]: d["correct"] for d in plus["details"]}
    diffs = [float(bool(theirs[d["id"]])) - float(bool(d["correct"])) for d in minus["details"] if d["id"] in theirs]
    shown = re.findall(r"(-?\d+\.\d)% \[", re.sub(r"\s+", " ", micro))[2]
    assert float(shown) == pytest.approx(100 * np.mean(diffs), abs=0.051)
    above = page[page.index("Accuracy per question type"):]
    above = re.sub(r"\s+", " ", above[:above.index("</table>")])
    assert "above baseline" in above and len(INTERVAL.findall(above)) >= 2 * 13  # accuracy and above baseline
    # the view's run index: each run's key figure with its interval and n
    index = re.sub(r"\s+", " ", runs_page(store))
    assert re.search(r"overall \(macro\): qa-m: accuracy \d+\.\d% \[[\d.]+, [\d.]+\] n=55", index)


def test_a_class_never_answered_says_why_its_precision_has_no_value():
    from memegauge.benchmarks.kit.report import _figure_table, _task
    from memegauge.benchmarks.kit.spec import Task

    task = Task(answer="yes_no", gold="g", prompt="p", prompt_source="s", positive="yes",
                metrics=["accuracy", "macro_f1", "per_class"])
    rows = [{"task": "t", "item": str(i), "gold": "yes" if i % 2 else "no", "ok": True, "answer": "yes",
             "read": "yes", "readable": True, "p_positive": None, "groups": {}} for i in range(6)]
    shown = {row[0].text: row[1].text for row in _figure_table({**_task(task, rows, 0), "published": []}).rows}
    assert shown["precision[no]"].startswith("– (no answer said this class")
    assert INTERVAL.match(shown["precision[yes]"])


def test_models_check_without_arguments_never_loads_a_local_models_weights(served, capsys, monkeypatch):
    import memegauge.engine.preflight as preflight

    tmp, _ = served
    asked: list[str] = []
    real = preflight.check_models

    async def recording(registry, names):
        asked.extend(names)
        return await real(registry, names)

    monkeypatch.setattr(preflight, "check_models", recording)
    code = main(["--models", str(tmp / "models.yaml"), "models", "--check"])
    out = capsys.readouterr().out
    assert code == 0 and "qa-m" in asked
    local = [line for line in out.splitlines() if "not checked (a local model" in line]
    assert local and all(name not in asked for name in (line.split(":")[0] for line in local))
    assert "memegauge models --check embedded" in " ".join(out.split())


def test_a_run_name_reused_with_another_config_names_each_difference(tmp_path, capsys):
    code, said = rerun_with(tmp_path, capsys, "--limit", "3", "-o", "max_tokens=32")
    assert code == 2
    assert "run 'mine' exists with a different config: limit: stored 2, now 3; max_tokens: stored (not set), " \
           "now 32" in said


def test_load_returns_a_stored_runs_result_without_running_anything(tmp_path):
    import memegauge

    with start_server() as server:
        served_registry(tmp_path, server.base_url, ["tsrv"])
        fhm(tmp_path / "fhm", 5)
        made = memegauge.run("fhm", {"model": "tsrv", "data": str(tmp_path / "fhm")}, store=tmp_path / "s.db",
                             models=tmp_path / "models.yaml")
        before = server.stats["models"]["tsrv"]
        loaded = memegauge.load(made.name, store=tmp_path / "s.db")
        assert server.stats["models"]["tsrv"] == before  # nothing was asked again
    assert (loaded.name, loaded.method, loaded.status, loaded.calls) == (made.name, "fhm", "done", 5)
    assert loaded.report["tasks"] == made.report["tasks"]
    frame = loaded.to_pandas("answers")
    assert len(frame) == 5 and {"model", "split", "correct"} <= set(frame.columns)
    with pytest.raises(memegauge.api.InputError, match="no run named 'nope'"):
        memegauge.load("nope", store=tmp_path / "s.db")
    with pytest.raises(memegauge.api.InputError, match="no store at"):
        memegauge.load(made.name, store=tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()
    assert json.loads(json.dumps(loaded.tables()["headline"]))  # the leaderboard rows, JSON-ready
