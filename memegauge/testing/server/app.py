"""The aiohttp application, the in-process servers (`TestServer`, `AsyncTestServer`) and `spawn_server`."""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from aiohttp import web

from memegauge.testing import realistic
from memegauge.testing.server.config import HOST, MAX_BODY_BYTES, ServerConfig, Stats
from memegauge.testing.server.requests import (
    BadRequest, _Parsed, _answer, _cut_words, _garbage, _mime_mismatch, _parse_request, _request_key,
    _word_count,
)


def _error(status: int, message: str, kind: str, code: str | None = None, param: str | None = None,
           headers: dict[str, str] | None = None) -> web.Response:  # fmt: skip
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


class _App:
    """The server's state on its event loop: config, stats, fault RNG, the aiohttp runner."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.stats = Stats()
        self.fault_rng = random.Random(config.seed)
        self.seen_models: dict[str, None] = {}
        self.runner: web.AppRunner | None = None
        self.port: int | None = None
        self.slots: asyncio.Semaphore | None = None  # batching (`capacity`), made on the server's loop

    def draw_fault(self) -> str | None:
        """One draw per request, in arrival order: a fault kind with probability fault_rate."""
        r = self.fault_rng.random()
        faults, rate = self.config.faults, self.config.fault_rate
        if not faults or r >= rate:
            return None
        return faults[min(int(r / rate * len(faults)), len(faults) - 1)]

    def reset(self) -> None:
        """Zero the stats and restart the fault sequence from the seed."""
        self.stats.reset()
        self.fault_rng = random.Random(self.config.seed)

    # ---- handlers ---------------------------------------------------------------------------

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def stats_handler(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.snapshot())

    async def models(self, request: web.Request) -> web.Response:
        names = list(dict.fromkeys([*self.config.models, *self.seen_models]))
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "memegauge-testing"} for m in names]
        return web.json_response({"object": "list", "data": data})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """Latency is counted from the request's arrival and the server's own work happens inside
        it: a burst of requests is parsed and answered while they wait, so ``latency_ms`` stays the
        response time under load instead of growing with the queue."""
        stats, config = self.stats, self.config
        loop = asyncio.get_running_loop()
        arrived = loop.time()
        fault = self.draw_fault()  # before any await: arrival order
        stats.add("requests")
        if config.hard_cap and stats.in_flight >= config.hard_cap:  # an API's concurrency limit
            stats.add("overloaded")
            return self._too_many()
        stats.enter()
        holding = False  # a batching slot, released when answered
        try:
            await asyncio.sleep(0)  # let the rest of a burst register its arrival time first
            try:
                body = json.loads(await request.read())
            except (ValueError, UnicodeDecodeError):
                stats.add("bad_requests")
                return _error(400, "the request body is not valid JSON", "invalid_request_error")
            try:
                req = _parse_request(body)
            except BadRequest as exc:
                stats.add("bad_requests")
                return _error(400, str(exc), "invalid_request_error", param=exc.param)
            stats.count("models", req.model)
            self.seen_models.setdefault(req.model, None)
            if req.image_urls:
                stats.add("images", len(req.image_urls))
                stats.count("requests_with_image", req.model)
                stats.add("image_mime_mismatch", sum(_mime_mismatch(url) for url in req.image_urls))
                if req.model in config.text_only:  # llama.cpp serving a text-only model
                    return _error(500, "image input is not supported - hint: if this is unexpected, you "
                                  "may need to provide the mmproj", "server_error")
            if fault is not None:
                stats.count("faults", fault)
            response: web.StreamResponse | None = None
            if fault == "429":
                wait = config.retry_after
                response = _error(
                    429,
                    "Rate limit reached for requests (injected fault). Please retry shortly.",
                    "requests",
                    code="rate_limit_exceeded",
                    headers={"Retry-After": f"{wait:g}", "retry-after-ms": str(int(round(wait * 1000)))},
                )
            elif fault == "500":
                response = _error(
                    500,
                    "The server had an error while processing your request (injected fault).",
                    "server_error",
                )
            else:
                payload = self._completion(req, fault)
                if not req.stream:
                    response = web.json_response(payload)
            if config.capacity:  # batching: served once a slot is free, latency_ms from then
                await self._batch_slot()
                holding, arrived = True, loop.time()
            delay = arrived + config.latency_ms / 1000 - loop.time()
            if fault == "timeout":
                delay += config.hang_s
            if delay > 0:
                await asyncio.sleep(delay)
            if response is None:
                response = await self._stream(request, req, payload)
            if fault not in ("429", "500"):
                stats.add("completed")
            return response
        except asyncio.CancelledError:
            stats.add("cancelled")
            raise
        finally:
            if holding:
                self._slots().release()
            stats.leave()

    def _slots(self) -> asyncio.Semaphore:
        if self.slots is None:
            self.slots = asyncio.Semaphore(self.config.capacity)
        return self.slots

    async def _batch_slot(self) -> None:
        """Wait for one of `capacity` slots (the caller releases it)."""
        self.stats.add("waiting")
        try:
            await self._slots().acquire()
        finally:
            self.stats.add("waiting", -1)

    def _too_many(self) -> web.Response:
        wait = self.config.retry_after
        return _error(429, f"Too many requests in flight (at most {self.config.hard_cap}); retry shortly.",
                      "requests", code="rate_limit_exceeded",
                      headers={"Retry-After": f"{wait:g}", "retry-after-ms": str(int(round(wait * 1000)))})

    async def metrics(self, request: web.Request) -> web.Response:
        """Load in vLLM's Prometheus format: requests running (in a slot) and waiting for one."""
        snap = self.stats.snapshot()
        running = snap["in_flight"] - snap["waiting"]
        lines = []
        label = f'{{model_name="{self.config.models[0] if self.config.models else "memegauge-test"}"}}'
        lines += [f"vllm:num_requests_running{label} {float(running)}",  # one server: one batch
                  f"vllm:num_requests_waiting{label} {float(snap['waiting'])}"]
        text = ("# HELP vllm:num_requests_running Number of requests currently running on GPU.\n"
                "# TYPE vllm:num_requests_running gauge\n" + "\n".join(lines) + "\n")
        return web.Response(text=text, content_type="text/plain")

    def _completion(self, req: _Parsed, fault: str | None) -> dict[str, Any]:
        """The chat.completion object for `req`, with a 'truncated'/'garbage' fault applied."""
        key = _request_key(self.config, req)
        choices = []
        completion_tokens = 0
        for index in range(req.n):
            content, rule, truth = _answer(self.config, req, key, index)
            self.stats.count("formats", rule)
            finish = "stop"
            for stop in req.stop:
                cut = content.find(stop)
                if cut >= 0:
                    content = content[:cut]
            if req.max_tokens is not None and _word_count(content) > req.max_tokens:
                content, finish = _cut_words(content, req.max_tokens), "length"
            if fault == "truncated":
                content, finish = content[: len(content) // 2], "length"
            elif fault == "garbage":
                content = _garbage(key, index)
            p_yes = None
            if truth is not None and truth.get("kind") == "benchmark":
                self.stats.record_truth(truth["key"], truth)
                truth, p_yes = None, truth.get("p_yes")
            if truth is not None:
                if finish == "length" or fault == "garbage":
                    truth = {"kind": truth["kind"], "readable": False, "truncated": finish == "length"}
                for text in realistic.stored_forms(content):
                    self.stats.record_truth(realistic.truth_key(text), truth)
            completion_tokens += _word_count(content)
            choices.append(
                {
                    "index": index,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": _logprobs(content, p_yes) if req.logprobs and req.model not in self.config.no_logprobs
                    else None,
                    "finish_reason": finish,
                }
            )
        prompt_tokens = sum(_word_count(text) for _, text in req.texts)
        self.stats.add("prompt_tokens", prompt_tokens)
        self.stats.add("completion_tokens", completion_tokens)
        return {
            "id": f"chatcmpl-{key:032x}"[:33],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "system_fingerprint": "memegauge-testing",
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    async def _stream(self, request: web.Request, req: _Parsed, payload: dict[str, Any]) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        base = {k: payload[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        choices, usage = payload["choices"], payload["usage"]

        async def send(choice_list: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {**base, "choices": choice_list, **extra}
            await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

        for choice in choices:
            index, content = choice["index"], choice["message"]["content"]
            opening = {"role": "assistant", "content": ""}
            await send([{"index": index, "delta": opening, "finish_reason": None}])
            pieces = re.findall(r"\S+\s*|\s+", content)
            step = max(1, len(pieces) // 4)
            for i in range(0, len(pieces), step):
                delta = {"content": "".join(pieces[i : i + step])}
                await send([{"index": index, "delta": delta, "finish_reason": None}])
            await send([{"index": index, "delta": {}, "finish_reason": choice["finish_reason"]}])
        if req.include_usage:
            await send([], usage=usage)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        self.stats.add("streamed")
        return response

    # ---- lifecycle --------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/health", self.health)
        app.router.add_get("/v1/health", self.health)
        app.router.add_get("/stats", self.stats_handler)
        app.router.add_get("/metrics", self.metrics)
        return app

    async def start(self, port: int = 0) -> int:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        self.runner = web.AppRunner(
            self.make_app(),
            access_log=None,  # never log requests (they carry Authorization headers)
            handler_cancellation=True,  # a client that gives up (timeout fault) ends its handler
            shutdown_timeout=self.config.shutdown_timeout,
        )
        await self.runner.setup()
        site = web.SockSite(self.runner, sock, backlog=4096)
        await site.start()
        self.port = sock.getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self.runner is not None:
            runner, self.runner = self.runner, None
            await runner.cleanup()


class _ServerBase:
    """What the thread and the async variants share. Their arguments: the fields of `ServerConfig`
    (``latency_ms``, ``fault_rate``, ``seed``, ``faults``, ``hang_s``, ``retry_after``, ``models``,
    ``shutdown_timeout``, ``style``, ``text_only``, ``refusers``, ``no_logprobs``) and ``port`` (0: any free one)."""

    _app: _App

    def __init__(self, latency_ms: float = 0.0, fault_rate: float = 0.0, seed: int = 0, *, port: int = 0,
                 **options: Any) -> None:
        self._app = _App(ServerConfig(latency_ms=latency_ms, fault_rate=fault_rate, seed=seed, **options))
        self._requested_port = port

    @property
    def config(self) -> ServerConfig:
        """The live configuration; changing a field (e.g. ``fault_rate``) affects later requests."""
        return self._app.config

    @property
    def port(self) -> int:
        if self._app.port is None:
            raise RuntimeError("the server is not started")
        return self._app.port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return f"{self.url}/v1"

    @property
    def stats(self) -> dict[str, Any]:
        """A snapshot of the counters (see `Stats`)."""
        return self._app.stats.snapshot()


class TestServer(_ServerBase):
    """The server on a background thread with its own event loop; usable as a context manager.

    ``TestServer(latency_ms=..., fault_rate=..., seed=..., faults=..., hang_s=..., retry_after=...,
    models=..., port=0).start()`` → the object with ``.base_url``, ``.stats``, ``.reset()``,
    ``.stop()``.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, latency_ms: float = 0.0, fault_rate: float = 0.0, seed: int = 0, *, port: int = 0,
                 **options: Any) -> None:
        super().__init__(latency_ms, fault_rate, seed, port=port, **options)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> TestServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="memegauge-test-server", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._error is not None:
            self._thread.join(timeout=5)
            self._thread = None
            raise RuntimeError(f"test server failed to start: {self._error}") from self._error
        if not self._ready.is_set():
            raise RuntimeError("test server did not start within 30 s")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(self._app.start(self._requested_port))
            except BaseException as exc:  # reported to start()
                self._error = exc
                return
            finally:
                self._ready.set()
            loop.run_forever()
            loop.run_until_complete(self._app.stop())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            loop.close()

    def reset(self) -> None:
        """Zero the stats and restart the fault sequence (safe from any thread)."""
        if self._loop is not None and self._loop.is_running():
            done = threading.Event()

            def _do() -> None:
                self._app.reset()
                done.set()

            self._loop.call_soon_threadsafe(_do)
            done.wait(timeout=10)
        else:
            self._app.reset()

    def stop(self) -> None:
        """Stop serving (in-flight requests get `shutdown_timeout` to finish) and join the thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._thread = None

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class AsyncTestServer(_ServerBase):
    """The server on the current event loop: ``async with AsyncTestServer(latency_ms=50) as s:``.
    Same arguments as `TestServer`."""

    async def start(self) -> AsyncTestServer:
        await self._app.start(self._requested_port)
        return self

    async def stop(self) -> None:
        await self._app.stop()

    def reset(self) -> None:
        self._app.reset()

    async def __aenter__(self) -> AsyncTestServer:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()


def _logprobs(content: str, p_yes: float | None) -> dict[str, Any]:
    """OpenAI's `logprobs` of a choice, first token only: for a yes/no answer its two alternatives at the
    probabilities the server meant (`p_yes`, recorded in the benchmark truth), else the first word alone."""
    word = (content.split() or [""])[0].rstrip(".,!")
    if p_yes is None:
        top = [{"token": word, "logprob": 0.0, "bytes": None}]
    else:
        top = [{"token": token, "logprob": math.log(max(p, 1e-12)), "bytes": None}
               for token, p in (("Yes", p_yes), ("No", 1.0 - p_yes))]
        top.sort(key=lambda alt: -alt["logprob"])
    return {"content": [{"token": top[0]["token"], "logprob": top[0]["logprob"], "bytes": None, "top_logprobs": top}]}


def start_server(latency_ms: float = 0.0, fault_rate: float = 0.0, seed: int = 0, **kwargs: Any) -> TestServer:
    """Start a `TestServer` on a background thread and return it (also a context manager)."""
    return TestServer(latency_ms=latency_ms, fault_rate=fault_rate, seed=seed, **kwargs).start()


def spawn_server(latency_ms: float = 0.0, *options: str) -> tuple[subprocess.Popen[str], str]:
    """Start the server in its own process (so its CPU is not the caller's, as benchmarks need);
    return the process and its base URL. The caller terminates it. `options`: more command-line
    arguments (e.g. "--capacity", "48")."""
    server = subprocess.Popen([sys.executable, "-m", "memegauge.testing.server", "--port", "0",
                               "--latency-ms", str(latency_ms), *options], stdout=subprocess.PIPE, text=True)
    line = (server.stdout.readline() if server.stdout else "").strip()
    if not line.startswith("listening on "):
        server.kill()
        raise RuntimeError(f"test server did not start: {line!r}")
    return server, line.removeprefix("listening on ")
