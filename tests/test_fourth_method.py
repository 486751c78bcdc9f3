"""A fourth method is one folder plus its entry points (its method, its command): `tests/fourth_method/toyscore`
(the worked example of docs/engine.md), installed into a temporary site folder with its entry points and nothing
else, runs end to end through the CLI (its command listed by `--help`), the Python API, `report` (every format),
`export`, `runs` and `view`, without a change to any file of MemeGauge. Each step runs in a fresh process, so the
method is found the way an installed package is: by its entry points."""

from __future__ import annotations

import json
import sqlite3
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from memegauge.samples import sample_memes_path
from memegauge.testing.browser import available, start_driver
from memegauge.testing.server import start_server

from helpers.browser import console_errors

CLI = [sys.executable, "-c", "import sys; from memegauge.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.fixture
def world(tmp_path):
    from helpers.worlds import toyscore_site

    site = toyscore_site(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site), "MEMEGAUGE_CACHE_DIR": str(tmp_path / "cache")}
    with start_server() as server:
        (tmp_path / "models.yaml").write_text(
            f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, max_concurrency: 8, "
            "backoff_s: 0.01, backoff_max_s: 0.05}\n")
        yield tmp_path, env


def _cli(world, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    tmp, env = world
    done = subprocess.run([*CLI, "--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet",
                           *args], capture_output=True, text=True, env=env, timeout=120)
    assert not check or done.returncode == 0, done.stderr
    return done


@pytest.mark.slow  # subprocesses and a browser: seconds each
def test_a_fourth_method_runs_through_the_cli_the_api_report_and_view(world):
    tmp, env = world
    shipped = {p: p.stat().st_mtime_ns for p in Path(__file__).parents[1].joinpath("memegauge").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    _cli(world, "toyscore", "-c", str(tmp / "toy.yaml"), "--run", "toy-cli")
    assert "toyscore  Ask one model whether each meme is funny." in _cli(world, "--help").stdout

    api = ("import json, memegauge\n"
           f"r = memegauge.run('toyscore', {str(tmp / 'toy.yaml')!r}, store={str(tmp / 's.db')!r}, "
           f"models={str(tmp / 'models.yaml')!r}, name='toy-api')\n"
           "print(json.dumps([r.status, r.calls, r.report['memes'], r.report['run']['method'], list(r.tables())]))")
    done = subprocess.run([sys.executable, "-c", api], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    status, calls, memes, method, tables = json.loads(done.stdout.splitlines()[-1])
    assert (status, method, tables) == ("done", "toyscore", ["answers"]) and calls == memes == 13

    report = json.loads(_cli(world, "report", "toy-cli", "--format", "json").stdout)
    assert report["run"]["method"] == "toyscore" and report["memes"] == 13
    assert report["answered"] + report["run"]["failed_calls"] == 13
    assert "funny_share" in _cli(world, "report", "toy-cli", "--format", "md").stdout
    assert "memes,13" in _cli(world, "report", "toy-cli", "--format", "csv").stdout
    page = _cli(world, "report", "toy-cli", "--format", "html").stdout
    assert "Toyscore" in page and "function toyscore(root, data)" in page and "toyscore: toyscore" in page
    assert "<dt>targets</dt><dd>tsrv</dd>" in page  # the method said which model the run used

    exported = _cli(world, "export", "toy-cli", "--table", "answers", "--format", "jsonl").stdout
    rows = [json.loads(line) for line in exported.splitlines()]
    assert len(rows) == 13 and {r["run"] for r in rows} == {"toy-cli"} and all("funny" in r for r in rows)
    refused = _cli(world, "export", "toy-cli", "--table", "leaderboard", check=False)
    assert refused.returncode == 2 and "use one of: answers" in refused.stderr  # no headline hook, no leaderboard

    listed = _cli(world, "runs", "--json").stdout
    assert {r["name"] for r in json.loads(listed)} == {"toy-cli", "toy-api"}
    served = _served(world, "toy-api")
    assert served == _cli(world, "report", "toy-api", "--format", "html").stdout.rstrip("\n")
    assert shipped == {p: p.stat().st_mtime_ns for p in shipped}  # no file of MemeGauge written
    if available():  # the method's browser.js, inlined by the page, lists one row per meme
        (tmp / "toy.html").write_text(served, encoding="utf-8")
        assert _browser_rows(tmp / "toy.html") == 13


def _browser_rows(page: Path) -> int:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    driver = start_driver()
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        assert console_errors(driver) == []
        return len(driver.find_elements(By.CSS_SELECTOR, "[data-browser] .items .row"))
    finally:
        driver.quit()


def _served(world, run: str) -> str:
    """`memegauge view RUN`: the page it serves on 127.0.0.1 (the process is stopped once read)."""
    tmp, env = world
    view = subprocess.Popen([*CLI, "--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "view", run],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = view.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), view.stderr.read()
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode("utf-8")
    finally:
        view.terminate()
        view.wait(timeout=30)


# ---- a method written from docs/engine.md alone ------------------------------------------------------

DOCS_METHOD = {
    "method.py": '''
from memegauge.methods import Method, lazy

METHOD = Method(name="lengths", title="Lengths", config=lazy("lengths.run:config"),
                check=lazy("lengths.run:check"), run=lazy("lengths.run:run"),
                report=lazy("lengths.run:build"), models=lazy("lengths.run:models"))
''',
    "run.py": '''
from pathlib import Path

from memegauge.config import MethodConfig, method_config
from memegauge.engine import open_run
from memegauge.memes import load_memes
from memegauge.methods import Checked, RunResult
from memegauge.records import Record, read_checked
from memegauge.types import ChatRequest, Message, SamplingParams


class LengthConfig(MethodConfig):
    memes: Path
    model: str

    def roles(self):
        return {"targets": [self.model]}


class Answer(Record):
    KIND = "lengths.answer"
    KEY = ("meme",)
    meme: str
    ok: bool
    length: int | None


def config(source):
    return method_config(source, LengthConfig)


def check(config, registry):
    registry.get(config.model)
    return Checked(inputs=load_memes(config.memes, require_images=False), models=[config.model], pictures=[])


async def run(config, *, store, registry, name=None, progress=None, checked=None):
    memes = (checked or check(config, registry)).inputs
    name = name or "lengths-" + config.model
    requests = [ChatRequest(model=config.model, stage="lengths.ask", params=SamplingParams(max_tokens=16),
                            messages=[Message.user("Describe this meme: " + m.as_text())]) for m in memes]
    async with open_run(store, registry, name=name, method="lengths", config=config.stored(),
                        progress=progress) as (opened, engine):
        outcomes = await engine.chat_many(requests)
        opened.put_many([Answer(meme=m.id, ok=o.ok, length=len(o.value) if o.ok else None)
                         for m, o in zip(memes, outcomes, strict=True)])
    return RunResult.of(store, name)


def build(store, run):
    rows = read_checked(store, run["id"], Answer)
    return {"memes": len(rows), "answered": sum(1 for r in rows if r["ok"])}


def models(config):
    return {"targets": [config["model"]]}
'''}


@pytest.mark.slow  # subprocesses: seconds each
def test_a_method_written_from_the_docs_alone_runs_in_one_folder(world):
    """What docs/engine.md teaches (a `Method(...)` of `lazy("module:function")` hooks, a `MethodConfig`,
    `check`, `run` through `open_run`, `report`, one entry point), written into a temporary folder: it
    runs through the API (`memegauge.run_lengths`) and the CLI's report, and no file of MemeGauge changes."""
    tmp, env = world
    shipped = {p: p.stat().st_mtime_ns for p in Path(__file__).parents[1].joinpath("memegauge").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    site = tmp / "site2"
    (site / "lengths").mkdir(parents=True)
    for name, text in {"__init__.py": "", **DOCS_METHOD}.items():
        (site / "lengths" / name).write_text(text.lstrip())
    info = site / "lengths-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lengths\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memegauge.methods]\nlengths = lengths.method:METHOD\n")
    (tmp / "lengths.yaml").write_text(f"memes: {sample_memes_path()}\nmodel: tsrv\n")
    env = {**env, "PYTHONPATH": str(site)}
    api = ("import json, memegauge\n"
           f"r = memegauge.run_lengths({str(tmp / 'lengths.yaml')!r}, store={str(tmp / 's.db')!r}, "
           f"models={str(tmp / 'models.yaml')!r})\n"
           "print(json.dumps([r.name, r.status, r.report['memes'], r.report['answered']]))")
    done = subprocess.run([sys.executable, "-c", api], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["lengths-tsrv", "done", 13, 13]
    report = json.loads(_cli((tmp, env), "report", "lengths-tsrv", "--format", "json").stdout)
    assert report["run"]["method"] == "lengths" and report["answered"] == 13
    assert shipped == {p: p.stat().st_mtime_ns for p in shipped}  # no file of MemeGauge written


@pytest.mark.slow  # a subprocess run against the realistic test server: seconds
def test_the_worked_example_scores_only_answers_that_say_yes_or_no(tmp_path):
    """Against the test server's realistic style (chatty, often cut at max_tokens), toyscore stores an answer
    that says neither yes nor no as a failed call (asked again within content_retries), never as "not funny"."""
    from helpers.worlds import toyscore_site

    site = toyscore_site(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site), "MEMEGAUGE_CACHE_DIR": str(tmp_path / "cache")}
    with start_server(style="realistic", seed=3) as server:
        (tmp_path / "models.yaml").write_text(
            f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, max_concurrency: 8, "
            "backoff_s: 0.01, backoff_max_s: 0.05, content_retries: 1}\n")
        subprocess.run([*CLI, "--store", str(tmp_path / "s.db"), "--models", str(tmp_path / "models.yaml"),
                        "--quiet", "toyscore", "-c", str(tmp_path / "toy.yaml"), "--run", "toy"],
                       capture_output=True, text=True, env=env, timeout=120)
    exported = subprocess.run([*CLI, "--store", str(tmp_path / "s.db"), "export", "toy", "--table", "answers",
                               "--format", "jsonl"], capture_output=True, text=True, env=env, timeout=120)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(rows) == 13, exported.stderr
    from memegauge.parse import starts_yes_no

    with sqlite3.connect(tmp_path / "s.db") as db:
        texts = [text for (text,) in db.execute("SELECT text FROM calls WHERE stage = 'toyscore.ask'")]
    read = [starts_yes_no(text or "") for text in texts]
    assert any(isinstance(value, bool) for value in read)  # the server answered yes or no at times
    for row in rows:
        assert (row["funny"] is None) == (not row["ok"])  # scored exactly when the call is ok
    # one call per meme: the scores are exactly what the stored answers say, read as yes or no
    assert sorted(row["funny"] for row in rows if row["ok"]) == sorted(v for v in read if isinstance(v, bool))
    assert len(texts) == 13
