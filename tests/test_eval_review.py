"""`memegauge eval`'s review (issue 43, second pass): MemeQA's unreadable share in the suite leaderboard (terminal,
CSV, Markdown, HTML) with its interval and n, and exit 3 for a mostly unreadable run of any benchmark; each skipped
benchmark said once, with a command in the HTML page's command column even for a `--data` suite folder."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from helpers.memeqa_data import make_dataset
from memegauge.cli import main
from memegauge.testing.server import start_server
from test_benchmarks import fhm_release

SKIPPED = ("goat-bench", "harmeme", "ii-bench", "mami", "memelens")


def _suite_folder(root: Path) -> Path:
    """A `--data` folder holding MemeQA's release (none-minus/, none-plus/ with a test split, images/) and FHM's."""
    sample = root / "memeqa-sample"
    make_dataset(sample, memes=tuple(f"m{i}" for i in range(4)))
    folder = root / "suite"
    (folder / "memeqa").mkdir(parents=True)
    for version in ("none-minus", "none-plus"):
        shutil.copytree(sample / "data" / version, folder / "memeqa" / version)
        shutil.copy(folder / "memeqa" / version / "dev.json", folder / "memeqa" / version / "test.json")
    shutil.copytree(sample / "images", folder / "memeqa" / "images")
    fhm_release(folder / "fhm", 8)
    return folder


@pytest.fixture
def suite(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data-dir"))
    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path, _suite_folder(tmp_path)


def _models(tmp: Path, url: str) -> None:
    (tmp / "models.yaml").write_text(f"tsrv: {{backend: openai, model: tsrv, base_url: {url}, max_concurrency: 8, "
                                     "backoff_s: 0.01, backoff_max_s: 0.02}\n")


def _cli(tmp: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet", *args])
    said = capsys.readouterr()
    return code, said.out, said.err


def _eval(tmp, folder, capsys, *more: str) -> tuple[int, str, str]:
    return _cli(tmp, capsys, "eval", "--suite", "memes", "--model", "tsrv", "--data", str(folder), "--split",
                "fhm=test_seen", "--split", "memeqa=none-minus/test", *more)


def test_memeqa_rows_carry_the_unreadable_share_with_its_interval_and_n_everywhere(suite, capsys):
    tmp, folder = suite
    with start_server(seed=4, style="realistic") as server:
        _models(tmp, server.base_url)
        code, out, err = _eval(tmp, folder, capsys, "--out", "suite.csv")
        assert code == 4, err  # ran; the five other benchmarks skipped
        truths = server.stats["truths"]
        for suffix in ("md", "html"):
            assert _eval(tmp, folder, capsys, "--out", f"suite.{suffix}")[0] == 4
    _, report_json, _ = _cli(tmp, capsys, "report", "memeqa-eval-tsrv-none-minus-test", "--format", "json")
    report = json.loads(report_json)
    # the share of scored answers the server wrote unreadable (its ground truth), not what MemeGauge parsed
    unreadable = [not truths[hashlib.sha256(d["raw"].encode()).hexdigest()]["readable"] for d in report["details"]]
    share = sum(unreadable) / len(unreadable)
    rows = {(r["benchmark"], r["task"], r["metric"]): r for r in csv.DictReader(io.StringIO(
        (tmp / "suite.csv").read_text()))}
    line = rows[("memeqa", "all questions", "unreadable")]
    assert float(line["tsrv"]) == pytest.approx(share, abs=1e-9) and int(line["tsrv_n"]) == len(unreadable)
    lo, hi = float(line["tsrv_ci95_lo"]), float(line["tsrv_ci95_hi"])
    assert 0.0 <= lo <= share <= hi <= 1.0 and hi > lo  # its 95% interval (Wilson, clustered by meme)
    assert ("fhm", "hateful", "unreadable") in rows  # beside the kit's own row of the same name
    shown = f"{100 * share:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] n={len(unreadable)}"
    assert "all questions" in out and shown in out  # the terminal table
    md = (tmp / "suite.md").read_text()
    assert f"| memeqa | none-minus/test | all questions | unreadable | {shown} |" in md
    page = (tmp / "suite.html").read_text()
    assert "all questions" in page and shown in page


def test_a_mostly_unreadable_run_of_memeqa_or_of_a_kit_benchmark_exits_3_after_its_leaderboard(suite, capsys):
    tmp, folder = suite
    with start_server(seed=1, fault_rate=1.0, faults=["garbage"]) as server:
        _models(tmp, server.base_url)
        code, out, err = _eval(tmp, folder, capsys, "--out", "suite.md", "--skip-preflight")
        assert code == 3, err  # not 4 (skipped benchmarks): the figures themselves are not the model's
        assert "memeqa-eval-tsrv-none-minus-test" in err and "fhm-tsrv-test_seen" in err and "exit 3" in err
        assert "WARNING: memeqa-eval-tsrv-none-minus-test:" in out and "could not be read" in out
        assert "100.0% [" in out  # every answer unreadable, with its interval
        md = (tmp / "suite.md").read_text()
        assert "WARNING (most answers could not be read):" in md
        # each benchmark alone, as `qa eval` does for MemeQA: exit 3, the run stored and done
        code, _, err = _cli(tmp, capsys, "eval", "memeqa", "--model", "tsrv", "--data", str(folder / "memeqa"),
                            "--split", "none-minus/test", "--skip-preflight")
        assert code == 3 and "could not be read" in err
        code, _, err = _cli(tmp, capsys, "eval", "fhm", "--model", "tsrv", "--data", str(folder / "fhm"),
                            "--split", "test_seen", "--skip-preflight")
        assert code == 3 and "could not be read" in err
    _, listed, _ = _cli(tmp, capsys, "runs", "--json")
    runs = json.loads(listed)
    assert {r["status"] for r in runs} == {"done"}
    for name in (r["name"] for r in runs if r["method"] == "fhm"):
        _, md, _ = _cli(tmp, capsys, "report", name, "--format", "md")
        assert "WARNING: 4 of 4 answers could not be read" in md


def test_with_a_data_suite_folder_each_skipped_benchmark_is_said_once_with_a_command_in_the_page(suite, capsys):
    tmp, folder = suite
    with start_server(seed=4, style="realistic") as server:
        _models(tmp, server.base_url)
        code, out, err = _eval(tmp, folder, capsys, "--out", "suite.html")
    assert code == 4, err
    for name in SKIPPED:
        said = (out + err).count(f"skipped: {name}:")
        assert said == 1, (name, said)
        assert f"no folder {folder / name}" in out
    assert "skipping goat-bench, harmeme, ii-bench, mami, memelens" in " ".join(err.split())
    page = (tmp / "suite.html").read_text()
    section = page[page.index("Skipped benchmarks"):]
    rows = section[:section.index("</table>")].split("<tr")[2:]  # after the header row
    assert len(rows) >= len(SKIPPED)
    for row in rows:
        cells = row.split("<td")[1:]
        command = cells[2]
        assert "memegauge data" in command or "mkdir" in command, row  # never an empty command cell
