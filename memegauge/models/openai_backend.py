"""Any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, llama.cpp server, Ollama …).

Uses the official `openai` async client with its own retries off: retrying is the engine's job, so
every attempt is classified and recorded once. Several `base_url`s are replicas of one model: each
attempt goes to the healthy replica with the fewest requests in flight, and a replica that fails
with a server error, a timeout or a refused connection is benched for a short cool-down while the
same attempt fails over to the next one.

Requests go through the client's documented raw `post` (its "undocumented endpoints" path) with a
plain JSON body and the JSON answer read directly: the typed `chat.completions.create` spends ~3 ms
of CPU per call re-walking the body through TypedDict annotations and building pydantic models,
which alone caps a 2-core client below the throughput of a local vLLM server.
"""

from __future__ import annotations

import base64
import json
import math
import mimetypes
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import openai

from memegauge.models.seeds import draw_seed
from memegauge.models.spec import ModelSpec
from memegauge.types import (
    ChatRequest,
    MAX_PAUSE_S,
    ChatResult,
    ErrorClass,
    ImagePart,
    ModelCallError,
    OutputKind,
    Usage,
    clamp_pause,
)

COOL_DOWN_S = 5.0
MIN_REDACTED_KEY = 8  # a key's value redacted from answers when at least this long
FAILOVER_CLASSES = (ErrorClass.SERVER, ErrorClass.TIMEOUT, ErrorClass.CONNECTION)


@dataclass
class Replica:
    """One base_url and its client; `outstanding` counts requests in flight."""

    url: str
    client: openai.AsyncOpenAI
    outstanding: int = 0
    benched_until: float = 0.0
    served: int = field(default=0)


class OpenAIBackend:
    """`backend: openai` models of the registry."""

    publishes_load = True  # vLLM/SGLang/llama.cpp servers may: `memegauge.models.server_load`

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.vision = spec.vision
        self._key = os.environ.get(spec.api_key_env, "") if spec.api_key_env else ""
        self.replicas = [Replica(url, self._client(url)) for url in spec.base_url]
        self._turn = 0

    def _client(self, url: str) -> openai.AsyncOpenAI:
        # Local servers need no key, but the client insists on one; "EMPTY" is vLLM's convention.
        # The aiohttp transport costs ~40% less CPU per call than the default one, which is what
        # bounds throughput at hundreds of calls per second (bench/engine_throughput.py).
        return openai.AsyncOpenAI(base_url=url, api_key=self._key or "EMPTY", max_retries=0,
                                  timeout=self.spec.timeout_s,
                                  http_client=openai.DefaultAioHttpClient(
                                      timeout=self.spec.timeout_s))

    async def complete(self, request: ChatRequest) -> ChatResult:
        body = self._body(request)
        tried: set[str] = set()
        while True:
            replica = self._pick(tried)
            tried.add(replica.url)
            try:
                return await self._send(replica, body)
            except ModelCallError as error:
                error.replica = replica.url  # type: ignore[attr-defined]  # whose limit learns from it
                if error.error_class not in FAILOVER_CLASSES:
                    raise
                replica.benched_until = time.monotonic() + COOL_DOWN_S
                if len(tried) == len(self.replicas):
                    raise

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.client.close()

    # ---- internals ------------------------------------------------------------------------------

    def _pick(self, tried: set[str]) -> Replica:
        """Least outstanding requests among healthy untried replicas; round-robin on ties."""
        now = time.monotonic()
        candidates = [r for r in self.replicas if r.url not in tried]
        healthy = [r for r in candidates if r.benched_until <= now] or candidates
        self._turn += 1
        order = {r.url: (i - self._turn) % len(self.replicas) for i, r in enumerate(self.replicas)}
        return min(healthy, key=lambda r: (r.outstanding, order[r.url]))

    async def _send(self, replica: Replica, body: dict[str, Any]) -> ChatResult:
        started = time.monotonic()
        replica.outstanding += 1
        try:
            # streamed, so that a reply longer than `max_reply_bytes` is cut there, not read whole
            response = await replica.client.post("/chat/completions", body=body, cast_to=httpx2.Response,
                                                 stream=True, stream_cls=None)
            try:
                raw = await _read_bounded(response, self.spec.max_reply_bytes)
            finally:
                await response.aclose()
            data = json.loads(raw)
        except openai.APIError as exc:
            raise self._classify(exc) from None
        except (ValueError, RecursionError) as exc:  # 200 with a body that is not JSON (or nested past reading)
            raise ModelCallError(ErrorClass.SERVER, f"invalid JSON from server: {str(exc)[:200]}") from None
        except httpx2.HTTPError as exc:  # the body broke off while it was read
            raise ModelCallError(ErrorClass.CONNECTION, f"the reply broke off: {self._scrub(str(exc))}") from None
        finally:
            replica.outstanding -= 1
        replica.served += 1
        return self._result(data, replica.url, time.monotonic() - started)

    def _result(self, data: Any, url: str, latency: float) -> ChatResult:
        """The answer read from any JSON a server sends: a reply of another shape than OpenAI's is one
        classified failure (`malformed`) naming what was wrong, never an exception from deep inside."""
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices:
            raise ModelCallError(ErrorClass.SERVER, "response without choices")
        choice = choices[0] if isinstance(choices, list) else None
        if not isinstance(choice, dict):
            raise malformed(f"choices is {_kind(choices)}, not a list of objects")
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            raise malformed(f"choices[0].message is {_kind(message)}, not an object")
        refusal = message.get("refusal")
        if refusal:
            raise ModelCallError(ErrorClass.REFUSAL, f"model refused: {str(refusal)[:200]!r}")
        usage = data.get("usage") or {}
        # vLLM, SGLang and DeepSeek put a reasoning model's thinking beside the answer.
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        finish = choice.get("finish_reason") or "stop"
        served = data.get("model") or ""
        return ChatResult(  # an answer that echoes the key is stored, and so shown, without it
            text=self._redact(_text(message.get("content"))),
            reasoning=self._redact(reasoning) if isinstance(reasoning, str) else "",
            usage=Usage(prompt_tokens=_count(usage, "prompt_tokens"),
                        completion_tokens=_count(usage, "completion_tokens")),
            finish_reason=finish if isinstance(finish, str) else "stop", logprobs=first_token_logprobs(choice),
            served_model=served if isinstance(served, str) else "", replica=url, latency_s=latency)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        messages = [self._message(m.role, m.content) for m in request.messages]
        if self.spec.system_prompt:
            messages.insert(0, {"role": "system", "content": self.spec.system_prompt})
        p = request.params
        body: dict[str, Any] = {"model": self.spec.model, "messages": messages,
                                "temperature": p.temperature, "max_tokens": p.max_tokens,
                                "top_p": p.top_p}
        if p.temperature:  # each repeated draw (sample_index) of a seed is its own, reproducibly
            body["seed"] = draw_seed(p.seed, request.sample_index)
        out = request.output
        if out.kind is OutputKind.JSON and out.json_schema and self.spec.structured_output:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": out.schema_name, "schema": out.json_schema}}
        if out.logprobs:  # the first token's alternatives: a benchmark's P(yes) against P(no)
            body["logprobs"], body["top_logprobs"] = True, 5
        body.update(self.spec.extra.get("extra_body") or {})
        return body

    def _message(self, role: str, parts: list[Any]) -> dict[str, Any]:
        if not any(isinstance(p, ImagePart) for p in parts) or not self.vision:
            return {"role": role, "content": "\n".join(
                p.alt_text if isinstance(p, ImagePart) else p.text for p in parts)}
        content = [{"type": "image_url", "image_url": {"url": _data_url(p, self.spec.max_image_pixels)}}
                   if isinstance(p, ImagePart) else {"type": "text", "text": p.text} for p in parts]
        return {"role": role, "content": content}

    def _classify(self, exc: openai.APIError) -> ModelCallError:
        message = self._scrub(str(getattr(exc, "message", None) or exc))
        refused = _connection_refused(exc)
        if refused:
            return ModelCallError(ErrorClass.SERVER, f"cannot connect: {self._scrub(refused)}")
        closed = _connection_closed(exc)
        if closed:  # the aiohttp transport reports it as a timeout, after a few ms
            return ModelCallError(ErrorClass.CONNECTION, f"connection closed by the server: {self._scrub(closed)}")
        if isinstance(exc, openai.APITimeoutError):
            return ModelCallError(ErrorClass.TIMEOUT, message)
        if isinstance(exc, openai.APIConnectionError):
            return ModelCallError(ErrorClass.SERVER, f"cannot connect: {message}")
        status = getattr(exc, "status_code", None)
        if status is not None and rejects_images(message):
            return ModelCallError(ErrorClass.NO_VISION, f"HTTP {status}: {message}")
        if status == 429:
            return ModelCallError(ErrorClass.RATE_LIMIT, message, _retry_after(exc))
        if status is not None and status >= 500:
            return ModelCallError(ErrorClass.SERVER, f"HTTP {status}: {message}")
        if status is not None:
            return ModelCallError(ErrorClass.BAD_REQUEST, f"HTTP {status}: {message}")
        return ModelCallError(ErrorClass.SERVER, message)

    def _scrub(self, text: str) -> str:
        """Never let a key reach a log, an exception or the store, even if a server echoes it."""
        return text.replace(self._key, "***") if self._key else text

    def _redact(self, answer: str) -> str:
        """A model's answer without the key's value (`***`), should it echo it. Keys shorter than
        `MIN_REDACTED_KEY` are placeholders ("EMPTY", "x"), not secrets: replacing them would change
        the answers that are scored."""
        return answer.replace(self._key, "***") if len(self._key) >= MIN_REDACTED_KEY else answer


def _connection_refused(exc: BaseException) -> str:
    """The aiohttp transport reports a refused connection as a connect *timeout*; look beneath."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionError) or (isinstance(seen, OSError)
                                                 and not isinstance(seen, TimeoutError)):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return ""


def _connection_closed(exc: BaseException) -> str:
    """A connection the server closed before it answered (aiohttp's `ServerDisconnectedError`, a
    `ServerConnectionError`), which the transport wraps as a connect *timeout*: not a slow model."""
    seen: BaseException | None = exc
    while seen is not None:
        names = {cls.__name__ for cls in type(seen).__mro__}
        if names & {"ServerDisconnectedError", "ServerConnectionError", "RemoteProtocolError"} and \
                not isinstance(seen, TimeoutError):
            return str(seen) or type(seen).__name__
        seen = seen.__cause__ or seen.__context__
    return ""


def _retry_after(exc: openai.APIError) -> float | None:
    """The pause a 429 asks for (``Retry-After``: seconds or an HTTP date; ``retry-after-ms``), clamped
    to `MAX_PAUSE_S`: a larger, infinite or unreadable value asks for the maximum, never more."""
    response = getattr(exc, "response", None)
    headers = response.headers if response is not None else {}
    value, millis = headers.get("retry-after"), headers.get("retry-after-ms")
    if value is None and millis is None:
        return None
    try:
        seconds = float(value) if value is not None else float(millis) / 1000
    except ValueError:
        seconds = _http_date_in(value)
    return clamp_pause(seconds)


def _http_date_in(value: str | None) -> float:
    """Seconds until an HTTP date (``Retry-After: Wed, 21 Oct 2026 07:28:00 GMT``); unreadable: the maximum."""
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value or "").timestamp() - time.time()
    except (TypeError, ValueError, IndexError, OverflowError):
        return MAX_PAUSE_S


# How servers word "this model takes no images": llama.cpp ("image input is not supported"),
# vLLM ("... is not a multimodal model", "At most 0 image(s) may be provided"), OpenAI ("does not
# support image inputs", "Invalid content type. image_url is only supported by certain models"),
# Ollama ("model does not support images"), SGLang and TGI ("image ... not supported"). Whatever the
# status code, such an answer means the registry is wrong, not that the server is down.
_NO_VISION = re.compile(
    r"(?i)image[ _](?:input|url|content)s?\b[^.\n]{0,40}\b(?:not|un)\s*supported"
    r"|(?:does not|doesn't|do not|cannot|can't)\s+(?:support|accept|handle|process)\s+(?:image|vision|multimodal)"
    r"|not\s+a\s+multi-?modal\s+model|at\s+most\s+0\s+image"
    r"|image_url\s+is\s+only\s+supported|multimodal\s+(?:input\s+)?(?:is\s+)?not\s+supported"
    r"|images?\s+(?:are|is)\s+not\s+supported|model\s+does\s+not\s+support\s+images|no\s+vision")


def rejects_images(message: str) -> bool:
    """Whether a server's error message says the model accepts no image input."""
    return bool(_NO_VISION.search(message or ""))


_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
               (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"), (b"BM", "image/bmp"))


def image_mime(data: bytes, path: Path | str = "") -> str:
    """The MIME type of image bytes, read from the bytes (a JPEG named .png is image/jpeg)."""
    for magic, mime in _SIGNATURES:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return mimetypes.guess_type(str(path))[0] or "application/octet-stream"


def _data_url(part: ImagePart, max_pixels: int | None = None) -> str:
    """The picture as a data URL; over `max_pixels` (the model's `max_image_pixels`), downscaled to fit."""
    from memegauge.images.check import downscaled_picture  # Pillow only when a picture is sent

    try:
        data = (downscaled_picture(part.path, max_pixels) if max_pixels else None) or part.path.read_bytes()
    except Exception as exc:  # unreadable, or Pillow cannot decode it to downscale (many types)
        raise ModelCallError(ErrorClass.BAD_REQUEST, f"cannot read image {part.path}: {exc}") from None
    return f"data:{image_mime(data, part.path)};base64,{base64.b64encode(data).decode()}"


def malformed(what: str) -> ModelCallError:
    """A reply whose JSON is not shaped as OpenAI's: a failed call of class `server`, retried, recorded."""
    return ModelCallError(ErrorClass.SERVER, f"malformed reply: {what}")


def _kind(value: Any) -> str:
    return f"a {type(value).__name__}" if value is not None else "missing"


def _text(content: Any) -> str:
    """The message's text: a string, or the text parts of a list of content parts (some servers send
    those); anything else is a malformed reply."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(p["text"] for p in content if isinstance(p.get("text"), str))
    raise malformed(f"choices[0].message.content is {_kind(content)}, not text")


def _count(usage: Any, key: str) -> int:
    """A token count of `usage`, 0 when absent or not a whole number >= 0."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


async def _read_bounded(response: httpx2.Response, limit: int) -> bytes:
    """The reply's body, at most `limit` bytes: a longer one is cut there and the call fails as
    truncated (the model's `max_reply_bytes`)."""
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise ModelCallError(ErrorClass.TRUNCATED, f"the reply is {int(length)} bytes, over max_reply_bytes "
                                                   f"({limit}): not read")
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise ModelCallError(ErrorClass.TRUNCATED, f"the reply passed max_reply_bytes ({limit}): cut there")
        chunks.append(chunk)
    return b"".join(chunks)


LOGPROB_SLACK = 1e-4
"""A log-probability up to this above 0 is a rounding error (read as 0); anything higher is impossible."""


def first_token_logprobs(choice: dict[str, Any]) -> dict[str, float]:
    """{token: log-probability} of the first answer token's top alternatives (OpenAI's `logprobs.content[0]
    .top_logprobs`), or {} when the server sent none; a token's surrounding spaces are kept as sent.

    Any other shape gives {}; a value that is not a finite number at most 0 (``inf``, ``nan``, ``1e308``,
    a string) is dropped, so only usable log-probabilities are stored (a benchmark whose yes or no token
    was dropped has no P(yes) for that answer, and its AUROC note counts it)."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    first = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
    alternatives = first.get("top_logprobs")
    kept: dict[str, float] = {}
    for alt in alternatives if isinstance(alternatives, list) else []:
        value = alt.get("logprob") if isinstance(alt, dict) else None
        if isinstance(alt, dict) and isinstance(alt.get("token"), str) and _usable_logprob(value):
            kept[alt["token"]] = min(0.0, float(value))
    return kept


def _usable_logprob(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and value <= LOGPROB_SLACK)
