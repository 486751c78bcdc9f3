"""Cost before and during a run, and runs you can watch.

* `--dry-run` on `adam`, `arena`, `qa eval` and `qa build`: no request reaches any server (no preflight
  either), nothing is written, and the planned calls per stage and model are printed;
* the estimate against the real run on the local test server (bench/dry_run_accuracy.py): exact counts
  equal, upper bounds never exceeded, and — once the store has measured a smaller run of the same
  method — tokens and cost of the exactly counted stages within `MARGIN`;
* `--budget USD` stops a run cleanly (status `stopped`, exit 1, the answers paid for stored) and a rerun
  finishes it without paying again;
* progress: totals planned before a stage starts, plain timestamped lines without ANSI codes when
  stderr is not a terminal (`--progress-every`), `--quiet` printing only the final line.
"""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memegauge.engine import Store
from memegauge.engine.progress import CallProgress, clock, eta_seconds
from memegauge.testing.server import start_server
from helpers.runs import QA_MODEL, world

BENCH = Path(__file__).resolve().parents[1] / "bench" / "dry_run_accuracy.py"
MARGIN = 0.15  # measured tokens and cost of exactly counted stages: within ±15 % of the real run
ANSI = re.compile(r"\x1b\[")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("dry_run_accuracy", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server():
    with start_server() as s:
        yield s


def qa_args(w, *more: str) -> list[str]:
    return ["qa", "eval", "--data", str(w.qa_data), "--images", str(w.qa_images), "--version", "none-minus",
            "--split", "dev", "--model", QA_MODEL, *more]


@pytest.mark.parametrize("method", ["adammeme", "arena", "memeqa"])
def test_estimate_against_the_real_run(bench, server, tmp_path, method):
    result = bench.measure(method, tmp_path, server.base_url)
    for row in result["measured"]:
        estimated, real = row["calls"]
        if row["bound"] == "exact":
            assert estimated == real, row
        elif row["bound"] == "at most":
            assert real <= estimated, row
        if row["bound"] == "exact" and row["basis"].startswith("measured") and real:
            for figure in ("prompt_tokens", "completion_tokens", "cost"):
                est, did = row[figure]
                assert abs(est - did) <= MARGIN * did, (figure, row)
    heuristic, real = bench.totals(result["heuristic"]), bench.totals(result["measured"])
    # the heuristic's completion is the max_tokens bound: never below what the run produced
    assert heuristic["completion_tokens"][0] >= real["completion_tokens"][1]
    if method != "adammeme":  # every count exact or a bound reached when no call fails
        for figure in ("calls", "prompt_tokens", "completion_tokens", "cost"):
            est, did = real[figure]
            assert abs(est - did) <= MARGIN * did, (figure, est, did)


def test_dry_run_sends_nothing_and_writes_nothing(server, tmp_path, capsys):
    w = world(tmp_path, server.base_url)
    before = server.stats["requests"] if "requests" in server.stats else 0
    for args in (["adam", "-c", str(w.adam)], ["arena", "-c", str(w.arena)], qa_args(w)):
        capsys.readouterr()
        assert w.cli(*args, "--dry-run") == 0
        printed = capsys.readouterr().out
        assert "planned calls" in printed and "per model" in printed and "cost $" in printed
    assert server.stats.get("requests", 0) == before
    assert not w.store.exists()


def test_dry_run_needs_no_reachable_model(tmp_path, capsys):
    """The registry points at a closed port: a preflight or a call would fail; the dry run does not."""
    w = world(tmp_path, "http://127.0.0.1:9/v1")
    assert w.cli(*qa_args(w), "--dry-run") == 0
    assert "memeqa.evaluate" in capsys.readouterr().out
    assert not w.store.exists()


def test_cost_is_unknown_for_an_unpriced_remote_model_and_zero_on_this_machine():
    from memegauge.config import registry_from_mapping
    from memegauge.engine.estimate import PlannedCalls, estimate

    registry = registry_from_mapping({
        "remote": {"backend": "openai", "model": "m", "base_url": "https://api.example.com/v1"},
        "priced": {"backend": "openai", "model": "m", "base_url": "https://api.example.com/v1",
                   "price_in": 2.5, "price_out": 10},
        "here": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:8000/v1"}}, "test")
    rows = estimate([PlannedCalls("s", name, 10, max_tokens=100, prompt_words=300, images=1)
                     for name in ("remote", "priced", "here")], registry, None, None)
    remote, priced, here = rows
    assert remote.cost is None and here.cost == 0.0
    # heuristic: 300 words × 1.33 + 765 per picture = 1,164 prompt tokens a call; completion at max_tokens
    assert priced.prompt_tokens == 11640 and priced.completion_tokens == 1000
    assert priced.cost == pytest.approx((11640 * 2.5 + 1000 * 10) / 1e6)
    # a heuristic cost is shown as the upper bound it is; $0 and "price unknown" need no mark
    from memegauge.engine.estimate import estimate_tables

    table, models = estimate_tables(rows, "r", str)
    assert list(table.columns[6].cells) == ["price unknown", f"≤ {priced.cost:.4f}", "0.0000"]
    assert list(models.columns[5].cells)[1] == f"≤ {priced.cost:.4f}"


def test_dry_run_counts_what_the_store_has(server, tmp_path, capsys):
    w = world(tmp_path, server.base_url)
    assert w.cli(*qa_args(w, "--run", "qa")) == 0
    capsys.readouterr()
    assert w.cli(*qa_args(w, "--run", "qa", "--dry-run")) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "memeqa.evaluate" in line)
    cells = [c.strip() for c in row.split("│") if c.strip()]
    assert cells[2:4] == ["22", "22"]  # 22 planned, all 22 already answered in the store
    assert "measured (22 calls)" in row


def test_budget_stops_cleanly_and_a_rerun_finishes(tmp_path, capsys):
    with start_server(latency_ms=50) as slow:
        w = world(tmp_path, slow.base_url)
        w.models.write_text(w.models.read_text().replace("max_concurrency: 8", "max_concurrency: 2")
                            .replace("backoff_s", "price_in: 2.5, price_out: 10, backoff_s"))
        capsys.readouterr()
        assert w.cli(*qa_args(w, "--run", "qa", "--budget", "0.001")) == 1
        err = capsys.readouterr().err
        assert "stopped:" in err and "budget reached" in err and "Rerun the same command" in err
        store = Store(w.store)
        summary = store.run_summary("qa")
        assert summary["status"] == "stopped" and 0 < summary["calls"] < 22
        assert summary["cost"] >= 0.001
        made_before, requests_before = summary["calls_made"], slow.stats["requests"]
        assert w.cli(*qa_args(w, "--run", "qa")) == 0  # no budget: it finishes
        summary = store.run_summary("qa")
        assert summary["status"] == "done" and summary["calls"] == 22 and summary["calls_made"] == 22
        # the rerun asked only for what was missing (its preflight's picture probe is cached)
        assert slow.stats["requests"] - requests_before == 22 - made_before
        store.close()


def test_progress_lines_are_plain_and_planned():
    stream = io.StringIO()
    progress = CallProgress(enabled=None, every_s=60, stream=stream)
    with progress:
        progress.plan("stage.a", 4)
        progress.plan("stage.b", 6, "at most")
        assert progress.total == 10 and progress.bounded()
        progress.sent()
        for _ in range(4):
            progress.submitted("stage.a")
            progress.finished(True, False, "stage.a")
        line = progress.line()
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ progress: 4/≤10 calls \(40%\) · stage.a 4/4", line)
    assert "ETA ≤" in line and not ANSI.search(stream.getvalue())
    assert stream.getvalue().count("progress:") == 1  # the final line (no tick within 60 s) …
    assert " progress: 4/4 calls (100%)" in stream.getvalue()  # … where the run's end closes the bounds
    assert eta_seconds(6, 4, 2.0) == 3.0 and eta_seconds(6, 0, 0) is None
    assert clock(3725) == "1h02m" and clock(65) == "1m05s" and clock(None) == "?"


def test_a_stage_submitting_more_than_planned_raises_its_total():
    progress = CallProgress(enabled=False)
    progress.plan("s", 1)
    for _ in range(3):
        progress.submitted("s")
    assert progress.total == 3


@pytest.mark.slow  # a detached subprocess run: seconds
def test_a_detached_run_prints_timestamped_progress_lines(tmp_path):
    """As under nohup: stderr is a file. Lines every --progress-every seconds, no ANSI codes."""
    with start_server(latency_ms=150) as slow:
        w = world(tmp_path, slow.base_url)
        w.models.write_text(w.models.read_text().replace("max_concurrency: 8", "max_concurrency: 1"))
        log = tmp_path / "nohup.out"
        with open(log, "w") as handle:
            code = subprocess.call([sys.executable, "-m", "memegauge.cli", "--store", str(w.store), "--models",
                                    str(w.models), "--progress-every", "0.5", *qa_args(w)],
                                   stdout=handle, stderr=handle, stdin=subprocess.DEVNULL)
    text = log.read_text()
    assert code == 0, text
    lines = [line for line in text.splitlines() if " progress: " in line]
    assert len(lines) >= 4, text
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ progress: \d+/22 calls", line) for line in lines)
    assert lines[-1].split(" progress: ")[1].startswith("22/22 calls (100%)")
    assert not ANSI.search(text)


def test_quiet_prints_only_the_final_line(server, tmp_path, capsys):
    w = world(tmp_path, server.base_url)
    capsys.readouterr()
    assert w.cli(*qa_args(w)) == 0  # World.cli passes --quiet
    err = " ".join(capsys.readouterr().err.split())  # rich wraps at 80 columns
    assert err == ("run 'memeqa-eval-qwen-x-none-minus-dev' done; `memegauge report "
                   "memeqa-eval-qwen-x-none-minus-dev` shows it")


def test_qa_build_dry_run_counts_against_the_real_build(tmp_path, capsys):
    pytest.importorskip("spacy")
    import yaml

    from memegauge.cli import main
    from memegauge.engine.estimate import estimate, versus_run
    from memegauge.config import load_config, load_registry
    from memegauge.memeqa.build import BuildConfig
    from memegauge.memeqa.construct import load_annotations, spacy_tagger
    from memegauge.memeqa.plan import plan_build
    from helpers.memeqa_build import registry
    from helpers.memeqa_data import write_annotations

    try:
        tagger = spacy_tagger()
    except Exception as exc:  # noqa: BLE001 — the tagger's model is an optional download
        pytest.skip(f"no spaCy tagger: {exc}")
    registry()  # registers the scripted generator, discriminator and blind model
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({n: {"backend": "scripted", "model": n, "vision": n == "disc"}
                                      for n in ("gen", "disc", "blind")}))
    write_annotations(tmp_path / "memes", n=12)
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"annotations": "memes/annotations.jsonl", "out": "built", "generator": "gen",
                                      "discriminator": "disc", "trivial_model": "blind", "af_max_rounds": 3,
                                      "seed": 4, "run": "b1"}))
    argv = ["--store", str(tmp_path / "s.db"), "--models", str(models), "--quiet", "qa", "build", "-c", str(config)]
    capsys.readouterr()
    assert main([*argv, "--dry-run"]) == 0
    assert "memeqa.construct.cloze" in capsys.readouterr().out and not (tmp_path / "s.db").exists()
    build = load_config(config, BuildConfig)
    rows = estimate(plan_build(build, load_annotations(build.annotations), tagger), load_registry(models), None, "b1")
    assert main(argv) == 0
    store = Store(tmp_path / "s.db")
    for row in versus_run(rows, store, "b1"):
        estimated, real = row["calls"]
        assert real == estimated if row["bound"] == "exact" else real <= estimated, row
    store.close()
