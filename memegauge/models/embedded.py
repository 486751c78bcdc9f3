"""The embedded offline model: llama.cpp in-process through `xllamacpp`.

Nothing to configure and no network: the built-in models ``embedded`` (Qwen2.5-Coder-1.5B-Instruct
Q4_K_M) and ``embedded-small`` (SmolLM2-135M-Instruct Q4_1) run from weights shipped as Python
packages. It is a functional default, not a trustworthy judge.

Weights
    ``embedded`` and ``embedded-small`` come from packaged weights, joined and verified once into the
    cache directory; ``spec.model`` may also be the path of any ``.gguf`` file. See
    `memegauge.models.weights`.

Serving
    One ``xllamacpp.Server`` per weights file and mode (alone or batched, below) per process, started
    lazily on the first call and shared by every backend on that file in that mode (a registry may use one
    model as several personas via ``system_prompt``). Serving knobs (``spec.serving``, also written inside
    ``extra``): ``n_parallel`` (decoding slots when batched, default ``spec.max_concurrency``, 8 for
    ``auto``), ``n_threads`` (default ``os.cpu_count()``).
    Options from ``spec.extra``: ``batched`` (default false, below), ``n_ctx`` (context per request,
    default 4096), ``cache_ram_mib`` (host prompt cache when batched, default 1024) and ``sampling``
    (extra llama.cpp request fields such as ``top_k``, ``min_p``, ``repeat_penalty``). The first
    backend to start a server fixes these; a later one asking for more gets a warning. llama.cpp
    logging is silenced (``verbosity = -1``); only a grammar that fails to parse still prints to
    stderr from C++ (it cannot be silenced per call) — the grammars here always parse. The server
    also listens on a random 127.0.0.1 port (xllamacpp always starts it); it is locked with a
    random API key so nothing else on the machine can use it.

Calls
    :meth:`EmbeddedBackend.complete` runs the blocking llama.cpp call in a worker thread
    (``asyncio.to_thread``; llama.cpp releases the GIL), so ``n_parallel`` requests decode
    concurrently in continuous batching. It streams internally so that a cancelled call (the
    engine's timeout) stops decoding at its next token instead of holding a slot. The output is
    ALWAYS constrained (see :mod:`memegauge.models.grammars`): JSON by schema (with ``maxItems`` /
    ``maxLength`` caps), ratings, verdicts, letters and sectioned text by GBNF; only plain TEXT
    is free, bounded by ``max_tokens``. Images become their ``alt_text`` (the model is text-only).
    Sampling: ``temperature``, ``top_p``, ``max_tokens`` from the request; the seed is
    ``params.seed`` (default :data:`DEFAULT_SEED`) plus ``sample_index`` × a large odd number, so
    T>0 draws are reproducible and repeated draws differ. Other llama.cpp sampler defaults stay
    (``top_k`` 40, ``min_p`` 0.05), which keeps T=1 sampling sane for small models.
    T=0 is greedy.

Same answers (issue 44)
    llama.cpp on the CPU computes a token's logits differently by the batch it is computed in, so a
    prompt batched with other requests' tokens, or continued from a cached prefix computed in another
    batch, gets other logits: up to 0.56 nats on a token's log-probability measured on a 2-core x86
    machine (threads 1 and 2 gave the same bits; running without the repacked weight buffers,
    ``no_extra_bufts``, did not remove it), enough to turn a near-tie (two demo runs gave MemeQA 50%
    and 25%). By default (``extra.batched`` false) the server
    therefore has one slot and never reuses a cached prompt: every request is computed alone from its
    first token, so its answer, log-probabilities included, is the same bit for bit whatever else is
    asked at the same time, in whatever order, after whatever, and on however many threads (measured
    equal for 1 and 2; tests/test_embedded_determinism.py). Calls beyond the first wait in llama.cpp's
    queue. ``extra.batched: true`` (it enters the cache key, since it changes answers) decodes
    ``n_parallel`` requests together and reuses cached prefixes: faster on many cores, but an answer may
    then differ from run to run in near-ties. Another machine may pick other kernels, and so other last
    bits; the engine's response cache is what gives bit-for-bit replays there.

Errors
    A prompt longer than the context → ``ModelCallError(BAD_REQUEST)`` (not retried; raise
    ``extra.n_ctx``); another 4xx → BAD_REQUEST; anything else from llama.cpp (5xx, exceptions, a
    server that fails to start) → SERVER (retried by the engine).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import secrets
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memegauge.models.grammars as grammars
from memegauge.models.seeds import draw_seed
from memegauge.models.openai_backend import first_token_logprobs
from memegauge.models.spec import ModelSpec
from memegauge.models.weights import QWEN_ID, resolve_model_path
from memegauge.types import (
    ChatRequest,
    ChatResult,
    ErrorClass,
    ImagePart,
    Message,
    ModelCallError,
    OutputKind,
    OutputSpec,
    TextPart,
    Usage,
)

DEFAULT_N_CTX = 4096
DEFAULT_SEED = 20250917
DEFAULT_CACHE_RAM_MIB = 1024
_SEED_MOD = 2**32 - 1  # llama.cpp reads 0xFFFFFFFF as "random seed": stay below it


# ==================================================================================================
# Shared servers
# ==================================================================================================


@dataclass
class SharedServer:
    """One running llama.cpp server and the settings it was started with."""

    server: Any
    path: Path
    n_ctx: int
    n_parallel: int
    n_threads: int
    load_s: float


_SERVERS: dict[str, SharedServer] = {}
_SERVERS_LOCK = threading.Lock()


def get_server(path: Path, n_ctx: int = DEFAULT_N_CTX, n_parallel: int = 2,
               n_threads: int | None = None,
               cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB, batched: bool = True) -> SharedServer:
    """The process's server for weights file `path` in its mode (`batched`, or one request at a time with
    one slot and no prompt cache), started on first use.

    `n_ctx` is the context of each of the `n_parallel` slots (the KV cache holds
    ``n_ctx * n_parallel`` tokens). Settings are fixed by the first caller; a later caller asking
    for a larger context or more slots gets a warning and the existing server."""
    if not batched:
        n_parallel, cache_ram_mib = 1, 0
    key = f"{Path(path).resolve()}|{'batched' if batched else 'alone'}"
    with _SERVERS_LOCK:
        shared = _SERVERS.get(key)
        if shared is not None:
            if n_ctx > shared.n_ctx or n_parallel > shared.n_parallel:
                warnings.warn(
                    f"embedded server for {Path(path).name} already runs with n_ctx={shared.n_ctx}"
                    f", n_parallel={shared.n_parallel}; ignoring n_ctx={n_ctx}, "
                    f"n_parallel={n_parallel}", RuntimeWarning, stacklevel=2)
            return shared
        shared = _start_server(Path(path), n_ctx, n_parallel,
                               n_threads or os.cpu_count() or 1, cache_ram_mib)
        _SERVERS[key] = shared
        return shared


def _start_server(path: Path, n_ctx: int, n_parallel: int, n_threads: int,
                  cache_ram_mib: int) -> SharedServer:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = n_parallel
    params.n_ctx = n_ctx * n_parallel  # llama.cpp splits n_ctx evenly over the slots
    params.kv_unified = False
    params.ctx_shift = False  # never silently drop the start of a prompt
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = -1  # silence llama.cpp's logging
    params.cache_ram_mib = cache_ram_mib
    params.offline = True
    params.ui = False
    params.endpoint_slots = False
    params.n_threads_http = 1
    params.api_keys = [secrets.token_hex(16)]  # the HTTP listener always starts: lock it
    started = time.monotonic()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - llama.cpp raises plain RuntimeError/ValueError
        raise ModelCallError(ErrorClass.SERVER,
                             f"could not start llama.cpp on {path.name}: {exc}") from exc
    return SharedServer(server=server, path=path, n_ctx=n_ctx, n_parallel=n_parallel,
                        n_threads=n_threads, load_s=time.monotonic() - started)


def shutdown_all() -> None:
    """Stop every embedded server of this process (they restart lazily on the next call)."""
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for shared in servers:
        shared.server = None  # dropping the last reference stops llama.cpp's threads
    del servers
    import gc

    gc.collect()


atexit.register(shutdown_all)


# ==================================================================================================
# Requests
# ==================================================================================================


def message_text(message: Message) -> str:
    """A message as text for a text-only model: text parts as they are, images as their alt text."""
    pieces = []
    for part in message.content:
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ImagePart):
            pieces.append(part.alt_text or "[an image this model cannot see]")
    return "\n".join(pieces)


def build_messages(request: ChatRequest, system_prompt: str | None = None) -> list[dict[str, str]]:
    """OpenAI-style messages; `system_prompt` is prepended (merged into a leading system message)."""
    messages = [{"role": m.role, "content": message_text(m)} for m in request.messages]
    if system_prompt:
        if messages and messages[0]["role"] == "system":
            messages[0] = {"role": "system",
                           "content": f"{system_prompt}\n\n{messages[0]['content']}"}
        else:
            messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def sampling_seed(seed: int | None, sample_index: int) -> int:
    """The llama.cpp seed of a draw: the request's seed (or :data:`DEFAULT_SEED`) moved by
    `sample_index`, so each repeated draw is different and each is reproducible."""
    return draw_seed(seed, sample_index, default=DEFAULT_SEED, modulus=_SEED_MOD)


def json_grammar(schema: dict[str, Any]) -> str:
    """llama.cpp grammar for a JSON schema (LLGuidance in this build): compact separators, no free
    whitespace, so a weak model cannot pad forever."""
    import xllamacpp

    bounded = dict(schema)
    bounded.setdefault("x-guidance", {"item_separator": ", ", "key_separator": ": ",
                                      "whitespace_flexible": False})
    return xllamacpp.json_schema_to_grammar(bounded)


def constraint(output: OutputSpec, max_tokens: int) -> dict[str, Any]:
    """The request fields that constrain decoding to `output` (a ``grammar``, or nothing).

    Free text inside a format gets a character budget that fits `max_tokens` after the format's
    fixed parts (:func:`memegauge.models.grammars.chars_budget`)."""
    kind = output.kind
    if kind is OutputKind.JSON:
        schema = output.json_schema or {"type": "object"}
        return {"grammar": json_grammar(grammars.fit_json_schema(schema, max_tokens))}
    if kind is OutputKind.RATING:
        lo, hi = output.rating_range
        return {"grammar": grammars.rating_grammar(lo, hi, grammars.chars_budget(max_tokens, 16))}
    if kind is OutputKind.VERDICT:
        reserve = 10 * (len(output.sections) + 1) + 4
        return {"grammar": grammars.verdict_grammar(
            output.sections, grammars.chars_budget(max_tokens, reserve, cap=800))}
    if kind is OutputKind.CHOICE:
        return {"grammar": grammars.choice_grammar(output.n_options, output.multi,
                                                   output.allow_none)}
    if output.sections:
        n = len(output.sections)
        per_section = grammars.chars_budget(max_tokens, 8 * n + 2, cap=1500 * n) // n
        return {"grammar": grammars.sections_grammar(output.sections, max(per_section, 8))}
    return {}


# ==================================================================================================
# The backend
# ==================================================================================================


class EmbeddedBackend:
    """`ModelBackend` running a GGUF in-process with llama.cpp (see the module docstring)."""

    vision = False

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        extra = dict(spec.extra or {})
        self.n_ctx = int(extra.get("n_ctx", DEFAULT_N_CTX))
        self.batched = bool(extra.get("batched", False))  # see "Same answers" in the module docstring
        self.n_parallel = (spec.serving.n_parallel or spec.fixed_concurrency) if self.batched else 1
        self.n_threads = spec.serving.n_threads or os.cpu_count() or 1
        self.cache_ram_mib = int(extra.get("cache_ram_mib", DEFAULT_CACHE_RAM_MIB))
        self.sampling = dict(extra.get("sampling", {}) or {})
        self._shared: SharedServer | None = None

    # ---- protocol --------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> ChatResult:
        started = time.monotonic()
        shared = self._shared
        if shared is None or shared.server is None:  # first call, or after shutdown_all()
            shared = await asyncio.to_thread(self.start)
        payload = self.payload(request)
        cancel = threading.Event()
        try:
            outcome = await asyncio.to_thread(_stream_call, shared.server, payload, cancel)
        finally:
            cancel.set()  # a cancelled await (engine timeout) stops decoding at the next token
        return self._result(outcome, time.monotonic() - started)

    async def aclose(self) -> None:
        """Nothing to do: the server is shared by the process (see :func:`shutdown_all`)."""

    # ---- helpers ---------------------------------------------------------------------------------

    def start(self) -> SharedServer:
        """Prepare the weights and get (or start) the shared server; blocking."""
        if self._shared is None or self._shared.server is None:
            path = resolve_model_path(self.spec.model or QWEN_ID)
            self._shared = get_server(path, self.n_ctx, self.n_parallel, self.n_threads,
                                      self.cache_ram_mib, batched=self.batched)
        return self._shared

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The llama.cpp chat-completions request for `request` (streaming, constrained)."""
        params = request.params
        body: dict[str, Any] = dict(self.sampling)
        body.update({
            "messages": build_messages(request, self.spec.system_prompt),
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": sampling_seed(params.seed, request.sample_index),
            "cache_prompt": self.batched,  # a prefix computed in another batch gives other logits
            "stream": True,
            "stream_options": {"include_usage": True},
        })
        body.update(constraint(request.output, params.max_tokens))
        if request.output.logprobs:  # llama.cpp's OpenAI-style first-token alternatives (a benchmark's P(yes))
            body.update({"logprobs": True, "top_logprobs": 5})
        return body

    def _result(self, outcome: dict[str, Any], latency: float) -> ChatResult:
        error = outcome.get("error")
        if error is not None:
            raise _classify(error)
        usage = outcome.get("usage") or {}
        return ChatResult(
            text=outcome["text"],
            usage=Usage(prompt_tokens=int(usage.get("prompt_tokens", 0)),
                        completion_tokens=int(usage.get("completion_tokens", 0))),
            finish_reason=outcome.get("finish_reason") or "stop",
            logprobs=outcome.get("logprobs") or {},
            served_model=self.spec.model,
            latency_s=latency,
        )


def _stream_call(server: Any, payload: dict[str, Any], cancel: threading.Event) -> dict[str, Any]:
    """Run one streaming chat completion; collect text, finish reason, usage, timings or error."""
    pieces: list[str] = []
    outcome: dict[str, Any] = {"finish_reason": None, "usage": None, "timings": None,
                               "error": None, "logprobs": None}

    def on_chunk(chunk: Any) -> bool:
        if isinstance(chunk, (str, bytes)):
            try:
                chunk = json.loads(chunk)
            except ValueError:
                return cancel.is_set()
        if not isinstance(chunk, dict):
            return cancel.is_set()
        if "error" in chunk:
            outcome["error"] = chunk["error"]
            return True
        for choice in chunk.get("choices") or ():
            content = (choice.get("delta") or {}).get("content")
            if content:
                pieces.append(content)
            if outcome["logprobs"] is None and choice.get("logprobs"):  # the first token's, kept once
                outcome["logprobs"] = first_token_logprobs(choice)
            if choice.get("finish_reason"):
                outcome["finish_reason"] = choice["finish_reason"]
        if chunk.get("usage"):
            outcome["usage"] = chunk["usage"]
        if chunk.get("timings"):
            outcome["timings"] = chunk["timings"]
        return cancel.is_set()

    try:
        returned = server.handle_chat_completions(payload, on_chunk)
    except Exception as exc:  # noqa: BLE001 - anything from the binding is a server failure
        raise ModelCallError(ErrorClass.SERVER, f"llama.cpp: {type(exc).__name__}: {exc}") from exc
    if isinstance(returned, dict) and "error" in returned:
        outcome["error"] = returned["error"]
    outcome["text"] = "".join(pieces)
    return outcome


def _classify(error: Any) -> ModelCallError:
    """Map a llama.cpp error object to a classified `ModelCallError`."""
    if not isinstance(error, dict):
        return ModelCallError(ErrorClass.SERVER, f"llama.cpp: {error}")
    code = int(error.get("code") or 500)
    kind = str(error.get("type") or "")
    message = str(error.get("message") or error)
    if kind == "exceed_context_size_error" or "context size" in message:
        return ModelCallError(ErrorClass.BAD_REQUEST,
                              f"prompt too long for the embedded model: {message} "
                              f"(raise `extra.n_ctx` of the model)")
    if code == 429:
        return ModelCallError(ErrorClass.RATE_LIMIT, f"llama.cpp: {message}")
    if 400 <= code < 500:
        return ModelCallError(ErrorClass.BAD_REQUEST, f"llama.cpp ({kind or code}): {message}")
    return ModelCallError(ErrorClass.SERVER, f"llama.cpp ({kind or code}): {message}")


def server_stats() -> list[dict[str, Any]]:
    """Running servers and their settings (for `memegauge models --check` and benchmarks)."""
    with _SERVERS_LOCK:
        return [{"path": str(s.path), "n_ctx": s.n_ctx, "n_parallel": s.n_parallel,
                 "n_threads": s.n_threads, "load_s": round(s.load_s, 2)}
                for s in _SERVERS.values()]


__all__ = [
    "EmbeddedBackend", "get_server", "shutdown_all", "server_stats", "constraint", "json_grammar",
    "build_messages", "message_text", "sampling_seed",
]
