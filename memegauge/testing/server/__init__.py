"""A local OpenAI-compatible chat server for tests and benchmarks: fixed latency, deterministic
answers in the formats MemeGauge' prompts ask for, and seeded fault injection.

Command line (binds 127.0.0.1 only; port 0 picks a free port)::

    python -m memegauge.testing.server --port 0 --latency-ms 200 --fault-rate 0.1 --seed 7 \
        [--hang-s 30] [--retry-after 0.1] [--faults 429,500,timeout,truncated,garbage] [--models a,b] \
        [--style strict|realistic] [--text-only a,b] [--refusers a,b] [--capacity 48] [--hard-cap 96]

It prints exactly one line, ``listening on http://127.0.0.1:PORT/v1``, flushes stdout, and serves until
SIGINT/SIGTERM. From Python::

    with start_server(latency_ms=0, fault_rate=0.0, seed=0) as server:      # background thread
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        server.stats                                                           # a snapshot dict

    async with AsyncTestServer(latency_ms=50) as server:                     # inside a running loop
        ...

Endpoints
---------
``POST /v1/chat/completions``
    OpenAI request/response shape (``id``, ``object``, ``created``, ``model``, ``choices[i].message
    .content``, ``finish_reason``, ``usage``). Message content may be a string or a list of parts
    (``{"type": "text"}`` / ``{"type": "image_url", "image_url": {"url": ...}}``); images are counted in
    the stats. ``n`` choices, ``max_tokens`` / ``max_completion_tokens`` (cut at that many words,
    ``finish_reason="length"``), ``stop`` strings and ``stream`` (server-sent events, with
    ``stream_options.include_usage``) are honoured. The ``Authorization`` header is ignored and never
    logged (the access log is off).
``GET /v1/models``
    The configured model ids plus every model name requested so far (any name is accepted).
``GET /health``  → ``{"status": "ok"}``;  ``GET /stats`` → the stats snapshot (see `Stats`).
``GET /metrics``  → requests running and waiting, in vLLM's Prometheus format
(``vllm:num_requests_running{model_name="m"} 48.0``, ``vllm:num_requests_waiting{…}``).

Load
----
``capacity`` (``--capacity``) makes the server batch as a GPU server does: at most that many requests
are served at once, each for ``latency_ms`` (one step); the rest wait for a slot, so latency grows with
load beyond it. ``hard_cap`` (``--hard-cap``) answers 429 (``Retry-After``) to a request arriving with
that many already in flight, as an overloaded server or an API's concurrency limit does; these are
counted as ``overloaded``, not as faults.

Tokens are counted as whitespace-separated words (images count 0).

Answers
-------
Deterministic: a function of (server seed, model, every message's text and image URL, the request's
``seed``, whether temperature > 0, and the sample hints: the choice index when temperature > 0 plus the
optional body fields ``sample_index``/``user``/``metadata``). The same request always gets the same
answer; a different ``model`` gets a different one. Each model name also has a hash-derived *quality*
in [0, 1): better models write more "insight" sentences (starting ``Notably,`` / ``Crucially,`` /
``In context,``), and the rating and verdict generators reward those sentences in the answers they
are shown, so rankings of targets are consistent across judges instead of pure noise.

``response_format`` ``json_schema`` → a JSON document valid against the schema (see `schema_instance`);
``json_object`` → a JSON object. Otherwise the prompt (system + user text) is matched against `RULES`,
a small table of cue → generator, first match wins, with ``## Final Response:`` acting as a wrapper
around whatever body applies:

=========================  ==========================================================================
cue in the prompt          answer
=========================  ==========================================================================
``[Overall Judge]``        reason + ``[Instruction Following] X`` … ``[Overall Judge] X``, X in A, B,
                           Tie (both strong), Tie (both weak)
``Rating: [[``             1–3 sentences, then ``Rating: [[n]]`` (1..10)
``[USER 1]``               ``[USER 1]: A person …`` ×3
``[Synthesized Answer]``   ``[Synthesized Answer]`` + ``[Background Knowledge]``/``[Reasoning]`` body
``## Final Response:``     short analysis, then ``## Final Response:`` + the body the rest asks for
``[Background Knowledge]`` ``[Background Knowledge] …`` newline ``[Reasoning] …``
option lines + letters     ``B`` (single) / ``ACD`` (select all; ``N`` when allowed and nothing fits)
"JSON" + quoted keys       a JSON object with those keys (list/object/string values as sketched)
``Yes or No`` / ``Yes/No`` ``Yes. …`` or ``No. …``
(anything else)            a few sentences of prose built from the prompt's words
=========================  ==========================================================================

Styles
------
``strict`` (default) answers exactly in the requested format. ``realistic`` (``--style realistic``)
decides the same meaning and writes it the way real chat models do (`memegauge.testing.realistic`):
"The answer is (b).", option-text lines, lowercase letters, ``<think>`` blocks, judgment blocks ending
"Verdict: Model B", a plain "Tie", ratings as "7/10", JSON fenced in prose, and — for the models named
in ``refusers`` — refusals to analysis prompts, which a Scorer then quotes. What each reply means is
recorded by the sha256 of its text in the stats' ``truths`` (with ``requests_with_image`` per model),
so tests compare reports with it. Models named in ``text_only`` answer any image with HTTP 500 "image
input is not supported", as llama.cpp's server does for a model without a vision projector.

Faults
------
A ``random.Random(seed)`` is drawn exactly once per incoming chat request, in arrival order (so a
retry can succeed). With probability ``fault_rate`` the request gets one of the enabled faults, chosen
uniformly (the same single draw decides both): ``429`` (OpenAI-style error, ``Retry-After`` seconds
and ``retry-after-ms`` headers), ``500`` (error JSON), ``timeout`` (sleep ``hang_s`` before answering;
clients time out first), ``truncated`` (200 OK, the valid answer cut in half — invalid JSON for JSON
answers — with ``finish_reason="length"``), ``garbage`` (200 OK, junk symbols that match no format).
Invalid requests (non-JSON body, missing model/messages, bad fields) get 400 and no fault.
Every valid request (faulted or not) is answered ``latency_ms`` after it arrived (``asyncio.sleep``, so
hundreds can be in flight; the server's own work happens inside that time); a 400 comes at once.
"""

from memegauge.testing.server.app import AsyncTestServer, TestServer, spawn_server, start_server
from memegauge.testing.server.cli import main
from memegauge.testing.server.config import FAULT_KINDS, ServerConfig, Stats, model_quality
from memegauge.testing.server.schema import schema_instance
from memegauge.testing.server.text import RULES

__all__ = [
    "FAULT_KINDS",
    "ServerConfig",
    "Stats",
    "TestServer",
    "AsyncTestServer",
    "start_server",
    "spawn_server",
    "schema_instance",
    "model_quality",
    "RULES",
    "main",
]
