"""The model spec (memegauge.models.spec): identity, serving and policy fields apart, and the cache key built
from the identity fields only. Stores written before the split keep hitting their cache: the v0 store fixture
(tests/data/store-v0) and a store written by main before the split (tests/data/store-main)."""

from __future__ import annotations

import asyncio
import gzip
import importlib.util
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memegauge.config import load_registry, registry_from_mapping
from memegauge.engine import Store
from memegauge.engine.core import Engine, cache_key
from memegauge.models.spec import ModelIdentity, ModelPolicy, ModelServing, ModelSpec
from memegauge.types import ChatRequest, ImagePart, InputError, Message, OutputSpec, SamplingParams, TextPart

DATA = Path(__file__).parent / "data"
MAIN = DATA / "store-main"


def _unzip(source: Path, target: Path) -> Path:
    with gzip.open(source, "rb") as src, open(target, "wb") as out:
        shutil.copyfileobj(src, out)
    return target


def _fixture_requests() -> list[ChatRequest]:
    """The requests make.py asked at main (its own function, so the test asks exactly those)."""
    spec = importlib.util.spec_from_file_location("store_main_make", MAIN / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.requests()


def test_the_three_groups_are_disjoint_and_the_spec_holds_them_all():
    groups = [set(g.model_fields) for g in (ModelIdentity, ModelServing, ModelPolicy)]
    assert sum(len(g) for g in groups) == len(set().union(*groups))
    assert set().union(*groups) <= set(ModelSpec.model_fields)
    assert set(ModelIdentity.model_fields) == {"backend", "model", "system_prompt", "adapter", "extra"}


def test_the_identity_holds_identity_fields_only_so_no_serving_or_policy_change_moves_the_key():
    base = {"backend": "scripted", "model": "m", "system_prompt": "Be brief.", "extra": {"default": "OK"}}
    identity = ModelSpec(name="a", **base).identity
    assert set(identity) <= set(ModelIdentity.model_fields)
    changed = ModelSpec(name="b", **base, base_url=["http://127.0.0.1:9/v1"], max_concurrency=1, rpm=5,
                        timeout_s=3, max_retries=0, backoff_s=0.1, price_in=9, structured_output=False,
                        serving={"n_threads": 1, "batch_size": 2})
    assert changed.identity == identity
    assert ModelSpec(name="c", **{**base, "system_prompt": "Be long."}).identity != identity


def test_serving_knobs_written_in_extra_move_to_serving_and_are_refused_twice():
    spec = ModelSpec(name="e", backend="embedded", model="x", extra={"n_ctx": 2048, "n_threads": 3})
    assert spec.extra == {"n_ctx": 2048} and spec.serving.n_threads == 3
    with pytest.raises(ValueError, match="n_threads given both in `extra` and in `serving`"):
        ModelSpec(name="e", backend="embedded", model="x", extra={"n_threads": 3}, serving={"n_threads": 4})


def test_a_bad_serving_knob_is_one_message_naming_the_key():
    with pytest.raises(InputError) as info:
        registry_from_mapping({"e": {"backend": "embedded", "model": "x", "extra": {"n_threads": 0}}}, "m.yaml")
    assert "e.serving.n_threads" in str(info.value)


def test_every_identity_recorded_by_main_before_the_split_is_the_same(monkeypatch):
    monkeypatch.chdir(MAIN)  # the adapter paths of models.yaml are relative to it, as they were at main
    registry = load_registry(MAIN / "models.yaml")
    recorded = json.loads((MAIN / "identities.json").read_text())
    assert {name: registry.get(name).identity for name in recorded} == recorded


def test_the_calls_main_stored_are_answered_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(MAIN)
    store = Store(_unzip(MAIN / "store.db.gz", tmp_path / "store.db"))
    engine = Engine(store, load_registry(MAIN / "models.yaml"))

    async def ask() -> list:
        try:
            return [await engine.chat(request) for request in _fixture_requests()]
        finally:
            await engine.aclose()

    outcomes = asyncio.run(ask())
    store.close()
    assert [o.record.key for o in outcomes] == json.loads((MAIN / "keys.json").read_text())
    assert all(o.cached and o.ok for o in outcomes) and engine.calls_made == 0


def _stored_request(name: str, stored: dict) -> tuple[ModelSpec, ChatRequest]:
    """The spec and request a v0 call was made with, read back from what the store kept of it."""
    paths = iter(stored.get("image_paths", []))
    text_only = False
    messages = []
    for message in stored["messages"]:
        parts = []
        for part in message["content"]:
            if part["type"] == "image":
                text_only |= "alt_text" in part
                parts.append(ImagePart(path=next(paths), sha256=part["sha256"], alt_text=part.get("alt_text", "")))
            else:
                parts.append(TextPart(text=part["text"]))
        messages.append(Message(role=message["role"], content=parts))
    identity = stored["model"]
    spec = ModelSpec(name=name, **identity, base_url=["http://127.0.0.1:9/v1"], vision=not text_only)
    request = ChatRequest(model=name, messages=messages, params=SamplingParams(**stored["params"]),
                          output=OutputSpec(**stored["output"]), sample_index=stored["sample_index"])
    return spec, request


def test_every_call_of_the_v0_store_keeps_its_key(tmp_path):
    db = sqlite3.connect(_unzip(DATA / "store-v0" / "store.db.gz", tmp_path / "v0.db"))
    rows = db.execute("SELECT key, model, request_json FROM calls").fetchall()
    db.close()
    assert len(rows) == 518
    for key, name, request_json in rows:
        spec, request = _stored_request(name, json.loads(request_json))
        assert spec.identity == json.loads(request_json)["model"]
        assert cache_key(spec, request) == key, name
