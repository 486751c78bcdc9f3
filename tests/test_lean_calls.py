"""The lean call path (issue 44): each picture read and encoded once, the request body assembled around it,
prompt folders looked up once, and the calls that finish together committed together — each still stored
before any stage uses it."""

from __future__ import annotations

import asyncio
import base64
import json
import sqlite3
from pathlib import Path

import pytest
from PIL import Image

from memegauge.engine import Engine, Store
from memegauge.images import encoded
from memegauge.images.encoded import PictureURL, picture_url
from memegauge.models.openai_backend import OpenAIBackend, body_json
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.testing.server import start_server
from helpers.net import chat_server
from memegauge.types import ChatRequest, ImagePart, Message, SamplingParams


def _picture(path: Path, colour: str, size: tuple[int, int] = (40, 30)) -> Path:
    Image.new("RGB", size, colour).save(path, format="PNG")
    return path


def _vlm(url: str, concurrency: int = 16) -> ModelRegistry:
    return ModelRegistry({"vlm": ModelSpec(name="vlm", backend="openai", model="vlm", base_url=url,
                                           max_concurrency=concurrency, timeout_s=30)})


def _question(index: int, picture: Path) -> ChatRequest:
    return ChatRequest(model="vlm", stage="t", params=SamplingParams(temperature=0, max_tokens=10),
                       messages=[Message.user(ImagePart.of(picture), f"Question {index}: A) yes B) no. "
                                                                     "Answer with one letter.")])


def test_a_picture_is_read_and_encoded_once_however_many_calls_show_it(tmp_path):
    pictures = [_picture(tmp_path / "a.png", "red"), _picture(tmp_path / "b.png", "blue")]
    encoded.CACHE.clear()
    with start_server(seed=3) as server:
        async def ask():
            engine = Engine(Store(tmp_path / "s.db"), _vlm(server.base_url))
            try:
                return await engine.chat_many([_question(i, pictures[i % 2]) for i in range(12)])
            finally:
                await engine.aclose()

        outcomes = asyncio.run(ask())
        assert all(o.ok for o in outcomes)
        assert server.stats["images"] == 12 and server.stats["image_mime_mismatch"] == 0
    assert encoded.CACHE.encoded == 2  # 12 calls, 2 pictures


def test_a_picture_sent_is_its_file_and_an_edited_file_is_read_afresh(tmp_path):
    path = _picture(tmp_path / "m.png", "red")
    first = picture_url(path)
    assert picture_url(path) is first
    assert base64.b64decode(first.split(",", 1)[1]) == path.read_bytes()
    _picture(path, "green", (41, 30))
    second = picture_url(path)
    assert second != first and base64.b64decode(second.split(",", 1)[1]) == path.read_bytes()
    assert json.loads(second.json) == second


def test_the_picture_cache_is_bounded_in_bytes_and_drops_the_least_recently_used():
    pictures = {name: PictureURL(f"data:image/png;base64,{name * 1000}") for name in "abcde"}
    size = pictures["a"].size
    cache = encoded._Cache(limit=3 * size)
    for name in "abc":
        cache.put((name,), pictures[name])
    assert cache.get(("a",)) is pictures["a"]  # used: now the most recent
    cache.put(("d",), pictures["d"])
    cache.put(("e",), pictures["e"])
    assert cache.held <= 3 * size and len(cache.items) == 3
    assert cache.get(("b",)) is None and cache.get(("c",)) is None
    assert all(cache.get((name,)) is pictures[name] for name in "ade")
    cache.put(("huge",), PictureURL("data:image/png;base64," + "x" * 4 * size))  # larger than the cache
    assert cache.get(("huge",)) is None and cache.held <= 3 * size


def test_the_body_is_the_json_of_the_request_with_each_picture_spliced_in(tmp_path):
    path, other = _picture(tmp_path / "m.png", "red"), _picture(tmp_path / "n.png", "blue")
    spec = ModelSpec(name="m", backend="openai", model="m", base_url="http://127.0.0.1:9/v1",
                     extra={"extra_body": {"chat_template_kwargs": {"note": "café ✓ \"quoted\"\n"}}})
    request = ChatRequest(model="m", messages=[Message.user(ImagePart.of(path), "Which one?\tSay \"A\"."),
                                               Message.user("ça va ✓")])
    body = OpenAIBackend(spec)._body(request)
    sent = body_json(body)
    plain = json.loads(json.dumps(body))  # the same body with each picture an ordinary string
    assert json.loads(sent) == plain
    assert plain["messages"][0]["content"][0]["image_url"]["url"] == picture_url(path)
    two = ChatRequest(model="m", messages=[Message.user(ImagePart.of(path), "first", ImagePart.of(other), "second")])
    assert json.loads(body_json(OpenAIBackend(spec)._body(two)))["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": picture_url(path)}}, {"type": "text", "text": "first"},
        {"type": "image_url", "image_url": {"url": picture_url(other)}}, {"type": "text", "text": "second"}]
    text_only = {"model": "m", "messages": [{"role": "user", "content": "hi ✓"}], "temperature": 0.0}
    assert body_json(text_only) == json.dumps(text_only, ensure_ascii=False, separators=(",", ":")).encode()


def test_calls_finishing_together_share_a_commit_and_each_is_stored_before_it_is_used(tmp_path):
    picture = _picture(tmp_path / "m.png", "red")
    store = Store(tmp_path / "s.db")
    run_id, execution_id = store.open_run("r", "t", {}, "h", None, "1")
    commits: list[str] = []
    store.db.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    reader = sqlite3.connect(tmp_path / "s.db")  # another connection sees committed rows only
    with start_server(latency_ms=50, seed=3) as server:
        async def ask():
            engine = Engine(store, _vlm(server.base_url, concurrency=32), run_id=run_id,
                            execution_id=execution_id)

            async def one(index: int) -> bool:
                outcome = await engine.chat(_question(index, picture))
                row = reader.execute("SELECT text FROM calls WHERE key=?", (outcome.record.key,)).fetchone()
                linked = reader.execute("SELECT COUNT(*) FROM run_calls WHERE key=?",
                                        (outcome.record.key,)).fetchone()[0]
                return outcome.ok and row == (outcome.text,) and linked == 1

            try:
                stored = await asyncio.gather(*(one(i) for i in range(32)))
                again = await asyncio.gather(*(one(i) for i in range(32)))  # cached: linked, not called
                return stored, again, engine.calls_made
            finally:
                await engine.aclose()

        stored, again, made = asyncio.run(ask())
    reader.close()
    assert all(stored) and all(again) and made == 32
    assert len(commits) < 32  # 64 calls and links, committed in bursts


def test_a_prompt_is_rendered_without_looking_for_the_prompt_folders_again(monkeypatch):
    from memegauge.prompts import render_prompt

    variables = {"question": "Who?", "options": ["a", "b", "c", "d"], "letters": "ABCD"}
    first = render_prompt("memeqa_single", **variables)
    looked: list[Path] = []
    is_dir = Path.is_dir
    monkeypatch.setattr(Path, "is_dir", lambda self: looked.append(self) or is_dir(self))
    assert all(render_prompt("memeqa_single", **variables) == first for _ in range(20))
    assert looked == []


def test_the_backend_sends_the_key_and_words_http_errors_as_the_openai_client(tmp_path, monkeypatch):
    """The backend's own HTTP POST: the key as a bearer token and the organisation from the environment;
    an error answer's message read from OpenAI's error JSON (or the body as text); 429 with its pause."""
    from aiohttp import web

    from memegauge.types import ErrorClass, ModelCallError

    seen: list[dict[str, str]] = []
    answers = [web.json_response({"error": {"message": "Rate limit reached"}}, status=429,
                                 headers={"Retry-After": "0.5"}),
               web.Response(text="image input is not supported - you may need to provide the mmproj", status=500),
               web.json_response({"error": {"message": "maximum context length is 4096"}}, status=400),
               web.json_response({"model": "m", "choices": [{"message": {"content": "B"}, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 7, "completion_tokens": 1}})]

    async def chat(request: web.Request) -> web.Response:
        seen.append({**request.headers, "body": (await request.read()).decode()})
        return answers[len(seen) - 1]

    async def go() -> list:
        async with chat_server(chat) as port:
            backend = OpenAIBackend(ModelSpec(name="m", backend="openai", model="m", api_key_env="LEAN_KEY",
                                              base_url=f"http://127.0.0.1:{port}/v1"))
            out = []
            for _ in answers:
                try:
                    out.append(await backend.complete(ChatRequest(model="m", messages=[Message.user("hi")])))
                except ModelCallError as error:
                    out.append(error)
            await backend.aclose()
        return out

    monkeypatch.setenv("LEAN_KEY", "sk-lean-test-key")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-lean")
    limited, no_vision, bad, answer = asyncio.run(go())
    assert seen[0]["Authorization"] == "Bearer sk-lean-test-key" and seen[0]["OpenAI-Organization"] == "org-lean"
    assert json.loads(seen[0]["body"])["messages"] == [{"role": "user", "content": "hi"}]
    assert limited.error_class is ErrorClass.RATE_LIMIT and limited.retry_after == 0.5
    assert str(limited).endswith(": Error code: 429 - Rate limit reached")
    assert no_vision.error_class is ErrorClass.NO_VISION
    assert bad.error_class is ErrorClass.BAD_REQUEST
    assert str(bad).endswith(": HTTP 400: Error code: 400 - maximum context length is 4096")
    assert answer.text == "B" and answer.usage.prompt_tokens == 7


def test_a_refused_connection_and_a_silent_server_are_classified(tmp_path):
    import socket

    from memegauge.types import ErrorClass, ModelCallError

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    silent = socket.socket()  # listens, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen()

    async def attempt(url: str, timeout_s: float) -> ModelCallError:
        backend = OpenAIBackend(ModelSpec(name="m", backend="openai", model="m", base_url=url, timeout_s=timeout_s))
        try:
            await backend.complete(ChatRequest(model="m", messages=[Message.user("hi")]))
        except ModelCallError as error:
            return error
        finally:
            await backend.aclose()
        raise AssertionError("no error")

    try:
        refused = asyncio.run(attempt(f"http://127.0.0.1:{port}/v1", 5))
        slow = asyncio.run(attempt(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", 0.3))
    finally:
        silent.close()
    assert refused.error_class is ErrorClass.SERVER and "cannot connect" in str(refused)
    assert slow.error_class is ErrorClass.TIMEOUT


def test_an_answer_is_parsed_once(tmp_path):
    from memegauge.models.scripted import register_script
    from memegauge.parse import parse_rating

    register_script("lean-rater", lambda request: "Clear. Rating: [[7]]")
    registry = ModelRegistry({"rater": ModelSpec(name="rater", backend="scripted", model="lean-rater")})
    parsed: list[str] = []

    def parse(text: str):
        parsed.append(text)
        return parse_rating(text)

    async def ask():
        engine = Engine(Store(tmp_path / "s.db"), registry)
        fresh = await engine.chat(ChatRequest(model="rater", messages=[Message.user("Rate it.")]), parse=parse)
        cached = await engine.chat(ChatRequest(model="rater", messages=[Message.user("Rate it.")]), parse=parse)
        await engine.aclose()
        return fresh, cached

    fresh, cached = asyncio.run(ask())
    assert fresh.value == cached.value == 7 and not fresh.cached and cached.cached
    assert len(parsed) == 2  # once when it was checked (the fresh call), once when it was replayed


def test_the_environments_proxy_is_used_and_a_netrc_entry_breaks_no_call(tmp_path, monkeypatch):
    """Proxies as the OpenAI client (httpx) reads the environment, read once per replica: a request for an
    unreachable host goes through HTTP_PROXY, or ALL_PROXY when no scheme's proxy is set (here a local
    server that answers it), with the credentials of the proxy URL and never those of ~/.netrc; NO_PROXY
    exempts a host, a domain or a host:port; a socks proxy is refused by name. A ~/.netrc entry for the
    server's host is not read: beside the key's Authorization header it made aiohttp refuse every call."""
    from aiohttp import web

    from memegauge.models.openai_backend import env_proxy
    from memegauge.types import ModelCallError

    seen: list[tuple[str, str | None]] = []

    async def proxy(request: web.Request) -> web.Response:  # a forward proxy is sent the absolute URL
        seen.append((str(request.url), request.headers.get("Proxy-Authorization")))
        return web.json_response({"model": "m", "choices": [{"message": {"content": "A"}, "finish_reason": "stop"}]})

    async def go(base_url: str) -> str:
        backend = OpenAIBackend(ModelSpec(name="m", backend="openai", model="m", base_url=base_url, timeout_s=10))
        try:
            return (await backend.complete(ChatRequest(model="m", messages=[Message.user("hi")]))).text
        finally:
            await backend.aclose()

    async def serve_and_ask(variable: str, base_url: str | None = None, credentials: str = "") -> str:
        async with chat_server(proxy) as port:
            monkeypatch.setenv(variable, f"http://{credentials}127.0.0.1:{port}")
            try:
                return await go(base_url or f"http://127.0.0.1:{port}/v1")
            finally:
                monkeypatch.delenv(variable)

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    netrc = tmp_path / "netrc"  # credentials for the proxy's and the server's host: neither may be sent
    netrc.write_text("machine 127.0.0.1 login someone password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert asyncio.run(serve_and_ask("HTTP_PROXY", "http://models.invalid:8000/v1")) == "A"
    assert asyncio.run(serve_and_ask("ALL_PROXY", "http://models.invalid:8000/v1", "u:p@")) == "A"
    basic = "Basic " + base64.b64encode(b"u:p").decode()
    assert seen == [("http://models.invalid:8000/v1/chat/completions", None),
                    ("http://models.invalid:8000/v1/chat/completions", basic)]

    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert str(env_proxy("http://10.1.2.3:8000/v1")[0]) == "http://proxy.invalid:3128"
    assert env_proxy("https://10.1.2.3/v1") == (None, None)  # no HTTPS_PROXY nor ALL_PROXY
    for exempt in ("10.1.2.3", "10.1.2.3:8000", "*", "example.org,.2.3"):
        monkeypatch.setenv("NO_PROXY", exempt)
        assert env_proxy("http://10.1.2.3:8000/v1") == (None, None), exempt
    monkeypatch.setenv("NO_PROXY", "10.1.2.3:9000")  # another port of the host: proxied
    assert env_proxy("http://10.1.2.3:8000/v1")[0] is not None
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ModelCallError, match="only http"):
        env_proxy("http://10.1.2.3:8000/v1")
    monkeypatch.delenv("ALL_PROXY")

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the server itself, not through a proxy
    assert asyncio.run(serve_and_ask("HTTP_PROXY")) == "A"
    assert len(seen) == 3 and seen[-1][1] is None  # reached directly: no netrc credentials either
