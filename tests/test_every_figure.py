"""Every figure a user sees with its 95% interval and n (issue 34, part B): the multi-model MemeQA
tables, Table 4, the demo screen, Arena's per-dimension tables and `arena rank`, People vs judges,
a rate at 0 of n, `to_pandas` columns, and `compare` naming what differs between runs."""

from __future__ import annotations

import json

import pytest

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.models.scripted import register_script
from memegauge.report import build_report
from memegauge.report import intervals as ci
from helpers.memeqa_data import make_dataset


@pytest.fixture
def dataset(tmp_path):
    return make_dataset(tmp_path)


def _scripted_models(tmp_path, replies: dict) -> str:
    import yaml

    for name, reply in replies.items():
        register_script(name, lambda request, reply=reply: reply)
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({n: {"backend": "scripted", "model": n} for n in replies}))
    return str(path)


def _shown(fig) -> str:
    """How the tables write a rate with its interval: "37.5 [13.7, 69.4]" (in %)."""
    lo, hi = fig["ci95"]
    return f"{100 * fig['value']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


# ---- MemeQA: the multi-model tables and Table 4 ----------------------------------------------------

def test_qa_eval_of_several_models_shows_each_accuracy_with_its_interval_and_n(tmp_path, dataset, capsys):
    data, images = dataset
    models = _scripted_models(tmp_path, {"qa-ci-a": "A", "qa-ci-b": "The answer is (b)."})
    db = tmp_path / "s.db"
    capsys.readouterr()
    assert main(["--store", str(db), "--models", models, "qa", "eval", "--data", str(data), "--images",
                 str(images), "--version", "none-minus", "--split", "dev", "--model", "qa-ci-a,qa-ci-b"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    store = Store(db)
    for run in store.list_runs():
        report = build_report(store, run["name"])
        found = report["intervals"]
        assert _shown(found["micro"]) + f" (n={found['micro']['n']})" in printed
        kind, fig = next((t, f) for t, f in found["accuracy"].items() if f["ci95"])
        assert _shown(fig) + f" (n={report['n'][kind]})" in printed


def test_a_model_wrong_everywhere_gets_a_macro_interval_and_parse_failures_their_n(tmp_path, dataset, capsys):
    """An all-unreadable model (0% macro, 100% parse failures) beside a readable one: its macro has the
    Wilson interval on its memes, not "no spread", and every parse-failures cell carries its (n=…)."""
    data, images = dataset
    models = _scripted_models(tmp_path, {"qa-zero": "I cannot tell.", "qa-some": "A"})
    db = tmp_path / "s.db"
    capsys.readouterr()
    main(["--store", str(db), "--models", models, "qa", "eval", "--data", str(data), "--images",
          str(images), "--version", "none-minus", "--split", "dev", "--model", "qa-zero,qa-some"])
    printed = " ".join(capsys.readouterr().out.split())
    assert "no spread" not in printed
    store = Store(db)
    for run in store.list_runs():
        found = build_report(store, run["name"])["intervals"]
        for name in ("macro", "parse_failure_rate"):
            assert found[name]["ci95"] is not None, name
            assert _shown(found[name]) + f" (n={found[name]['n']})" in printed, name
    zero = next(r for r in (build_report(store, run["name"]) for run in store.list_runs())
                if r["model"] == "qa-zero")
    assert zero["intervals"]["macro"]["value"] == 0 and zero["intervals"]["macro"]["method"] == "wilson-clustered"


def test_qa_score_of_several_files_shows_each_accuracy_with_its_interval_and_n(tmp_path, dataset, capsys):
    data, _ = dataset
    items = json.loads((data / "none-minus" / "dev.json").read_text())
    paths = []
    for name, letter in (("always-a", "A"), ("always-b", "B")):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": i["id"], "prediction": letter}) + "\n" for i in items))
        paths += ["--predictions", str(path)]
    db = tmp_path / "s.db"
    capsys.readouterr()
    assert main(["--store", str(db), "qa", "score", "--data", str(data), "--version", "none-minus", "--split",
                 "dev", *paths, "--run", "sc"]) == 0
    out = capsys.readouterr().out
    print(out)
    printed = " ".join(out.split())
    for name in ("sc-always-a", "sc-always-b"):
        found = build_report(Store(db), name)["intervals"]
        assert _shown(found["micro"]) + f" (n={found['micro']['n']})" in printed
        assert _shown(found["parse_failure_rate"]) in printed or "no spread" in printed


def test_newcombe_paired_difference_matches_the_published_example_and_is_never_zero_width():
    def pairs(a, b, c, d):  # Newcombe's 2×2 counts: both right, first only, second only, neither
        return [1] * (a + b) + [0] * (c + d), [1] * a + [0] * b + [1] * c + [0] * d

    # Newcombe (1998), Statistics in Medicine 17:2635, Table II example (a), method 10: 0.0569 to 0.3404
    fig = ci.paired_difference(*pairs(36, 12, 2, 0))
    assert fig["value"] == pytest.approx(0.2) and fig["ci95"] == pytest.approx([0.0569, 0.3404], abs=5e-5)
    same = ci.paired_difference(*pairs(0, 0, 0, 4))  # four pairs, all wrong twice: 0 [−49.0%, 49.0%]
    assert same["value"] == 0.0 and same["ci95"] == pytest.approx([-0.48989, 0.48989], abs=1e-5)
    agree = ci.paired_difference(*pairs(4, 0, 0, 4))  # every pair agrees, half right: not [0, 0]
    lo, hi = agree["ci95"]
    assert agree["value"] == 0.0 and lo < -0.1 and hi > 0.1


def test_qa_compare_shows_every_table4_figure_with_its_interval(tmp_path, dataset, capsys):
    data, _ = dataset
    db = str(tmp_path / "t4.db")
    for version, name in (("none-minus", "minus"), ("none-plus", "plus")):
        items = json.loads((data / version / "dev.json").read_text())
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": i["id"], "prediction": "A"}) + "\n" for i in items))
        assert main(["--store", db, "qa", "score", "--data", str(data), "--version", version, "--split", "dev",
                     "--predictions", str(path), "--run", name]) == 0
    capsys.readouterr()
    assert main(["--store", db, "qa", "compare", "minus", "plus", "--json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert main(["--store", db, "qa", "compare", "minus", "plus"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    shown = 0
    for cell in cells.values():
        for key in ("none_minus", "none_plus", "difference"):
            fig = cell["intervals"][key]
            assert fig["value"] == cell[key] and fig["n"] == cell["n"]
            if fig["ci95"]:
                lo, hi = fig["ci95"]
                assert lo <= fig["value"] <= hi and lo < hi
                assert _shown(fig) in printed
                shown += 1
    assert shown >= 6 and "Newcombe" in printed


# ---- People vs judges: MemeQA, and a rate at 0 of n --------------------------------------------------

def test_people_vs_judges_memeqa_rates_have_wilson_intervals_and_macro_and_model_figures_have_theirs(store):
    from helpers.synthetic import memeqa_run
    from memegauge.rating.items import run_items
    from memegauge.rating.server import RatingApp
    from memegauge.report import run_header
    from memegauge.report.html import to_html

    memeqa_run(store, "qa", questions=16)  # 4 types × 4 questions, one picture each
    run = {**run_header(store, "qa").as_dict(), "id": store.run_row("qa")["id"]}
    items = run_items(store, run, 16)
    app = RatingApp(store, run, items, "ana")
    wrong_type = items[0].page["type"]
    for n, item in enumerate(items):
        gold = store.get_record(run["id"], "question", item.source)["gold"]
        wrong = [(gold[0] + 1) % len(item.page["options"])]
        app.vote(n, {"answer": wrong if item.page["type"] == wrong_type else gold})
    answers = build_report(store, "qa")["people_vs_judges"]["answers"]
    ana, model = answers["human_accuracy"]["ana"], answers["model_on_same_questions"]["ana"]
    # 0 of 4: Wilson [0, z²/(4 + z²)] = [0, 0.4899], not the bootstrap's "0.0% [0.0%, 0.0%]"
    assert ana[wrong_type]["value"] == 0.0 and ana[wrong_type]["n"] == 4
    assert ana[wrong_type]["ci95"] == pytest.approx([0.0, 0.48990], abs=1e-5)
    right = next(t for t in ana if t not in (wrong_type, "macro"))  # 4 of 4: [1 − 0.4899, 1]
    assert ana[right]["ci95"] == pytest.approx([0.51010, 1.0], abs=1e-5)
    assert ana["macro"]["value"] == pytest.approx(0.75) and ana["macro"]["n"] == 16
    lo, hi = ana["macro"]["ci95"]  # the report's macro interval (cluster bootstrap over the pictures)
    assert lo <= 0.75 <= hi and lo < hi
    questions = {q["id"]: q for q in store.records(run["id"], "question")}
    for kind, fig in model.items():
        if kind == "macro":
            assert fig["n"] == sum(q["correct"] is not None for q in questions.values())
            continue
        scored = [q for q in questions.values() if q["type"] == kind and q["correct"] is not None]
        assert fig["n"] == len(scored) and fig["value"] == pytest.approx(
            sum(bool(q["correct"]) for q in scored) / len(scored))
        assert fig["ci95"] is not None or fig["note"]
    assert "0.0% [0.0%, 49.0%]" in to_html(store, build_report(store, "qa"))


def test_a_bootstrap_whose_resamples_cannot_differ_gives_no_zero_width_interval():
    import numpy as np

    from memegauge.rating import stats

    constant = np.zeros(4)
    assert stats.bootstrap(lambda idx: float(constant[idx].mean()), 4, seed=0) is None
    varied = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    lo, hi = stats.bootstrap(lambda idx: float(varied[idx].mean()), 5, seed=0)
    assert lo < 0.6 < hi


# ---- the demo screen -------------------------------------------------------------------------------

def test_the_demo_screen_shows_its_agreement_with_a_wilson_interval_and_n(store, tmp_path, capsys):
    import asyncio

    from helpers.models import scripted_registry
    from memegauge.memes import load_memes
    from memegauge.methods import DemoInputs
    from memegauge.report.html import to_html
    from memegauge.samples import sample_memes_path
    from memegauge.screen.stage import demo

    register_script("screen-harmful", lambda request: '{"harmful": true, "category": "race"}')
    memes = load_memes(sample_memes_path())
    inputs = DemoInputs(store=store, registry=scripted_registry("screen-harmful"), memes=memes,
                        model="screen-harmful", out_dir=tmp_path, progress=False)
    name = asyncio.run(demo(inputs))
    screen = build_report(store, name)["screen"]
    harmful = sum("harmful" in m.labels for m in memes)
    k, n = harmful, len(memes)
    assert screen["agreement_with_labels"] == pytest.approx(k / n)
    lo, hi = ci.wilson(k, n)
    fig = screen["agreement_ci95"]
    assert fig["n"] == n and fig["ci95"] == pytest.approx([float(lo), float(hi)], rel=1e-9)
    line = f"{100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (n={n} answered)"
    assert line in " ".join(capsys.readouterr().out.split())
    assert line in to_html(store, build_report(store, name))


def test_the_demo_memeqa_line_shows_its_accuracy_with_its_interval_and_n(store, tmp_path, capsys):
    """The demo's MemeQA summary line was "accuracy 0.25, random guessing 0.18": now the accuracy's
    Wilson interval (clustered by picture) and n, as every figure a user sees."""
    import asyncio

    from helpers.models import scripted_registry
    from memegauge.memes import load_memes
    from memegauge.methods import DemoInputs
    from memegauge.memeqa.demo import demo
    from memegauge.samples import sample_memes_path

    register_script("demo-qa-a", lambda request: "A")
    inputs = DemoInputs(store=store, registry=scripted_registry("demo-qa-a"), memes=load_memes(sample_memes_path()),
                        model="demo-qa-a", out_dir=tmp_path, progress=False)
    name = asyncio.run(demo(inputs))
    questions = [q for q in store.records(store.run_row(name)["id"], "question") if q.get("correct") is not None]
    fig = ci.rate([float(bool(q["correct"])) for q in questions], [q.get("img") or q["question"] for q in questions])
    captured = capsys.readouterr()
    out = " ".join((captured.out + captured.err).split())
    assert f"MemeQA demo: accuracy {ci.shown(fig, percent=True)} (n={len(questions)})" in out
    assert fig["ci95"] is not None or fig["note"] in out  # the interval, or why there is none


# ---- MemeArena: `arena rank` and the per-dimension tables ------------------------------------------

def test_arena_rank_gives_each_win_rate_its_wilson_interval_and_n(tmp_path, capsys):
    path = tmp_path / "b.jsonl"
    battles = [("x", "y", "model_a")] * 3 + [("y", "x", "model_a"), ("x", "y", "tie")] + \
        [("x", "y", "model_a", "Correctness")] * 2
    path.write_text("".join(json.dumps({"model_a": a, "model_b": b, "winner": w,
                                        **({"dimension": rest[0]} if rest else {})}) + "\n"
                            for a, b, w, *rest in battles))
    assert main(["arena", "rank", str(path), "--rounds", "20"]) == 0
    result = json.loads(capsys.readouterr().out)
    x = next(r for r in result["ranking"] if r["model"] == "x")
    assert x["battles"] == 5 and x["win_rate"] == pytest.approx(0.6)
    # 3 wins of 5: Wilson (0.6 + z²/10 ± z·sqrt(0.24/5 + z²/100)) / (1 + z²/5) = [0.2307, 0.8824]
    assert x["win_rate_ci95"]["n"] == 5 and x["win_rate_ci95"]["ci95"] == pytest.approx([0.23072, 0.88238], abs=1e-5)
    correctness = {r["model"]: r for r in result["dimensions"]["Correctness"]}
    assert correctness["y"]["win_rate_ci95"]["ci95"] == pytest.approx([0.0, 0.65762], abs=1e-5)  # 0 of 2
    assert main(["arena", "rank", str(path), "--rounds", "20", "--format", "md"]) == 0
    markdown = capsys.readouterr().out
    assert "| 60.0% [23.1, 88.2] |" in markdown and "| 0.0% [0.0, 65.8] |" in markdown


def test_the_arena_per_dimension_table_shows_ratings_and_win_rates_with_intervals_and_n(store):
    import html as html_lib

    from helpers.synthetic import arena_run
    from memegauge.report.html import to_html

    arena_run(store, "arena")
    report = build_report(store, "arena")
    page = html_lib.unescape(to_html(store, report))
    assert "Per dimension: Bradley–Terry rating [95% CI]; win rate [95% CI] (n battles)" in page
    checked = 0
    for rows in report["dimensions"].values():
        for entry in rows:
            win = entry["win_rate_ci95"]
            rate = ci.shown(win, percent=True)
            assert f"{entry['bt']:.1f} " in page and rate in page
            if win["ci95"]:
                assert f"{rate} (n={entry['battles']})" in page
                checked += 1
    assert checked


# ---- to_pandas: intervals as numeric columns ---------------------------------------------------------

def test_to_pandas_holds_every_interval_in_numeric_columns(method_runs):
    pd = pytest.importorskip("pandas")
    from memegauge.api import Result

    def result(method: str) -> Result:
        name = method_runs.names[method]
        return Result(name=name, method=method.rstrip("+"), status="done", calls=0, calls_made=0,
                      failed_calls=0, store=method_runs.store)

    expected = {"arena": {"ranking": ["bt_ci95_lo", "bt_ci95_hi", "win_rate_ci95_lo", "win_rate_ci95_hi",
                                      "win_rate_n", "memes"],
                          "dimensions": ["bt_ci95_lo", "win_rate_ci95_lo", "win_rate_ci95_hi", "win_rate_n"]},
                "adammeme": {"targets": ["failure_rate_ci95_lo", "failure_rate_ci95_hi", "failure_rate_n",
                                         "avg_score_ci95_lo", "avg_score_ci95_hi", "original_failure_rate_ci95_lo"],
                             "categories": ["failure_rate_ci95_lo", "failure_rate_ci95_hi", "avg_score_ci95_hi"]},
                "memeqa": {"accuracy": ["ci95_lo", "ci95_hi", "n"]}}
    for method, tables in expected.items():
        frames = result(method).to_pandas()
        for table, wanted in tables.items():
            frame = frames[table]
            assert set(wanted) <= set(frame.columns), (method, table)
            for column in frame.columns:  # no interval left as a list, a dict or text
                assert not frame[column].map(lambda v: isinstance(v, (list, dict))).any(), (method, table, column)
            for column in wanted:
                assert pd.api.types.is_numeric_dtype(frame[column]), (method, table, column)
    ranking = result("arena").to_pandas("ranking")
    first = build_report(method_runs.store, method_runs.names["arena"])["ranking"][0]
    assert ranking.loc[0, "win_rate_ci95_lo"] == first["win_rate_ci95"]["ci95"][0]
    assert ranking.loc[0, "bt_ci95_hi"] == first["bt_ci"][1]
    accuracy = result("memeqa").to_pandas("accuracy")
    assert (accuracy["ci95_lo"].le(accuracy["accuracy"]) | accuracy["ci95_lo"].isna()).all()


# ---- compare: runs that asked different questions ---------------------------------------------------

def test_compare_refuses_runs_that_asked_different_questions_and_names_every_difference(tmp_path, dataset,
                                                                                       capsys):
    data, images = dataset
    models = _scripted_models(tmp_path, {"qa-cmp-a": "A", "qa-cmp-b": "B"})
    db = str(tmp_path / "s.db")
    base = ["--store", db, "--models", models, "qa", "eval", "--data", str(data), "--images", str(images),
            "--split", "dev"]
    assert main([*base, "--version", "none-minus", "--model", "qa-cmp-a,qa-cmp-b", "--run", "same"]) == 0
    assert main([*base, "--version", "none-plus", "--model", "qa-cmp-a", "--run", "plus"]) == 0
    assert main([*base, "--version", "none-minus", "--model", "qa-cmp-b", "--run", "few", "--limit", "11",
                 "--types", "Visual Identification,Intent Completion", "--seed", "3"]) == 0
    capsys.readouterr()
    # the same questions, two models: one leaderboard, nothing to name
    assert main(["--store", db, "compare", "same-qa-cmp-a", "same-qa-cmp-b", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["differences"] == []
    # None− beside None+: refused, exit 2, one message naming the difference and the way out
    assert main(["--store", db, "compare", "same-qa-cmp-a", "plus"]) == 2
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert captured.out == "" and "asked different questions" in err
    assert "version: same-qa-cmp-a none-minus, plus none-plus" in err and "--allow-different" in err
    # another limit, types and seed: every difference named, in one message
    assert main(["--store", db, "compare", "same-qa-cmp-b", "few"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    for named in ("limit: same-qa-cmp-b (not set), few 11", "seed: same-qa-cmp-b 0, few 3", "types:",
                  "questions:"):
        assert named in err
    assert "model:" not in err  # the models compared are not a difference
    # asked for explicitly: ranked side by side, the differences listed with the table and in JSON
    assert main(["--store", db, "compare", "same-qa-cmp-a", "plus", "--allow-different"]) == 0
    out = capsys.readouterr().out
    assert "runs asked different questions (--allow-different): version:" in out and "overall (macro)" in out
    assert main(["--store", db, "compare", "same-qa-cmp-a", "plus", "--allow-different", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [d["key"] for d in found["differences"]] == ["version"]
    assert main(["--store", db, "compare", "same-qa-cmp-a", "few", "--allow-different", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("method,") and "limit:" in captured.err  # CSV stays a plain table


def test_compare_names_a_different_meme_set_and_seed_for_adammeme_and_the_view_refuses_too(store, tmp_path):
    import threading
    import urllib.error
    import urllib.request

    from helpers.synthetic import adammeme_run
    from memegauge.report.cli import store_server
    from memegauge.report.compare import comparison
    from memegauge.types import InputError

    adammeme_run(store, "adam-1", tmp_path / "a1", targets=("t-a",))
    adammeme_run(store, "adam-2", tmp_path / "a2", targets=("t-b", "t-c"), seed=1)
    with pytest.raises(InputError) as refused:
        comparison(store, ["adam-1", "adam-2"])
    text = str(refused.value)
    assert "memes: adam-1 " in text and "a1/memes.jsonl, adam-2 " in text and "a2/memes.jsonl" in text
    assert "seed: adam-1 0, adam-2 1" in text
    assert "targets" not in text  # different targets are what an AdamMeme comparison compares
    assert {d["key"] for d in comparison(store, ["adam-1", "adam-2"], allow_different=True)["differences"]} == {
        "memes", "seed"}
    server = store_server(store)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/compare?runs=adam-1,adam-2"
    try:
        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(url)
        assert bad.value.code == 400 and "asked different questions" in bad.value.read().decode()
        with urllib.request.urlopen(url + "&allow_different=1") as page:
            assert "asked different questions" in page.read().decode()
    finally:
        server.shutdown()
        server.server_close()


def test_compare_ranks_qa_score_runs_of_different_files_and_refuses_another_limit(tmp_path, dataset, capsys):
    data, _ = dataset
    items = json.loads((data / "none-minus" / "dev.json").read_text())
    db = str(tmp_path / "s.db")
    for name, letter, limit in (("file-a", "A", []), ("file-b", "B", []), ("file-c", "C", ["--limit", "11"])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": i["id"], "prediction": letter}) + "\n" for i in items))
        assert main(["--store", db, "qa", "score", "--data", str(data), "--version", "none-minus", "--split", "dev",
                     "--predictions", str(path), "--run", name, *limit]) == 0
    capsys.readouterr()
    assert main(["--store", db, "compare", "file-a", "file-b", "--format", "json"]) == 0  # the files compared
    assert json.loads(capsys.readouterr().out)["differences"] == []
    assert main(["--store", db, "compare", "file-a", "file-c"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "limit: file-a (not set), file-c 11" in err and "predictions" not in err
