"""The model spec: one entry of the model registry, its fields in three groups kept apart.

* **Identity** (`ModelIdentity`): what decides a model's answers — backend, model, system prompt, LoRA
  adapter, backend options (`extra`). The cache key's model part (`ModelSpec.identity`) is built from
  these fields and nothing else, so a knob added to another group can never change a key.
* **Serving** (`ModelServing`): where and how fast it is asked — endpoints, key variable, concurrency,
  request rate, timeout, and the backend knobs that only change speed or memory (`serving`:
  `n_parallel`, `n_threads`, `batch_size`; still accepted inside `extra`, where the registry files of
  earlier versions wrote them, and moved out of it when read).
* **Policy** (`ModelPolicy`): what the engine does around a call — retries, backoff, prices.

`ModelSpec` is all three plus what describes the model to the stages (name, vision, picture size,
structured output, family); `models.yaml` stays one flat mapping per model. This module depends only on
`memegauge.types` and the backend descriptors below it, so every backend imports it without a guard.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memegauge.models.descriptors import find_backend
from memegauge.models.families import guess_family
from memegauge.types import InputError, file_sha256


class ServingOptions(BaseModel):
    """Backend knobs that change how fast a model answers or how much memory it takes, never what it
    answers (so they stay out of the cache key)."""

    model_config = ConfigDict(extra="forbid")

    n_parallel: int | None = Field(default=None, ge=1, description="`embedded`: decoding slots "
                                   "with `extra.batched` (default: max_concurrency; one otherwise).")
    n_threads: int | None = Field(default=None, ge=1, description="`embedded`: CPU threads "
                                  "(default: every core).")
    batch_size: int | None = Field(default=None, ge=1, description="`hf`: requests generated together "
                                   "(default: 8 on a GPU, 1 on a CPU).")


class ModelIdentity(BaseModel):
    """What decides a model's answers: the cache key's model part is built from these fields only."""

    model_config = ConfigDict(extra="forbid")

    backend: str = Field(description="Backend name: openai, embedded, scripted, hf.")
    model: str = Field(default="", description="Provider's model id (e.g. 'Qwen/Qwen2.5-VL-7B').")
    system_prompt: str | None = Field(
        default=None, description="Prepended as a system message (e.g. to make one model two personas)."
    )
    adapter: str | None = Field(
        default=None, description="`hf` only: a LoRA adapter folder loaded on top of `model` "
        "(e.g. a `qa finetune` output's best/)."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Backend-specific options (e.g. extra_body, n_ctx)."
    )

    @property
    def adapter_folder(self) -> str | None:
        """The LoRA adapter this entry names: `adapter`, or the older spelling `extra.adapter`."""
        return self.adapter or self.extra.get("adapter")

    @property
    def identity(self) -> dict[str, Any]:
        """The cache key's model part: every identity field (an adapter by its weights' sha256, so a
        retrained adapter in the same folder is asked again) and nothing else."""
        identity = self.model_dump(include=set(ModelIdentity.model_fields) - {"adapter"})
        if self.adapter_folder:
            identity["adapter"] = adapter_digest(self.adapter_folder)
        return identity


class ModelServing(BaseModel):
    """Where and how fast a model is asked: changing these never changes an answer or a cache key."""

    model_config = ConfigDict(extra="forbid")

    base_url: list[str] = Field(
        default_factory=list,
        description="Endpoint URL, or a list of replicas of one model (load-balanced, fail-over).",
    )
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the key; never the key."
    )
    max_concurrency: int | Literal["auto"] = Field(
        default="auto", description="Calls in flight at once: a number, or `auto` (the default): a limit "
        "per replica that follows the server's pace (latency, 429/503, its /metrics queue), between 1 "
        "and `max_concurrency_ceiling`; a model served in this process (no `base_url`) gets 8.")
    max_concurrency_ceiling: int = Field(default=256, ge=1, description="`auto` never allows more calls "
                                         "in flight per replica than this.")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute cap.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-attempt timeout.")
    max_reply_bytes: int = Field(default=8_000_000, ge=1024, description="The longest reply body read (an "
                                 "HTTP backend's): a longer one is cut there and the call fails as truncated, "
                                 "so a server cannot fill memory or the store.")
    serving: ServingOptions = Field(
        default_factory=ServingOptions, description="Speed and memory knobs of the backend (n_parallel, "
        "n_threads, batch_size); also accepted inside `extra`.")

    @field_validator("max_concurrency", mode="before")
    @classmethod
    def _positive(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            raise ValueError("max_concurrency must be at least 1, or auto")
        return value

    @property
    def auto_concurrency(self) -> bool:
        """Whether the engine paces this model (`auto` and a server to pace)."""
        return self.max_concurrency == "auto" and bool(self.base_url)

    @property
    def fixed_concurrency(self) -> int:
        """The fixed limit: the number given, or 8 for `auto` (a backend's slots, a model served here)."""
        return self.max_concurrency if isinstance(self.max_concurrency, int) else 8

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class ModelPolicy(BaseModel):
    """What the engine does around a call: retries, backoff, and what a call costs."""

    model_config = ConfigDict(extra="forbid")

    max_retries: int = Field(default=4, ge=0, description="Retries after the first attempt.")
    content_retries: int = Field(
        default=2, ge=0, description="Of those, retries of a refused or unparseable answer."
    )
    backoff_s: float = Field(default=1.0, gt=0, description="First backoff wait (jittered, doubling).")
    backoff_max_s: float = Field(default=30.0, gt=0, description="Longest backoff wait.")
    price_in: float = Field(default=0.0, ge=0, description="USD per 1M prompt tokens.")
    price_out: float = Field(default=0.0, ge=0, description="USD per 1M completion tokens.")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_in + completion_tokens * self.price_out) / 1e6


class ModelSpec(ModelIdentity, ModelServing, ModelPolicy):
    """One entry of the model registry: identity, serving and policy fields, and what describes the
    model to the stages."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", description="Registry name; filled from the YAML key.")
    vision: bool | None = Field(
        default=None, description="Accepts images (else it reads meme text + caption). Default: "
        "true for `openai` endpoints (the image is sent unless a model is declared "
        "text-only with `vision: false`), false for the text-only embedded model.")
    max_image_pixels: int | None = Field(
        default=None, ge=1, description="The most pixels (width × height) a picture sent to this model "
        "may have: a larger one is downscaled to fit, aspect kept (recorded in the call, counted in "
        "the report). None: pictures are sent as they are.")
    structured_output: bool = Field(
        default=True, description="Send response_format json_schema when a stage asks for JSON."
    )
    family: str | None = Field(
        default=None, description="Model family (e.g. qwen, llava, openai), for judge panels of distinct "
        "families (MemeArena); default: read from `model` (or the name) where one known family matches."
    )

    @model_validator(mode="before")
    @classmethod
    def _serving_out_of_extra(cls, data: Any) -> Any:
        """Serving knobs written inside `extra` (the spelling of earlier registry files) move to `serving`."""
        if not isinstance(data, dict) or not isinstance(data.get("extra"), dict):
            return data
        knobs = {k: v for k, v in data["extra"].items() if k in ServingOptions.model_fields}
        if not knobs:
            return data
        serving = data.get("serving") or {}
        if not isinstance(serving, dict):
            return data  # the field's own validation names the error
        twice = sorted(set(knobs) & set(serving))
        if twice:
            raise ValueError(f"{', '.join(twice)} given both in `extra` and in `serving`: keep one")
        extra = {k: v for k, v in data["extra"].items() if k not in knobs}
        return {**data, "extra": extra, "serving": {**serving, **knobs}}

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


class ModelRegistry:
    """Named model specs (loaded by `memegauge.config.load_registry`: the built-in embedded models plus
    those of a registry YAML)."""

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
