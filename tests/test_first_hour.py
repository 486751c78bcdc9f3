"""The first hour, smoothed (issue 34, part D): what a new user meets first, each with its fix.

* one meme-set reader for every method: a meme set whose `image` names are relative to a separate
  pictures folder (the SemEval-2021 Task 6 layout `qa eval --images` takes) loads with `images:` in the
  config or `--images DIR` for `adam` and `arena` too, and is refused with that fix without it;
* setup.sh pins every extra of `all` (pandas for the README's `to_pandas` example);
* `models --check`: a refused connection named so, with a fix fitting the host; a picture-probe
  refusal leaves no store; `qa score` defaults and names its files; `--quiet`; `$MEMEGAUGE_MODELS`;
* `--dry-run`: answers of other runs count as cached; the expected cost beside the bound; progress
  of picture erasure and an ETA at the likely counts;
* `rate` on an imported AdamMeme run: the release's texts and pictures, only items that can be shown;
* the HTML report's header, leaderboard, one-iteration plot and facts; the demo's notes;
* the questions export: `model`, typed Parquet columns.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memegauge.memes import load_memes
from memegauge.types import InputError
from helpers.runs import world


def _semeval_layout(memes_jsonl: Path, corpus: Path) -> Path:
    """The SemEval layout of a meme set: `corpus/memes.jsonl` naming pictures kept in `corpus/images/`."""
    (corpus / "images").mkdir(parents=True)
    rows = [json.loads(line) for line in memes_jsonl.read_text().splitlines() if line.strip()]
    for i, row in enumerate(rows):
        name = f"{i:03d}_image.png"
        shutil.copyfile(row["image"], corpus / "images" / name)
        row["image"] = name
    (corpus / "memes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return corpus / "memes.jsonl"


# --------------------------------------------------------------------------------------------------
# One meme-set reader, the same --images for every method
# --------------------------------------------------------------------------------------------------


def test_a_separate_pictures_folder_loads_by_its_folder_or_the_corpus_folder(tmp_path):
    w = world(tmp_path, "http://127.0.0.1:9/v1")
    memes = _semeval_layout(tmp_path / "memes" / "memes.jsonl", tmp_path / "corpus")
    with pytest.raises(InputError) as info:
        load_memes(memes)
    assert "images:" in info.value.fix and "--images" in info.value.fix
    by_folder = load_memes(memes, images=tmp_path / "corpus" / "images")
    by_corpus = load_memes(memes, images=tmp_path / "corpus")
    assert [m.image for m in by_folder] == [m.image for m in by_corpus]
    assert by_folder[0].image == tmp_path / "corpus" / "images" / "000_image.png"
    assert len(by_folder) == 12 and w.adam.exists()
    with pytest.raises(InputError, match="pictures folder not found"):
        load_memes(memes, images=tmp_path / "nowhere")


@pytest.mark.parametrize("method", ["adam", "arena"])
def test_adam_and_arena_take_images_as_qa_eval_does(tmp_path, capsys, method):
    w = world(tmp_path, "http://127.0.0.1:9/v1")
    _semeval_layout(tmp_path / "memes" / "memes.jsonl", tmp_path / "corpus")
    config = w.adam if method == "adam" else w.arena
    config.write_text(config.read_text().replace(f"memes: {tmp_path / 'memes' / 'memes.jsonl'}",
                                                 "memes: corpus/memes.jsonl"))
    capsys.readouterr()
    assert w.cli(method, "-c", str(config), "--dry-run") == 2
    assert "--images" in capsys.readouterr().err
    # the option, from the shell's working directory (a relative path), or the config key, from the file's
    assert w.cli(method, "-c", str(config), "--images", str(tmp_path / "corpus"), "--dry-run") == 0
    assert "planned calls" in capsys.readouterr().out
    config.write_text(config.read_text() + "images: corpus/images\n")
    assert w.cli(method, "-c", str(config), "--dry-run") == 0
    assert not w.store.exists()


# --------------------------------------------------------------------------------------------------
# setup.sh installs what the README's examples use
# --------------------------------------------------------------------------------------------------


def _requirement_names(lines: list[str]) -> set[str]:
    import re

    return {re.split(r"[<>=!~ \[;]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
            for line in lines if line.strip() and not line.lstrip().startswith("#")}


def test_setup_sh_pins_every_extra_of_all_so_the_readme_python_example_runs():
    """README: setup.sh installs the core and every extra of `all` — its Python example calls
    `to_pandas`, which without pandas stops with `pip install 'memegauge[pandas]'`."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted: list[str] = list(project["dependencies"])
    for ref in extras["all"]:
        for extra in ref.split("[", 1)[1].rstrip("]").split(","):
            wanted += extras[extra.strip()]
    pinned = _requirement_names((root / "requirements.lock").read_text().splitlines()
                                + (root / "requirements-model.txt").read_text().splitlines())
    assert "setup.sh" in (root / "README.md").read_text() and "requirements.lock" in \
        (root / "scripts" / "setup.sh").read_text()
    assert sorted(_requirement_names(wanted) - pinned) == []
    assert "pandas" in pinned and "pyarrow" in pinned


# --------------------------------------------------------------------------------------------------
# models --check, the picture probe's store, qa score, --quiet, MEMEGAUGE_MODELS
# --------------------------------------------------------------------------------------------------


def test_a_refused_connection_is_named_so_with_a_fix_for_its_host(tmp_path, capsys, monkeypatch):
    from helpers.net import free_port
    from memegauge.cli import main
    from memegauge.engine.preflight import _connect_fix
    from memegauge.models.spec import ModelSpec

    monkeypatch.delenv("MEMEGAUGE_MODELS", raising=False)
    port = free_port()
    models = tmp_path / "models.yaml"
    models.write_text(f"mine: {{backend: openai, model: Qwen/Qwen2.5-VL-7B-Instruct, "
                      f"base_url: 'http://127.0.0.1:{port}/v1'}}\n")
    assert main(["--models", str(models), "models", "--check", "mine"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"http://127.0.0.1:{port}/v1 (connection refused)" in out
    assert f"vllm serve Qwen/Qwen2.5-VL-7B-Instruct --port {port}" in out
    assert "no answer within" not in out
    hosted = ModelSpec(name="gpt-4o", backend="openai", model="gpt-4o", base_url="https://api.openai.com/v1")
    fix = _connect_fix(hosted, ["https://api.openai.com/v1"])
    assert "vllm" not in fix and "proxy" in fix and "base_url" in fix
    lan = ModelSpec(name="lan", backend="openai", model="m", base_url="http://192.168.1.20:8001/v1")
    assert "vllm serve m --port 8001" in _connect_fix(lan, ["http://192.168.1.20:8001/v1"])


def test_a_picture_refusal_keeps_a_store_that_was_there_before(tmp_path, capsys):
    from memegauge.cli import main
    from memegauge.engine import Store
    from memegauge.testing.server import start_server
    from helpers.memeqa_data import make_dataset

    data, images = make_dataset(tmp_path)
    with start_server(text_only=["text-model"]) as server:
        models = tmp_path / "models.yaml"
        models.write_text("".join(f"{m}: {{backend: openai, model: {m}, base_url: {server.base_url}}}\n"
                                  for m in ("vl", "text-model")))
        args = ["--store", str(tmp_path / "store.db"), "--models", str(models), "--quiet", "qa", "eval",
                "--data", str(data), "--images", str(images), "--limit", "2", "--model"]
        assert main([*args, "vl", "--run", "kept"]) == 0
        assert main([*args, "text-model"]) == 2
    assert "refuses images" in capsys.readouterr().err
    store = Store(tmp_path / "store.db")
    assert [r["name"] for r in store.list_runs()] == ["kept"]
    store.close()


def test_qa_score_defaults_as_qa_eval_and_names_the_files_of_an_unknown_id(tmp_path, capsys):
    from memegauge.cli import main
    from helpers.memeqa_data import make_dataset

    data, _ = make_dataset(tmp_path)
    questions = json.loads((data / "none-minus" / "dev.json").read_text())
    predictions = tmp_path / "answers.jsonl"
    predictions.write_text("".join(json.dumps({"id": q["id"], "prediction": "A"}) + "\n" for q in questions))
    store = ["--store", str(tmp_path / "store.db"), "--quiet"]
    assert main([*store, "qa", "score", "--data", str(data), "--predictions", str(predictions)]) == 0
    capsys.readouterr()
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({"id": "no-such-question", "prediction": "A"}) + "\n")
    assert main([*store, "qa", "score", "--data", str(data), "--predictions", str(foreign)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert str(foreign) in err and "no-such-question" in err
    assert str(data / "none-minus" / "dev.json") in err


def test_quiet_silences_the_demo_status_lines_and_keeps_its_reports(tmp_path, capsys):
    from memegauge.cli import main
    from memegauge.testing.server import start_server

    with start_server() as server:
        models = tmp_path / "models.yaml"
        models.write_text(f"vl: {{backend: openai, model: vl, base_url: {server.base_url}}}\n")
        capsys.readouterr()
        assert main(["--store", str(tmp_path / "s.db"), "--models", str(models), "--quiet", "demo",
                     "--model", "vl", "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "index of the reports above" in captured.out


@pytest.mark.parametrize("command", [["runs"], ["models"]])
def test_a_missing_memegauge_models_file_is_refused_as_models_is(tmp_path, capsys, monkeypatch, command):
    from memegauge.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMEGAUGE_MODELS", "nosuch.yaml")
    assert main(command) == 2
    by_env = " ".join(capsys.readouterr().err.split())
    assert "$MEMEGAUGE_MODELS=nosuch.yaml: no such registry file" in by_env and "MEMEGAUGE_MODELS" in \
        by_env.split("fix:")[1]
    monkeypatch.delenv("MEMEGAUGE_MODELS")
    assert main(["--models", "nosuch.yaml", *command]) == 2
    assert "nosuch.yaml: no such registry file" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# --dry-run: the store's answers by any run, and the expected cost beside the bound
# --------------------------------------------------------------------------------------------------


def test_dry_run_counts_answers_another_run_stored_as_cached(tmp_path, capsys):
    from memegauge.testing.server import start_server
    from helpers.runs import QA_MODEL

    with start_server() as server:
        w = world(tmp_path, server.base_url)
        qa = ["qa", "eval", "--data", str(w.qa_data), "--images", str(w.qa_images), "--model", QA_MODEL]
        assert w.cli(*qa, "--run", "first") == 0
        capsys.readouterr()
        assert w.cli(*qa, "--run", "second", "--dry-run") == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "memeqa.evaluate" in line)
    cells = [c.strip() for c in row.split("│") if c.strip()]
    assert cells[2:4] == ["22", "22"]  # 22 planned; all 22 answered by the run 'first' (same requests)


def test_adam_dry_run_gives_an_expected_cost_nearer_the_real_one_than_its_bound(tmp_path, capsys):
    import math

    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import check_inputs
    from memegauge.adammeme.plan import plan_calls
    from memegauge.config import load_config, load_registry
    from memegauge.engine import Store
    from memegauge.engine.estimate import estimate
    from memegauge.testing.server import start_server

    with start_server() as server:
        w = world(tmp_path, server.base_url)
        w.models.write_text(w.models.read_text().replace("backoff_s", "price_in: 2.5, price_out: 10, backoff_s"))
        capsys.readouterr()
        assert w.cli("adam", "-c", str(w.adam), "--dry-run") == 0
        printed = capsys.readouterr().out
        assert "expected $" in printed and "~ " in printed
        registry = load_registry(w.models)
        cfg = load_config(w.adam, AdamConfig)
        rows = estimate(plan_calls(cfg, check_inputs(cfg, registry)), registry, None, "a")
        assert w.cli("adam", "-c", str(w.adam), "--run", "a") == 0
    store = Store(w.store)
    real = store.call_totals(store.run_row("a")["id"])
    store.close()
    # the counts: refinement's expected steps (2 a seed, one try each) against its bound (max_steps, 3 tries)
    refine = [r for r in rows if r.stage.startswith("adammeme.refinement")]
    done = sum(real[(r.model, r.stage)]["calls"] for r in refine)
    bound, expected = sum(r.calls for r in refine), sum(r.expected_calls for r in refine)
    assert done <= bound and abs(math.log(expected / done)) < abs(math.log(bound / done)) / 2
    # the tokens: a heuristic stage's expected completion is a third of its max_tokens, the bound all of it
    scorer = next(r for r in rows if r.stage == "adammeme.scoring.scorer")
    assert scorer.basis == "heuristic" and scorer.completion_tokens == 700 * scorer.calls
    prompt = scorer.prompt_tokens / scorer.calls * scorer.expected_calls
    assert scorer.expected_cost == pytest.approx((prompt * 2.5 + 700 / 3 * scorer.expected_calls * 10) / 1e6,
                                                 rel=1e-3)
    assert sum(t["cost"] for t in real.values()) <= sum(r.cost for r in rows)
    for r in rows:
        assert r.expected_calls <= r.calls and r.expected_cost <= r.cost


# --------------------------------------------------------------------------------------------------
# Progress: erasing pictures shows, the ETA counts the likely calls
# --------------------------------------------------------------------------------------------------


def test_a_step_that_is_no_model_call_shows_its_progress_and_time_left():
    import io

    from memegauge.engine.progress import CallProgress

    progress = CallProgress(enabled=None, every_s=60, stream=io.StringIO())
    progress.plan("stage.a", 4)
    progress.work("erasing the text of pictures", 0, 4)
    assert "erasing the text of pictures 0/4" in progress.line() and progress.line().endswith("ETA ?")
    progress.working.started -= 10  # one picture took 10 s
    progress.work("erasing the text of pictures", 1, 4)
    line = progress.line()
    assert "erasing the text of pictures 1/4" in line
    assert progress.working.left_s() == pytest.approx(30, rel=0.01)  # 3 pictures left at 10 s each
    progress.work("erasing the text of pictures", 4, 4)
    assert progress.working is None and "erasing" not in progress.line()


def test_the_eta_counts_the_likely_calls_and_gives_the_bound_beside_them():
    from memegauge.engine.estimate import PlannedCalls
    from memegauge.engine.progress import CallProgress

    progress = CallProgress(enabled=False)
    progress.plan_calls([PlannedCalls("s.a", "m", 4), PlannedCalls("s.b", "m", 100, "at most", expected=6)])
    progress.sent()
    for _ in range(4):
        progress.submitted("s.a")
        progress.finished(True, False, "s.a")
    progress.first_fresh, progress.last_fresh = 0.0, 2.0  # 4 calls in 2 s: 0.5 s a call
    assert progress.eta() == pytest.approx(3.0) and progress.eta(bound=True) == pytest.approx(50.0)
    assert progress.status().endswith("ETA ~0m03s (≤ 0m50s)")
    progress.settle("s.b")  # the stage asked nothing more: its bound is gone
    assert progress.total == 4 and progress.status().endswith("ETA 0m00s")


@pytest.mark.slow  # RapidOCR erases four pictures: tens of seconds on a shared 2-core machine
def test_an_adam_run_says_it_is_erasing_pictures(tmp_path, capsys):
    from memegauge.cli import main
    from memegauge.images.erase import text_detection_available
    from memegauge.testing.server import start_server

    if not text_detection_available():
        pytest.skip("text detection (the erase extra) is not installed")
    with start_server(latency_ms=20) as server:
        w = world(tmp_path, server.base_url)
        w.adam.write_text(w.adam.read_text().replace("erase: false", "erase: true") + "limit: 4\n")
        capsys.readouterr()
        assert main(["--store", str(w.store), "--models", str(w.models), "--progress-every", "0.1",
                     "adam", "-c", str(w.adam)]) == 0
    assert "erasing the text of pictures" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------
# rate on an imported AdamMeme run: the release's texts and pictures, only items that can be shown
# --------------------------------------------------------------------------------------------------


def _imported_items(tmp_path: Path, folder: Path) -> list:
    from memegauge.cli import main
    from memegauge.engine import Store
    from memegauge.rating.items import run_items
    from memegauge.report import run_header

    assert main(["--store", str(tmp_path / "store.db"), "--quiet", "import", "adammeme", str(folder),
                 "--run", "old"]) == 0
    store = Store(tmp_path / "store.db")
    try:
        return run_items(store, {**run_header(store, "old").as_dict(), "id": store.run_row("old")["id"]},
                         tasks=("score", "labels"))
    finally:
        store.close()


SHARED_ADAMMEME = Path("/work/shared/data/adammeme-original")


@pytest.mark.skipif(not SHARED_ADAMMEME.is_dir(), reason="the shared copy of the original AdamMeme results is absent")
def test_rating_an_imported_release_shows_the_meme_texts_it_has(tmp_path):
    release = json.loads((SHARED_ADAMMEME / "data" / "data5k" / "cls_res_full.json").read_text())
    texts = {Path(i["image"]).stem: i["text"] for items in release.values() for i in items}
    items = _imported_items(tmp_path, SHARED_ADAMMEME)
    labels = [i for i in items if i.task == "labels"]
    assert labels and all(i.page["text"] == texts[i.source] for i in labels)
    assert all(i.page["text"] or i.page["image"] for i in items)


def test_an_import_brings_the_pictures_it_has_and_rating_leaves_out_memes_it_cannot_show(tmp_path):
    from PIL import Image

    from helpers.worlds import adammeme_legacy_layout

    folder = adammeme_legacy_layout(tmp_path / "orig")
    pictures = folder / "data" / "set1" / "image" / "erased"
    pictures.mkdir(parents=True)
    Image.new("RGB", (40, 30), "red").save(pictures / "a1.png")  # r1 and r2 have no picture
    data = folder / "data" / "set1" / "cls_res_full.json"
    release = json.loads(data.read_text())
    release["race"].append({**release["race"][1], "text": "", "image": "../data/set1/image/erased/r3.png"})
    data.write_text(json.dumps(release))  # r3: no text (here or scored) and no picture
    with pytest.warns(UserWarning, match="1 of 7 items left out: their memes have neither text nor picture"):
        items = _imported_items(tmp_path, folder)
    labels = {i.source: i.page for i in items if i.task == "labels"}
    assert sorted(labels) == ["a1", "r1", "r2"]
    assert labels["a1"]["image"].startswith("data:image/jpeg;base64,") and labels["r1"]["image"] is None
    assert labels["r1"]["text"] == "text of r1"


# --------------------------------------------------------------------------------------------------
# HTML: the header's error in words, intervals on one line, a one-iteration plot, whole stage names;
# the demo says what its figures rest on
# --------------------------------------------------------------------------------------------------


def _facts(**run) -> dict[str, str]:
    from memegauge.report.html import header_facts

    base = {"name": "r", "method": "adammeme", "status": "incomplete", "config": {}, "calls": 20}
    return dict(header_facts({**base, **run}))


def test_the_header_reads_an_incomplete_runs_failure_summary_out_in_words():
    summary = json.dumps({"failed": 3, "asked": 40, "by_stage": {"adammeme.scoring.scorer": {"server": 2},
                                                                  "adammeme.mining": {"timeout": 1}}})
    error = _facts(error=summary)["error"]
    # in words, then the fix for each class that failed (34c's per-class fixes)
    assert error.startswith("3 of 40 calls failed (adammeme.scoring.scorer: server 2; adammeme.mining: timeout 1)")
    assert "{" not in error and "raise timeout_s" in error
    assert _facts(error="RuntimeError: boom")["error"] == "RuntimeError: boom"


def test_the_header_explains_pictures_a_text_only_model_did_not_see_and_answers_cut_short():
    facts = _facts(images_by_model={"embedded": {"calls": 20, "with_image": 0, "as_text": 20}},
                   truncated_calls=13, truncated_by_stage={"adammeme.reference.senior": 13})
    assert facts["calls with the picture"].startswith("embedded: 0 of 20 (20 read the meme's text")
    assert "text-only" in facts["calls with the picture"]
    assert facts["outputs cut at max_tokens"].startswith("13 of 20 (adammeme.reference.senior: 13)")


def test_a_one_iteration_plot_has_an_axis_of_whole_iterations(monkeypatch):
    from memegauge.report import plots

    monkeypatch.setattr(plots, "_png", lambda fig: fig.axes[0].get_xlim())
    row = {"iteration": 0, "new": {"avg_score": 5.0}, "cumulative": {"avg_score": 5.0}}
    low, high = plots.lines_by_iteration({"t": [row]}, "one iteration")
    assert low <= -1 and high >= 1


def test_the_demo_says_its_model_read_text_in_place_of_pictures(tmp_path, capsys):
    from memegauge.cli import main
    from memegauge.testing.server import start_server

    with start_server() as server:
        models = tmp_path / "models.yaml"
        models.write_text(f"tx: {{backend: openai, model: tx, base_url: {server.base_url}, vision: false}}\n")
        capsys.readouterr()
        assert main(["--store", str(tmp_path / "s.db"), "--models", str(models), "demo", "--model", "tx",
                     "--out", str(tmp_path / "out")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "read the meme's text and caption in place of its picture: the model is text-only" in err


@pytest.mark.slow  # a real browser
def test_leaderboard_intervals_stay_on_one_line_and_stage_names_whole(tmp_path):
    from memegauge.engine import Store
    from memegauge.report.html import write_html_reports
    from memegauge.testing.browser import available, start_driver
    from helpers.browser import open_page
    from helpers.synthetic import adammeme_run

    if not available():
        pytest.skip("chromium, chromedriver or selenium not installed")
    store = Store(tmp_path / "store.db")
    [path] = write_html_reports(store, [adammeme_run(store, "adam", tmp_path / "adam")], tmp_path / "html")
    store.close()
    driver = start_driver()
    try:
        driver.set_window_size(760, 900)
        open_page(driver, path)
        lines = driver.execute_script(
            "return [...document.querySelectorAll('table.sortable')[0].querySelectorAll('td.num')].map(td => {"
            " const r = document.createRange(); r.selectNodeContents(td);"
            " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; });")
        assert lines and all(n == 1 for n in lines), lines
        wrap = driver.execute_script("return getComputedStyle(document.querySelector('.facts dd')).overflowWrap")
        assert wrap == "break-word"
    finally:
        driver.quit()


# --------------------------------------------------------------------------------------------------
# The questions export: whose answers, typed lists, a timestamp
# --------------------------------------------------------------------------------------------------


def test_the_questions_export_names_the_model_and_types_its_columns(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    import csv
    import io

    import pyarrow as pa

    from memegauge.testing.server import start_server
    from helpers.runs import QA_MODEL

    with start_server() as server:
        w = world(tmp_path, server.base_url)
        assert w.cli("qa", "eval", "--data", str(w.qa_data), "--images", str(w.qa_images), "--model", QA_MODEL,
                     "--run", "qa") == 0
    out = tmp_path / "questions.parquet"
    assert w.cli("export", "qa", "--table", "questions", "--format", "parquet", "--out", str(out)) == 0
    table = pq.read_table(out)
    assert table.column("model").to_pylist() == [QA_MODEL] * table.num_rows
    assert table.schema.field("options").type == pa.list_(pa.string())
    assert table.schema.field("gold").type == pa.list_(pa.int64())
    assert table.schema.field("run_created").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("correct").type == pa.bool_()
    capsys.readouterr()
    assert w.cli("export", "qa", "--table", "questions", "--format", "csv") == 0
    first = next(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert first["model"] == QA_MODEL
    assert json.loads(first["options"]) == table.column("options")[0].as_py()  # CSV: one JSON text a cell
