"""The local OpenAI-compatible test server (memegauge.testing.server): shape, determinism, JSON-schema
validity, format cues, fault injection, binding and the CLI. Deterministic and fast (no timing asserts
beyond a latency lower bound)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from memegauge.testing.server import (
    FAULT_KINDS,
    AsyncTestServer,
    TestServer,
    model_quality,
    schema_instance,
    start_server,
)

REPO = Path(__file__).resolve().parents[1]
PNG_URL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
           "AAAABJRU5ErkJggg==")


@pytest.fixture(scope="module")
def server():
    with start_server(latency_ms=0, fault_rate=0.0, seed=0, models=["m-one", "m-two"]) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    with openai.OpenAI(base_url=server.base_url, api_key="sk-secret", max_retries=0, timeout=10) as c:
        yield c


def ask(client: openai.OpenAI, content: Any, model: str = "m-one", **kw: Any) -> str:
    messages = kw.pop("messages", None) or [{"role": "user", "content": content}]
    reply = client.chat.completions.create(model=model, messages=messages, temperature=kw.pop("temperature", 0), **kw)
    return reply.choices[0].message.content or ""


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def post(url: str, data: bytes, content_type: str = "application/json") -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


# --------------------------------------------------------------------------------------------------
# A small JSON-schema validator (the subset the generator claims to support)
# --------------------------------------------------------------------------------------------------

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def errors(value: Any, schema: Any, root: Any = None, path: str = "$") -> list[str]:
    root = schema if root is None else root
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{path}: nothing is allowed"]
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#").strip("/").split("/"):
            node = node[part]
        return errors(value, node, root, path)
    out: list[str] = []
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} != const {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in enum")
    for sub in schema.get("allOf", []):
        out += errors(value, sub, root, path)
    if "anyOf" in schema and not any(not errors(value, s, root, path) for s in schema["anyOf"]):
        out.append(f"{path}: matches no anyOf branch")
    if "oneOf" in schema and sum(not errors(value, s, root, path) for s in schema["oneOf"]) != 1:
        out.append(f"{path}: does not match exactly one oneOf branch")
    kinds = schema.get("type")
    if kinds is not None:
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(_TYPES[k](value) for k in kinds):
            return out + [f"{path}: {value!r} is not of type {kinds}"]
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{path}: missing required {key!r}")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], root, f"{path}.{key}")
            elif extra is False:
                out.append(f"{path}: unexpected key {key!r}")
            elif isinstance(extra, dict):
                out += errors(item, extra, root, f"{path}.{key}")
        if len(value) < schema.get("minProperties", 0):
            out.append(f"{path}: too few properties")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            out.append(f"{path}: too many properties")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than minItems")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than maxItems")
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items", True)
            out += errors(item, sub, root, f"{path}[{i}]")
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            out.append(f"{path}: items not unique")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{path}: shorter than minLength")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{path}: longer than maxLength")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: below minimum")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: above maximum")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            out.append(f"{path}: not above exclusiveMinimum")
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            out.append(f"{path}: not below exclusiveMaximum")
        if "multipleOf" in schema and abs(value / schema["multipleOf"] - round(value / schema["multipleOf"])) > 1e-9:
            out.append(f"{path}: not a multiple of {schema['multipleOf']}")
    return out


MINER = {  # AdamMeme miner: {"task": [...], "new category": {name: description}}
    "type": "object",
    "properties": {
        "task": {"type": "array", "items": {"type": "string", "enum": ["race", "gender", "religion"]},
                 "maxItems": 3, "uniqueItems": True},  # fmt: skip
        "new category": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
    },
    "required": ["task", "new category"],
    "additionalProperties": False,
}
TASKS = {  # MemeArena task formulation
    "type": "object",
    "properties": {f"prompt_user{i}": {"type": "string", "minLength": 10} for i in (1, 2, 3)},
    "required": [f"prompt_user{i}" for i in (1, 2, 3)],
}
PYDANTIC_LIKE = {  # what pydantic's model_json_schema() emits: $defs, $ref, anyOf-with-null, titles
    "$defs": {
        "Item": {
            "properties": {
                "name": {"title": "Name", "type": "string", "maxLength": 12},
                "score": {"title": "Score", "type": "integer", "minimum": 1, "maximum": 10},
                "weight": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "kind": {"const": "meme"},
            },
            "required": ["name", "score", "weight", "kind"],
            "title": "Item",
            "type": "object",
        }
    },
    "properties": {
        "items": {"items": {"$ref": "#/$defs/Item"}, "minItems": 2, "maxItems": 4, "type": "array"},
        "best": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}], "default": None},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "flags": {"type": "array", "items": {"type": "boolean"}, "minItems": 3},
    },
    "required": ["items", "best"],
    "title": "Answer",
    "type": "object",
}
MISC = {
    "type": "object",
    "properties": {
        "verdict": {"oneOf": [{"type": "string", "enum": ["A", "B"]}, {"type": "integer", "minimum": 0}]},
        "even": {"type": "integer", "minimum": 3, "maximum": 11, "multipleOf": 2},
        "tiny": {"type": "string", "minLength": 4, "maxLength": 4},
        "when": {"type": "string", "format": "date"},
        "merged": {"allOf": [{"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                             {"properties": {"y": {"type": "boolean"}}, "required": ["y"]}]},  # fmt: skip
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": False},
        "nested": {"type": "object", "properties": {"deep": {"type": "object", "properties": {
            "list": {"type": "array", "items": {"type": ["string", "null"]}, "minItems": 1, "maxItems": 1}}}}},
        "empty": {"type": "array", "maxItems": 0},
        "nothing": {"type": "null"},
    },
    "required": ["verdict", "even"],
}
SCHEMAS = {"miner": MINER, "tasks": TASKS, "pydantic": PYDANTIC_LIKE, "misc": MISC}


# --------------------------------------------------------------------------------------------------
# Shape, determinism, content parts
# --------------------------------------------------------------------------------------------------


def test_response_shape_and_usage(server, client):
    reply = client.chat.completions.create(
        model="m-one",
        messages=[{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": "Explain this funny cat meme"}],
        temperature=0,
    )
    assert reply.id.startswith("chatcmpl-")
    assert reply.model == "m-one"
    assert reply.object == "chat.completion"
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    text = choice.message.content
    assert text and len(text.split()) >= 5
    assert reply.usage.prompt_tokens == 2 + 5  # whitespace words of every message
    assert reply.usage.completion_tokens == len(text.split())
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_determinism(server, client):
    prompt = "Describe the meme 'when the coffee machine breaks on Monday'."
    first = ask(client, prompt)
    assert ask(client, prompt) == first  # same request, same answer
    assert ask(client, prompt, model="m-two") != first  # another model answers differently
    assert ask(client, prompt, seed=7) != first  # the request's seed is part of the key
    assert ask(client, prompt, seed=7) == ask(client, prompt, seed=7)
    assert ask(client, prompt, temperature=1.0) != first  # sampling is a different draw
    assert ask(client, prompt + " Please.") != first
    greedy = client.chat.completions.create(model="m-one", messages=user(prompt), n=3, temperature=0)
    assert len({c.message.content for c in greedy.choices}) == 1
    sampled = client.chat.completions.create(model="m-one", messages=user(prompt), n=3, temperature=1)
    assert [c.index for c in sampled.choices] == [0, 1, 2]
    assert len({c.message.content for c in sampled.choices}) == 3
    again = client.chat.completions.create(model="m-one", messages=user(prompt), n=3, temperature=1)
    assert [c.message.content for c in again.choices] == [c.message.content for c in sampled.choices]
    # the sample hint fields distinguish repeated draws of the same request
    a = ask(client, prompt, temperature=1, extra_body={"sample_index": 1})
    b = ask(client, prompt, temperature=1, extra_body={"sample_index": 2})
    assert a != b and a == ask(client, prompt, temperature=1, extra_body={"sample_index": 1})


def test_server_seed_changes_answers(server, client):
    with start_server(seed=1) as other:
        other_client = openai.OpenAI(base_url=other.base_url, api_key="x", max_retries=0)
        prompt = "Explain the meme about penguins."
        assert ask(other_client, prompt) != ask(client, prompt)
        assert ask(other_client, prompt) == ask(other_client, prompt)


def test_content_parts_and_images(server, client):
    before = server.stats
    content = [
        {"type": "text", "text": "What does this meme say about dogs?"},
        {"type": "image_url", "image_url": {"url": PNG_URL}},
        {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
    ]
    reply = client.chat.completions.create(model="m-one", messages=[{"role": "user", "content": content}],
                                           temperature=0)
    assert reply.choices[0].message.content
    assert reply.usage.prompt_tokens == 7  # images count 0 tokens
    after = server.stats
    assert after["images"] - before["images"] == 2
    # the same text as a plain string but without the images is a different request
    assert ask(client, "What does this meme say about dogs?") != reply.choices[0].message.content


def test_max_tokens_and_stop(server, client):
    reply = client.chat.completions.create(
        model="m-one", messages=[{"role": "user", "content": "Explain the meme about cats."}], max_tokens=3,
        temperature=0,
    )
    assert len(reply.choices[0].message.content.split()) == 3
    assert reply.choices[0].finish_reason == "length"
    full = ask(client, "Explain the meme about cats.")
    cut_at = full.split()[4]
    stopped = ask(client, "Explain the meme about cats.", stop=[cut_at])
    assert cut_at not in stopped and full.startswith(stopped)


def test_stream_matches_non_stream(server, client):
    prompt = "Explain the meme about a confused cat."
    stream = client.chat.completions.create(
        model="m-one", messages=[{"role": "user", "content": prompt}], temperature=0, stream=True,
        stream_options={"include_usage": True},
    )  # fmt: skip
    pieces, finish, usage = [], None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert "".join(pieces) == ask(client, prompt)
    assert finish == "stop" and usage is not None and usage.completion_tokens == len("".join(pieces).split())


def test_models_health_stats(server, client):
    ask(client, "hello there", model="some-new-model")
    ids = [m.id for m in client.models.list().data]
    assert ids[:2] == ["m-one", "m-two"] and "some-new-model" in ids
    assert get(server.url + "/health") == {"status": "ok"}
    stats = get(server.url + "/stats")
    assert stats["models"]["some-new-model"] >= 1
    assert set(stats["faults"]) == set(FAULT_KINDS)
    assert stats["requests"] >= stats["completed"] > 0
    assert "sk-secret" not in json.dumps(stats)


def test_bad_requests_get_400(server):
    url = server.base_url + "/chat/completions"
    cases = [
        b"not json",
        b"[1, 2]",
        json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),  # no model
        json.dumps({"model": "m", "messages": []}).encode(),
        json.dumps({"model": "m", "messages": [{"role": "wizard", "content": "hi"}]}).encode(),
        json.dumps({"model": "m", "messages": [{"role": "user", "content": [{"type": "audio"}]}]}).encode(),
        json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 5}).encode(),
        json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                    "response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}).encode(),  # fmt: skip
    ]
    before = server.stats["bad_requests"]
    for body in cases:
        status, payload = post(url, body)
        assert status == 400, body
        assert payload["error"]["type"] == "invalid_request_error" and payload["error"]["message"]
    assert server.stats["bad_requests"] - before == len(cases)


# --------------------------------------------------------------------------------------------------
# JSON schema and JSON object
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_instances_are_valid(name):
    schema = SCHEMAS[name]
    seen = set()
    for seed in range(60):
        value = schema_instance(schema, seed=seed, words=["cats", "politics", "coffee"])
        assert errors(value, schema) == [], (seed, value)
        seen.add(json.dumps(value, sort_keys=True))
    assert len(seen) > 1
    assert schema_instance(schema, seed=3) == schema_instance(schema, seed=3)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_json_schema_response_format(client, name):
    schema = SCHEMAS[name]
    fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    for model in ("m-one", "m-two"):
        text = ask(client, f"Answer in JSON about meme {name}.", model=model, response_format=fmt)
        value = json.loads(text)
        assert errors(value, schema) == []
    assert ask(client, "x", response_format=fmt) == ask(client, "x", response_format=fmt)


def test_json_object(client):
    text = ask(client, "Give me a json object.", response_format={"type": "json_object"})
    assert isinstance(json.loads(text), dict)
    keyed = ask(client, 'Return JSON like {"prompt_user1": "...", "prompt_user2": "..."}',
                response_format={"type": "json_object"})
    assert set(json.loads(keyed)) == {"prompt_user1", "prompt_user2"}


# --------------------------------------------------------------------------------------------------
# Format cues
# --------------------------------------------------------------------------------------------------

VERDICT_VALUES = r"(?:A|B|Tie \(both strong\)|Tie \(both weak\))"
DIMENSIONS = ["Instruction Following", "Correctness", "Redundancy", "Relevance", "Accuracy", "Overall Judge"]


def judge_prompt(a: str, b: str) -> str:
    return (
        "Compare two analyses of a meme.\n[Analysis of Model A]\n" + a + "\n[Analysis of Model B]\n" + b
        + "\n[Reference Answer]\nIn context, the guideline. Notably, more.\nRespond strictly as "
        "[Instruction Following] ... [Correctness] ... [Redundancy] ... [Relevance] ... [Accuracy] ... "
        "[Overall Judge] A/B/Tie"
    )  # fmt: skip


def test_cue_verdict(client):
    text = ask(client, judge_prompt("An answer.", "Another answer."))
    lines = text.splitlines()
    tags = [line for line in lines if line.startswith("[")]
    assert [re.match(r"\[([^\]]+)\]", t).group(1) for t in tags] == DIMENSIONS
    for tag in tags:
        assert re.fullmatch(r"\[[^\]]+\] " + VERDICT_VALUES, tag), tag
    for i, line in enumerate(lines):  # each verdict is preceded by a reason line
        if line.startswith("["):
            assert i > 0 and lines[i - 1] and not lines[i - 1].startswith("[")


def test_verdicts_follow_answer_quality(client):
    rich = "Notably, one. Crucially, two. In context, three."
    wins = Counter()
    for i in range(30):
        text = ask(client, judge_prompt(f"Meme {i}. {rich}", f"Meme {i}. Plain."), model="judge")
        wins[text.splitlines()[-1].split("] ", 1)[1]] += 1
        text = ask(client, judge_prompt(f"Meme {i}. Plain.", f"Meme {i}. {rich}"), model="judge")
        wins["swapped " + text.splitlines()[-1].split("] ", 1)[1]] += 1
    assert wins["A"] > 20 and wins["swapped B"] > 20


def scorer_prompt(answer: str) -> str:
    return (
        "Act as an impartial judge. [The Start of Reference Answer] The reference. [The End of Reference Answer]\n"
        f"[The Start of Assistant's Answer] {answer} [The End of Assistant's Answer]\n"
        "You must rate the response strictly in this format: [Rating: [[number]]"
    )


def test_cue_rating(client):
    ratings = []
    for i in range(20):
        text = ask(client, scorer_prompt(f"Answer number {i} about a meme."), model="scorer")
        match = re.search(r"Rating: \[\[(\d+)\]\]\s*$", text)
        assert match, text
        body = text[: match.start()].strip()
        assert 1 <= len(re.findall(r"[.!?](?:\s|$)", body)) <= 3
        ratings.append(int(match.group(1)))
    assert all(1 <= r <= 10 for r in ratings) and len(set(ratings)) > 1
    rich = []
    for i in range(20):
        answer = f"Answer {i}. Notably, a. Crucially, b. In context, c. Notably, d."
        rich.append(int(re.search(r"\[\[(\d+)\]\]", ask(client, scorer_prompt(answer), model="scorer")).group(1)))
    assert sum(rich) / 20 > sum(ratings) / 20 + 1  # better answers score better


def test_model_quality_shapes_prose():
    assert model_quality("a") == model_quality("a")
    qualities = {m: model_quality(m) for m in ("gpt-a", "gpt-b", "gpt-c", "gpt-d", "gpt-e", "gpt-f")}
    assert len(set(qualities.values())) == len(qualities)


def test_cue_background(client):
    text = ask(client, "Analyse the meme 'cats rule'. First [Background Knowledge], then [Reasoning].")
    assert re.fullmatch(r"\[Background Knowledge\] .+\n\[Reasoning\] .+", text)


def test_cue_synthesized(client):
    text = ask(client, "Fuse Answer 1 and Answer 2 about the meme. Output [Comparison] then [Synthesized Answer] "
                       "keeping [Background Knowledge] and [Reasoning].")  # fmt: skip
    assert re.fullmatch(r"\[Synthesized Answer\]\s*\n\[Background Knowledge\] .+\n\[Reasoning\] .+", text)


def test_cue_final_response(client):
    text = ask(client, 'Three responses about the meme "office coffee". Reply in Markdown: ## Final Response: ...')
    head, sep, tail = text.partition("## Final Response:\n")
    assert sep and head.strip() and tail.strip()
    combined = ask(client, "Pick the best analysis with [Background Knowledge] and [Reasoning]. ## Final Response: ...")
    assert re.search(r"## Final Response:\n\[Background Knowledge\] .+\n\[Reasoning\] .+", combined)


def test_cue_users(client):
    text = ask(client, 'Describe three users who might see the meme "dogs vs cats": '
                       '[USER 1]: ... [USER 2]: ... [USER 3]: ...')
    lines = text.splitlines()
    assert len(lines) == 3
    for i, line in enumerate(lines, 1):
        assert line.startswith(f"[USER {i}]: A person ")


def test_cue_yes_no(client):
    starts = set()
    for i in range(12):
        text = ask(client, f"Is category {i} distinct from the others? Answer Yes or No, then explain.")
        assert re.match(r"(Yes|No)\b", text) and len(text.split()) > 3
        starts.add(text.split(".")[0])
        assert re.match(r"(Yes|No)\b", ask(client, f"Does meme {i} carry this risk? Yes/No."))
    assert starts == {"Yes", "No"}


MCQ = (
    "Question: What is the sentiment of meme {i}?\nA. positive\nB. negative\nC. neutral\nD. sarcastic\n"
    "Answer with the option's letter from the given choices directly."
)
MULTI = (
    "Which targets does meme {i} attack? Select all that apply.\n(A) women\n(B) politicians\n(C) animals\n"
    '(D) nobody\nAnswer with the letters in alphabetical order, e.g. "AC"; answer "N" if none applies.'
)


def test_cue_single_choice(client):
    answers = {ask(client, MCQ.format(i=i)) for i in range(20)}
    assert answers <= set("ABCD") and len(answers) > 1


def test_cue_multi_choice(client):
    answers = [ask(client, MULTI.format(i=i)) for i in range(40)]
    for answer in answers:
        assert re.fullmatch(r"A?B?C?D?|N", answer) and answer
    assert any(len(a) > 1 for a in answers)
    short = client.chat.completions.create(
        model="m-one", messages=[{"role": "user", "content": MULTI.format(i=0)}], max_tokens=10, temperature=0
    )
    assert short.choices[0].finish_reason == "stop"


def test_cue_json_in_text(client):
    text = ask(client, 'Reply in JSON: {"task": ["category", ...], "new category": {name: description}}')
    value = json.loads(text)
    assert isinstance(value["task"], list) and isinstance(value["new category"], dict)


def test_cue_prose(client):
    text = ask(client, "Tell me about the meme with a surprised pikachu and exams.")
    assert len(re.findall(r"[.!?](?:\s|$)", text)) >= 2
    assert not text.startswith("[")


# --------------------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------------------


def fault_client(srv: TestServer, timeout: float = 10) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0, timeout=timeout)


def test_fault_429():
    with start_server(fault_rate=1.0, faults=["429"], retry_after=0.25) as srv:
        with pytest.raises(openai.RateLimitError) as info:
            ask(fault_client(srv), "hi")
        assert info.value.response.headers["retry-after"] == "0.25"
        assert info.value.body["code"] == "rate_limit_exceeded"
        assert srv.stats["faults"] == {**dict.fromkeys(FAULT_KINDS, 0), "429": 1}
        assert srv.stats["completed"] == 0


def test_fault_500():
    with start_server(fault_rate=1.0, faults="500") as srv:
        with pytest.raises(openai.InternalServerError):
            ask(fault_client(srv), "hi")
        assert srv.stats["faults"]["500"] == 1


def test_fault_timeout():
    with start_server(fault_rate=1.0, faults=["timeout"], hang_s=5) as srv:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            ask(fault_client(srv, timeout=0.3), "hi")
        assert time.monotonic() - started < 4
        assert srv.stats["faults"]["timeout"] == 1
        for _ in range(50):  # the handler ends when the client gives up
            if srv.stats["in_flight"] == 0:
                break
            time.sleep(0.05)
        assert srv.stats["in_flight"] == 0 and srv.stats["cancelled"] == 1


def test_fault_truncated():
    schema = SCHEMAS["pydantic"]
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    with start_server() as clean, start_server(fault_rate=1.0, faults=["truncated"]) as srv:
        good = ask(fault_client(clean), "meme", response_format=fmt)
        reply = fault_client(srv).chat.completions.create(
            model="m-one", messages=[{"role": "user", "content": "meme"}], response_format=fmt, temperature=0
        )
        cut = reply.choices[0].message.content
        assert cut == good[: len(good) // 2] and reply.choices[0].finish_reason == "length"
        with pytest.raises(ValueError):
            json.loads(cut)
        assert srv.stats["faults"]["truncated"] == 1


def test_fault_garbage():
    with start_server(fault_rate=1.0, faults=["garbage"]) as srv:
        client = fault_client(srv)
        for prompt in (scorer_prompt("x"), judge_prompt("a", "b"), MCQ.format(i=1), "Yes or No?", "[USER 1]"):
            text = ask(client, prompt)
            assert text and not re.search(r"[A-Z0-9\[\]{}\"]", text), text
            assert not re.match(r"(?i)\s*(yes|no)\b", text)
            with pytest.raises(ValueError):
                json.loads(text)
        assert srv.stats["faults"]["garbage"] == 5


def test_fault_subsets_and_rate():
    with start_server(fault_rate=0.25, seed=11, faults=["429", "500", "garbage"]) as srv:
        client = fault_client(srv)
        outcomes = Counter()
        for i in range(400):
            try:
                text = ask(client, f"Explain meme {i}.")
                outcomes["garbage" if not re.search(r"[A-Z]", text) else "ok"] += 1
            except openai.RateLimitError:
                outcomes["429"] += 1
            except openai.InternalServerError:
                outcomes["500"] += 1
        stats = srv.stats
    faults = stats["faults"]
    assert faults["timeout"] == faults["truncated"] == 0
    assert {k: faults[k] for k in ("429", "500", "garbage")} == {k: outcomes[k] for k in ("429", "500", "garbage")}
    total = sum(faults.values())
    assert 65 <= total <= 135  # expected 100 (sd ~ 8.7)
    assert all(faults[k] >= 15 for k in ("429", "500", "garbage"))  # uniform among enabled kinds
    assert stats["requests"] == 400 and stats["completed"] == 400 - faults["429"] - faults["500"]


def fault_pattern(seed: int, n: int = 60) -> list[bool]:
    with start_server(fault_rate=0.3, seed=seed, faults=["500"]) as srv:
        client, pattern = fault_client(srv), []
        for i in range(n):
            try:
                ask(client, f"q{i}")
                pattern.append(False)
            except openai.InternalServerError:
                pattern.append(True)
        return pattern


def test_fault_sequence_is_seeded_and_retries_can_succeed():
    assert fault_pattern(5) == fault_pattern(5)
    assert fault_pattern(5) != fault_pattern(6)
    with start_server(seed=2) as clean, start_server(fault_rate=0.5, seed=2, faults=["500"]) as srv:
        expected = ask(fault_client(clean), "retry me")
        client = fault_client(srv)
        for attempt in range(30):  # noqa: B007 (read after the loop: the number of failed attempts)
            try:
                assert ask(client, "retry me") == expected
                break
            except openai.InternalServerError:
                continue
        else:
            pytest.fail("no attempt succeeded")
        assert srv.stats["faults"]["500"] == attempt  # every failed attempt was an injected fault


def test_bad_config_rejected():
    with pytest.raises(ValueError):
        TestServer(faults=["explode"])
    with pytest.raises(ValueError):
        TestServer(fault_rate=1.5)


# --------------------------------------------------------------------------------------------------
# Latency, async variant, binding, CLI
# --------------------------------------------------------------------------------------------------


def test_latency_lower_bound_and_concurrency():
    with start_server(latency_ms=100) as srv:
        client = fault_client(srv)
        started = time.monotonic()
        ask(client, "hi")
        assert time.monotonic() - started >= 0.1
        threads = [threading.Thread(target=ask, args=(client, f"q{i}")) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert srv.stats["completed"] == 9 and srv.stats["max_in_flight"] >= 2


def test_async_server_in_running_loop():
    async def scenario() -> tuple[list[str], dict[str, Any]]:
        async with AsyncTestServer(latency_ms=20, seed=4) as srv:
            assert srv.base_url.startswith("http://127.0.0.1:")
            async with aiohttp.ClientSession() as session:

                async def one(i: int) -> str:
                    body = {"model": "m", "messages": [{"role": "user", "content": f"meme {i % 4}"}], "temperature": 0}
                    async with session.post(srv.base_url + "/chat/completions", json=body) as response:
                        assert response.status == 200
                        return (await response.json())["choices"][0]["message"]["content"]

                answers = await asyncio.gather(*(one(i) for i in range(40)))
            return answers, srv.stats

    answers, stats = asyncio.run(scenario())
    assert stats["completed"] == 40 and stats["max_in_flight"] > 1
    assert len(set(answers)) == 4 and answers[0] == answers[4]


def test_binds_loopback_only(server):
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    with socket.create_connection(("127.0.0.1", server.port), timeout=2):
        pass
    if sys.platform.startswith("linux"):  # 127.0.0.2 is loopback too, but not the bound address
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", server.port), timeout=2).close()


def test_cli_prints_url_and_serves():
    proc = subprocess.Popen(
        [sys.executable, "-m", "memegauge.testing.server", "--port", "0", "--latency-ms", "0",
         "--fault-rate", "0", "--seed", "3", "--faults", "429,500"],  # fmt: skip
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        match = re.fullmatch(r"listening on (http://127\.0\.0\.1:(\d+)/v1)\n", line)
        assert match, line
        base_url = match.group(1)
        assert get(base_url.removesuffix("/v1") + "/health") == {"status": "ok"}
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=10)
        assert ask(client, "Is this meme funny? Answer Yes or No.").split(".")[0] in ("Yes", "No")
    finally:
        proc.terminate()
        rc = proc.wait(timeout=10)
    assert rc == 0
    bad = subprocess.run([sys.executable, "-m", "memegauge.testing.server", "--faults", "boom"], cwd=REPO,
                         capture_output=True, text=True, timeout=30)  # fmt: skip
    assert bad.returncode == 2 and "boom" in bad.stderr


def test_reset_restarts_stats_and_fault_sequence():
    with start_server(fault_rate=0.5, seed=3, faults=["500"]) as srv:
        client = fault_client(srv)

        def pattern() -> list[bool]:
            out = []
            for _ in range(12):
                try:
                    ask(client, "hi")
                    out.append(False)
                except openai.InternalServerError:
                    out.append(True)
            return out

        first = pattern()
        srv.reset()
        assert srv.stats["requests"] == 0 and srv.stats["faults"]["500"] == 0
        assert pattern() == first and srv.stats["requests"] == 12
