"""Model backends: one `Backend` descriptor per backend, registered by name, imported lazily.

A backend's module is imported only when a model using it is first called (`Backend.load`), so
`memegauge runs` never loads llama.cpp and a machine without the `train` extra never imports torch.
The built-in backends (`memegauge.models.builtin`) are entry points of the group ``memegauge.backends``, as
a package declares its own (or registers one from code with `@backend(...)`); two backends with one name are
refused (`DuplicateBackend`). The class is built as `Class(spec)` and must satisfy
`memegauge.types.ModelBackend`.
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

