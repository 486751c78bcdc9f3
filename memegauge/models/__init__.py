"""Model backends: one `Backend` descriptor per backend, registered by name, imported lazily.

A backend's module is imported only when a model using it is first called (`Backend.load`), so
`memegauge runs` never loads llama.cpp and a machine without the `train` extra never imports torch.
The built-in backends register themselves below with `@backend(...)` on a function that imports
their class. A package adds one the same way, or declares a `Backend` as an entry point of the group
``memegauge.backends``; two backends with one name are refused (`DuplicateBackend`). The class is built
as `Class(spec)` and must satisfy `memegauge.types.ModelBackend`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING
from collections.abc import Callable

from memegauge.types import MemeGaugeError

if TYPE_CHECKING:
    from memegauge.config import ModelSpec
    from memegauge.types import ModelBackend

ENTRY_POINT_GROUP = "memegauge.backends"


@dataclass(frozen=True)
class Backend:
    """A model backend, as the registry and `models.yaml` know it."""

    name: str  # the `backend:` value in models.yaml
    load: Callable[[], type]  # imports and returns the backend class (called on first use)
    vision_by_default: bool | Callable[[ModelSpec], bool] = False  # its models get the picture
    # unless `vision: false`; a function decides by the model entry (e.g. what a model folder holds)
    needs_base_url: bool = False  # a model entry must give `base_url`
    source: str = "memegauge"  # where it was registered (named when a duplicate is refused)
    extra: str | None = None  # the MemeGauge extra that installs what it needs
    modules: tuple[str, ...] = ()  # modules it imports that the core does not install

    def sees_images(self, spec: ModelSpec) -> bool:
        """Whether a model entry without `vision:` is sent pictures."""
        if callable(self.vision_by_default):
            return bool(self.vision_by_default(spec))
        return self.vision_by_default

    def check_installed(self, where: str) -> None:
        """One InputError naming the `pip install` when the backend's extra is missing."""
        if self.extra:
            from memegauge.extras import require_extra

            require_extra(self.extra, *self.modules, needed_for=f"backend {self.name!r}", where=where)


class DuplicateBackend(MemeGaugeError):
    """Two backends registered under one name."""


_REGISTRY: dict[str, Backend] = {}
_plugins_loaded = False


def register_backend(descriptor: Backend) -> None:
    """Add a backend; a second one with the same name is refused, naming both sources."""
    known = _REGISTRY.get(descriptor.name)
    if known is not None and known is not descriptor:
        raise DuplicateBackend(f"backend {descriptor.name!r} is registered twice ({known.source} and "
                               f"{descriptor.source}); uninstall one of them")
    _REGISTRY[descriptor.name] = descriptor


def backend(name: str, *, vision_by_default: bool | Callable[[ModelSpec], bool] = False,
            needs_base_url: bool = False,
            source: str = "memegauge", extra: str | None = None,
            modules: tuple[str, ...] = ()) -> Callable[[Callable[[], type]], Callable[[], type]]:
    """Decorate the function that imports and returns a backend class to register it as `name`."""
    def register(load: Callable[[], type]) -> Callable[[], type]:
        register_backend(Backend(name, load, vision_by_default, needs_base_url, source, extra, modules))
        return load
    return register


def backends() -> dict[str, Backend]:
    """Every registered backend by name: the built-ins and those declared by installed packages."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        for point in entry_points(group=ENTRY_POINT_GROUP):
            descriptor = point.load()
            if not isinstance(descriptor, Backend):
                raise TypeError(f"entry point {point.value} ({ENTRY_POINT_GROUP}) is not a Backend")
            register_backend(descriptor)
    return dict(_REGISTRY)


def find_backend(name: str) -> Backend | None:
    return _REGISTRY.get(name) or backends().get(name)


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
    from memegauge.models.openai_backend import OpenAIBackend

    return OpenAIBackend


@backend("embedded", extra="embedded", modules=("xllamacpp",))
def _embedded() -> type:
    """The offline GGUF model shipped in a PyPI wheel, run by llama.cpp (text only)."""
    from memegauge.models.embedded import EmbeddedBackend

    return EmbeddedBackend


@backend("scripted")
def _scripted() -> type:
    """Deterministic answers by stage, for tests."""
    from memegauge.models.scripted import ScriptedBackend

    return ScriptedBackend


def _hf_folder_has_vision(spec: ModelSpec) -> bool:
    from memegauge.models.hf_local import is_vision_folder  # reads config.json; imports no torch

    return is_vision_folder(spec.model)


@backend("hf", vision_by_default=_hf_folder_has_vision, extra="train",
         modules=("torch", "transformers", "peft"))
def _hf() -> type:
    """A local Hugging Face model (extra `train`): a vision-language model sees the picture, a
    causal LM reads its alt text; optionally with a LoRA adapter (e.g. from `qa finetune`)."""
    from memegauge.models.hf import HFBackend

    return HFBackend
