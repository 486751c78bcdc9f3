"""No store harmed, no traceback (issue 34 C): another application's SQLite file, a full disk, SIGTERM,
network filesystems, closed connections, oversized meme texts, the `rate` server's hostile requests
and an answer that echoes the API key. docs/reliability.md names each test."""

from __future__ import annotations

import gc
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.testing.server import start_server

from helpers.memeqa_data import make_dataset

QUESTIONS_PER_MEME = 11  # make_dataset: every question type for every meme (None−)


def _out(capsys) -> str:
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


def _eval_args(tmp: Path, data: Path, images: Path, *extra: str) -> list[str]:
    return ["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet", "qa", "eval",
            "--data", str(data), "--images", str(images), "--version", "none-minus", "--split", "dev",
            "--model", "vlm", "--run", "r", *extra]


def _registry(tmp: Path, base_url: str, **extra: object) -> None:
    fields = "".join(f", {k}: {v}" for k, v in extra.items())
    (tmp / "models.yaml").write_text(f"vlm: {{backend: openai, model: vlm, base_url: {base_url}{fields}}}\n")


# ---- another application's SQLite file --------------------------------------------------------------


def test_another_applications_sqlite_file_is_refused_and_left_byte_for_byte(tmp_path, capsys):
    foreign = tmp_path / "notes.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        con.execute("INSERT INTO notes(body) VALUES ('keep me')")
    con.close()
    before, mtime = foreign.read_bytes(), foreign.stat().st_mtime_ns
    time.sleep(0.01)
    data, images = make_dataset(tmp_path / "set", memes=("m1",))
    with start_server(seed=1) as server:
        _registry(tmp_path, server.base_url)
        for argv in (["--store", str(foreign), "runs"],
                     ["--store", str(foreign), *_eval_args(tmp_path, data, images)[2:]]):
            code = main(argv)
            text = _out(capsys)
            assert code == 2, text
            assert "not a MemeGauge store" in text and "another application" in text and "notes" in text
            assert "Traceback" not in text and text.count("error:") == 1
        assert server.stats["models"].get("vlm", 0) == 0
    assert foreign.read_bytes() == before and foreign.stat().st_mtime_ns == mtime
    assert not list(tmp_path.glob("notes.db?*"))  # no -wal, -shm or -journal left beside it


def test_a_foreign_file_with_a_runs_table_is_refused_by_its_layout_and_left_byte_for_byte(tmp_path, capsys):
    """MLflow's tracking database has a `runs` table too: the store is recognised by its whole layout
    (every table and its columns), so this file is refused before anything is written."""
    foreign = tmp_path / "mlflow.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name TEXT)")
        con.execute("CREATE TABLE runs (run_uuid TEXT PRIMARY KEY, name TEXT, status TEXT, experiment_id INT)")
        con.execute("INSERT INTO runs VALUES ('abc', 'r1', 'FINISHED', 0)")
    con.close()
    before, mtime = foreign.read_bytes(), foreign.stat().st_mtime_ns
    time.sleep(0.01)
    for argv in (["--store", str(foreign), "runs"], ["--store", str(foreign), "report", "r1"]):
        code = main(argv)
        text = _out(capsys)
        assert code == 2, text
        assert "not a MemeGauge store" in text and "another application" in text and "lacks runs.config_hash" in text
        assert "storage error" not in text and "Traceback" not in text
    assert foreign.read_bytes() == before and foreign.stat().st_mtime_ns == mtime
    assert not list(tmp_path.glob("mlflow.db?*"))
    with sqlite3.connect(foreign) as con:
        assert {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {
            "experiments", "runs"}
    con.close()


def test_an_empty_file_or_a_new_path_becomes_a_store(tmp_path, capsys):
    (tmp_path / "empty.db").write_bytes(b"")
    for name in ("empty.db", "new.db"):
        store = Store(tmp_path / name)
        store.open_run("r", "memeqa", {}, "h", None, "test")
        assert [run["name"] for run in store.list_runs()] == ["r"]


# ---- disk full mid-run ------------------------------------------------------------------------------


@pytest.mark.parametrize("fills_at", ["answer", "heartbeat"])
def test_disk_full_mid_run_is_one_message_and_the_store_stays_consistent(tmp_path, capfd, caplog,
                                                                       monkeypatch, fills_at):
    """SQLite's own 'database or disk is full' from the moment the disk fills up — at the store's write
    of the 7th answer, or at the run's 3rd heartbeat — while calls are in flight: every later write
    fails too. One message and exit 1, no traceback, an intact store, and the rerun asks only for
    the answers that were not stored."""
    from memegauge.engine.store import Store as StoreClass
    from memegauge.engine.store.errors import GuardedCursor

    data, images = make_dataset(tmp_path, memes=tuple(f"m{i}" for i in range(4)))
    seen = {"answer": 0, "heartbeat": 0, "full": False}
    execute, executemany = GuardedCursor.execute, GuardedCursor.executemany
    first = {"answer": "INSERT OR REPLACE INTO CALLS", "heartbeat": "UPDATE LEASES SET HEARTBEAT"}
    limit = {"answer": 7, "heartbeat": 3}

    def full_disk(self, sql, *args, many=False):  # the cursor's write, below the store's error translation
        statement = sql.lstrip().upper() if isinstance(sql, str) else ""
        if statement.startswith(first[fills_at]):
            seen[fills_at] += len(args[0]) if many else 1  # executemany: one write per row
            seen["full"] = seen["full"] or seen[fills_at] >= limit[fills_at]
        if seen["full"] and statement.startswith(("INSERT", "UPDATE", "DELETE", "REPLACE")):
            return self._guard(_raise_full)
        return (executemany if many else execute)(self, sql, *args)

    monkeypatch.setattr("memegauge.engine.HEARTBEAT_S", 0.01)
    with start_server(latency_ms=30, seed=1) as server:
        _registry(tmp_path, server.base_url, max_concurrency=8)
        monkeypatch.setattr(GuardedCursor, "execute", full_disk)
        monkeypatch.setattr(GuardedCursor, "executemany", lambda self, sql, rows: full_disk(self, sql, rows, many=True))
        code = main(_eval_args(tmp_path, data, images))
        gc.collect()  # a task that died unseen is reported when it is collected
        text = _out(capfd)
        assert code == 1, text
        assert "the disk holding the store is full" in text and "rerun the same command" in text
        assert "Traceback" not in text and "client has been closed" not in text and text.count("fix:") == 1
        logged = [r.getMessage() for r in caplog.records if r.exc_info or r.levelname == "ERROR"]
        assert logged == []  # e.g. asyncio's "unhandled exception during asyncio.run() shutdown"
        monkeypatch.setattr(GuardedCursor, "execute", execute)
        monkeypatch.setattr(GuardedCursor, "executemany", executemany)
        with sqlite3.connect(tmp_path / "s.db") as con:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            stored = con.execute("SELECT COUNT(*) FROM calls WHERE status='ok'").fetchone()[0]
            # the failed command's process has exited, so its lease is dead (this test's lives on)
            exited = subprocess.Popen([sys.executable, "-c", ""])
            exited.wait()
            con.execute("UPDATE leases SET pid = ?", (exited.pid,))
        con.close()
        # the 7th answer's write fails with the answers committed beside it (a burst shares one transaction,
        # `engine.core.CallWriter`): none of those reached a stage; the preflight's probe is stored first
        assert 1 <= stored <= 6 if fills_at == "answer" else 1 <= stored < 4 * QUESTIONS_PER_MEME
        before = server.stats["models"]["vlm"]
        assert main(_eval_args(tmp_path, data, images)) == 0, _out(capfd)
        assert server.stats["models"]["vlm"] - before == 4 * QUESTIONS_PER_MEME - (stored - 1)
    assert StoreClass(tmp_path / "s.db").run_summary("r")["status"] == "done"


def _raise_full():
    raise sqlite3.OperationalError("database or disk is full")


# ---- SIGTERM is Ctrl-C ------------------------------------------------------------------------------

START = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "sys.argv = ['memegauge', *sys.argv[1:]]; runpy.run_module('memegauge.cli', run_name='__main__')")


def _ok_calls(db: Path) -> int:
    with sqlite3.connect(db) as con:
        count = con.execute("SELECT COUNT(*) FROM run_calls JOIN calls USING (key) "
                            "WHERE calls.status = 'ok'").fetchone()[0]
    con.close()
    return count


KEEP_SIGINT = ("import runpy, sys; sys.argv = ['memegauge', *sys.argv[1:]]; "
               "runpy.run_module('memegauge.cli', run_name='__main__')")


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as bash does for a job started with `&` from a script


@pytest.mark.slow
@pytest.mark.parametrize("sigint", ["default", "ignored"])
def test_sigterm_stores_the_answers_in_flight_marks_the_run_interrupted_and_none_is_asked_again(tmp_path,
                                                                                               sigint):
    """A real SIGTERM (what SLURM, `timeout` and Docker send) with 32 calls in flight at 300 ms: every
    answer sent for is stored, the run is `interrupted`, one message, exit 143; the rerun asks none again.
    The same when the process ignores SIGINT (`memegauge … &` from a script, `nohup`)."""
    data, images = make_dataset(tmp_path, memes=tuple(f"m{i}" for i in range(10)))
    with start_server(latency_ms=300, seed=1) as server:
        _registry(tmp_path, server.base_url, max_concurrency=32)
        start = START if sigint == "default" else KEEP_SIGINT  # the child keeps SIG_IGN from its parent
        child = subprocess.Popen([sys.executable, "-c", start, *_eval_args(tmp_path, data, images)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 preexec_fn=_ignore_sigint if sigint == "ignored" else None)
        deadline = time.monotonic() + 120
        while server.stats["in_flight"] < 32:
            assert child.poll() is None and time.monotonic() < deadline, child.stdout.read()
            time.sleep(0.002)
        child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=60)
        message = " ".join(child.stdout.read().split())
        assert code == 143, message
        assert "terminated (SIGTERM)" in message and "Rerun the same command" in message
        assert "Traceback" not in message
        sent = server.stats["models"]["vlm"] - 1  # less the image probe
        stored = _ok_calls(tmp_path / "s.db")
        assert stored == sent < 10 * QUESTIONS_PER_MEME
        assert server.stats.get("cancelled", 0) == 0
        assert Store(tmp_path / "s.db").run_summary("r")["status"] == "interrupted"
        before = server.stats["models"]["vlm"]
        assert main(_eval_args(tmp_path, data, images)) == 0
        assert server.stats["models"]["vlm"] - before == 10 * QUESTIONS_PER_MEME - stored
    assert Store(tmp_path / "s.db").run_summary("r")["status"] == "done"


# ---- a closed connection is not a timeout -----------------------------------------------------------


@pytest.fixture
def closing_server():
    """A server that reads each request and closes the connection without answering."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    stopped = threading.Event()

    def serve() -> None:
        while not stopped.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stopped.set()
    listener.close()


def test_a_closed_connection_is_a_connection_failure_with_its_own_fix(tmp_path, closing_server):
    """The aiohttp transport reports a connection the server closed as 'Request timed out.' after a
    few ms; it is classified `connection`, and the run's summary says raising timeout_s will not help."""
    import asyncio

    from memegauge.models.spec import ModelRegistry, ModelSpec
    from memegauge.engine import failure_text, open_run
    from memegauge.types import ChatRequest, ErrorClass, Message

    registry = ModelRegistry({})
    registry.add(ModelSpec(name="m", backend="openai", model="m", base_url=[closing_server], max_retries=1,
                           backoff_s=0.01, backoff_max_s=0.01, timeout_s=60, vision=False))
    store = Store(tmp_path / "s.db")

    async def go():
        async with open_run(store, registry, name="r", method="t", config={}, progress=False) as (_, engine):
            outcome = await engine.chat(ChatRequest(model="m", messages=[Message.user("hi")], stage="s"))
            return outcome, engine.failure_summary()

    outcome, summary = asyncio.run(go())
    assert outcome.error_class is ErrorClass.CONNECTION, outcome.record.error
    assert outcome.record.error.startswith("connection: connection closed by the server")
    assert outcome.record.latency_s < 30 and outcome.record.attempts == 2
    assert summary["by_stage"] == {"s": {"connection": 1}}
    text = failure_text(summary)
    assert "connection: the server closed the connection without answering" in text
    assert "raising timeout_s will not help" in text and "timeout 1" not in text


# ---- `rate`'s server: hostile requests --------------------------------------------------------------


def _raw(port: int, head: str, body: bytes = b"") -> int:
    """The status of a raw HTTP request (the server must answer within 5 s, not hang)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        reply = b""
        while b"\r\n" not in reply:
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
    return int(reply.split()[1])


@pytest.fixture
def rating_server(tmp_path):
    import threading

    from helpers.synthetic import adammeme_run
    from memegauge.localserver import local_server
    from memegauge.rating.items import run_items
    from memegauge.rating.server import RatingApp
    from memegauge.report import run_header

    store = Store(tmp_path / "store.db")
    adammeme_run(store, "adam", tmp_path / "adam")
    run = {**run_header(store, "adam").as_dict(), "id": store.run_row("adam")["id"]}
    app = RatingApp(store, run, run_items(store, run, 2), "ana")
    server = local_server(app.respond, 0, app.hosts)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server.server_address[1], store, run
    server.shutdown()
    server.server_close()
    store.close()


def test_the_rate_server_answers_hostile_requests_with_4xx_and_no_traceback(rating_server, capfd, caplog):
    """Deeply nested JSON, `Content-Length: abc` and `-1`, and an `Origin` of another local port (or
    another scheme): each a 4xx at once, no traceback, nothing stored; the page's own origin votes."""
    from memegauge.rating.records import HumanRating
    from memegauge.records import read_records

    port, store, run = rating_server
    vote = b'{"score": 7}'

    def post(body: bytes, length: str | None = None, origin: str | None = None) -> int:
        head = (f"POST /api/vote/0 HTTP/1.1\nHost: 127.0.0.1:{port}\nContent-Type: application/json\n"
                f"Content-Length: {len(body) if length is None else length}\n"
                + (f"Origin: {origin}\n" if origin else "") + "Connection: close\n")
        return _raw(port, head, body)

    nested = b"[" * 100_000 + b"]" * 100_000
    assert post(nested) == 400
    assert post(b'{"score": ' + b"[" * 50_000 + b"]" * 50_000 + b"}") == 400
    assert post(vote, length="abc") == 400
    assert post(vote, length="-1") == 400
    assert post(vote, length="+12") == 400
    assert post(vote, origin=f"http://127.0.0.1:{port + 1}") == 403  # another local server
    assert post(vote, origin=f"https://127.0.0.1:{port}") == 403
    assert post(vote, origin="http://127.0.0.1") == 403  # port 80
    assert post(vote, origin="http://127.0.0.1:99999") == 403
    assert read_records(store, run["id"], HumanRating) == []
    assert post(vote, origin=f"http://localhost:{port}") == 200  # the page itself
    assert post(vote, origin=f"http://127.0.0.1:{port}") == 200
    text = capfd.readouterr()
    assert "Traceback" not in text.out + text.err and "Error" not in text.err
    assert [r for r in caplog.records if r.levelname == "ERROR"] == []


# ---- an answer that echoes the API key ---------------------------------------------------------------

KEY = "sk-test-0123456789abcdef-SECRET"


@pytest.fixture
def echoing_server():
    """An OpenAI-style server whose every answer repeats the Authorization header it got."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Echo(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            auth = self.headers.get("Authorization", "")
            body = json.dumps({"model": "vlm", "choices": [{
                "message": {"role": "assistant", "content": f"Answer: A. (you sent {auth})",
                            "reasoning_content": f"the header was {auth}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 5}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _leave_mid_request(port: int, head: bytes, body: bytes) -> None:
    """Send a request's head and part of its body, then leave (close, or reset when data is unread)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        try:
            sock.sendall(head + body)
        except OSError:
            pass  # the server answered 413 and closed while we were still sending: we leave anyway
        time.sleep(0.3)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def test_a_client_leaving_mid_request_prints_no_traceback_and_the_server_goes_on(rating_server, capfd):
    """A short body then close, and a 5 MB body then close (reset), ten times each: no traceback on the
    rater's terminal, and the next request is served."""
    import urllib.request

    port, _, _ = rating_server
    head = f"POST /api/vote/0 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100\r\n\r\n".encode()
    big = f"POST /api/vote/0 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {5 << 20}\r\n\r\n".encode()
    for _ in range(10):
        _leave_mid_request(port, head, b"{}")
        _leave_mid_request(port, big, b"x" * (5 << 20))
    time.sleep(0.5)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
        assert page.status == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred" not in err and "BrokenPipe" not in err, err


def test_a_silent_client_is_dropped_after_the_socket_timeout(monkeypatch):
    """A client that sends half a request and then nothing holds its thread only `CLIENT_TIMEOUT_S`."""
    import socket
    import threading

    from memegauge import localserver

    monkeypatch.setattr(localserver, "CLIENT_TIMEOUT_S", 0.5)
    server = localserver.local_server(lambda *_: (200, "text/plain", b"ok"))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{}")
            started = time.monotonic()
            assert sock.recv(100) == b""  # the server closed the connection
            assert time.monotonic() - started < 5
    finally:
        server.shutdown()
        server.server_close()



def test_an_answer_echoing_the_api_key_is_stored_and_shown_redacted(tmp_path, echoing_server, capfd,
                                                                      monkeypatch):
    data, images = make_dataset(tmp_path, memes=("m1",))
    monkeypatch.setenv("MEMEGAUGE_TEST_KEY", KEY)
    _registry(tmp_path, echoing_server, api_key_env="MEMEGAUGE_TEST_KEY", vision="false", max_retries=0,
              content_retries=0)
    assert main(_eval_args(tmp_path, data, images)) == 0
    store = ["--store", str(tmp_path / "s.db")]
    assert main([*store, "report", "r", "--format", "html", "--out", str(tmp_path / "r.html")]) == 0
    assert main([*store, "report", "r", "--format", "json"]) == 0
    assert main([*store, "export", "r", "--table", "questions", "--out", str(tmp_path / "answers.csv")]) == 0
    assert "Bearer ***" in (tmp_path / "answers.csv").read_text()  # the answer, as stored, is what is shown
    shown = capfd.readouterr()
    files = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert KEY.encode() not in files and KEY not in shown.out + shown.err
    with sqlite3.connect(tmp_path / "s.db") as con:
        texts = con.execute("SELECT text, reasoning FROM calls WHERE text LIKE 'Answer%'").fetchall()
    con.close()
    assert len(texts) == QUESTIONS_PER_MEME
    assert all(t == "Answer: A. (you sent Bearer ***)" and r == "the header was Bearer ***" for t, r in texts)


# ---- a meme text far longer than a meme's --------------------------------------------------------------


def test_a_huge_meme_text_is_refused_where_it_is_read_with_size_limit_and_settings(tmp_path, capsys,
                                                                                     monkeypatch):
    """A 60,000-character text (over the 20,000 default) in MemeQA's texts file, a memes.jsonl and a
    sidecar .txt: one message each, naming the place, the size, the limit and the two settings; no store
    and no call. `--max-meme-text` and MEMEGAUGE_MAX_MEME_TEXT raise the limit."""
    import json

    from memegauge.files import set_max_meme_text
    from memegauge.memes import load_memes

    monkeypatch.delenv("MEMEGAUGE_MAX_MEME_TEXT", raising=False)
    huge = "x" * 60_000
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    texts = images / "memes.jsonl"
    lines = texts.read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "text": huge})
    texts.write_text("\n".join(lines) + "\n")
    with start_server(seed=1) as server:
        _registry(tmp_path, server.base_url)
        code = main(_eval_args(tmp_path, data, images))
        text = _out(capsys)
        assert code == 2, text
        assert f"{texts}:2" in text and "60,000 characters, over the limit of 20,000" in text
        assert "--max-meme-text 60000" in text and "MEMEGAUGE_MAX_MEME_TEXT=60000" in text
        assert not (tmp_path / "s.db").exists() and server.stats["models"].get("vlm", 0) == 0
        assert main(["--max-meme-text", "60000", *_eval_args(tmp_path, data, images)]) == 0, _out(capsys)
    set_max_meme_text(None)

    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "memes.jsonl").write_text(json.dumps({"id": "a", "text": "ok"}) + "\n"
                                                  + json.dumps({"id": "b", "caption": huge}) + "\n")
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "c.png").write_bytes((images / "m1.png").read_bytes())
    (tmp_path / "pics" / "c.txt").write_text(huge)
    for source, where, what in ((tmp_path / "set" / "memes.jsonl", ":2 (meme 'b')", "meme caption"),
                                (tmp_path / "pics", "c.txt", "meme text")):
        with pytest.raises(Exception) as refused:
            load_memes(source, require_images=False)
        message = str(refused.value)
        assert type(refused.value).__name__ == "InputError" and where in message
        assert f"the {what} is 60,000 characters" in message
    from memegauge.memeqa.build import annotation_memes
    from memegauge.memeqa.construct import Annotation

    annotated = [Annotation.model_construct(meme="c", image="c.png", text=huge, caption="")]
    with pytest.raises(Exception) as refused:  # `qa build`'s annotations
        annotation_memes(annotated, tmp_path / "pics")
    assert "meme 'c'" in str(refused.value) and "60,000 characters" in str(refused.value)
    monkeypatch.setenv("MEMEGAUGE_MAX_MEME_TEXT", "60000")
    assert len(load_memes(tmp_path / "pics")[0].text) == 60_000
    assert len(annotation_memes(annotated, tmp_path / "pics")["c.png"].text) == 60_000


# ---- a store on NFS or Lustre ------------------------------------------------------------------------


def _header_journal(db: Path) -> str:
    """The journal mode the file itself records (bytes 18-19: 1 rollback, 2 WAL)."""
    return {1: "rollback", 2: "wal"}[db.read_bytes()[18]]


@pytest.mark.parametrize("kind", ["nfs4", "lustre"])
def test_a_store_on_a_network_filesystem_uses_the_rollback_journal_with_one_warning(tmp_path, kind, capfd,
                                                                                    monkeypatch):
    """The filesystem type comes from a fake /proc/mounts (the longest mount point holding the store,
    a space in it escaped as /proc/mounts does): on NFS or Lustre the store runs a whole `qa eval`
    without WAL or its shared memory, warns once, and resumes; on a local disk it keeps WAL."""
    from memegauge.engine.store import filesystems

    shared = tmp_path / "home dir"
    shared.mkdir()
    mounts = tmp_path / "mounts"
    escaped = str(shared).replace(" ", "\\040")
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nserver:/home {escaped} {kind} rw,vers=4.2 0 0\n"
                      f"tmpfs {tmp_path / 'local'} tmpfs rw 0 0\n")
    monkeypatch.setattr(filesystems, "MOUNTS", mounts)
    monkeypatch.setattr(filesystems, "_WARNED", set())
    assert filesystems.filesystem_type(shared / "deeper") == kind
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    with start_server(seed=1) as server:
        _registry(tmp_path, server.base_url)
        args = [a for a in _eval_args(tmp_path, data, images) if a != "--quiet"]
        args[1] = str(shared / "s.db")
        assert main(args) == 0
        assert main(args) == 0  # a second open: no second warning
    shown = " ".join(capfd.readouterr().err.split())
    assert shown.count("network filesystem") == 1 and f"({kind})" in shown and "--store on a local path" in shown
    assert _header_journal(shared / "s.db") == "rollback"
    assert not (shared / "s.db-wal").exists() and not (shared / "s.db-shm").exists()
    with sqlite3.connect(shared / "s.db") as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert Store(shared / "s.db").run_summary("r")["status"] == "done"
    (tmp_path / "local").mkdir()
    Store(tmp_path / "local" / "s.db").list_runs()
    assert _header_journal(tmp_path / "local" / "s.db") == "wal"  # local disk: WAL, as before


def test_an_automounted_home_is_read_as_the_filesystem_mounted_last_on_its_point(tmp_path, monkeypatch):
    """autofs lists its trigger first and the nfs4 it mounts on the same point after it (the usual
    cluster home): the last entry is the mounted one, so the store there uses the rollback journal."""
    from memegauge.engine.store import filesystems

    home = tmp_path / "nfshome"
    home.mkdir()
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/sda1 / ext4 rw 0 0\nauto.home {home} autofs rw 0 0\n"
                      f"server:/export/home {home} nfs4 rw,vers=4.2 0 0\n")
    monkeypatch.setattr(filesystems, "MOUNTS", mounts)
    monkeypatch.setattr(filesystems, "_WARNED", set())
    assert filesystems.filesystem_type(home / "s.db") == "nfs4"
    assert filesystems.journal_mode(home / "s.db") == "DELETE"
