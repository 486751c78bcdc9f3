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
