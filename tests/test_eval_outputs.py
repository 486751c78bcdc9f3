"""What `eval` and `report` say in every format (issues 43 and 49, review findings): `asked n of N` with each reason
a row was left out, the published figures' n, why a figure is not shown on a line, and commands never wrapped on a
terminal of 80 columns."""

from __future__ import annotations

import csv
import io
import json

from test_benchmarks import cli, harm_p, memelens, world  # noqa: F401  (world: the fixture, used by name)

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
    cli(tmp, "eval", "harmeme", "--model", "tsrv", "--split", split, "--data", str(data), "--out", str(tmp / "b.html"))
    page = " ".join((tmp / "b.html").read_text().split())
    assert "Asked n of N" in page and TARGET.split(": ", 1)[1] in page
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
    from helpers.reused_run import rerun_with

    code, said = rerun_with(tmp_path, capsys, "--limit", "3")
    assert code == 2
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


def test_a_line_without_macro_f1_says_why_in_the_terminal_and_the_csv(world):  # noqa: F811
    """MemeLens' overall line and `language=en` (two configs: two class sets) have no macro-F1: each says why (not
    computed: mixed class sets, and where the figure is given), as every other figure not computed does; a line of
    one class set (`language=hi-en`, each config) has its value."""
    tmp, _ = world
    data = tmp / "ml"
    split = memelens(data)
    done = cli(tmp, "eval", "memelens", "--model", "tsrv", "--split", split, "--data", str(data), "--out",
               str(tmp / "b.csv"))
    rows = {(r["task"], r["metric"]): r for r in csv.DictReader(io.StringIO((tmp / "b.csv").read_text()))}
    for line in ("classify", "classify: language=en"):
        found = rows[(line, "macro_f1")]
        assert found["tsrv"] == "" and found["tsrv_n"] == "0", found
        assert found["tsrv_note"].startswith("mixed class sets: these items were asked ") and "`config=`" in \
            found["tsrv_note"]
    assert rows[("classify: language=hi-en", "macro_f1")]["tsrv"] != ""
    assert rows[("classify: config=Hateful_en_FHM", "macro_f1")]["tsrv"] != ""
    terminal = " ".join(done.stdout.split())
    assert "not computed: mixed class sets" in terminal
    assert "memelens · test · classify macro_f1 of tsrv: mixed class sets: these items were asked 3 different sets" \
        in terminal
    assert "memelens · test · classify: language=en macro_f1 of tsrv: mixed class sets: these items were asked 2 " \
        in terminal


def _terminal(monkeypatch, width: int = 80) -> io.StringIO:
    """Every console of the command line as a terminal of `width` columns (as `script -qc "stty cols 80; …"` is),
    writing to the buffer returned (no colours)."""
    from rich.console import Console

    import memegauge.cli
    from memegauge import clikit

    buffer = io.StringIO()
    for name in ("out", "console", "notes"):  # one each: `--quiet` silences `notes` alone
        terminal = Console(file=buffer, width=width, force_terminal=True, color_system=None)
        assert terminal.is_terminal and terminal.width == width
        for module in (clikit, memegauge.cli):
            monkeypatch.setattr(module, name, terminal)
    return buffer


def _whole_commands(text: str) -> list[str]:
    """Each line starting (after its indentation) with `memegauge `, checked to be a whole command: one a shell runs
    as pasted, and the next line not its continuation (a comment line, prose, or another command)."""
    import shlex

    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        body = line.strip()
        if not body.startswith("memegauge "):
            continue
        assert "  # " not in body and "`" not in body, line  # its comment on the lines before it
        words = shlex.split(body)
        assert words[0] == "memegauge" and not {"&&", ";", "||"} & set(words), line
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        indent = len(line) - len(line.lstrip())
        assert not nxt.strip() or nxt.strip().startswith(("#", "memegauge ")) or len(nxt) - len(nxt.lstrip()) < \
            indent or not indent, f"{line!r} continues on {nxt!r}"
        found.append(body)
    return found


def test_at_80_columns_no_command_is_wrapped_and_comments_come_before_commands(world, monkeypatch, capsys):  # noqa: F811
    """On a terminal of 80 columns: `eval --list`, a suite's skipped benchmarks and the closing "done" line print
    each command whole on its own line (overflowing rather than broken), its shell comment on `# …` lines before
    it; the prose around them wraps."""
    from memegauge.cli import main

    tmp, _ = world
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp / "empty-data-dir"))
    buffer = _terminal(monkeypatch)
    assert main(["eval", "--list"]) == 0
    listed = buffer.getvalue()
    assert max(len(line) for line in listed.splitlines() if not line.strip().startswith(("#", "memegauge"))) <= 80
    commands = _whole_commands(listed)
    assert "memegauge data import harmeme PATH" in commands and "memegauge data get memeqa" in commands
    lines = listed.splitlines()
    at = lines.index("    memegauge data import harmeme PATH")
    assert lines[at - 2].startswith("    # PATH: your copy; the 'HarMeme Images' link of")
    assert "https://github.com/LCS2-IIITD/MOMENTA" in lines[at - 1] and lines[at - 1].startswith("    # ")
    mami_url = "https://github.com/MIND-Lab/SemEval2022-Task-5-Multimedia-Automatic-Misogyny-Identification-MAMI-"
    assert any(line.strip() == f"# {mami_url}" for line in lines)  # a URL never cut in two
    # a suite with one benchmark's release at hand: the others skipped with their commands; the run's closing line
    data = tmp / "suite"
    split = harm_p(data / "harmeme")
    buffer.seek(0)
    buffer.truncate(0)
    code = main(["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet", "eval", "--suite",
                 "memes", "--model", "tsrv", "--split", f"harmeme={split}", "--data", str(data)])
    said = buffer.getvalue()
    assert code == 4, said + str(capsys.readouterr())
    commands = _whole_commands(said)
    assert any(c.startswith("memegauge report harmeme-tsrv-harm-p_train") for c in commands) or \
        "`memegauge report harmeme-tsrv-harm-p_train" in said
    done = [line for line in said.splitlines() if line.startswith("run 'harmeme-tsrv")]
    assert done and done[0].endswith("shows it"), said  # the closing line whole: its command never cut
    assert "memegauge data import mami PATH" in commands and "memegauge data get goat-bench" in commands
    assert "# PATH: your copy; fill in the request form linked from" in said
