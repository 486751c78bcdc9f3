"""The model backend registry: one descriptor per backend, lazy imports, duplicates refused."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from memegauge import models
from memegauge.config import load_registry
from memegauge.models.spec import ModelSpec
from memegauge.engine import Engine, Store
from memegauge.models import Backend, DuplicateBackend, backends, descriptors, register_backend
from memegauge.types import ChatRequest, ChatResult, InputError, Message


def test_the_built_in_backends_are_registered_and_import_nothing_until_used():
    assert set(backends()) >= {"openai", "embedded", "scripted", "hf"}
    assert backends()["openai"].vision_by_default and backends()["openai"].needs_base_url
    code = ("import sys, memegauge.config, memegauge.models; memegauge.models.backends();"
            "print(sorted(m for m in sys.modules if m.startswith(('llama_cpp', 'torch', 'httpx'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def test_a_second_backend_with_a_built_in_name_is_refused_naming_both(monkeypatch):
    state = descriptors.BACKENDS.snapshot()
    monkeypatch.setattr(descriptors.BACKENDS, "_plugins", state[0])  # restored after the test
    with pytest.raises(DuplicateBackend, match="'openai' is registered twice: by entry point "
                                               "memegauge.models.builtin:OPENAI of memegauge and by my-plugin"):
        register_backend(Backend("openai", lambda: object, source="my-plugin"))


class _Echo:
    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec

    async def complete(self, request: ChatRequest) -> ChatResult:
        return ChatResult(text=f"echo {request.messages[-1].text()}")

    async def aclose(self) -> None:
        pass


def test_a_backend_registered_from_code_serves_a_model_from_models_yaml(tmp_path, monkeypatch):
    monkeypatch.setattr(descriptors.BACKENDS, "_plugins", descriptors.BACKENDS.snapshot()[0])  # restored after

    @models.backend("echo", vision_by_default=True, source="tests")
    def load():
        return _Echo

    (tmp_path / "models.yaml").write_text("e:\n  backend: echo\n  model: anything\n")
    registry = load_registry(tmp_path / "models.yaml")
    assert registry.get("e").vision is True  # the backend's default
    engine = Engine(Store(tmp_path / "s.db"), registry)
    outcome = asyncio.run(engine.chat(ChatRequest(model="e", messages=[Message.user("hi")], stage="t")))
    assert outcome.ok and outcome.value == "echo hi"


def test_an_unknown_backend_is_one_message_listing_the_registered_ones(tmp_path):
    (tmp_path / "models.yaml").write_text("e:\n  backend: nope\n  model: m\n")
    with pytest.raises(InputError) as info:
        load_registry(tmp_path / "models.yaml")
    assert "unknown backend 'nope'" in str(info.value) and "embedded, hf, openai, scripted" in info.value.fix


def test_registry_of_a_spec_with_an_unknown_backend_is_refused_before_any_call():
    with pytest.raises(KeyError, match="no backend 'nope'"):
        models.create_backend(ModelSpec(name="x", backend="nope", model="m"))


def test_a_backend_whose_extra_is_missing_stops_before_the_run_naming_the_install(monkeypatch):
    import importlib.util

    from memegauge.engine.preflight import preflight

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    monkeypatch.delenv("MEMEGAUGE_MODELS", raising=False)
    with pytest.raises(InputError) as info:
        preflight(load_registry(None), ["embedded"])
    assert "needs the `embedded` extra (xllamacpp not installed)" in str(info.value)
    assert info.value.fix == "pip install 'memegauge[embedded]'"
