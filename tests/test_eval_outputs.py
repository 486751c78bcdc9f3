"""What `eval` and `report` say in every format (issues 43 and 49, review findings): `asked n of N` with each reason
a row was left out, the published figures' n, why a figure is not shown on a line, and commands never wrapped on a
terminal of 80 columns."""

from __future__ import annotations

import csv
import io
import json

from test_benchmarks import cli, harm_p, world  # noqa: F401  (world: the fixture, used by name)

HARMFUL = "harmfulness: asked 26 of 27; left out: no harm label (1)"
TARGET = ("target: asked 14 of 27; left out: not harmful (8), harmful, no target given (3), no harm label (1), "
          "not harmful (carries a target) (1)")


def test_every_format_says_asked_n_of_n_and_each_reason_a_row_was_left_out(world):  # noqa: F811
    """Harm-P train as released (27 rows, one without a harm label): the `eval` terminal output, its Markdown and
    CSV leaderboards, and `report RUN --format md` each say what was asked of how many rows, and why the rest were
    left out, with the counts."""
    tmp, _ = world
    data = tmp / "hp"
    split = harm_p(data)
    done = cli(tmp, "eval", "harmeme", "--model", "tsrv", "--split", split, "--data", str(data), "--out",
               str(tmp / "b.md"))
    terminal = " ".join(done.stdout.split())
    assert HARMFUL in terminal and TARGET in terminal, done.stdout
    markdown = (tmp / "b.md").read_text()
    assert f"- harmeme · harm-p/train · {HARMFUL}" in markdown and f"- harmeme · harm-p/train · {TARGET}" in markdown
    cli(tmp, "eval", "harmeme", "--model", "tsrv", "--split", split, "--data", str(data), "--out", str(tmp / "b.csv"))
    rows = list(csv.DictReader(io.StringIO((tmp / "b.csv").read_text())))
    by_task = {(r["task"], r["metric"]): r["tsrv_asked"] for r in rows}
    assert by_task[("harmfulness", "accuracy")] == HARMFUL.split(": ", 1)[1]
    assert by_task[("target", "macro_f1")] == TARGET.split(": ", 1)[1]
    [run] = [r["name"] for r in json.loads(cli(tmp, "runs", "--json").stdout)]
    report = cli(tmp, "report", run, "--format", "md").stdout
    assert f"- task {HARMFUL}" in report and f"- task {TARGET}" in report


def test_the_suite_csv_says_n_not_stated_where_the_paper_gives_no_n():
    """docs/benchmarks.md: where the source states no item count "every format says `n not stated`" — the CSV's
    `published: SYSTEM n` cell included (the paper's n where it gives one)."""
    from memegauge.benchmarks.kit.entries import Published
    from memegauge.report.headline import row
    from memegauge.report.leaderboard import Board, BoardLine, board_csv

    figure = row({"method": "fhm", "name": "r"}, "m", "overall (hateful)", "accuracy",
                 {"value": 0.5, "ci95": (0.4, 0.6), "n": 30, "method": "wilson"}, "rate")
    published = [Published(system="human annotators", value=0.847, source="paper", n=None),
                 Published(system="ViLBERT", value=0.62, source="paper", n=1000)]
    board = Board(title="t", models=["m"], lines=[BoardLine("fhm", "test_seen", "hateful", "accuracy",
                                                            cells={"m": figure}, published=published)])
    [row] = list(csv.DictReader(io.StringIO(board_csv(board))))
    assert row["published: human annotators n"] == "n not stated" and row["published: ViLBERT n"] == "1000"
    assert float(row["published: human annotators"]) == 0.847


def test_a_reused_run_name_says_what_differs_in_its_nested_counts_in_words(tmp_path, capsys):
    """A run name reused with another --limit: each difference by its path and values ("benchmark_rows.hateful.
    asked: stored 2, now 3"), never as cut JSON."""
    from memegauge.cli import main
    from memegauge.testing.server.app import start_server
    from test_figures_said import fhm, served_registry

    with start_server() as server:
        served_registry(tmp_path, server.base_url, ["tsrv"])
        fhm(tmp_path / "fhm", 6)
        base = ["--store", str(tmp_path / "s.db"), "--models", str(tmp_path / "models.yaml"), "--quiet", "eval",
                "fhm", "--model", "tsrv", "--data", str(tmp_path / "fhm"), "--run", "mine"]
        assert main([*base, "--limit", "2"]) == 0
        capsys.readouterr()
        assert main([*base, "--limit", "3"]) == 2
        said = " ".join(capsys.readouterr().err.split())
    assert "limit: stored 2, now 3" in said and "benchmark_rows.hateful.asked: stored 2, now 3" in said, said
    assert "{" not in said.split("different config:")[1] and '…"' not in said, said


def test_config_differences_open_nested_values_and_summarise_long_lists():
    from memegauge.engine.store import config_differences

    stored = {"limit": 40, "benchmark_rows": {"hateful": {"asked": 40, "left_out": {"beyond --limit": 0}}},
              "ids": [f"id{i}" for i in range(30)]}
    given = {"limit": 27, "benchmark_rows": {"hateful": {"asked": 27, "left_out": {"beyond --limit": 13}}},
             "ids": [f"id{i}" for i in range(20)]}
    assert config_differences(stored, given) == (
        "limit: stored 40, now 27; benchmark_rows.hateful.asked: stored 40, now 27; "
        "benchmark_rows.hateful.left_out.beyond --limit: stored 0, now 13; "
        "ids: stored a list of 30 items, now a list of 20 items")
