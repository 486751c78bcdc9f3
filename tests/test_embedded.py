"""The embedded backend: weights preparation (logic, fast) and smoke tests on the real model.

The smoke tests (`@pytest.mark.embedded`) load the real GGUF through llama.cpp and check that each
constrained output kind comes back in a shape `memegauge.parse` reads; they are the proof that the
grammars parse in llama.cpp and that the model answers at all. Each keeps `max_tokens` small.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
from pathlib import Path

import pytest

from memegauge.config import load_registry
from memegauge.models import create_backend
from memegauge.models.embedded import build_messages, sampling_seed
from memegauge.models.weights import SIDECAR_SUFFIX, is_verified, join_parts, prepare_joined
from memegauge.arena.verdicts import parse_verdict
from memegauge.parse import parse_choice, parse_json, parse_rating, parse_sections
from memegauge.types import (ChatRequest, ImagePart, InputError, Message, OutputKind, OutputSpec,
                            SamplingParams, TextPart)


def _parts(tmp_path: Path, chunks: list[bytes]) -> tuple[list[Path], list[str], str]:
    paths = []
    for i, chunk in enumerate(chunks):
        path = tmp_path / f"part{i}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    digests = [hashlib.sha256(c).hexdigest() for c in chunks]
    return paths, digests, hashlib.sha256(b"".join(chunks)).hexdigest()


def test_join_parts_in_order_and_records_verification(tmp_path: Path) -> None:
    paths, digests, total = _parts(tmp_path, [b"abc" * 1000, b"def" * 10, b"g"])
    dest = tmp_path / "cache" / "model.gguf"
    join_parts(paths, dest, total, part_sha256=digests)
    assert dest.read_bytes() == b"abc" * 1000 + b"def" * 10 + b"g"
    assert is_verified(dest, total, dest.with_name(dest.name + SIDECAR_SUFFIX))
    assert not list(dest.parent.glob("*.partial"))


def test_a_damaged_part_is_named_with_its_fix_and_nothing_is_left(tmp_path: Path) -> None:
    paths, digests, total = _parts(tmp_path, [b"one", b"two", b"three"])
    paths[1].write_bytes(b"tw0")
    dest = tmp_path / "cache" / "model.gguf"
    with pytest.raises(InputError) as caught:
        join_parts(paths, dest, total, part_sha256=digests, part_fixes=["fix0", "fix1", "fix2"])
    assert str(paths[1]) in str(caught.value) and str(paths[0]) not in str(caught.value)
    assert caught.value.fix == "fix1"
    assert not dest.exists() and not list(dest.parent.glob("*.partial"))


def test_prepare_joined_hashes_once_then_trusts_the_sidecar(tmp_path: Path) -> None:
    paths, digests, total = _parts(tmp_path, [b"x" * 100, b"y" * 50])
    dest = tmp_path / "model.gguf"
    log = io.StringIO()
    prepare_joined(paths, dest, total, 150, part_sha256=digests, log=log, announce="preparing")
    assert "preparing" in log.getvalue()
    log2 = io.StringIO()
    prepare_joined(paths, dest, total, 150, part_sha256=digests, log=log2, announce="preparing")
    assert log2.getvalue() == ""  # already joined and verified: no second join


def test_a_corrupted_cache_file_is_rebuilt(tmp_path: Path) -> None:
    paths, digests, total = _parts(tmp_path, [b"x" * 100, b"y" * 50])
    dest = tmp_path / "model.gguf"
    prepare_joined(paths, dest, total, 150, part_sha256=digests)
    dest.write_bytes(b"z" * 150)  # same size, wrong bytes, newer mtime: the sidecar no longer vouches
    os.utime(dest, ns=(1, 1))
    prepare_joined(paths, dest, total, 150, part_sha256=digests)
    assert dest.read_bytes() == b"x" * 100 + b"y" * 50


def test_images_become_their_alt_text_and_draws_get_distinct_seeds() -> None:
    request = ChatRequest(model="embedded", messages=[Message(role="user", content=[
        TextPart(text="What does this meme mean?"),
        ImagePart(path="/nonexistent.png", sha256="0" * 64, alt_text="Meme text: MONDAY AGAIN"),
    ])])
    messages = build_messages(request, system_prompt="You are terse.")
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert "MONDAY AGAIN" in messages[1]["content"]
    assert len({sampling_seed(7, i) for i in range(100)}) == 100
    assert sampling_seed(7, 3) == sampling_seed(7, 3)


# ------------------------------------------------------------------------------------------------
# The real model
# ------------------------------------------------------------------------------------------------

MEME = ("Meme text: 'When the code works on the first try' over a picture of a surprised cat. "
        "Caption: a cat with wide eyes.")


def _ask(model: str, output: OutputSpec, prompt: str, max_tokens: int) -> str:
    spec = load_registry(None).get(model)
    backend = create_backend(spec)
    request = ChatRequest(model=model, messages=[Message(role="user", content=[TextPart(text=prompt)])],
                          params=SamplingParams(temperature=0.0, max_tokens=max_tokens), output=output)
    return asyncio.run(backend.complete(request)).text


@pytest.mark.embedded
def test_embedded_rating_is_constrained() -> None:
    text = _ask("embedded", OutputSpec(kind=OutputKind.RATING),
                f"{MEME}\nRate how funny this meme is from 1 to 10. End with 'Rating: [[n]]'.", 48)
    assert 1 <= parse_rating(text) <= 10, text


@pytest.mark.embedded
def test_embedded_json_schema_is_constrained() -> None:
    schema = {"type": "object", "properties": {"harmful": {"type": "boolean"},
                                               "topic": {"type": "string", "maxLength": 40}},
              "required": ["harmful", "topic"]}
    text = _ask("embedded", OutputSpec(kind=OutputKind.JSON, json_schema=schema),
                f"{MEME}\nIs this meme harmful, and what is its topic? Answer in JSON.", 40)
    value = parse_json(text)
    assert isinstance(value, dict) and isinstance(value["harmful"], bool), text


@pytest.mark.embedded
def test_embedded_choice_verdict_and_sections_are_constrained() -> None:
    choice = _ask("embedded", OutputSpec(kind=OutputKind.CHOICE, n_options=4, multi=True),
                  f"{MEME}\nWhich emotions fit? A. surprise B. joy C. anger D. fear\nAnswer:", 6)
    assert parse_choice(choice, multi=True, n_options=4), choice
    verdict = _ask("embedded", OutputSpec(kind=OutputKind.VERDICT, sections=("Correctness",)),
                   f"{MEME}\nAnswer A: a surprised cat.\nAnswer B: a dog.\nWhich answer is better?", 40)
    assert parse_verdict(verdict) in ("A", "B", "Tie (both strong)", "Tie (both weak)"), verdict
    names = ["Background Knowledge", "Reasoning"]
    sections = _ask("embedded", OutputSpec(kind=OutputKind.TEXT, sections=tuple(names)),
                    f"{MEME}\nExplain this meme.", 48)
    assert set(parse_sections(sections, names)) == set(names), sections


@pytest.mark.embedded
def test_embedded_small_answers() -> None:
    text = _ask("embedded-small", OutputSpec(kind=OutputKind.CHOICE, n_options=2),
                "Is the sky blue? A. yes B. no\nAnswer:", 4)
    assert parse_choice(text, multi=False, n_options=2), text


def test_fit_json_schema_shrinks_caller_caps_to_the_token_budget() -> None:
    from memegauge.models.grammars import fit_json_schema

    schema = {"type": "object", "properties": {
        "task": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 4},
        "new": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 200}}}}
    small = fit_json_schema(schema, max_tokens=32)
    assert small["properties"]["new"]["additionalProperties"]["maxLength"] < 200
    assert small["properties"]["new"]["maxProperties"] >= 1 and small["additionalProperties"] is False
    roomy = fit_json_schema(schema, max_tokens=4000)
    assert roomy["properties"]["new"]["additionalProperties"]["maxLength"] == 200  # caller's cap kept
    assert schema["properties"]["new"]["additionalProperties"]["maxLength"] == 200  # input untouched


@pytest.mark.embedded
def test_embedded_gives_the_first_tokens_log_probabilities_when_asked() -> None:
    """`OutputSpec(logprobs=True)`: llama.cpp's top alternatives of the first answer token (log-probabilities,
    the chosen token first under greedy decoding); unasked, none."""
    spec = load_registry(None).get("embedded")
    backend = create_backend(spec)
    question = f"{MEME}\nIs this meme hateful? Answer yes or no."
    asked = ChatRequest(model="embedded", messages=[Message(role="user", content=[TextPart(text=question)])],
                        params=SamplingParams(temperature=0.0, max_tokens=2), output=OutputSpec(logprobs=True))
    result = asyncio.run(backend.complete(asked))
    values = list(result.logprobs.values())
    assert 1 < len(values) <= 5 and all(v <= 0 for v in values), result.logprobs
    assert result.text.startswith(max(result.logprobs, key=result.logprobs.get).strip()), (result.text, result.logprobs)
    plain = asked.model_copy(update={"output": OutputSpec()})
    assert asyncio.run(backend.complete(plain)).logprobs == {}
