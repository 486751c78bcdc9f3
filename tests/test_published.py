"""The papers' published figures (the `published:` blocks of the benchmark YAMLs): each one carries the address of
the source it was read in, quotes the passage holding its value, and names its split, task, metric and n (or says
that the source states none); the leaderboard sets it beside ours only on the same split, task line and metric; and
docs/benchmarks.md's table of them is the YAMLs' own."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from memegauge.benchmarks.kit.entries import eval_entries
from memegauge.benchmarks.kit.family import benchmarks
from test_benchmarks import cli, mami, memelens, world  # noqa: F401  (world: the fixture, used by name)

ROOT = Path(__file__).resolve().parents[1]
LINE_METRICS = {"accuracy", "macro_f1", "auroc", "type_weighted_f1"}  # the figures a task's leaderboard line shows
GROUP_METRICS = {"accuracy", "macro_f1"}
COUNTED = ("goat-bench", "memelens")  # docs/benchmarks.md counts their figures rather than listing each


def _figures():
    return [(spec, p) for spec in benchmarks() for p in spec.published]


def _numbers(passage: str) -> set[float]:
    """Every number a quoted passage writes (``84.7%``, ``80.9``, ``0.834``, ``.787``), as written."""
    return {float(n) for n in re.findall(r"(?<![\d.])(\d*\.\d+|\d+)(?![\d.])", passage)}


def test_every_published_figure_carries_its_address_split_metric_and_n():
    from memegauge.report.leaderboard import published_cell

    figures = _figures()
    assert {spec.name for spec, _ in figures} == {"fhm", "goat-bench", "ii-bench", "mami", "memelens"}
    for spec, p in figures:
        where = (spec.name, p.task, p.system, p.metric)
        assert re.search(r"https://\S+", p.source), where  # an address a reader can open
        quoted = re.findall(r'"([^"]+)"', p.source)  # the passage holding the value, as the source writes it
        assert any(p.value in n or round(p.value * 100, 6) in {round(x, 6) for x in n}
                   for n in map(_numbers, quoted)), where
        assert p.split in spec.splits, where  # a split this benchmark runs
        task, _, group = p.task.partition(": ")
        assert task in spec.tasks, where
        if group:  # a group value's line, `task: field=value`, of one of the task's group fields
            field, _, value = group.partition("=")
            assert field in spec.tasks[task].groups and value, where
            assert p.metric in GROUP_METRICS, where
        else:
            assert p.metric in LINE_METRICS & {*spec.tasks[task].metrics, "accuracy", "macro_f1"}, where
        assert 0 <= p.value <= 1, where  # a fraction
        assert p.n is None or (isinstance(p.n, int) and p.n > 0), where
        cell = published_cell(p)  # what every format shows beside it: the paper's n, or that it states none
        assert (f"n={p.n}" in cell) if p.n is not None else ("n not stated" in cell), (where, cell)


def test_figures_typed_from_memory_stay_out_and_the_sourced_ones_are_in():
    """MAMI's winning sub-task A score was once listed from memory and removed; it is back only as read in the
    winning team's abstract (ACL Anthology), beside its sub-task B score, which the organisers rank by weighted F1."""
    found = {(spec.name, p.task, p.metric, p.value) for spec, p in _figures()}
    assert ("mami", "misogynous", "macro_f1", 0.834) in found
    assert ("mami", "subtypes", "type_weighted_f1", 0.731) in found
    assert not {round(v, 4) for *_, v in found} & {0.8265, 0.7141, 0.6506, 0.7397}  # FHM's, never confirmed
    memelens = {(t, m, v) for name, t, m, v in found if name == "memelens"}
    assert ("classify: config=Harmful_en__HarMeme", "accuracy", 0.622) in memelens
    assert ("classify: config=Harmful_en__HarMeme", "macro_f1", 0.467) in memelens
    assert not any(t == "classify" for t, _, _ in memelens)  # the card's overall figures are pooled unsaid: not shown


def test_the_leaderboard_entry_gives_a_figure_only_for_its_own_split_task_line_and_metric():
    entry = {e.name: e for e in eval_entries()}
    harmeme_config = "classify: config=Harmful_en__HarMeme"
    shown = entry["memelens"].published("test", harmeme_config, "accuracy")
    assert {(p.system, p.value, p.n) for p in shown} == {
        ("MemeLens-VLM (fine-tuned on all configs)", 0.622, None),
        ("Qwen3-VL-8B seq-classification (fine-tuned per config)", 0.590, None)}
    assert entry["memelens"].published("validation", harmeme_config, "accuracy") == []  # another split
    assert entry["memelens"].published("test", "classify", "accuracy") == []  # the overall line: none shown
    assert entry["memelens"].published("test", "classify: language=en", "accuracy") == []  # another group
    assert [p.value for p in entry["mami"].published("test", "subtypes", "type_weighted_f1")] == [0.731, 0.710]
    assert entry["mami"].published("test", "subtypes", "macro_f1") == []  # B is scored by weighted F1, not macro
    assert entry["mami"].published("train", "misogynous", "macro_f1") == []
    goat = {p.system: p.value for p in entry["goat-bench"].published("test", "hatefulness", "macro_f1")}
    assert len(goat) == 11 and goat["GPT-4V"] == 0.7128 and goat["LLaVA-1.5 (13B)"] == 0.6140
    assert entry["goat-bench"].published("test", "harmfulness", "accuracy")[2].value == 0.6670  # LLaVA-1.5's
    assert entry["harmeme"].published("harm-c/test", "harmful", "macro_f1") == []  # its tables were not readable


def _docs_table() -> list[list[str]]:
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    section = text[text.index("## Published figures"):text.index("## Adding a benchmark")]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| `")]
    return rows


def test_the_docs_table_of_published_figures_is_the_yamls_own():
    """docs/benchmarks.md lists every published figure (benchmark, split, task, metric, system, value, n) but
    GOAT-Bench's and MemeLens' (110 and 36: it counts them); each row is one of the YAMLs', and each YAML figure is
    a row."""
    def percent(value: float) -> str:
        return f"{100 * value:.1f}%"

    wanted = {(f"`{spec.name}`", f"`{p.split}`", f"`{p.task}`", p.metric, p.system, percent(p.value),
               str(p.n) if p.n is not None else "not stated")
              for spec, p in _figures() if spec.name not in COUNTED}
    rows = _docs_table()
    assert {tuple(r[:7]) for r in rows} == wanted
    assert all(re.search(r"https://", r[7]) for r in rows)  # each row names its source's address
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    for name in COUNTED:
        count = sum(spec.name == name for spec, _ in _figures())
        assert f"`{name}` lists {count} figures" in text


@pytest.mark.slow  # two benchmarks through eval and the CSV leaderboard: several seconds
def test_the_csv_leaderboard_sets_the_published_figures_beside_ours_on_the_same_line_only(world):  # noqa: F811
    tmp, _ = world
    data = tmp / "data"
    memelens(data / "memelens")
    mami(data / "mami")
    cli(tmp, "eval", "memelens", "mami", "--model", "tsrv", "--split", "memelens=test", "--split", "mami=test",
        "--data", str(data), "--out", str(tmp / "board.csv"))
    rows = {(r["benchmark"], r["split"], r["task"], r["metric"]): r
            for r in csv.DictReader(io.StringIO((tmp / "board.csv").read_text()))}
    line = rows[("memelens", "test", "classify: config=Harmful_en__HarMeme", "accuracy")]
    assert float(line["published: MemeLens-VLM (fine-tuned on all configs)"]) == pytest.approx(0.622)
    assert line["tsrv"] != ""  # ours, on the same line
    for other in (("memelens", "test", "classify: config=Hateful_en_FHM", "accuracy"),
                  ("memelens", "test", "classify", "accuracy")):
        assert rows[other]["published: MemeLens-VLM (fine-tuned on all configs)"] == "", other
    b = rows[("mami", "test", "subtypes", "type_weighted_f1")]
    assert float(b["published: SRCB (1st of SemEval-2022 Task 5, sub-task B)"]) == pytest.approx(0.731)
    assert rows[("mami", "test", "subtypes", "macro_f1")]["published: SRCB (1st of SemEval-2022 Task 5, sub-task B)"] \
        == ""
    assert float(rows[("mami", "test", "misogynous", "macro_f1")][
        "published: SRCB (1st of SemEval-2022 Task 5, sub-task A)"]) == pytest.approx(0.834)


def test_every_published_system_has_a_readable_label():
    """GOAT-Bench's Table 2 writes "GPT-4V (-)" (its size column left blank): shown as "GPT-4V", no label carries an
    empty or dash-only parenthesis."""
    systems = {p.system for _, p in _figures()}
    assert "GPT-4V" in systems and not [s for s in systems if re.search(r"\(\s*[-–]?\s*\)", s)]
