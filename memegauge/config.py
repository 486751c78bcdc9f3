"""Configuration: loading the model registry and method configs (pydantic models) from YAML.

The model spec itself is `memegauge.models.spec` (imported here, one way: config → models → types).

Every validation error names the file, the key and the fix, and raises `InputError` (exit code 2).
When no registry file is given, the built-in registry holds the embedded offline models, so MemeGauge
runs with no network and no key.
"""

from __future__ import annotations

import copy
from pathlib import Path
from urllib.parse import urlsplit
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from memegauge.files import parse_yaml, read_user_text
from memegauge.models import backends, find_backend
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.errors import InputError
from memegauge.locations import ENV_MODELS, ENV_STORE, registry_path  # noqa: F401 - re-exported (callers import them here)

T = TypeVar("T", bound=BaseModel)


# In-process CPU models get a long per-call timeout: their speed depends on what else the
# machine runs (a call that takes 10 s on idle cores takes minutes on oversubscribed ones), and a
# timeout there only wastes the work done so far.
BUILTIN_MODELS: dict[str, dict[str, Any]] = {
    "embedded": {"backend": "embedded", "model": "qwen2.5-coder-1.5b-instruct-q4_k_m",
                 "max_concurrency": 2, "timeout_s": 900},
    "embedded-small": {"backend": "embedded", "model": "smollm2-135m-instruct-q4_1",
                       "max_concurrency": 2, "timeout_s": 900},
}


def _builtin_specs() -> dict[str, ModelSpec]:
    return {name: ModelSpec(name=name, **fields) for name, fields in BUILTIN_MODELS.items()}


def read_yaml(path: Path) -> Any:
    """Read a YAML file, turning every way it can be unreadable into one clear InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", where=str(path), fix="check the path")
    try:
        return parse_yaml(read_user_text(path), str(path))
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
    """Load a registry YAML (`{name: {backend, model, ...}}`) on top of the built-in models; None:
    ``$MEMEGAUGE_MODELS`` when set, else the built-ins alone (`registry_path`)."""
    specs = _builtin_specs()
    path = registry_path(path)
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
            out[key.strip()] = parse_yaml(raw, f"-o {key.strip()}") if raw.strip() else ""
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


class MethodConfig(BaseModel):
    """The base of every method's run config (what `Method.config` returns and `Method.run` takes).

    Unknown keys are refused. Every path field (a `Path` value, whatever the field) is resolved from the
    folder of the config file (the validation context's ``base_dir``: `load_config`; a dict given to
    `method_config` resolves from the working directory). A run's erased pictures, when its method erases
    meme text, go next to the store (`memegauge-erased/`) unless the config names a folder. Subclasses say
    which models the run calls by role (`roles`), what the run stores and hashes (`stored`) and, where it
    differs from the method's own default, the run's default name (`run_name`)."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _paths_from_the_file(cls, value: Any, info: ValidationInfo) -> Any:
        return resolve_from_base(value, info) if isinstance(value, Path) else value

    def roles(self) -> dict[str, list[str]]:
        """The models the run calls, by role (``agent``, ``targets``, ``judges``); none by default."""
        return {}

    def models(self) -> list[str]:
        """Every registry name the run calls, each once, in role order."""
        return list(dict.fromkeys(m for names in self.roles().values() for m in names))

    def stored(self) -> dict[str, Any]:
        """The config as stored with the run (and hashed): JSON-safe, paths as strings."""
        return self.model_dump(mode="json")
