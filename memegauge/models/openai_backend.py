"""Any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, llama.cpp server, Ollama …).

Each attempt is one HTTP POST of `/chat/completions` over an `aiohttp` session per replica, sent as the
OpenAI client sends it (`Authorization: Bearer <key>`, JSON body, `OpenAI-Organization`/`OpenAI-Project`
from the environment, proxies from it) and its JSON answer read directly; no retries of its own:
retrying is the engine's job, so every attempt is classified and recorded once. Several `base_url`s are
replicas of one model: each attempt goes to the healthy replica with the fewest requests in flight, and
a replica that fails with a server error, a timeout or a refused connection is benched for a short
cool-down while the same attempt fails over to the next one.

Not the `openai` client itself: its typed `chat.completions.create` spent ~3 ms of CPU per call re-walking
the body through TypedDict annotations, its raw `post` still ~1 ms (request and header models, the httpx
layer over aiohttp), and importing it ~1.3 s (every API type, a few thousand `typing.ForwardRef`s
compiled): on a 2-core client those bound a local vLLM server's throughput, and `qa eval` spent more
CPU per call than a bare `openai` loop (bench/cpu_per_call.py).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from memegauge._version import __version__
from memegauge.images.encoded import PictureURL, image_mime, picture_url  # noqa: F401  (image_mime: found here too)
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
    """One base_url and its HTTP session (made in the event loop of the first call); `outstanding` counts
    requests in flight."""

    url: str
    session: aiohttp.ClientSession | None = None
    proxy: Any = None  # the proxy the environment names for this URL (and its credentials' header), read once
    proxy_headers: dict[str, str] | None = None
    headers: dict[str, str] = field(default_factory=dict)  # of each request: the backend's, and an http proxy's
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
        self.replicas = [Replica(url) for url in spec.base_url]
        self._turn = 0
        self._headers = request_headers(self._key)

    def _session(self, replica: Replica) -> aiohttp.ClientSession:
        if replica.session is None or replica.session.closed:
            replica.proxy, credentials = env_proxy(replica.url)  # first: a refused proxy opens no session
            # a proxy's credentials go on the request itself to an http:// server (the proxy forwards it), on
            # the tunnel's CONNECT to an https:// one (aiohttp sends `proxy_headers` there only)
            tunnelled = replica.url.lower().startswith("https:")
            replica.headers = {**self._headers, **(credentials if credentials and not tunnelled else {})}
            replica.proxy_headers = credentials if tunnelled else None
            # no connection limit of its own: the engine's gate bounds the calls in flight
            replica.session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=self.spec.timeout_s))
        return replica.session

    async def complete(self, request: ChatRequest) -> ChatResult:
        body = body_json(self._body(request))  # bytes, sent as they are
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
            if replica.session is not None:
                await replica.session.close()

    # ---- internals ------------------------------------------------------------------------------

    def _pick(self, tried: set[str]) -> Replica:
        """Least outstanding requests among healthy untried replicas; round-robin on ties."""
        now = time.monotonic()
        candidates = [r for r in self.replicas if r.url not in tried]
        healthy = [r for r in candidates if r.benched_until <= now] or candidates
        self._turn += 1
        order = {r.url: (i - self._turn) % len(self.replicas) for i, r in enumerate(self.replicas)}
        return min(healthy, key=lambda r: (r.outstanding, order[r.url]))

    async def _send(self, replica: Replica, body: bytes) -> ChatResult:
        started = time.monotonic()
        replica.outstanding += 1
        try:
            async with self._session(replica).post(replica.url.rstrip("/") + "/chat/completions", data=body,
                                                   headers=replica.headers, proxy=replica.proxy,
                                                   proxy_headers=replica.proxy_headers) as response:
                if response.status >= 400:  # an error body: its first bytes say why (never read whole)
                    raise self._status_error(response.status, await response.content.read(ERROR_BODY_BYTES),
                                             response.headers)
                # streamed, so that a reply longer than `max_reply_bytes` is cut there, not read whole
                raw = await _read_bounded(response, self.spec.max_reply_bytes)
            data = json.loads(raw)
        except ModelCallError:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise self._classify(exc) from None
        except (ValueError, RecursionError) as exc:  # 200 with a body that is not JSON (or nested past reading)
            raise ModelCallError(ErrorClass.SERVER, f"invalid JSON from server: {str(exc)[:200]}") from None
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

    def _classify(self, exc: BaseException) -> ModelCallError:
        """A request that got no HTTP answer: refused, closed by the server, timed out, or broken off."""
        refused = _connection_refused(exc)
        if refused:
            return ModelCallError(ErrorClass.SERVER, f"cannot connect: {self._scrub(refused)}")
        closed = _connection_closed(exc)
        if closed:  # e.g. a server restarting, or one that drops a connection it kept alive
            return ModelCallError(ErrorClass.CONNECTION, f"connection closed by the server: {self._scrub(closed)}")
        if isinstance(exc, TimeoutError):
            return ModelCallError(ErrorClass.TIMEOUT, "Request timed out.")
        if isinstance(exc, aiohttp.ClientPayloadError):  # the answer broke off while it was read
            return ModelCallError(ErrorClass.CONNECTION, f"the reply broke off: {self._scrub(str(exc))}")
        return ModelCallError(ErrorClass.SERVER, f"cannot connect: {self._scrub(str(exc) or type(exc).__name__)}")

    def _status_error(self, status: int, raw: bytes, headers: Any) -> ModelCallError:
        """An HTTP error answer, worded as the OpenAI client words it ("Error code: 429 - <the server's
        message>"; a body that is not OpenAI's error JSON is quoted, at most 500 characters)."""
        message = self._scrub(f"Error code: {status}" + (f" - {_error_message(raw)}" if raw.strip() else ""))
        if rejects_images(message):
            return ModelCallError(ErrorClass.NO_VISION, f"HTTP {status}: {message}")
        if status == 429:
            return ModelCallError(ErrorClass.RATE_LIMIT, message, _retry_after(headers))
        if status >= 500:
            return ModelCallError(ErrorClass.SERVER, f"HTTP {status}: {message}")
        return ModelCallError(ErrorClass.BAD_REQUEST, f"HTTP {status}: {message}")

    def _scrub(self, text: str) -> str:
        """Never let a key reach a log, an exception or the store, even if a server echoes it."""
        return text.replace(self._key, "***") if self._key else text

    def _redact(self, answer: str) -> str:
        """A model's answer without the key's value (`***`), should it echo it. Keys shorter than
        `MIN_REDACTED_KEY` are placeholders ("EMPTY", "x"), not secrets: replacing them would change
        the answers that are scored."""
        return answer.replace(self._key, "***") if len(self._key) >= MIN_REDACTED_KEY else answer


def request_headers(key: str) -> dict[str, str]:
    """The headers of every call: the key as a bearer token (local servers need none, but OpenAI's client
    always sends one: "EMPTY" is vLLM's convention), and the organisation and project the OpenAI client
    would send from the environment."""
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": f"memegauge/{__version__}", "Authorization": f"Bearer {key or 'EMPTY'}"}
    for variable, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
        if os.environ.get(variable):
            headers[header] = os.environ[variable]
    return headers


def env_proxy(url: str) -> tuple[Any, dict[str, str] | None]:
    """(proxy URL, the headers of its credentials) the environment names for `url`, or (None, None): read as the OpenAI
    client (httpx) reads it — ``HTTPS_PROXY`` / ``HTTP_PROXY`` by the URL's scheme, else ``ALL_PROXY``
    (upper or lower case); no proxy for a host ``NO_PROXY`` lists (a name, a domain suffix, ``host:port``,
    or ``*``); credentials only from the proxy URL itself (``http://user:pass@proxy:3128``), never from
    ``~/.netrc``.

    Read once per replica rather than by aiohttp's `trust_env` on every request: that looked the
    environment up and parsed ``~/.netrc`` in a thread for each call (~0.3 ms of CPU a call), ignored
    ``ALL_PROXY`` and ``NO_PROXY``'s ``host:port`` form, sent netrc credentials to the proxy, and a netrc entry
    for the server's host made every call fail (aiohttp refuses netrc credentials beside our `Authorization`
    header). A proxy that is not HTTP(S) (``socks5://``) is refused here, by name, rather than ignored: a run
    that silently went around the proxy its user set could reach what it must not."""
    from urllib.request import getproxies_environment, proxy_bypass_environment

    from yarl import URL

    target = URL(url)
    proxies = getproxies_environment()
    proxy = proxies.get(target.scheme) or proxies.get("all")
    if not proxy or not target.host or proxy_bypass_environment(f"{target.host}:{target.port}", proxies):
        return None, None
    parsed = URL(proxy if "://" in proxy else f"http://{proxy}")
    if parsed.scheme not in ("http", "https"):
        raise ModelCallError(ErrorClass.BAD_REQUEST, f"the environment's proxy for {target.scheme} URLs is "
                                                     f"{parsed.with_user(None)}: only http(s) proxies are "
                                                     "supported; unset it or name an http proxy (or list the host "
                                                     "in NO_PROXY)")
    headers = {"Proxy-Authorization": aiohttp.encode_basic_auth(parsed.user, parsed.password or "")} \
        if parsed.user else None
    return parsed.with_user(None), headers


def _error_message(raw: bytes) -> str:
    """The message of an error answer: OpenAI's `{"error": {"message": …}}` (or a bare `{"message": …}`),
    else the body itself, shortened."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text[:500]
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else text[:500]


def _connection_refused(exc: BaseException) -> str:
    """A refused connection (nothing listens there), under whatever aiohttp wraps it in."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        return str(exc.os_error) or str(exc)
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return ""


def _connection_closed(exc: BaseException) -> str:
    """A connection the server closed before it answered (aiohttp's `ServerDisconnectedError`, a
    `ServerConnectionError`): not a slow model."""
    seen: BaseException | None = exc
    while seen is not None:
        names = {cls.__name__ for cls in type(seen).__mro__}
        if names & {"ServerDisconnectedError", "ServerConnectionError", "RemoteProtocolError"} and \
                not isinstance(seen, TimeoutError):
            return str(seen) or type(seen).__name__
        seen = seen.__cause__ or seen.__context__
    return ""


def _retry_after(headers: Any) -> float | None:
    """The pause a 429 asks for (``Retry-After``: seconds or an HTTP date; ``retry-after-ms``), clamped
    to `MAX_PAUSE_S`: a larger, infinite or unreadable value asks for the maximum, never more."""
    headers = headers if headers is not None else {}
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


def _data_url(part: ImagePart, max_pixels: int | None = None) -> PictureURL:
    """The picture as a data URL; over `max_pixels` (the model's `max_image_pixels`), downscaled to fit.
    Encoded on its first use only (`memegauge.images.encoded`): a meme is shown in many calls."""
    try:
        return picture_url(part.path, max_pixels, part.sha256)
    except Exception as exc:  # unreadable, or Pillow cannot decode it to downscale (many types)
        raise ModelCallError(ErrorClass.BAD_REQUEST, f"cannot read image {part.path}: {exc}") from None


def body_json(body: dict[str, Any]) -> bytes:
    """The request body as JSON bytes (compact, UTF-8, as `json.dumps` writes it), each picture's data URL
    spliced in as it was encoded once (`PictureURL.json`) instead of escaped and copied again for every call.

    The body goes through json's C encoder with a placeholder where each picture is, and the pictures are
    joined in at the placeholders: a walk of the whole body in Python, leaf by leaf, cost ~0.25 ms a call."""
    pictures: list[PictureURL] = []
    messages = body.get("messages")
    if isinstance(messages, list):
        body = {**body, "messages": [_without_pictures(m, pictures) for m in messages]}
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if not pictures:
        return text
    pieces = text.split(_PLACEHOLDER_JSON)
    if len(pieces) != len(pictures) + 1:  # a text held the placeholder: never seen; splice nothing
        raise ModelCallError(ErrorClass.BAD_REQUEST, "a message holds MemeGauge's picture placeholder")
    out = [pieces[0]]
    for picture, piece in zip(pictures, pieces[1:], strict=True):
        out += (picture.json, piece)
    return b"".join(out)


# where a picture goes in the body as json writes it: a string no meme text or prompt holds (private-use
# characters around a random token drawn per process)
_PLACEHOLDER = f"\ue000memegauge-picture-{os.urandom(8).hex()}\ue000"
_PLACEHOLDER_JSON = json.dumps(_PLACEHOLDER, ensure_ascii=False).encode("utf-8")


def _without_pictures(message: Any, pictures: list[PictureURL]) -> Any:
    """The message with each picture's URL replaced by the placeholder (the picture appended to
    `pictures`, in the order json writes them); a message without pictures is returned as it is."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not any(_picture_of(part) is not None for part in content):
        return message
    parts = []
    for part in content:
        picture = _picture_of(part)
        if picture is None:
            parts.append(part)
        else:
            pictures.append(picture)
            parts.append({**part, "image_url": {**part["image_url"], "url": _PLACEHOLDER}})
    return {**message, "content": parts}


def _picture_of(part: Any) -> PictureURL | None:
    image = part.get("image_url") if isinstance(part, dict) else None
    url = image.get("url") if isinstance(image, dict) else None
    return url if isinstance(url, PictureURL) else None


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


ERROR_BODY_BYTES = 65_536
"""How much of an HTTP error's body is read: its message is in the first bytes."""


async def _read_bounded(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The reply's body, at most `limit` bytes: a longer one is cut there and the call fails as
    truncated (the model's `max_reply_bytes`)."""
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise ModelCallError(ErrorClass.TRUNCATED, f"the reply is {int(length)} bytes, over max_reply_bytes "
                                                   f"({limit}): not read")
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(65_536):
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
