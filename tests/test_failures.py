"""Runs that go wrong the way real ones do: an endpoint down, then fixed; failures accepted explicitly."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.testing.server import start_server

from helpers.memeqa_data import make_dataset
from helpers.net import free_port


def _models(tmp: Path, url: str) -> Path:
    path = tmp / "models.yaml"
    path.write_text(f"vlm: {{backend: openai, model: vlm, base_url: {url}, max_retries: 1, backoff_s: 0.01,"
                    " backoff_max_s: 0.02, timeout_s: 5}\n")
    return path


def _eval(tmp: Path, data: Path, images: Path, *extra: str) -> int:
    return main(["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet", "qa", "eval",
                 "--data", str(data), "--images", str(images), "--version", "none-minus", "--split", "dev",
                 "--model", "vlm", "--run", "r", *extra])


def test_endpoint_down_exits_1_with_a_summary_then_the_fixed_endpoint_completes(tmp_path, capsys):
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    _models(tmp_path, f"http://127.0.0.1:{free_port()}/v1")  # nothing listens there
    assert _eval(tmp_path, data, images) == 2  # the preflight sees it: nothing asked, nothing written
    assert "cannot connect" in capsys.readouterr().err and not (tmp_path / "s.db").exists()
    # past the preflight (or an endpoint that dies mid-run), every failed call is recorded
    assert _eval(tmp_path, data, images, "--skip-preflight") == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "incomplete" in err and "22 of 22 calls failed" in err and "memeqa.evaluate: server 22" in err
    assert "Rerun the same command" in err
    store = Store(tmp_path / "s.db")
    assert store.run_row("r")["status"] == "incomplete"
    with start_server(seed=1) as server:
        _models(tmp_path, server.base_url)  # the registry fixed: same model, another address
        assert _eval(tmp_path, data, images) == 0
        requests = server.stats["models"]["vlm"]
    assert requests == 22 + 1  # every failed question asked again (+ the image probe), none lost
    summary = store.run_summary("r")
    assert summary["status"] == "done" and summary["failed_calls"] == 0 and summary["calls"] == 22


def test_failures_can_be_accepted_explicitly(tmp_path, capsys):
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    _models(tmp_path, f"http://127.0.0.1:{free_port()}/v1")
    assert _eval(tmp_path, data, images, "--max-failure-rate", "0.5", "--skip-preflight") == 1  # 100% > 50%
    assert _eval(tmp_path, data, images, "--max-failure-rate", "1", "--skip-preflight") == 0
    assert "accepted under --max-failure-rate 1" in " ".join(capsys.readouterr().err.split())


def test_a_base_url_that_is_not_a_url_is_refused_when_the_registry_loads(tmp_path, capsys):
    (tmp_path / "models.yaml").write_text("m: {backend: openai, model: m, base_url: not a url}\n")
    assert main(["--models", str(tmp_path / "models.yaml"), "models"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'not a url' is not an http(s) URL" in err and "fix:" in err


def _eval_process(tmp: Path, data: Path, images: Path):
    import subprocess

    # SIGINT handled as a terminal's Ctrl-C would be, even when these tests run as a background job
    # (a non-interactive shell starts those with SIGINT ignored, and children inherit that)
    start = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "sys.argv = ['memegauge', *sys.argv[1:]]; runpy.run_module('memegauge.cli', run_name='__main__')")
    return subprocess.Popen(
        [sys.executable, "-c", start, "--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"),
         "--quiet", "qa", "eval", "--data", str(data), "--images", str(images), "--version", "none-minus",
         "--split", "dev", "--model", "vlm", "--run", "r"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_running(tmp: Path, child) -> None:
    import sqlite3
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(tmp / "s.db", timeout=5) as db:
                if db.execute("SELECT COUNT(*) FROM run_calls").fetchone()[0] >= 2:
                    return
        except sqlite3.OperationalError:
            pass
        assert child.poll() is None, child.stderr.read()
        time.sleep(0.05)
    raise AssertionError("the first process never started calling")


@contextmanager
def _running_eval(tmp: Path):
    """A slow server and a `qa eval` process that has started calling it: (data, images, server, child).

    1 s a call, 2 at a time: the run lasts ~11 s, longer than a second process takes to start and
    pass its preflight on a loaded machine (at 500 ms the first run ended first at load 14 on 2 cores;
    at 150 ms it did at lower loads)."""
    data, images = make_dataset(tmp, memes=("m1", "m2"))
    with start_server(latency_ms=1000, seed=1) as server:
        (tmp / "models.yaml").write_text(
            f"vlm: {{backend: openai, model: vlm, base_url: {server.base_url}, max_concurrency: 2}}\n")
        child = _eval_process(tmp, data, images)
        _wait_running(tmp, child)
        yield data, images, server, child


@pytest.mark.slow
def test_a_second_process_on_the_same_run_refuses_and_each_request_is_sent_once(tmp_path):
    with _running_eval(tmp_path) as (data, images, server, first):
        second = _eval_process(tmp_path, data, images)
        assert second.wait(timeout=60) == 1
        message = " ".join(second.stderr.read().split())
        assert first.wait(timeout=120) == 0, first.stderr.read()
        requests = server.stats["models"]["vlm"]
    assert "run 'r' is being written by process" in message and "fix:" in message
    assert requests == 22 + 1  # each question once (+ the first process's image probe)


@pytest.mark.slow
def test_a_killed_run_shows_interrupted_and_the_next_process_takes_it_over(tmp_path, capsys):
    import json
    import signal

    with _running_eval(tmp_path) as (data, images, _server, first):
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert main(["--store", str(tmp_path / "s.db"), "runs", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["status"] == "interrupted"
        assert _eval(tmp_path, data, images) == 0  # taken over at once: its holder is dead
    assert Store(tmp_path / "s.db").run_summary("r")["status"] == "done"


@pytest.mark.slow
def test_ctrl_c_marks_the_run_interrupted_and_says_how_to_resume(tmp_path):
    import signal

    with _running_eval(tmp_path) as (data, images, _server, child):
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=60) == 130
        message = " ".join(child.stderr.read().split())
        assert "interrupted" in message and "Rerun the same command" in message
        store = Store(tmp_path / "s.db")
        assert store.run_row("r")["status"] == "interrupted"
        assert _eval(tmp_path, data, images) == 0


def test_version_flag(capsys):
    from memegauge import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"memegauge {__version__}"


def test_terminal_output_strips_control_sequences_from_model_text():
    from memegauge.cli import safe

    assert safe("\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x07 [bold]x[/bold]") == "red ok \\[bold]x\\[/bold]"


def test_view_answers_only_local_host_names():
    import http.client
    import threading

    from memegauge.report.cli import host_allowed, report_server

    assert host_allowed("127.0.0.1:8000") and host_allowed("localhost") and host_allowed("LOCALHOST:1")
    assert not host_allowed("evil.example:8000") and not host_allowed(None)
    assert host_allowed("tunnel.lan:9", ("127.0.0.1", "localhost", "tunnel.lan"))
    server = report_server("<p>report</p>")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        for host, status in ((f"127.0.0.1:{port}", 200), ("rebound.example.com", 421)):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/", headers={"Host": host})
            assert conn.getresponse().status == status
            conn.close()
    finally:
        server.shutdown()


def test_max_tokens_has_an_upper_bound(tmp_path, capsys):
    (tmp_path / "arena.yaml").write_text("memes: m.jsonl\nagent: a\ntargets: [a, b]\njudges: [a]\n"
                                         "max_tokens: {answers: 10000000}\n")
    assert main(["arena", "-c", str(tmp_path / "arena.yaml")]) == 2
    assert "max_tokens.answers" in capsys.readouterr().err


# ---- storage faults --------------------------------------------------------------------------------


def test_a_full_disk_is_one_message_naming_the_store_and_the_fix(tmp_path):
    import pytest

    from memegauge.engine import StoreError

    store = Store(tmp_path / "s.db")
    run_id, execution_id = store.open_run("r", "t", {}, "h", 0, "v")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")  # what a full disk looks like to SQLite
    with pytest.raises(StoreError) as caught:
        store.put_records(run_id, "k", [(str(i), {"x": "y" * 2000}) for i in range(200)])
    assert "disk holding the store is full" in str(caught.value) and "free space" in str(caught.value)
    assert store.records(run_id, "k") == []  # all or nothing: the transaction rolled back


def test_a_damaged_store_names_sqlite_recover(tmp_path, capsys):
    import random

    store = Store(tmp_path / "s.db")
    run_id, execution_id = store.open_run("r", "t", {}, "h", 0, "v")
    store.put_records(run_id, "k", [(str(i), {"x": "y" * 500}) for i in range(400)])
    store.finish_run(run_id, execution_id, "done")
    store.close()
    with open(tmp_path / "s.db", "r+b") as handle:
        handle.seek(4096 * 20)
        handle.write(bytes(random.Random(2).randrange(256) for _ in range(4096)))
    import pytest

    from memegauge.engine import StoreError

    with pytest.raises(StoreError) as caught:
        Store(tmp_path / "s.db").records(run_id, "k")
    assert "damaged" in str(caught.value) and ".recover" in str(caught.value)


def test_a_read_only_store_is_read_and_refuses_writes_with_the_fix(tmp_path, monkeypatch, capsys):
    import pytest

    import memegauge.engine.store as store_module
    from memegauge.engine import StoreError

    store = Store(tmp_path / "s.db")
    run_id, execution_id = store.open_run("r", "t", {}, "h", 0, "v")
    store.finish_run(run_id, execution_id, "done")
    store.close()
    monkeypatch.setattr(store_module, "_writable", lambda path: False)  # as on read-only media
    readonly = Store(tmp_path / "s.db")
    assert readonly.readonly and readonly.list_runs()[0]["status"] == "done"
    with pytest.raises(StoreError) as caught:
        readonly.open_run("r2", "t", {}, "h", 0, "v")
    assert "read-only" in str(caught.value) and "copy the store" in str(caught.value)


def test_bad_input_files_are_one_message(tmp_path, capsys):
    data, images = make_dataset(tmp_path, memes=("m1",))
    (tmp_path / "pred.jsonl").write_bytes(b'{"id": "x", "prediction": "\xe9"}\n')
    assert main(["--store", str(tmp_path / "p.db"), "qa", "score", "--data", str(data), "--version",
                 "none-minus", "--split", "dev", "--predictions", str(tmp_path / "pred.jsonl")]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err and not (tmp_path / "p.db").exists()
    assert main(["--store", str(tmp_path / "q.db"), "qa", "eval", "--data", str(tmp_path / "nowhere"),
                 "--images", str(images), "--version", "none-minus", "--split", "dev", "--model", "embedded"]) == 2
    assert not (tmp_path / "q.db").exists()  # bad input: no empty store left behind
    store = Store(tmp_path / "r.db")
    run_id, execution_id = store.open_run("r", "memeqa", {}, "h", 0, "v")
    store.finish_run(run_id, execution_id, "done")
    (tmp_path / "outdir").mkdir()
    assert main(["--store", str(tmp_path / "r.db"), "report", "r", "--out", str(tmp_path / "outdir")]) == 2
    assert "is a folder, not a file" in capsys.readouterr().err


def test_a_run_whose_answers_mostly_cannot_be_read_is_loud_and_exits_3(tmp_path, capsys):
    """22 of 22 answers unreadable (issue 34): the run is stored and reported (an unreadable answer is the
    model's answer, wrong, as the paper rules), but the table, every report format and the exit status say
    that its figures measure the output format, and what to check."""
    import json

    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    with start_server(seed=1, fault_rate=1.0, faults=["garbage"]) as server:
        _models(tmp_path, server.base_url)
        assert _eval(tmp_path, data, images, "--skip-preflight") == 3
    err = " ".join(capsys.readouterr().err.split())
    assert "22 of 22 answers could not be read" in err and "measure the model's output format" in err
    assert "Check the raw answers" in err and "unreadable:" in err
    assert "run 'r' done" in err  # stored and complete: no call failed, nothing to retry
    store = Store(tmp_path / "s.db")
    assert store.run_row("r")["status"] == "done"

    def report(fmt: str) -> str:
        assert main(["--store", str(tmp_path / "s.db"), "report", "r", "--format", fmt,
                     "--out", str(tmp_path / f"r.{fmt}")]) == 0
        return (tmp_path / f"r.{fmt}").read_text()

    found = json.loads(report("json"))
    assert found["parse_failure_rate"] == 1.0 and found["macro"] == 0.0
    assert found["format_warning"].startswith("22 of 22 answers could not be read")
    assert "WARNING: 22 of 22 answers could not be read" in report("md")
    html = report("html")
    assert "These figures measure the output format, not the model" in html
    assert html.index("22 of 22 answers could not be read") < html.index("Accuracy per question type")
    # the same command, rerun, replays the stored answers and says the same
    assert _eval(tmp_path, data, images, "--skip-preflight") == 3


def test_a_run_with_a_few_unreadable_answers_is_an_ordinary_run(tmp_path, capsys):
    """The realistic server leaves about 1 answer in 20 unreadable: below the threshold, exit 0, no warning."""
    import json

    data, images = make_dataset(tmp_path, memes=("m1", "m2", "m3", "m4"))
    with start_server(seed=4, style="realistic") as server:
        _models(tmp_path, server.base_url)
        assert _eval(tmp_path, data, images) == 0
    assert "could not be read" not in capsys.readouterr().err
    assert main(["--store", str(tmp_path / "s.db"), "report", "r", "--format", "json", "--out",
                 str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["format_warning"] is None


def test_the_unreadable_threshold_is_more_than_half_of_the_scored_answers():
    from memegauge.memeqa.metrics import UNREADABLE_ABOVE, format_warning

    def records(unreadable: int, readable: int, failed: int = 0):
        return ([{"correct": False, "parse_failed": True}] * unreadable
                + [{"correct": True, "parse_failed": False}] * readable
                + [{"correct": None, "parse_failed": None}] * failed)  # a failed call is not scored

    assert UNREADABLE_ABOVE == 0.5
    assert format_warning(records(5, 5)) is None
    assert format_warning(records(6, 5)).startswith("6 of 11 answers could not be read")
    assert format_warning(records(3, 2, failed=10)).startswith("3 of 5 answers")
    assert format_warning(records(0, 0, failed=3)) is None
