"""Model backends: one `Backend` descriptor per backend, registered by name, imported lazily.

A backend's module is imported only when a model using it is first called (`Backend.load`), so
`memegauge runs` never loads llama.cpp and a machine without the `train` extra never imports torch.
The built-in backends register themselves below with `@backend(...)` on a function that imports
their class. A package adds one the same way, or declares a `Backend` as an entry point of the group
``memegauge.backends``; two backends with one name are refused (`DuplicateBackend`). The class is built
as `Class(spec)` and must satisfy `memegauge.types.ModelBackend`.
"""

from __future__ import annotations

from memegauge.models.descriptors import (ENTRY_POINT_GROUP, Backend, DuplicateBackend, ModelEntry, backend,
                                          backends, find_backend, register_backend)
from memegauge.models.spec import ModelSpec
from memegauge.types import ModelBackend

__all__ = ["ENTRY_POINT_GROUP", "Backend", "DuplicateBackend", "ModelEntry", "backend", "backends",
           "create_backend", "find_backend", "register_backend"]


def create_backend(spec: ModelSpec) -> ModelBackend:
    """Import the spec's backend module and build the backend."""
    descriptor = find_backend(spec.backend)
    if descriptor is None:
        raise KeyError(f"no backend {spec.backend!r}; registered: {', '.join(sorted(backends()))}")
    descriptor.check_installed(where=f"model {spec.name!r}")
    return descriptor.load()(spec)


# ---- the built-in backends ---------------------------------------------------------------------------


@backend("openai", vision_by_default=True, needs_base_url=True)
def _openai() -> type:
    """Any OpenAI-compatible server: vLLM, SGLang, llama.cpp's server, Ollama, OpenAI."""
    from memegauge.models.openai_backend import OpenAIBackend  # lazy: a backend loads when a model uses it

    return OpenAIBackend


@backend("embedded", extra="embedded", modules=("xllamacpp",))
def _embedded() -> type:
    """The offline GGUF model shipped in a PyPI wheel, run by llama.cpp (text only)."""
    from memegauge.models.embedded import EmbeddedBackend  # lazy: a backend loads when a model uses it

    return EmbeddedBackend


@backend("scripted")
def _scripted() -> type:
    """Deterministic answers by stage, for tests."""
    from memegauge.models.scripted import ScriptedBackend  # lazy: a backend loads when a model uses it

    return ScriptedBackend


def _hf_folder_has_vision(spec: ModelEntry) -> bool:
    from memegauge.models.hf_local import is_vision_folder  # reads config.json; imports no torch

    return is_vision_folder(spec.model)


@backend("hf", vision_by_default=_hf_folder_has_vision, extra="train",
         modules=("torch", "transformers", "peft"))
def _hf() -> type:
    """A local Hugging Face model (extra `train`): a vision-language model sees the picture, a
    causal LM reads its alt text; optionally with a LoRA adapter (e.g. from `qa finetune`)."""
    from memegauge.models.hf import HFBackend  # lazy: a backend loads when a model uses it

    return HFBackend
