"""`memegauge eval` as the one front door (issue 43): MemeQA a benchmark of eval and of the `memes` suite (its runs
still MemeQA's), the suite leaderboard (a row per benchmark, split, task and metric; a column per model; the papers'
figures beside, marked published with their n; skipped benchmarks listed) in the terminal, CSV, Markdown, HTML and
`compare`; AUROC with and without log-probabilities; eval's run options. Every figure is held against the test
server's ground truth (its realistic style: answers shaped as real models write them)."""

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
from memegauge.data import catalogue
from memegauge.data.catalogue import Entry, GitHubSource
from memegauge.testing.dataserver import DataServer
from memegauge.testing.server import start_server
from test_benchmarks import expected, fhm_release, meant, truths

sklearn_metrics = pytest.importorskip("sklearn.metrics")
COMMIT = "e" * 40


def _memeqa_entry(folder: Path) -> Entry:
    """A catalogue entry named memeqa, served by a local mirror: the question folders (dev and test of both
    versions), the pictures and their texts, in the layout `qa eval --data memeqa` reads."""
    source = GitHubSource(id="sample", repo="owner/memeqa-toy", commit=COMMIT, licence="MIT", what="sample")
    return Entry(name="memeqa", title="MemeQA (test copy)", size="1 kB", licence="MIT", citation="-",
                 sources=(source,), folder=folder,
                 paths=lambda root: {"data": root / "sample" / "data", "images": root / "sample" / "images",
                                     "texts": root / "sample" / "images" / "memes.jsonl"})


@pytest.fixture
def front(tmp_path, monkeypatch, request):
    """A realistic-style test server (tsrv2's answers never carry log-probabilities), priced models, a data folder
    with MemeQA fetched from a local mirror by `data get memeqa` and FHM imported by `data import fhm`."""
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data-dir"))
    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    sample = tmp_path / "release"
    make_dataset(sample, memes=tuple(f"m{i}" for i in range(6)))
    for version in ("none-minus", "none-plus"):  # the paper's figures are on test: a test split too
        shutil.copy(sample / "data" / version / "dev.json", sample / "data" / version / "test.json")
    files = {p.relative_to(sample).as_posix(): p.read_bytes() for p in sorted(sample.rglob("*")) if p.is_file()}
    folder = tmp_path / "entry"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(
        {"sample": {p: [len(d), hashlib.sha256(d).hexdigest()] for p, d in files.items()}}))
    registered = catalogue.ENTRIES.snapshot()  # the toy MemeQA in the real one's place, in the one registry
    catalogue.ENTRIES.all()
    catalogue.ENTRIES.unregister("memeqa")
    catalogue.ENTRIES.register(_memeqa_entry(folder), "test")
    request.addfinalizer(lambda: catalogue.ENTRIES.restore(registered))
    with DataServer() as mirror:
        mirror.add_github("owner/memeqa-toy", COMMIT, files)
        assert main(["--quiet", "data", "get", "memeqa", "--mirror", mirror.url]) == 0
    fhm_release(tmp_path / "hateful_memes", 24)
    assert main(["--quiet", "data", "import", "fhm", str(tmp_path / "hateful_memes")]) == 0
    with start_server(seed=3, style="realistic", no_logprobs=("tsrv2",)) as server:
        (tmp_path / "models.yaml").write_text("".join(
            f"{n}: {{backend: openai, model: {n}, base_url: {server.base_url}, max_concurrency: 8, backoff_s: 0.01, "
            f"backoff_max_s: 0.02, price_in: 2.0, price_out: 8.0}}\n" for n in ("tsrv", "tsrv2")))
        yield tmp_path, server


def run_cli(tmp: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet", *args])
    said = capsys.readouterr()
    return code, said.out, said.err


def _report(tmp, capsys, name: str) -> dict:
    code, out, _ = run_cli(tmp, capsys, "report", name, "--format", "json")
    assert code == 0
    return json.loads(out)


def _memeqa_truth(server_truths: dict, details: list[dict]) -> dict[str, float]:
    """Per question type, the accuracy the server's answers mean (an unreadable answer is wrong), and micro."""
    hits: dict[str, list[bool]] = {}
    for d in details:
        truth = server_truths.get(hashlib.sha256(d["raw"].encode()).hexdigest())
        assert truth is not None and truth["kind"] == "choice", d["raw"]
        hits.setdefault(d["type"], []).append(bool(truth["readable"]) and truth["letters"] == d["gold"])
    out = {t: sum(h) / len(h) for t, h in hits.items()}
    every = [x for h in hits.values() for x in h]
    out["micro"] = sum(every) / len(every)
    out["macro"] = sum(v for t, v in out.items() if t != "micro") / len(hits)
    return out


def test_the_memes_suite_runs_memeqa_and_fhm_into_one_leaderboard_that_equals_the_servers_truth(front, capsys):
    tmp, server = front
    code, out, err = run_cli(tmp, capsys, "eval", "--suite", "memes", "--model", "tsrv", "--model", "tsrv2",
                             "--split", "fhm=test_seen", "--split", "memeqa=none-minus/test", "--out", "suite.csv")
    assert code == 4, err  # ran and showed the leaderboard; other benchmarks skipped (no data)
    for name in ("goat-bench", "harmeme", "ii-bench", "memelens"):  # one pasteable command per line
        assert f"skipped: {name}: data set '{name}' is not installed; install with:\n    memegauge data get {name}" \
            in out
    assert "    # PATH: your copy; " in out and "\n    memegauge data import mami PATH\n" in out  # comment first
    # MemeQA's runs are runs of its own method, named as `qa eval` names them
    code, listed, _ = run_cli(tmp, capsys, "runs", "--json")
    runs = {r["name"]: r["method"] for r in json.loads(listed)}
    assert runs == {"memeqa-eval-tsrv-none-minus-test": "memeqa", "memeqa-eval-tsrv2-none-minus-test": "memeqa",
                    "fhm-tsrv-test_seen": "fhm", "fhm-tsrv2-test_seen": "fhm"}
    board = list(csv.DictReader(io.StringIO((tmp / "suite.csv").read_text())))
    rows = {(r["benchmark"], r["split"], r["task"], r["metric"]): r for r in board if r["status"] == "measured"}
    skipped = {r["benchmark"]: r["status"] for r in board if r["status"] != "measured"}
    assert set(skipped) == {"goat-bench", "harmeme", "ii-bench", "mami", "memelens"}
    assert "memegauge data get harmeme" in skipped["harmeme"]
    every_truth = server.stats["truths"]
    for model in ("tsrv", "tsrv2"):
        # FHM: accuracy and macro-F1 from gold and what the server meant
        answers = [json.loads(line) for line in _export(tmp, capsys, f"fhm-{model}-test_seen")]
        want = expected(answers, truths(server, model), ["yes", "no"])
        line = rows[("fhm", "test_seen", "hateful", "accuracy")]
        assert float(line[model]) == pytest.approx(want["accuracy"], rel=1e-9) and int(line[f"{model}_n"]) == 4
        assert float(rows[("fhm", "test_seen", "hateful", "macro_f1")][model]) == pytest.approx(want["macro_f1"])
        # MemeQA: each type's accuracy, micro and macro from what the server's answers mean
        report = _report(tmp, capsys, f"memeqa-eval-{model}-none-minus-test")
        for task, value in _memeqa_truth(every_truth, report["details"]).items():
            found = rows[("memeqa", "none-minus/test", task, "accuracy")]
            assert float(found[model]) == pytest.approx(value, abs=1e-9), (model, task)
            assert found[f"{model}_ci95_lo"] != "" and int(found[f"{model}_n"]) > 0
    # AUROC: tsrv's server gives log-probabilities (the figure equals scikit-learn's on the server's P(yes));
    # tsrv2's does not: no value, and the reason and fix where the value would be
    auroc = rows[("fhm", "test_seen", "hateful", "auroc")]
    answers = [json.loads(line) for line in _export(tmp, capsys, "fhm-tsrv-test_seen")]
    with_p = [(a["gold"] == "yes", meant(truths(server, "tsrv"), a["prompt"])["p_yes"]) for a in answers]
    if len({y for y, _ in with_p}) == 2:
        assert float(auroc["tsrv"]) == pytest.approx(sklearn_metrics.roc_auc_score(
            [y for y, _ in with_p], [p for _, p in with_p]), rel=1e-6)
    assert auroc["tsrv2"] == "" and "no log-probabilities" in auroc["tsrv2_note"] and "vLLM" in auroc["tsrv2_note"]
    assert "not computed: no log-probabilities" in out  # the terminal table, then the reason and fix below it
    assert "the server of model 'tsrv2' returns no log-probabilities" in err  # said by the preflight, before the run
    code, md, _ = run_cli(tmp, capsys, "report", "fhm-tsrv2-test_seen", "--format", "md")
    assert code == 0 and "| not computed: no log-probabilities |" in md and "Not computed:" in md and "fix:" in md
    code, _, _ = run_cli(tmp, capsys, "report", "fhm-tsrv2-test_seen", "--format", "html", "--out", "run.html")
    page = " ".join((tmp / "run.html").read_text().split())
    assert code == 0 and "not computed — no log-probabilities" in page and "unreadable (lower is better)" in page
    assert 'class="item"' in page and "how it was read" in page and "agent" not in page.split("<main>")[0]
    # the papers' figures beside ours, marked published, on the same split and metric, with their n
    assert float(rows[("fhm", "test_seen", "hateful", "accuracy")]["published: human annotators"]) == 0.847
    assert float(rows[("memeqa", "none-minus/test", "macro", "accuracy")]["published: human"]) == 0.819
    assert float(rows[("memeqa", "none-minus/test", "macro", "accuracy")]["published: GPT-4o (zero-shot)"]) == 0.596
    assert rows[("memeqa", "none-minus/test", "micro", "accuracy")]["published: human"] == ""  # the paper has none
    assert "published (paper's n)" in out or "published, macro accuracy" in out
    # compare across the two methods: the same leaderboard (Markdown and HTML), skipped ones aside
    names = sorted(runs)
    code, md, _ = run_cli(tmp, capsys, "compare", *names, "--format", "md")
    assert code == 0 and "| memeqa | none-minus/test | macro | accuracy |" in md and "human: 81.9% (n not stated)" in md
    assert "no log-probabilities" in md
    code, _, _ = run_cli(tmp, capsys, "compare", *names, "--format", "html", "--out", "compare.html")
    page = (tmp / "compare.html").read_text()
    assert code == 0 and "none-minus/test" in page and "published figures (accuracy" in page  # a table of their own
    assert ">GPT-4o (zero-shot)</td>" in page  # a row of the published figures' table
    code, out, _ = run_cli(tmp, capsys, "eval", "--suite", "memes", "--model", "tsrv", "--model", "tsrv2", "--split",
                           "fhm=test_seen", "--split", "memeqa=none-minus/test", "--out", "suite.html")
    page = (tmp / "suite.html").read_text()
    assert code == 4 and "Skipped benchmarks" in page and "memegauge data get goat-bench" in page
    assert "published: human annotators" in page and "Not computed" in page


def _export(tmp, capsys, name: str) -> list[str]:
    code, out, _ = run_cli(tmp, capsys, "export", name, "--table", "answers", "--format", "jsonl")
    assert code == 0
    return out.splitlines()


def test_eval_lists_memeqa_and_agrees_with_data_list(front, capsys):
    tmp, _ = front
    code, out, _ = run_cli(tmp, capsys, "eval", "--list")
    lines = {line.split(":")[0]: line for line in out.splitlines() if not line.startswith(" ")}
    assert code == 0 and {"memeqa", "fhm", "harmeme", "mami", "goat-bench", "ii-bench", "memelens"} <= set(lines)
    assert "none-minus/test" in lines["memeqa"] and "data memeqa: installed" in lines["memeqa"]
    # one pasteable command per line under the benchmark; where to request a copy is a shell comment before it
    assert lines["harmeme"].endswith("data harmeme: not installed; install with:")
    after = out.split(lines["harmeme"] + "\n", 1)[1].splitlines()
    assert after[0] == "    memegauge data get harmeme"
    assert after[1].startswith("    # PATH: your copy; ") and after[2] == "    memegauge data import harmeme PATH"
    code, listed, _ = run_cli(tmp, capsys, "data", "list")
    assert code == 0 and len(listed.splitlines()) == 3 + len(catalogue.entries())  # title, header, a line each, info
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        if name in lines:  # every data set eval reads is marked with the benchmark that reads it
            assert f"eval {name}" in line, line


def test_eval_has_the_run_options_of_every_run_command(front, capsys):
    tmp, _ = front
    # --dry-run: the plan and its price, no store written
    code, out, _ = run_cli(tmp, capsys, "eval", "fhm", "memeqa", "--model", "tsrv", "--dry-run")
    assert code == 0 and "dry run of fhm-tsrv-dev_seen" in out and "dry run of memeqa-eval-tsrv-none-minus-dev" in out
    assert not (tmp / "s.db").exists()
    first = next(line for line in out.splitlines() if "fhm.hateful" in line).split("│")[7].strip()
    assert first.startswith("≤") and float(first.strip("≤ ")) > 0  # priced before anything is cached
    # readable names: a --limit run is told apart from the full one
    assert run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv", "--limit", "3")[0] == 0
    assert run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv")[0] == 0
    # a fully cached rerun is priced $0 (both stages, every call cached)
    code, out, _ = run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv", "--dry-run")
    stage = next(line for line in out.splitlines() if "fhm.hateful" in line)
    assert "0.0000" in stage and "≤" not in stage.split("│")[7], stage
    # --run (a name, or the prefix of each run's), -o, -c; a key no chosen benchmark has is refused
    (tmp / "eval.yaml").write_text("max_tokens: 48\n")
    assert run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv", "--limit", "2", "--run", "mine", "-c", "eval.yaml",
                   "-o", "max_tokens=64")[0] == 0
    assert _report(tmp, capsys, "mine")["run"]["config"]["max_tokens"] == 64
    code, _, err = run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv", "-o", "nonsense=1")
    assert code == 2 and "nonsense" in err
    code, _, err = run_cli(tmp, capsys, "eval", "fhm", "memeqa", "--model", "tsrv", "--limit", "2", "--run", "pre")
    assert code == 0
    # a closing line sent to a file is never wrapped inside its command (it is longer than 80 columns)
    assert "run 'pre-memeqa' done; `memegauge report pre-memeqa` shows it" in err.splitlines()
    code, _, err = run_cli(tmp, capsys, "eval", "memeqa", "--model", "tsrv", "--limit", "2", "--seed", "12345")
    line = "run 'memeqa-eval-tsrv-none-minus-dev-n2-s12345' done; `memegauge report " \
           "memeqa-eval-tsrv-none-minus-dev-n2-s12345` shows it"
    assert code == 0 and len(line) > 80 and line in err.splitlines()
    code, listed, _ = run_cli(tmp, capsys, "runs", "--json")
    assert {r["name"] for r in json.loads(listed)} >= {"fhm-tsrv-dev_seen-n3", "fhm-tsrv-dev_seen", "mine",
                                                       "pre-fhm", "pre-memeqa"}
    # one model's two runs of one benchmark and split (a --limit run and the full one) are two columns, never one
    code, text, _ = run_cli(tmp, capsys, "compare", "fhm-tsrv-dev_seen-n3", "fhm-tsrv-dev_seen", "pre-memeqa",
                            "--format", "csv")
    header = next(csv.reader(io.StringIO(text)))
    assert code == 0 and {"tsrv (fhm-tsrv-dev_seen-n3)", "tsrv (fhm-tsrv-dev_seen)", "tsrv"} <= set(header)
    # --budget: the run stops cleanly (resumable) once its calls cost this much
    code, _, err = run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv2", "--budget", "0.000001")
    assert code != 0 and "budget" in err.lower()
    # --max-failure-rate is one option, bounded 0–1, for every run command
    code, _, err = run_cli(tmp, capsys, "eval", "fhm", "--model", "tsrv", "--max-failure-rate", "1.5")
    assert code == 2
    code, info, _ = run_cli(tmp, capsys, "data", "info", "harmeme")
    assert code == 0 and "benchmark: memegauge eval harmeme" in info and "then: memegauge data import harmeme PATH" \
        in info and "@inproceedings{pramanick" in info


def test_runs_never_cuts_a_run_name_and_says_which_columns_it_left_out():
    from rich.console import Console

    from memegauge.report.formats import runs_table
    from memegauge.report.header import RunHeader

    long = "memeqa-eval-qwen2-vl-7b-instruct-awq-none-minus-test-n500-s7"
    fields = {name: (0 if info.annotation in (int, "int") else 0.0 if info.annotation in (float, "float") else "")
              for name, info in RunHeader.model_fields.items() if info.is_required()}
    header = RunHeader.model_construct(**{**fields, "name": long, "method": "memeqa", "status": "done", "calls": 500,
                                          "calls_made": 500, "cached_calls": 0, "last_execution_new_calls": 500,
                                          "failed_calls": 0, "tokens": 123456, "cost": 0.1234})
    for width in (80, 100, 200):
        table, dropped = runs_table([header], width, "runs")
        console = Console(width=width, record=True, file=io.StringIO())
        console.print(table)
        text = console.export_text()
        assert long in text, (width, text)  # whole, on one line
        assert all(len(line) <= width for line in text.splitlines())
        assert (width == 200) == (not dropped) and "name" not in dropped and "status" not in dropped


def test_a_data_folder_holding_no_benchmark_is_named_as_such_not_as_data_not_installed(tmp_path, capsys):
    """Review of issue 43: `eval --suite memes --data /nonexistent` said the data sets were "not installed"
    (fhm was installed) and told to install them; the --data folder is what is wrong."""
    code = main(["--quiet", "eval", "--suite", "memes", "--model", "m", "--data", str(tmp_path / "none")])
    said = " ".join(capsys.readouterr().err.split())
    assert code == 2 and f"--data {tmp_path / 'none'} holds no folder for" in said and "not installed" not in said
