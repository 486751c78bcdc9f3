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
    said = " ".join(err.split())
    assert "skipping goat-bench, harmeme, ii-bench, mami, memelens (no folder of theirs in --data" in said
    page = (tmp / "suite.html").read_text()
    section = page[page.index("Skipped benchmarks"):]
    rows = section[:section.index("</table>")].split("<tr")[2:]  # after the header row
    assert len(rows) >= len(SKIPPED)
    for row in rows:
        cells = row.split("<td")[1:]
        command = cells[2]
        assert "memegauge data" in command or "mkdir" in command, row  # never an empty command cell


def _twelve(root: Path, one_class: bool) -> Path:
    """FHM's layout with 12 dev_seen items: 4 hateful and 8 not, or all 12 not hateful."""
    from test_benchmarks import fhm

    fhm(root, 12)
    lines = [json.loads(line) for line in (root / "dev_seen.jsonl").read_text().splitlines()]
    (root / "dev_seen.jsonl").write_text("".join(json.dumps({**r, "label": 0 if one_class else r["label"]}) + "\n"
                                                 for r in lines))
    return root


def test_auroc_on_twelve_items_is_computed_from_the_servers_log_probabilities_or_says_why_not(tmp_path, capsys):
    from sklearn.metrics import roc_auc_score

    from test_benchmarks import meant, truths

    both, single = _twelve(tmp_path / "both", False), _twelve(tmp_path / "single", True)
    with start_server(seed=3, style="realistic", no_logprobs=("plain",)) as server:
        (tmp_path / "models.yaml").write_text("".join(
            f"{m}: {{backend: openai, model: {m}, base_url: {server.base_url}}}\n" for m in ("tsrv", "plain")))
        for folder, run in ((both, "both"), (single, "single")):
            code, out, err = _cli(tmp_path, capsys, "eval", "fhm", "--model", "tsrv", "--model", "plain", "--data",
                                  str(folder), "--split", "dev_seen", "--run", run, "--out",
                                  str(tmp_path / f"{run}.csv"))
            assert code == 0, err
            if run == "both":
                assert "one class only" not in out and "not computed: no log-probabilities" in out
            else:
                assert "not computed: one class only" in out and "all gold 'no'" in out
        found = truths(server, "tsrv")
    rows = {(r["metric"]): r for r in csv.DictReader(io.StringIO((tmp_path / "both.csv").read_text()))}
    _, exported, _ = _cli(tmp_path, capsys, "export", "both-tsrv", "--table", "answers", "--format", "jsonl")
    answers = [json.loads(line) for line in exported.splitlines()]
    with_p = [(a["gold"] == "yes", meant(found, a["prompt"])["p_yes"]) for a in answers
              if meant(found, a["prompt"])["p_yes"] is not None]
    assert len(with_p) >= 9 and {y for y, _ in with_p} == {True, False}
    assert float(rows["auroc"]["tsrv"]) == pytest.approx(roc_auc_score(*zip(*with_p, strict=True)), rel=1e-6)
    assert int(rows["auroc"]["tsrv_n"]) == len(with_p) and rows["auroc"]["tsrv_ci95_lo"] != ""
    assert rows["auroc"]["plain"] == "" and "no log-probabilities" in rows["auroc"]["plain_note"]
    assert "--max-logprobs" in rows["auroc"]["plain_note"]  # the server flag that keeps them
    one = {(r["metric"]): r for r in csv.DictReader(io.StringIO((tmp_path / "single.csv").read_text()))}
    assert one["auroc"]["tsrv"] == "" and one["auroc"]["tsrv_note"].startswith("one class only")
    # the run pages: the figure where there is one, the reason where there is none (never "nothing was scored")
    for name, said in (("both-tsrv", "auroc"), ("single-tsrv", "not computed — one class only"),
                       ("both-plain", "not computed — no log-probabilities")):
        out_file = str(tmp_path / f"{name}.html")
        assert _cli(tmp_path, capsys, "report", name, "--format", "html", "--out", out_file)[0] == 0
        page = " ".join((tmp_path / f"{name}.html").read_text().split())
        assert said in page and "nothing was scored" not in page
    page = " ".join((tmp_path / "both-tsrv.html").read_text().split())
    value = float(rows["auroc"]["tsrv"])
    assert f"{100 * value:.1f}%" in page and "not computed — " not in page


def test_auroc_on_fewer_items_says_why_and_one_not_computed_says_where_and_n_0_in_every_format(tmp_path, capsys):
    """An AUROC over fewer items than were answered (answers without yes/no log-probabilities) says how many were left
    out wherever it is shown; one not computed has n 0 (no item behind it), and its reason names the benchmark,
    split, figure and model it belongs to."""
    both = _twelve(tmp_path / "both", False)
    with start_server(seed=3, style="realistic", no_logprobs=("plain",)) as server:
        (tmp_path / "models.yaml").write_text("".join(
            f"{m}: {{backend: openai, model: {m}, base_url: {server.base_url}}}\n" for m in ("tsrv", "plain")))
        said = {}
        for suffix in ("csv", "md", "html"):  # the first run makes the calls, the others read them back
            code, out, err = _cli(tmp_path, capsys, "eval", "fhm", "--model", "tsrv", "--model", "plain", "--data",
                                  str(both), "--split", "dev_seen", "--run", "both", "--out",
                                  str(tmp_path / f"both.{suffix}"))
            assert code == 0, err
            said[suffix] = out, err
    _, exported, _ = _cli(tmp_path, capsys, "export", "both-tsrv", "--table", "answers", "--format", "jsonl")
    answers = [json.loads(line) for line in exported.splitlines()]
    with_p = sum(a["p_positive"] is not None for a in answers)
    missing = sum(a["ok"] for a in answers) - with_p
    assert missing >= 2, "the seed must leave some answers without log-probabilities"  # unreadable ones
    note = f"{missing} answers without yes/no log-probabilities left out"
    shown = f"n={with_p} ({note})"
    rows = {r["metric"]: r for r in csv.DictReader(io.StringIO((tmp_path / "both.csv").read_text()))}
    assert int(rows["auroc"]["tsrv_n"]) == with_p and rows["auroc"]["tsrv_note"] == note
    assert rows["auroc"]["plain_n"] == "0" and rows["auroc"]["plain"] == ""  # not computed: no item behind it
    assert rows["accuracy"]["plain_n"] == "12"
    out, err = said["csv"]
    terminal = " ".join(out.split())
    assert shown in terminal  # the terminal table's cell
    assert "note: the server of model 'plain' returns no log-probabilities: AUROC of fhm will not be computed" \
        in " ".join(err.split())
    assert "not computed: fhm · dev_seen · hateful auroc of plain: no log-probabilities: " in terminal
    md = (tmp_path / "both.md").read_text()
    assert shown in md and "- fhm · dev_seen · hateful auroc of plain: no log-probabilities: " in md
    page = " ".join((tmp_path / "both.html").read_text().split())
    assert shown in page
    section = page[page.index(">Not computed<"):]
    section = section[:section.index("</table>")]
    assert all(f'data-sort="{cell}">{cell}</td>' in section
               for cell in ("fhm", "dev_seen", "hateful", "auroc", "plain"))
    assert "no log-probabilities: no answer carried" in section and "tsrv" not in section
    # each run's own report: Markdown's n column, CSV's note, and the run page
    code, md, _ = _cli(tmp_path, capsys, "report", "both-tsrv", "--format", "md")
    assert code == 0 and f"| {with_p} ({note}) |" in md
    code, text, _ = _cli(tmp_path, capsys, "report", "both-tsrv", "--format", "csv")
    run_rows = list(csv.DictReader(io.StringIO(text)))
    assert code == 0 and run_rows[0]["auroc_note"] == note and run_rows[0]["auroc_n"] == str(with_p)
    code, md, _ = _cli(tmp_path, capsys, "report", "both-plain", "--format", "md")
    assert code == 0 and "| not computed: no log-probabilities | 0 |" in md
    code, text, _ = _cli(tmp_path, capsys, "report", "both-plain", "--format", "csv")
    assert code == 0 and list(csv.DictReader(io.StringIO(text)))[0]["auroc_n"] == "0"
    code, _, _ = _cli(tmp_path, capsys, "report", "both-tsrv", "--format", "html", "--out", str(tmp_path / "run.html"))
    assert code == 0
    assert f"{with_p} ({note})" in " ".join((tmp_path / "run.html").read_text().split())


def _one_command(line: str) -> None:
    """A fix line: one command a shell runs as pasted (words, then perhaps a `#` comment); no prose in it."""
    import shlex

    command = line.strip().split("  # ", 1)[0]
    words = shlex.split(command)
    assert words and words[0] in ("memegauge", "mkdir", "pip"), line
    assert not {"&&", ";", "||"} & set(words) and "`" not in line and "(" not in command and "," not in command, line


def test_every_fix_line_is_one_pasteable_command_with_the_prose_outside(tmp_path, monkeypatch, capsys):
    import re

    from memegauge.benchmarks.kit import cli as eval_cli
    from memegauge.benchmarks.kit.entries import eval_entries
    from memegauge.data import store
    from memegauge.data.catalogue import entries
    from memegauge.types import InputError

    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data-dir"))
    names = list(entries())
    assert {"fhm", "mami", "harmeme", "memeqa"} <= set(names)
    for name in names:  # install, reinstall (after a failed verify), and what `eval` and `data get` print
        for line in store.get_lines(name) + store.get_lines(name, fresh=True) + store.reinstall_lines(name):
            _one_command(line)
    # a copy whose last verify failed (NOT checked): the refusal's fix holds its commands one per line
    monkeypatch.setattr(store, "missing_sources", lambda name: [])
    monkeypatch.setattr(store, "read_state", lambda name: {"verify_failed": {"at": "2026-11-28", "problems": 2}})
    for name in ("fhm", "mami", "goat-bench"):
        with pytest.raises(InputError) as refused:
            store.installed_dir(name)
        commands = [line for line in refused.value.fix.splitlines() if line.startswith("    ")]
        assert commands[0] == f"    memegauge data remove {name}" and len(commands) >= 2
        for line in commands:
            _one_command(line)
        assert "--allow-unchecked" in refused.value.fix.splitlines()[-1]  # the prose on its own line
    monkeypatch.undo()
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data-dir"))
    # `eval --list` and a `--data` folder lacking a benchmark: the commands under the line, one a line
    assert main(["eval", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert any("mami" in line and line.endswith("not installed; install with:") for line in listed)
    assert [line for line in listed if line.startswith("    ")]
    for line in listed:
        if line.startswith("    ") and not line.lstrip().startswith("# "):  # a command's comment: the line before
            _one_command(line)
    for entry in eval_entries():
        for line in eval_cli._no_folder(entry, tmp_path / "suite" / entry.name).splitlines()[1:]:
            _one_command(line)
    # the source: no backtick span holds a command with `&&`, a second command, or prose in parentheses
    root = Path(eval_cli.__file__).parents[2]
    found = []
    for path in root.rglob("*.py"):
        text = re.sub(r"\{[^{}\n]*\}", "{}", path.read_text(encoding="utf-8"))  # f-string fields as {}
        for span in re.findall(r"`(?:memegauge|pip) [^`\n]*`", text):
            if "&&" in span or re.search(r"\s\(|, then ", span):
                found.append(f"{path.relative_to(root)}: {span}")
        found += [f"{path.relative_to(root)}: {m}" for m in re.findall(r"`\{[^`\n]*_lines?\(", path.read_text())]
    assert not found, found


def test_every_run_command_takes_the_run_options_from_clikits_one_definition():
    """`--run NAME`, `-c/--config PATH`, `--dry-run`, `--budget USD`, `-o/--set KEY=VALUE` read alike in every run
    command (clikit's definitions: one metavar and flag set), each keeping its own words for its default."""
    from memegauge.cli import command_group

    def walk(group, path=()):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):  # a group (typer's own click classes: no isinstance)
                if command.callback is not None and command.params:
                    yield (*path, name), command
                yield from walk(command, (*path, name))
            else:
                yield (*path, name), command

    shapes = {"--run": ({"--run"}, "NAME"), "--config": ({"-c", "--config"}, "PATH"),
              "--dry-run": ({"--dry-run"}, None), "--budget": ({"--budget"}, "USD"),
              "--set": ({"-o", "--set"}, "KEY=VALUE")}
    seen: dict[str, list[str]] = {flag: [] for flag in shapes}
    for path, command in walk(command_group()):
        for param in command.params:
            for flag, (flags, metavar) in shapes.items():
                if flag in param.opts or (flag == "--config" and "-c" in param.opts):
                    assert set(param.opts) | set(param.secondary_opts) == flags, (path, param.opts)
                    if metavar:
                        assert param.metavar == metavar, (path, flag, param.metavar)
                    seen[flag].append(" ".join(path))
    for name in ("adam", "arena", "qa eval", "qa build", "eval"):
        assert name in seen["--run"] and name in seen["--dry-run"] and name in seen["--set"], name
    assert {"adam", "arena", "qa eval", "qa build", "qa finetune", "eval"} <= set(seen["--config"])
    assert {"qa score", "import adammeme"} <= set(seen["--run"])
    assert "profile" in seen["--budget"] and "profile" in seen["--dry-run"]
    helps = {" ".join(p): {o: param.help for param in c.params for o in param.opts}
             for p, c in walk(command_group())}
    assert "adam-<targets>-<memes>-<hash>" in helps["adam"]["--run"]  # each command's own words kept
    assert "EvalConfig" in helps["qa eval"]["--config"]


@pytest.mark.slow  # a real browser
def test_the_suite_page_and_memeqas_run_page_fit_a_1200_pixel_window(suite, capsys):
    """MemeQA's twenty-odd published systems once made its suite table 5,209 px wide: now a compact column and
    tables of their own (a row per system, at most 7 tasks a table), so nothing scrolls sideways at 1200 px."""
    from memegauge.testing.browser import available, start_driver

    if not available():
        pytest.skip("chromium, chromedriver or selenium not installed")
    tmp, folder = suite
    models = ("qwen2-vl-7b-instruct", "llava-onevision-qwen2-7b")  # names as long as real ones
    with start_server(seed=4, style="realistic") as server:
        (tmp / "models.yaml").write_text("".join(f"{m}: {{backend: openai, model: {m}, base_url: {server.base_url}}}\n"
                                                 for m in models))
        code, _, err = _cli(tmp, capsys, "eval", "--suite", "memes", "--model", models[0], "--model", models[1],
                            "--data", str(folder), "--split", "fhm=test_seen", "--split", "memeqa=none-minus/test",
                            "--out", str(tmp / "suite.html"))
    assert code == 4, err
    assert _cli(tmp, capsys, "report", f"memeqa-eval-{models[0]}-none-minus-test", "--format", "html", "--out",
                str(tmp / "qa.html"))[0] == 0
    page = (tmp / "suite.html").read_text()
    assert "published figures (accuracy, tasks 1–7 of 12)" in page and "GPT-4o (zero-shot)" in page
    driver = start_driver(width=1200)
    try:
        for name in ("suite.html", "qa.html"):
            driver.get((tmp / name).as_uri())
            width = driver.execute_script("return window.innerWidth")
            assert width == 1200
            assert driver.execute_script("return document.documentElement.scrollWidth") <= width, name
            wider = driver.execute_script("""return Array.from(document.querySelectorAll('table'))
                .filter(t => t.scrollWidth > t.parentElement.clientWidth)
                .map(t => [t.closest('section').querySelector('h2').textContent, t.scrollWidth])""")
            assert wider == [], (name, wider)
    finally:
        driver.quit()


def test_the_views_compare_form_offers_benchmark_runs_of_any_benchmarks_together(suite, capsys):
    """`compare` makes one suite leaderboard of MemeQA's and the kit's eval runs: the view's form offers them in one
    group (a MemeQA scoring run, not an eval run, stays with its method) and its /compare serves that leaderboard."""
    import re
    import threading
    import urllib.request
    from urllib.parse import urlencode

    from memegauge.engine import Store
    from memegauge.report.cli import store_server

    tmp, folder = suite
    with start_server(seed=4, style="realistic") as server:
        _models(tmp, server.base_url)
        assert _eval(tmp, folder, capsys)[0] == 4
    questions = json.loads((folder / "memeqa" / "none-minus" / "dev.json").read_text())
    (tmp / "p.jsonl").write_text("".join(json.dumps({"id": q["id"], "prediction": "A"}) + "\n" for q in questions))
    assert _cli(tmp, capsys, "qa", "score", "--data", str(folder / "memeqa"), "--predictions", str(tmp / "p.jsonl"),
                "--run", "scored")[0] == 0
    store = Store(tmp / "s.db")
    served = store_server(store)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{served.server_address[1]}"
    try:
        page = urllib.request.urlopen(base + "/").read().decode()
        groups = dict(re.findall(r"<legend>(.*?)</legend>(.*?)</fieldset>", page, re.S))
        together = groups["benchmark runs (eval: any benchmarks together, as one suite leaderboard)"]
        evals = [r["name"] for r in store.list_runs() if r["name"] != "scored"]
        assert len(evals) == 2 and all(f'value="{name}"' in together for name in evals)
        assert 'value="scored"' in groups["memeqa"] and 'value="scored"' not in together
        compared = urllib.request.urlopen(base + "/compare?" + urlencode([("runs", n) for n in evals])).read().decode()
        assert "memeqa · none-minus/test" in compared and "fhm · test_seen" in compared
    finally:
        served.shutdown()
        served.server_close()
        store.close()


def test_a_figure_on_one_item_keeps_its_95_interval_and_n_in_the_leaderboard(tmp_path, capsys):
    """`--limit 1`: accuracy is 0% or 100% of one item, shown with Wilson's interval ([0, 79.3] or [20.7, 100])
    and n=1 in the terminal and Markdown, never "(too few items, n=1)" alone (a bootstrap figure, macro-F1, still
    says it cannot be bounded from one item)."""
    folder = _twelve(tmp_path / "fhm", False)
    with start_server(seed=2) as server:
        _models(tmp_path, server.base_url)
        code, out, err = _cli(tmp_path, capsys, "eval", "fhm", "--model", "tsrv", "--data", str(folder), "--split",
                              "dev_seen", "--limit", "1", "--run", "one", "--out", str(tmp_path / "one.md"))
    assert code == 0, err
    [accuracy] = [line for line in out.splitlines() if "│ accuracy " in line]
    assert "too few items" not in accuracy and "n=1" in accuracy
    assert ("0.0% [0.0, 79.3] n=1" in out) != ("100.0% [20.7, 100.0] n=1" in out)
    md = (tmp_path / "one.md").read_text()
    cells = ("0.0% [0.0, 79.3] n=1", "100.0% [20.7, 100.0] n=1")
    assert any(f"| hateful | accuracy | {cell} |" in md for cell in cells)
