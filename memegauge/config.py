"""Configuration: the model registry and method configs, as pydantic models with one YAML loader.

Every validation error names the file, the key and the fix, and raises `InputError` (exit code 2).
When no registry file is given, the built-in registry holds the embedded offline models, so MemeGauge
runs with no network and no key.
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from urllib.parse import urlsplit
from typing import Any, TypeVar

import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from memegauge.models import backends, find_backend
from memegauge.files import read_user_text
from memegauge.models.families import guess_family
from memegauge.types import InputError, file_sha256

T = TypeVar("T", bound=BaseModel)

ENV_STORE = "MEMEGAUGE_STORE"
ENV_MODELS = "MEMEGAUGE_MODELS"


class ModelSpec(BaseModel):
    """One entry of the model registry."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", description="Registry name; filled from the YAML key.")
    backend: str = Field(description="Backend name: openai, embedded, scripted, hf.")
    model: str = Field(default="", description="Provider's model id (e.g. 'Qwen/Qwen2.5-VL-7B').")
    base_url: list[str] = Field(
        default_factory=list,
        description="Endpoint URL, or a list of replicas of one model (load-balanced, fail-over).",
    )
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the key; never the key."
    )
    max_concurrency: int = Field(default=8, ge=1, description="Calls in flight at once.")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute cap.")
    vision: bool | None = Field(
        default=None, description="Accepts images (else it reads meme text + caption). Default: "
        "true for `openai` endpoints (the image is sent unless a model is declared "
        "text-only with `vision: false`), false for the text-only embedded model.")
    max_image_pixels: int | None = Field(
        default=None, ge=1, description="The most pixels (width × height) a picture sent to this model "
        "may have: a larger one is downscaled to fit, aspect kept (recorded in the call, counted in "
        "the report). None: pictures are sent as they are.")
    price_in: float = Field(default=0.0, ge=0, description="USD per 1M prompt tokens.")
    price_out: float = Field(default=0.0, ge=0, description="USD per 1M completion tokens.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-attempt timeout.")
    max_retries: int = Field(default=4, ge=0, description="Retries after the first attempt.")
    content_retries: int = Field(
        default=2, ge=0, description="Of those, retries of a refused or unparseable answer."
    )
    backoff_s: float = Field(default=1.0, gt=0, description="First backoff wait (jittered, doubling).")
    backoff_max_s: float = Field(default=30.0, gt=0, description="Longest backoff wait.")
    system_prompt: str | None = Field(
        default=None, description="Prepended as a system message (e.g. to make one model two personas)."
    )
    structured_output: bool = Field(
        default=True, description="Send response_format json_schema when a stage asks for JSON."
    )
    adapter: str | None = Field(
        default=None, description="`hf` only: a LoRA adapter folder loaded on top of `model` "
        "(e.g. a `qa finetune` output's best/)."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Backend-specific options (e.g. extra_body, n_ctx)."
    )
    family: str | None = Field(
        default=None, description="Model family (e.g. qwen, llava, openai), for judge panels of distinct "
        "families (MemeArena); default: read from `model` (or the name) where one known family matches."
    )

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _vision_default(self) -> ModelSpec:
        if self.vision is None:  # the backend's default (an unknown backend is refused when loaded)
            descriptor = find_backend(self.backend)
            self.vision = bool(descriptor and descriptor.sees_images(self))
        if self.adapter and self.backend != "hf":
            raise ValueError("`adapter` is for `backend: hf` models only")
        return self

    @property
    def model_family(self) -> str | None:
        """`family`, or the one known family `model` (else the registry name) belongs to; None: unknown."""
        return self.family or guess_family(self.model, self.name)

    @property
    def adapter_folder(self) -> str | None:
        """The LoRA adapter this entry names: `adapter`, or the older spelling `extra.adapter`."""
        return self.adapter or self.extra.get("adapter")

    @property
    def identity(self) -> dict[str, Any]:
        """What decides a model's answers, and so enters the cache key (replicas and limits don't)."""
        identity = {
            "backend": self.backend,
            "model": self.model,
            "system_prompt": self.system_prompt,
            "extra": {k: v for k, v in self.extra.items()
                      if k not in {"n_parallel", "n_threads", "batch_size"}},
        }
        if self.adapter_folder:  # by content: a retrained adapter in the same folder answers differently
            identity["adapter"] = adapter_digest(self.adapter_folder)
        return identity

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6


def adapter_digest(folder: str | Path) -> str:
    """sha256 of a LoRA adapter folder's weights ('missing' when absent: loading it will say so)."""
    weights = [Path(folder) / name for name in ("adapter_model.safetensors", "adapter_model.bin")]
    found = next((w for w in weights if w.is_file()), None)
    if found is None:
        return "missing"
    stat = found.stat()
    return _weights_sha256(str(found.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _weights_sha256(path: str, mtime_ns: int, size: int) -> str:
    """Hashed once per version of the file (the key changes when the file is rewritten)."""
    return file_sha256(Path(path))


# In-process CPU models get a long per-call timeout: their speed depends on what else the
# machine runs (a call that takes 10 s on idle cores takes minutes on oversubscribed ones), and a
# timeout there only wastes the work done so far.
BUILTIN_MODELS: dict[str, dict[str, Any]] = {
    "embedded": {"backend": "embedded", "model": "qwen2.5-coder-1.5b-instruct-q4_k_m",
                 "max_concurrency": 2, "timeout_s": 900},
    "embedded-small": {"backend": "embedded", "model": "smollm2-135m-instruct-q4_1",
                       "max_concurrency": 2, "timeout_s": 900},
}


class ModelRegistry:
    """Named model specs: the built-in embedded models plus those of a registry YAML."""

    def __init__(self, specs: dict[str, ModelSpec], source: str = "<built-in>") -> None:
        self.specs = specs
        self.source = source

    def get(self, name: str) -> ModelSpec:
        if name not in self.specs:
            known = ", ".join(sorted(self.specs)) or "none"
            raise InputError(
                f"unknown model {name!r}",
                where=self.source,
                fix=f"use one of: {known}; or add {name!r} to the registry YAML (--models FILE)",
            )
        return self.specs[name]

    def add(self, spec: ModelSpec) -> None:
        self.specs[spec.name] = spec

    def names(self) -> list[str]:
        return list(self.specs)


def _builtin_specs() -> dict[str, ModelSpec]:
    return {name: ModelSpec(name=name, **fields) for name, fields in BUILTIN_MODELS.items()}


def read_yaml(path: Path) -> Any:
    """Read a YAML file, turning every way it can be unreadable into one clear InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", where=str(path), fix="check the path")
    try:
        return yaml.safe_load(read_user_text(path))
    except RecursionError:
        raise InputError("invalid YAML (nested too deeply)", where=str(path),
                         fix="write the file as a flat mapping of keys and values") from None
    except ValueError as exc:  # not a YAMLError: e.g. an integer of more than 4,300 digits
        raise InputError(f"invalid YAML ({exc})", where=str(path), fix="write numbers of usual size") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise InputError(f"invalid YAML ({getattr(exc, 'problem', exc)})", where=where,
                         fix="fix the YAML syntax at that line") from None


def validation_error(exc: ValidationError, where: str, prefix: str = "") -> InputError:
    """Turn the first pydantic error into an InputError naming file, key and fix."""
    first = exc.errors()[0]
    key = ".".join(str(p) for p in (prefix, *first["loc"]) if p != "")
    fix = {
        "missing": f"add the key {key!r}",
        "extra_forbidden": f"remove {key!r} (unknown key; check its spelling)",
    }.get(first["type"], f"give {key!r} a valid value ({first['msg']})" if key else
          f"make the keys agree ({first['msg']})")  # a check across keys has no location
    return InputError(f"{key or 'document'}: {first['msg']}", where=where, fix=fix)


def load_registry(path: Path | str | None) -> ModelRegistry:
    """Load a registry YAML (`{name: {backend, model, ...}}`) on top of the built-in models."""
    specs = _builtin_specs()
    if path is None:
        path = os.environ.get(ENV_MODELS) or None
    if path is None:
        return ModelRegistry(specs)
    data = read_yaml(Path(path))
    return registry_from_mapping({} if data is None else data, str(path))


def registry_from_mapping(data: Any, source: str) -> ModelRegistry:
    """A registry of `data`'s entries (`{name: {backend, model, ...}}`) on top of the built-in models,
    every entry checked as a registry file's is; `source` names where they came from in messages."""
    specs = _builtin_specs()
    if not isinstance(data, dict):
        raise InputError("the registry must be a mapping of model names to specs", where=source,
                         fix="write `name: {backend: openai, model: ..., base_url: ...}` entries")
    for name, fields in data.items():
        if not isinstance(fields, dict):
            raise InputError(f"{name}: expected a mapping, got {type(fields).__name__}",
                             where=source, fix=f"give {name!r} keys such as backend and model")
        try:
            spec = ModelSpec(name=str(name), **fields)
        except ValidationError as exc:
            raise validation_error(exc, source, prefix=str(name)) from None
        except TypeError as exc:
            raise InputError(f"{name}: {exc}", where=source, fix="check the keys") from None
        _check_backend(spec, source)
        specs[spec.name] = spec
    return ModelRegistry(specs, source=source)


def _check_backend(spec: ModelSpec, where: str) -> None:
    descriptor = find_backend(spec.backend)
    if descriptor is None:
        raise InputError(f"{spec.name}.backend: unknown backend {spec.backend!r}", where=where,
                         fix=f"use one of: {', '.join(sorted(backends()))}")
    if descriptor.needs_base_url and not spec.base_url:
        raise InputError(f"{spec.name}.base_url: missing for an {spec.backend} backend", where=where,
                         fix="add e.g. base_url: http://127.0.0.1:8000/v1")
    for url in spec.base_url:
        parsed = urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise InputError(f"{spec.name}.base_url: {url!r} is not an http(s) URL", where=where,
                             fix="write it like http://127.0.0.1:8000/v1 (scheme, host, port, path)")


def load_config(path: Path | str, model: type[T], overrides: dict[str, Any] | None = None) -> T:
    """Load a method config YAML into its pydantic model; relative paths resolve from the file.
    `overrides` (dotted keys, e.g. from `-o max_tokens.judging=900`) replace the file's values before
    validation, so they are checked like the file and become part of the stored config."""
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError("the config must be a YAML mapping", where=str(path),
                         fix="see the example configs in docs/")
    data = with_overrides(data, overrides or {})
    try:
        return model.model_validate(data, context={"base_dir": path.resolve().parent})
    except ValidationError as exc:
        raise validation_error(exc, f"{path} (with the command line's overrides)" if overrides else str(path)) \
            from None


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["key=value", "a.b=3"]`` (the CLI's ``-o``) → ``{"key": "value", "a.b": 3}``; values are read as
    YAML scalars or flow collections (``3``, ``false``, ``[a, b]``), so they reach the config typed."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"override {item!r} is not KEY=VALUE", "-o", "write e.g. -o seed=3 or "
                             "-o max_tokens.judging=900 (nested keys with dots)")
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = raw
    return out


def with_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`data` with each dotted key of `overrides` set (nested mappings created as needed)."""
    data = copy.deepcopy(data)
    for dotted, value in overrides.items():
        *parents, last = dotted.split(".")
        node = data
        for i, part in enumerate(parents):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise InputError(f"override {dotted!r}: {'.'.join(parents[:i + 1])} is not a mapping", "-o",
                                 "override the whole value, or a key of a mapping")
            node = child
        node[last] = value
    return data


def method_config(source: Path | str | dict[str, Any], model: type[T]) -> T:
    """A method config from a YAML file (`load_config`) or from a dict (paths in it resolve from the
    working directory); errors are one `InputError` naming the field and the fix."""
    if not isinstance(source, dict):
        return load_config(source, model)
    try:
        return model.model_validate(source, context={"base_dir": Path.cwd()})
    except ValidationError as exc:
        raise validation_error(exc, "config") from None


def resolve_from_base(value: Path | None, info: ValidationInfo) -> Path | None:
    """A config's relative path, resolved from the folder of the file it came from (the validation
    context's ``base_dir``); absolute paths and configs built without a context stay as given."""
    base = (info.context or {}).get("base_dir")
    if value is None or value.is_absolute() or base is None:
        return value
    return (Path(base) / value).resolve()
