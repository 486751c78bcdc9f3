"""The MemeQA paper's published figures: the shipped data agree with the paper's own tables (and with
themselves), and every MemeQA report shows them beside the run's figures, in JSON and in HTML."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from memegauge.engine import Store
from memegauge.memeqa.dataset import QUESTION_TYPES
from memegauge.memeqa.paper import SETTINGS, beside, paper_figures
from memegauge.memeqa.runs import eval_run
from memegauge.memeqa.config import EvalConfig
from memegauge.models.scripted import register_script
from memegauge.report import build_report
from memegauge.report.html import render

from helpers.memeqa_data import make_dataset
from helpers.models import scripted_registry

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "memeqa.txt"
ROW_NAMES = {"Visual ID": "Visual Identification", "Background ID": "Background Identification",
             "Target ID": "Target Identification", "Derivation ID": "Derivation Identification",
             "Target-Sentiment ID": "Target-Sentiment Identification",
             "Target-Action ID": "Target-Action Identification",
             "Deriv. Completion": "Derivation Completion", "Intent Completion": "Intent Completion",
             "Intent ID": "Intent Identification", "Action ID": "Conditional Action Identification",
             "Sentiment ID": "Conditional Sentiment Identification", "Macro Average": "macro"}
COLUMNS = ["LLaVA", "BLIP", "IBLIP", "Qwen", "QVQ", "GPT"]


def test_every_published_macro_but_random_is_the_mean_of_its_types():
    """A check on the copying: each model's and the humans' macro is the mean of their 11 types to
    the paper's rounding; the random column's is not (15.5 against the published 10.9)."""
    figures = paper_figures()
    types = [t.name for t in QUESTION_TYPES]
    columns = [figures.human[v] for v in figures.human]
    columns += [m for setting in SETTINGS for v in figures.models_by_setting[setting].values()
                for m in v.values()]
    assert len(columns) == 2 + 12 + 8
    for column in columns:  # each figure is rounded to 0.05 and so is the macro: 0.1 at most
        assert sum(column[t] for t in types) / 11 == pytest.approx(column["macro"], abs=0.1)
    random_mean = sum(figures.random[t] for t in types) / 11
    assert random_mean == pytest.approx(15.55, abs=0.01) and figures.random["macro"] == 10.9
    assert "15.5" in figures.notes["random"] and "10.9" in figures.notes["random"]


@pytest.mark.skipif(not PAPER.is_file(), reason="the paper text (../shared/papers) is not here")
def test_the_data_equal_the_papers_tables_2_and_3():
    text = PAPER.read_text(encoding="utf-8")
    figures = paper_figures()
    tables = {"zero-shot": text.index("Table 2:"), "fine-tuned": text.index("Table 3:")}
    for setting, end in tables.items():
        block = text[:end].rsplit("Aspect\tRand", 1)[1]
        rows = [cells for cells in (line.split("\t") for line in block.splitlines()) if cells[0] in ROW_NAMES]
        assert len(rows) == 12
        for cells in rows:
            name = ROW_NAMES[cells[0]]
            values = [re.sub(r"</?u>", "", c) for c in cells[1:]]
            assert float(values[0]) == figures.random[name]
            for index, version in enumerate(("none-minus", "none-plus")):
                chunk = values[1 + 7 * index: 8 + 7 * index]
                assert float(chunk[6]) == figures.human[version][name]
                published = figures.models_by_setting[setting][version]
                for model, cell in zip(COLUMNS, chunk[:6], strict=True):
                    assert (cell == "—" and model not in published) or \
                        float(cell) == published[model][name], (setting, version, name, model)


def test_an_eval_report_has_the_papers_figures_beside_its_own(tmp_path):
    data, images = make_dataset(tmp_path)
    register_script("qa-paper-a", lambda request: "A")
    store = Store(tmp_path / "s.db")
    name = asyncio.run(eval_run(store, scripted_registry("qa-paper-a", max_retries=1),
                                EvalConfig(data=data, images=images, version="none-plus", split="dev",
                                           model="qa-paper-a")))
    report = build_report(store, name)
    page = render(report, store)
    store.close()
    paper = report["paper"]
    assert list(paper["versions"]) == ["none-plus"] and paper["split"] == "test"
    rows = {r["type"]: r for r in paper["versions"]["none-plus"]}
    for qtype, accuracy in report["accuracy"].items():
        assert rows[qtype]["run"] == accuracy
    assert rows["macro"]["run"] == report["macro"]
    assert rows["macro"]["human"] == 0.8 and rows["macro"]["random"] == 0.109
    visual = rows["Visual Identification"]["zero-shot"]
    assert (visual["QVQ"], visual["GPT"]) == (0.764, 0.708)
    assert rows["Visual Identification"]["fine-tuned"] == {"LLaVA": 0.264, "BLIP": 0.583,
                                                           "IBLIP": 0.722, "Qwen": 0.944}
    assert "Beside the paper: zero-shot results, none-plus (Table 2, test split)" in page
    assert "Beside the paper: fine-tuned results, none-plus (Table 3, test split)" in page
    assert "90.3%" in page and "15.5" in page  # Visual ID's human figure in None+; the note


def test_beside_without_a_version_lists_both_and_no_run_column():
    paper = beside(None)
    assert list(paper["versions"]) == ["none-minus", "none-plus"]
    assert all(r["run"] is None for rows in paper["versions"].values() for r in rows)
