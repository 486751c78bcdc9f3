"""Request parsing and validation (400 for what a real server refuses), and the answer to a valid request."""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from memegauge.testing import realistic
from memegauge.testing.server.config import ServerConfig
from memegauge.testing.server.text import (
    _Ctx, _GARBAGE_CHARS, _choice_meaning, _gen_json_text, _generate_text, _is_json_text, _prose,
    _rating_meaning, _verdict_meaning,
)
from memegauge.testing.server.schema import _instance


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


@dataclass
class _Parsed:
    model: str
    texts: list[tuple[str, str]]  # (role, text)
    image_urls: list[str]
    n: int = 1
    temperature: float = 1.0
    seed: Any = None
    max_tokens: int | None = None
    stop: list[str] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    response_format: dict[str, Any] | None = None
    hints: str = ""
    logprobs: bool = False  # the client asked for the first token's top log-probabilities


def _number(body: dict[str, Any], key: str, lo: float, hi: float, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise BadRequest(f"'{key}' must be a number in [{lo}, {hi}], got {value!r}", key)
    return float(value)


def _int(body: dict[str, Any], key: str, lo: int, hi: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        raise BadRequest(f"'{key}' must be an integer >= {lo}" + (f" and <= {hi}" if hi else ""), key)
    return value


def _parse_request(body: Any) -> _Parsed:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required and must be a non-empty string", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' is required and must be a non-empty array", "messages")
    texts: list[tuple[str, str]] = []
    images: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"{where} must be an object", where)
        role = message.get("role")
        if role not in _ROLES:
            raise BadRequest(f"{where}.role must be one of {sorted(_ROLES)}, got {role!r}", f"{where}.role")
        content = message.get("content")
        if isinstance(content, str):
            texts.append((role, content))
        elif content is None and role in ("assistant", "tool", "function"):
            texts.append((role, ""))
        elif isinstance(content, list):
            parts: list[str] = []
            for j, part in enumerate(content):
                pwhere = f"{where}.content[{j}]"
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif kind == "image_url":
                    image = part.get("image_url")
                    url = image.get("url") if isinstance(image, dict) else image
                    if not isinstance(url, str) or not url:
                        raise BadRequest(f"{pwhere}.image_url.url must be a non-empty string", pwhere)
                    images.append(url)
                else:
                    raise BadRequest(
                        f"{pwhere} must be {{'type': 'text', 'text': str}} or "
                        "{'type': 'image_url', 'image_url': {'url': str}}",
                        pwhere,
                    )
            texts.append((role, "\n".join(parts)))
        else:
            raise BadRequest(f"{where}.content must be a string or an array of parts", f"{where}.content")
    parsed = _Parsed(model=model, texts=texts, image_urls=images)
    parsed.temperature = _number(body, "temperature", 0.0, 2.0, 1.0)
    parsed.logprobs = body.get("logprobs") is True
    _number(body, "top_p", 0.0, 1.0, 1.0)
    parsed.n = _int(body, "n", 1, 128) or 1
    parsed.max_tokens = _int(body, "max_completion_tokens", 1, None) or _int(body, "max_tokens", 1, None)
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadRequest("'seed' must be an integer", "seed")
    parsed.seed = seed
    stop = body.get("stop")
    if isinstance(stop, str):
        parsed.stop = [stop] if stop else []
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        parsed.stop = [s for s in stop if s]
    elif stop is not None:
        raise BadRequest("'stop' must be a string or an array of strings", "stop")
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise BadRequest("'stream' must be a boolean", "stream")
    parsed.stream = bool(stream)
    options = body.get("stream_options") or {}
    parsed.include_usage = bool(isinstance(options, dict) and options.get("include_usage"))
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in ("text", "json_object", "json_schema"):
            raise BadRequest(
                "'response_format.type' must be 'text', 'json_object' or 'json_schema'",
                "response_format",
            )
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
                raise BadRequest(
                    "'response_format.json_schema.schema' must be a JSON Schema object",
                    "response_format.json_schema",
                )
        parsed.response_format = fmt if kind != "text" else None
    hints = {k: body[k] for k in ("sample_index", "user", "metadata") if body.get(k) is not None}
    parsed.hints = json.dumps(hints, sort_keys=True, default=str) if hints else ""
    return parsed


def _request_key(config: ServerConfig, req: _Parsed) -> int:
    """The answer's hash: server seed, model, messages (text and image URLs), seed param,
    temperature > 0, sample hints."""
    digest = hashlib.blake2b(digest_size=16)
    head = f"{config.seed}\x1f{req.model}\x1f{req.seed}\x1f{req.temperature > 0}\x1f{req.hints}"
    digest.update(head.encode())
    for role, text in req.texts:
        digest.update(f"\x1e{role}\x1f".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
    for url in req.image_urls:
        digest.update(b"\x1dimg\x1f")
        digest.update(url.encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest(), "big")


def _realistic(ctx: _Ctx, rule: str, text: str, config: ServerConfig,
               budget: int | None) -> tuple[str, dict[str, Any] | None]:
    """`--style realistic`: the same meaning, written the way real models write it, + ground truth."""
    rng = ctx.rng
    if rule == "choice":
        return realistic.choice_reply(rng, _choice_meaning(ctx), realistic.option_texts(ctx.text), budget)
    if rule == "verdict":
        dims, overall = _verdict_meaning(ctx)
        return realistic.judgment_reply(rng, dims, overall, ctx.pair(), realistic.REFUSAL in ctx.text)
    if rule == "rating":
        n, refused = _rating_meaning(ctx)
        return realistic.rating_reply(rng, n, text.rsplit("\n", 1)[0], refused)
    if rule == "prose" and ctx.model in config.refusers and rng.random() < 0.3:
        return realistic.REFUSAL, {"kind": "refusal", "readable": True}
    return realistic.restyle(rng, rule, text), None


def _answer(config: ServerConfig, req: _Parsed, key: int, index: int) -> tuple[str, str, dict[str, Any] | None]:
    """(content, generator name, ground truth of a realistic reply) for choice `index`."""
    sample = index if req.temperature > 0 else 0
    rng = random.Random(key * 131 + sample)
    prompt = "\n".join(text for role, text in req.texts if role in ("system", "developer", "user"))
    last_user = next((text for role, text in reversed(req.texts) if role == "user"), prompt)
    ctx = _Ctx(rng, req.model, prompt, last_user)
    fmt = req.response_format
    if fmt is not None and fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        return json.dumps(_instance(schema, schema, ctx, 0), ensure_ascii=False), "json_schema", None
    if fmt is not None and fmt.get("type") == "json_object":
        if _is_json_text(ctx):
            return _gen_json_text(ctx), "json_object", None
        return json.dumps({"answer": _prose(ctx, 2)}, ensure_ascii=False), "json_object", None
    text, rule = _generate_text(ctx)
    if ctx.truth is not None:  # a benchmark answer: its meaning, keyed by the prompt (the client knows it)
        return text, rule, ctx.truth
    if config.style != "realistic":
        return text, rule, None
    text, truth = _realistic(ctx, rule, text, config, req.max_tokens)
    return text, rule, truth


# The server sniffs on its own rather than with the client's `image_mime`: a check that shared the code it
# checks would agree with it even when both were wrong.
_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def _mime_mismatch(url: str) -> bool:
    """A data URL whose declared type is not what its bytes are (a JPEG sent as image/png): strict
    providers reject it, lenient ones may decode it wrongly."""
    head, _, data = url.partition(",")
    if not head.startswith("data:") or ";base64" not in head:
        return False
    import base64

    try:
        magic = base64.b64decode(data[:24])
    except ValueError:
        return True
    actual = next((mime for sig, mime in _MAGIC if magic.startswith(sig)), None)
    return actual is not None and head[5:].split(";")[0] != actual


def _word_count(text: str) -> int:
    return len(text.split())


def _cut_words(text: str, limit: int) -> str:
    for i, match in enumerate(re.finditer(r"\S+", text)):
        if i + 1 == limit:
            return text[: match.end()]
    return text


def _garbage(key: int, index: int) -> str:
    rng = random.Random(key ^ 0x9E3779B97F4A7C15 ^ index)
    return "".join(rng.choice(_GARBAGE_CHARS) for _ in range(rng.randint(24, 80))).strip() or "~#~"
