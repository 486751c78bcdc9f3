"""Backend descriptors: one `Backend` per backend name, registered here, their classes imported lazily.

The bottom of the models layer: it imports only `memegauge.types` and `memegauge.registry`, so the model
spec (`models/spec.py`, which asks a descriptor for its vision default) and the backends above it depend on
it, never the other way round. Every backend, the built-ins (`memegauge.models.builtin`) too, is a `Backend` declared
as an entry point of the group ``memegauge.backends`` named after it (loaded when that name is first used); code
may register one with `@backend(...)`; two backends with one name are refused (`DuplicateBackend`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from collections.abc import Callable

from memegauge.extras import require_extra
from memegauge.registry import DuplicatePlugin, Registry

ENTRY_POINT_GROUP = "memegauge.backends"


class ModelEntry(Protocol):
    """What a backend's defaults may read of a model entry (a `ModelSpec` satisfies it)."""

    name: str
    backend: str
    model: str
    extra: dict[str, Any]


@dataclass(frozen=True)
class Backend:
    """A model backend, as the registry and `models.yaml` know it."""

    name: str  # the `backend:` value in models.yaml
    load: Callable[[], type]  # imports and returns the backend class (called on first use)
    vision_by_default: bool | Callable[[ModelEntry], bool] = False  # its models get the picture
    # unless `vision: false`; a function decides by the model entry (e.g. what a model folder holds)
    needs_base_url: bool = False  # a model entry must give `base_url`
    source: str = "memegauge"  # where it was registered (named when a duplicate is refused)
    extra: str | None = None  # the MemeGauge extra that installs what it needs
    modules: tuple[str, ...] = ()  # modules it imports that the core does not install

    def sees_images(self, spec: ModelEntry) -> bool:
        """Whether a model entry without `vision:` is sent pictures."""
        if callable(self.vision_by_default):
            return bool(self.vision_by_default(spec))
        return self.vision_by_default

    def check_installed(self, where: str) -> None:
        """One InputError naming the `pip install` when the backend's extra is missing."""
        if self.extra:
            require_extra(self.extra, *self.modules, needed_for=f"backend {self.name!r}", where=where)


class DuplicateBackend(DuplicatePlugin):
    """Two backends registered under one name."""


BACKENDS: Registry[Backend] = Registry("backend", ENTRY_POINT_GROUP, Backend, duplicate=DuplicateBackend)


def register_backend(descriptor: Backend) -> None:
    """Add a backend; a second one with the same name is refused, naming both sources (the one declared under
    that name is loaded first, so a built-in's name is refused whether or not a model used it yet)."""
    find_backend(descriptor.name)
    BACKENDS.register(descriptor, descriptor.source)


def backend(name: str, *, vision_by_default: bool | Callable[[ModelEntry], bool] = False,
            needs_base_url: bool = False,
            source: str = "memegauge", extra: str | None = None,
            modules: tuple[str, ...] = ()) -> Callable[[Callable[[], type]], Callable[[], type]]:
    """Decorate the function that imports and returns a backend class to register it as `name`."""
    def register(load: Callable[[], type]) -> Callable[[], type]:
        register_backend(Backend(name, load, vision_by_default, needs_base_url, source, extra, modules))
        return load
    return register


def backends() -> dict[str, Backend]:
    """Every backend by name: the built-ins, those declared by installed packages, those registered from code."""
    return BACKENDS.all()


def find_backend(name: str) -> Backend | None:
    """The backend `name`: a built-in, or its entry point alone loaded."""
    return BACKENDS.get(name)
