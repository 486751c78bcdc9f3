"""Issue 47: hostile replies, headers, archives, copies and YAML. Each test is one probe of the issue (its
shape made small: a 2 MB member claiming 200 MB, a 50 MB reply cut at 1 MB); a local server stands in for
every remote one, nothing reaches the internet."""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memegauge.benchmarks.kit.run import p_positive
from memegauge.engine.concurrency import ConcurrencyController, ControllerSettings
from memegauge.models.openai_backend import OpenAIBackend, first_token_logprobs
from memegauge.models.spec import ModelSpec
from memegauge.types import MAX_PAUSE_S, ChatRequest, ErrorClass, Message, ModelCallError, clamp_pause

# --------------------------------------------------------------------------------------------------
# a server that answers whatever a test says
# --------------------------------------------------------------------------------------------------

Reply = tuple[int, dict[str, str], bytes | Callable[[], Iterator[bytes]]]


class Hostile:
    """A chat endpoint on 127.0.0.1 whose every answer is `reply` (status, headers, body or a body generator
    sent without a Content-Length)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, headers, body = owner.reply
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                if callable(body):
                    self.send_header("Connection", "close")
                    self.end_headers()
                    try:
                        for chunk in body():
                            self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
                    return
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _ask(reply: Reply, **spec: object) -> ModelCallError | object:
    """One call through the OpenAI backend to a server answering `reply`: the result, or the error raised."""
    server = Hostile(reply)

    async def call() -> object:
        backend = OpenAIBackend(ModelSpec(name="m", backend="openai", model="m", base_url=server.base_url,
                                          timeout_s=20, **spec))
        try:
            return await backend.complete(ChatRequest(model="m", messages=[Message.user("hi")]))
        except ModelCallError as error:
            return error
        finally:
            await backend.aclose()

    try:
        return asyncio.run(call())
    finally:
        server.close()


def _json(data: object) -> Reply:
    return 200, {}, json.dumps(data).encode()


def _answer(**choice: object) -> dict:
    return {"choices": [{"message": {"content": "yes"}, "finish_reason": "stop", **choice}], "model": "m"}


# --------------------------------------------------------------------------------------------------
# Any reply, any header
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["999999", "inf", "nan", "Wed, 21 Oct 2099 07:28:00 GMT", "soon"])
def test_a_retry_after_of_any_size_or_spelling_is_clamped_to_the_documented_maximum(header):
    """Probe: `Retry-After: 999999` (or `inf`) hung a run. The pause asked is at most MAX_PAUSE_S and the
    call is a classified rate-limit failure."""
    error = _ask((429, {"Retry-After": header}, b'{"error": {"message": "slow down"}}'))
    assert isinstance(error, ModelCallError) and error.error_class is ErrorClass.RATE_LIMIT
    assert error.retry_after == MAX_PAUSE_S


def test_every_pause_the_gate_keeps_is_clamped_too():
    """The gate paused new sends for the raw header before every call: now at most MAX_PAUSE_S."""
    c = ConcurrencyController(ControllerSettings(), clock=lambda: 0.0)
    c.on_error("rate_limit", 999999.0, in_flight=8)
    assert c.pause_left() == MAX_PAUSE_S
    c.on_error("rate_limit", math.inf, in_flight=8)
    assert c.pause_left() == MAX_PAUSE_S
    assert clamp_pause(-5.0) == 0.0 and clamp_pause(None) is None and clamp_pause(2.5) == 2.5
    assert ModelCallError(ErrorClass.RATE_LIMIT, "x", math.inf).retry_after == MAX_PAUSE_S


@pytest.mark.parametrize("data, what", [
    ({"choices": "garbage"}, "choices is a str"),
    ({"choices": [1]}, "choices is a list"),
    ({"choices": [{"message": "garbage"}]}, "message is a str"),
    ({"choices": [{"message": {"content": {"a": 1}}}]}, "content is a dict"),
    ("garbage", "without choices"),
    ([1, 2], "without choices"),
])
def test_any_shape_of_choices_is_one_failed_classified_call(data, what):
    """Probe: `choices: "garbage"` ended in a traceback."""
    error = _ask(_json(data))
    assert isinstance(error, ModelCallError) and error.error_class is ErrorClass.SERVER and what in str(error)


@pytest.mark.parametrize("logprobs", ["garbage", 5, [1], {"content": "x"}, {"content": [5]},
                                      {"content": [{"top_logprobs": "x"}]},
                                      {"content": [{"top_logprobs": [{"token": 1, "logprob": -1}, "x"]}]}])
def test_any_shape_of_logprobs_answers_without_log_probabilities(logprobs):
    """Probe: `logprobs: "garbage"` ended in a traceback. The answer stands; it carries no log-probabilities."""
    result = _ask(_json(_answer(logprobs=logprobs)))
    assert not isinstance(result, ModelCallError), result
    assert result.text == "yes" and result.logprobs == {}


def test_a_reply_nested_100k_deep_is_a_failed_classified_call():
    """Probe: 100k-deep JSON ended in a RecursionError traceback."""
    error = _ask((200, {}, b"[" * 100_000 + b"]" * 100_000))
    assert isinstance(error, ModelCallError) and error.error_class is ErrorClass.SERVER
    assert "invalid JSON" in str(error)


def test_a_reply_over_max_reply_bytes_is_cut_there_and_counted_as_truncated():
    """Probe: a 50 MB reply to a 16-token request was stored whole (here 5 MB against a 1 MB limit)."""
    body = json.dumps(_answer(message={"content": "x" * 5_000_000})).encode()
    error = _ask((200, {}, body), max_reply_bytes=1_000_000)
    assert isinstance(error, ModelCallError) and error.error_class is ErrorClass.TRUNCATED
    assert "max_reply_bytes (1000000)" in str(error)


def test_an_endless_reply_without_a_length_is_cut_at_max_reply_bytes():
    sent = []

    def endless() -> Iterator[bytes]:
        yield b'{"choices": [{"message": {"content": "'
        while True:
            sent.append(1)
            yield b"x" * 65536

    error = _ask((200, {}, endless), max_reply_bytes=1_000_000)
    assert isinstance(error, ModelCallError) and error.error_class is ErrorClass.TRUNCATED


def test_a_well_formed_reply_still_reads_with_content_parts_and_odd_usage():
    result = _ask(_json({"choices": [{"message": {"content": [{"type": "text", "text": "a"},
                                                              {"type": "text", "text": "b"}]},
                                      "finish_reason": 7}], "usage": {"prompt_tokens": "x", "completion_tokens": 3},
                         "model": ["m"]}))
    assert result.text == "ab" and result.finish_reason == "stop" and result.served_model == ""
    assert result.usage.prompt_tokens == 0 and result.usage.completion_tokens == 3


def test_non_finite_or_impossible_log_probabilities_are_dropped_at_the_backend():
    """Probe: a logprob of 1e308 overflowed math.exp after the answers were stored; `inf` gave AUROC "nan%"."""
    choice = {"logprobs": {"content": [{"top_logprobs": [
        {"token": "yes", "logprob": 1e308}, {"token": "no", "logprob": -0.5}, {"token": "Yes", "logprob": math.inf},
        {"token": " no", "logprob": math.nan}, {"token": "maybe", "logprob": -1e400}, {"token": "x", "logprob": True},
        {"token": "YES", "logprob": 0.00001}]}]}}
    assert first_token_logprobs(choice) == {"no": -0.5, "YES": 0.0}


def test_p_yes_from_stored_log_probabilities_never_overflows_and_drops_what_is_not_finite():
    """A store written before the fix holds 1e308: every rerun crashed in math.exp. Now such values are left
    out: P is computed from the rest, or is None."""
    assert p_positive({"yes": 1e308, "no": -0.1}, "yes") is None
    assert p_positive({"yes": math.inf, " yes": -0.2, "no": -1.8}, "yes") == pytest.approx(
        math.exp(-0.2) / (math.exp(-0.2) + math.exp(-1.8)))
    assert p_positive({"yes": -800.0, "no": -801.0}, "yes") == pytest.approx(1 / (1 + math.exp(-1)))
    assert p_positive({"yes": math.nan, "no": -1.0}, "no") is None


# --------------------------------------------------------------------------------------------------
# Recovery at the server's pace
# --------------------------------------------------------------------------------------------------


def test_after_a_429_storm_the_limit_doubles_back_while_calls_succeed():
    """Probe: three 429s at the start set the limit to 1 and it climbed back by one every 30 s. Now it
    doubles each round trip of answers back to the storm's first cut, within a few dozen answers."""
    now = [0.0]
    c = ConcurrencyController(ControllerSettings(), clock=lambda: now[0])
    for in_flight in (8, 6, 4, 2):  # a storm: each round trip's 429 cuts again
        c.on_error("rate_limit", 0.1, in_flight=in_flight)
        now[0] += 1.0
    assert c.limit == 1
    answered = 0
    while c.limit < 5 and answered < 100:
        c.on_success(0.05, in_flight=c.limit)
        now[0] += 0.05 / c.limit
        answered += 1
    assert c.limit == 5 and answered <= 12 and now[0] < 20  # (was: one step per 30 s)
    assert c.recoveries >= 2


def test_a_storm_that_refused_even_one_call_in_flight_leaves_no_cap_behind():
    """A storm that refuses a lone call says nothing about calls in flight (a quota, an outage): the cap
    doubles back to the limit before the storm and is dropped, so latency leads the limit again."""
    now = [0.0]
    c = ConcurrencyController(ControllerSettings(), clock=lambda: now[0])
    for in_flight in (8, 6, 4, 2, 1, 1):
        c.on_error("rate_limit", 0.1, in_flight=in_flight)
        now[0] += 1.0
    assert c.limit == 1
    for _ in range(40):
        c.on_success(0.05, in_flight=c.limit)
        now[0] += 0.05 / c.limit
    assert c.cap == math.inf and c.limit >= 8
    for _ in range(300):
        c.on_success(0.05, in_flight=c.limit)
        now[0] += 0.05 / c.limit
    assert c.limit > 16  # grows on latency as a run with no storm does


def test_a_hard_limit_is_not_probed_again_at_every_round_trip():
    """Recovery goes back to the storm's first cut, not above it: a server that refuses more than 10 in
    flight is not asked for more again until `cap_hold_s` has passed."""
    now = [0.0]
    c = ConcurrencyController(ControllerSettings(), clock=lambda: now[0])
    for _ in range(300):
        c.on_success(0.1, in_flight=c.limit)
        now[0] += 0.1 / c.limit
    c.on_error("rate_limit", None, in_flight=11)
    level = c.cap
    for _ in range(500):
        c.on_success(0.1, in_flight=c.limit)
        now[0] += 0.001
    assert c.cap == level and c.limit <= 8


# --------------------------------------------------------------------------------------------------
# Nothing raw reaches the terminal or a template
# --------------------------------------------------------------------------------------------------

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))


def test_an_alias_bomb_in_models_yaml_is_refused_before_it_is_built(tmp_path):
    """Probe (partly): models.yaml accepted a billion-laughs alias bomb (3 GB before it was killed)."""
    from memegauge.config import load_registry, read_yaml
    from memegauge.types import InputError

    path = tmp_path / "models.yaml"
    path.write_text(BOMB)
    with pytest.raises(InputError, match="expands to more than 100000 values"):
        read_yaml(path)
    with pytest.raises(InputError, match="expands to more than"):
        load_registry(path)
    path.write_text("a: &a [*a]\n")
    with pytest.raises(InputError, match="contains itself"):
        read_yaml(path)
    path.write_text("base: &base {backend: openai, base_url: 'http://127.0.0.1:9/v1'}\n"
                    "m1: {<<: *base, model: one}\nm2: {<<: *base, model: two}\n")
    assert read_yaml(path)["m2"] == {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "two"}


def test_an_alias_bomb_is_refused_in_a_benchmark_yaml_and_a_command_line_override(tmp_path):
    from memegauge.benchmarks.kit.spec import load_spec
    from memegauge.config import parse_overrides
    from memegauge.types import InputError

    (tmp_path / "benchmark.yaml").write_text(BOMB)
    with pytest.raises(InputError, match="expands to more than"):
        load_spec(tmp_path)
    with pytest.raises(InputError, match="expands to more than"):
        parse_overrides(["x=" + "[" + ", ".join(["[" + ", ".join(["[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"] * 60) + "]"]
                                                 * 200) + "]"])


def test_the_cli_refuses_an_alias_bomb_in_one_message(tmp_path, capsys):
    from memegauge.cli import main

    (tmp_path / "models.yaml").write_text(BOMB)
    assert main(["--models", str(tmp_path / "models.yaml"), "models", "--check", "x"]) == 2
    assert "alias bomb" in capsys.readouterr().err


def test_a_benchmark_templates_python_internals_are_out_of_reach(tmp_path):
    """Probe (partly): a benchmark YAML's Jinja ran unsandboxed (`{{ ''.__class__ … }}` ran `id`)."""
    from memegauge.benchmarks.kit.items import Item
    from memegauge.benchmarks.kit.run import prompt
    from memegauge.benchmarks.kit.spec import Task
    from memegauge.types import InputError

    attack = ("{{ ''.__class__.__mro__[1].__subclasses__() }}"
              "{{ cycler.__init__.__globals__.os.popen('echo pwned > " + str(tmp_path / "pwned") + "').read() }}")
    task = Task(answer="yes_no", gold="label", prompt=attack, prompt_source="test")
    item = Item(id="1", image=None, text="t", gold={"t": "yes"})
    with pytest.raises(InputError, match="tried what a template may not"):
        prompt(task, item)
    assert not (tmp_path / "pwned").exists()
    task = Task(answer="yes_no", gold="label", prompt="Meme: {{ text | upper }}", prompt_source="test")
    assert prompt(task, item).startswith("Meme: T")


def test_an_error_location_is_one_printable_line():
    """Probe (partly): a newline inside an archive member's name printed a forged status line."""
    from memegauge.types import InputError, printable

    error = InputError("bad", "x.tar: a\ndone: installed\x1b[2J", "fix it")
    assert str(error).count("\n") == 1 and "a\\ndone: installed\\x1b[2J" in str(error)
    assert printable("é ok\u2028") == "é ok\\u2028"


def test_export_on_a_terminal_shows_escape_sequences_and_a_pipe_gets_the_bytes(monkeypatch, capsys):
    """Probe (partly): `export` wrote a meme's ESC sequences raw to the terminal."""
    import sys

    from memegauge import cli

    stored = 'id,text\n1,"red \x1b[31mALERT\x1b]0;title\x07 \r"\n'
    monkeypatch.setattr("memegauge.export.export", lambda *args: (1, stored))
    settings = type("Settings", (), {"store_path": cli.Path(__file__), "store": lambda self: None})()
    monkeypatch.setattr("memegauge.clikit.settings", lambda ctx: settings)  # the command reads it from there

    def run(tty: bool) -> str:
        monkeypatch.setattr(sys.stdout, "isatty", lambda: tty, raising=False)
        cli.export_command(None, "run", "answers", "csv", None)
        return capsys.readouterr().out

    shown = run(True)
    assert "\x1b" not in shown and "\r" not in shown and "\\x1b[31mALERT" in shown and shown.count("\n") == 2
    assert run(False) == stored


def test_auroc_is_over_the_usable_log_probabilities_and_counts_the_rest():
    """Probe: a logprob of `inf` showed AUROC as "nan%". The unusable one is dropped: AUROC over the rest,
    and the note counts what was left out."""
    from memegauge.benchmarks.kit.report import _auroc
    from memegauge.benchmarks.kit.spec import Task

    task = Task(answer="yes_no", gold="label", positive="yes", metrics=["accuracy", "auroc"], prompt="{{ text }}",
                prompt_source="test")
    replies = [({"yes": -0.1, "no": -2.5}, "yes"), ({"yes": -2.0, "no": -0.2}, "no"),
               ({"yes": -0.5, "no": -1.0}, "yes"),
               ({"yes": -1.5, "no": -0.3}, "no"), ({"yes": math.inf, "no": -0.1}, "no"),
               ({"yes": 1e308, "no": -0.1}, "yes")]
    scored = [{"p_positive": p_positive(first_token_logprobs({"logprobs": {"content": [{"top_logprobs": [
        {"token": t, "logprob": v} for t, v in lp.items()]}]}}) | {k: v for k, v in lp.items() if not math.isfinite(v)
                                                                    or v > 0}, "yes"), "gold": gold}
              for lp, gold in replies]
    assert [s["p_positive"] is None for s in scored] == [False] * 4 + [True] * 2
    figure, note = _auroc(task, scored, seed=0)
    assert math.isfinite(figure["value"]) and figure["value"] == pytest.approx(1.0)
    assert note == "2 answers without yes/no log-probabilities left out"


def test_a_run_against_a_server_asking_for_999999_s_ends_with_classified_failures(tmp_path, monkeypatch):
    """Probe: `Retry-After: 999999` hung a run. Here the documented maximum is shortened to 0.3 s so the test
    is quick: every call fails as `rate_limit` after its bounded retries, and the run ends."""
    import time

    from memegauge import errors
    from memegauge.engine import Store
    from memegauge.testing.server import start_server
    from memegauge.testing.workload import probe_registry, run_workload

    monkeypatch.setattr(errors, "MAX_PAUSE_S", 0.3)  # where `clamp_pause` reads it
    with start_server(fault_rate=1.0, faults=("429",), retry_after=999999) as server:
        started = time.monotonic()
        result = asyncio.run(run_workload(Store(tmp_path / "s.db"), probe_registry(
            server.base_url, "auto", max_retries=2, backoff_s=0.01, backoff_max_s=0.05), 6, "storm"))
    assert result["error_classes"] == ["rate_limit"] * 6
    assert time.monotonic() - started < 30
