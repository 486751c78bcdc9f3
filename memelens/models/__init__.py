"""Model backends, registered by name and imported lazily.

A backend module is imported only when a model using it is first called, so `memelens runs` never
loads llama.cpp and a machine without the `train` extra never imports torch. Add a backend with
`register_backend("name", "package.module:Class")`; the class is built as `Class(spec)` and must
satisfy `memelens.types.ModelBackend`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memelens.config import ModelSpec
    from memelens.types import ModelBackend

BACKENDS: dict[str, str] = {
    "openai": "memelens.models.openai_backend:OpenAIBackend",
    "embedded": "memelens.models.embedded:EmbeddedBackend",
    "scripted": "memelens.models.scripted:ScriptedBackend",
    "hf": "memelens.models.hf:HFBackend",
}


SEED_STRIDE = 1_000_003  # sample_index multiplier: seeds of repeated draws never collide


def draw_seed(seed: int | None, sample_index: int, default: int = 0, modulus: int = 2**31 - 1) -> int:
    """The backend seed of one draw: the request's seed (or `default`) moved by its sample index, so
    each repeated draw (3 Miners at T = 1, `--repeat K`) differs and each is reproducible."""
    return ((default if seed is None else seed) + sample_index * SEED_STRIDE) % modulus


def register_backend(name: str, target: str) -> None:
    """Register a backend class by dotted path (`module:Class`)."""
    BACKENDS[name] = target


def create_backend(spec: "ModelSpec") -> "ModelBackend":
    """Import the spec's backend module and build the backend."""
    module_name, _, class_name = BACKENDS[spec.backend].partition(":")
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return backend_class(spec)
