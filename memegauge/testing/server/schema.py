"""Instances of a JSON schema, seeded by the request: what the server answers to a json_schema response_format."""

from __future__ import annotations

import random
from typing import Any
from collections.abc import Iterable

from memegauge.testing.server.config import _h64
from memegauge.testing.server.text import _Ctx, _FALLBACK_WORDS


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _merge_all_of(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for sub in schema["allOf"]:
        if isinstance(sub, dict) and "$ref" in sub:
            sub = _resolve(sub["$ref"], root)
        if not isinstance(sub, dict):
            continue
        for key, value in sub.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _bounds(schema: dict[str, Any], integer: bool) -> tuple[float, float]:
    step = 1 if integer else 1e-3
    lo: float | None = schema.get("minimum")
    hi: float | None = schema.get("maximum")
    xmin, xmax = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(xmin, bool):  # draft 4: a flag on minimum
        xmin = lo + step if xmin and lo is not None else None  # type: ignore[operator]
        lo = xmin if xmin is not None else lo
    elif xmin is not None:
        lo = max(lo, xmin + step) if lo is not None else xmin + step
    if isinstance(xmax, bool):
        xmax = hi - step if xmax and hi is not None else None  # type: ignore[operator]
        hi = xmax if xmax is not None else hi
    elif xmax is not None:
        hi = min(hi, xmax - step) if hi is not None else xmax - step
    if lo is None and hi is None:
        lo, hi = 0, 10
    elif lo is None:
        lo = hi - 10  # type: ignore[operator]
    elif hi is None:
        hi = lo + 10
    if integer:
        lo, hi = int(-(-lo // 1)), int(hi // 1)  # ceil, floor
    return lo, hi  # type: ignore[return-value]


def _gen_number(schema: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    lo, hi = _bounds(schema, integer)
    if hi < lo:
        hi = lo
    multiple = schema.get("multipleOf")
    if multiple:
        first = -(-lo // multiple) * multiple
        count = int((hi - first) // multiple) + 1
        value = first + multiple * rng.randrange(max(count, 1))
        return int(value) if integer else value
    if integer:
        return rng.randint(int(lo), int(hi))
    value = round(rng.uniform(lo, hi), 3)
    return min(max(value, lo), hi)


_FORMATS = {
    "date-time": "2024-05-17T12:00:00Z",
    "date": "2024-05-17",
    "time": "12:00:00Z",
    "email": "someone@example.com",
    "uri": "https://example.com/meme",
    "url": "https://example.com/meme",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
}


def _gen_string(schema: dict[str, Any], ctx: _Ctx) -> str:
    fmt = schema.get("format")
    if fmt == "uuid":
        value = f"{ctx.rng.getrandbits(32):08x}-0000-4000-8000-{ctx.rng.getrandbits(48):012x}"
    elif fmt in _FORMATS:
        value = _FORMATS[fmt]
    else:
        value = ctx.phrase(2, 5)
    min_len, max_len = schema.get("minLength", 0), schema.get("maxLength")
    while len(value) < min_len:
        value += " " + ctx.rng.choice(ctx.words)
    if max_len is not None and len(value) > max_len:
        value = value[:max_len].rstrip() or value[:max_len]
        while len(value) < min_len:  # rstrip may have made it too short
            value += "x"
    return value


def _first_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        return non_null[0] if non_null else "null"
    if kind:
        return kind
    if "properties" in schema or "additionalProperties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return "string"


def _instance(schema: Any, root: dict[str, Any], ctx: _Ctx, depth: int) -> Any:
    if schema is True or schema is None or schema == {}:
        return ctx.phrase()
    if schema is False:
        raise ValueError("schema 'false' has no valid instance")
    if depth > 32:
        raise ValueError("schema nests too deeply (recursive $ref without a base case?)")
    if "$ref" in schema:
        return _instance(_resolve(schema["$ref"], root), root, ctx, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return ctx.rng.choice(schema["enum"])
    if "allOf" in schema:
        return _instance(_merge_all_of(schema, root), root, ctx, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema and schema[key]:
            branches = schema[key]
            # the first branch that is not just null, else the first
            is_null = [isinstance(b, dict) and b.get("type") == "null" for b in branches]
            branch = branches[is_null.index(False)] if False in is_null else branches[0]
            return _instance(branch, root, ctx, depth + 1)
    kind = _first_type(schema)
    if kind == "object":
        return _gen_object(schema, root, ctx, depth)
    if kind == "array":
        return _gen_array(schema, root, ctx, depth)
    if kind == "integer":
        return _gen_number(schema, ctx.rng, integer=True)
    if kind == "number":
        return _gen_number(schema, ctx.rng, integer=False)
    if kind == "boolean":
        return ctx.rng.random() < 0.5
    if kind == "null":
        return None
    return _gen_string(schema, ctx)


def _gen_object(schema: dict[str, Any], root: dict[str, Any], ctx: _Ctx, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    deep = depth > 8  # recursion guard: only required properties deep down
    out: dict[str, Any] = {}
    for key, sub in props.items():
        if deep and key not in required:
            continue
        out[key] = _instance(sub, root, ctx, depth + 1)
    extra_schema = schema.get("additionalProperties", True)
    for key in required:
        if key not in out:
            sub = extra_schema if isinstance(extra_schema, dict) else True
            out[key] = _instance(sub, root, ctx, depth + 1)
    max_props = schema.get("maxProperties")
    wanted = schema.get("minProperties", 0)
    if isinstance(extra_schema, dict) and not props:
        wanted = max(wanted, 2)  # a map: give it a couple of keys
    if extra_schema is not False and len(out) < wanted:
        for word in [*ctx.words, *_FALLBACK_WORDS, *(f"key{i}" for i in range(wanted + 2))]:
            if len(out) >= wanted or (max_props is not None and len(out) >= max_props):
                break
            if word not in out and word not in props:
                sub = extra_schema if isinstance(extra_schema, dict) else True
                out[word] = _instance(sub, root, ctx, depth + 1)
    return out


def _gen_array(schema: dict[str, Any], root: dict[str, Any], ctx: _Ctx, depth: int) -> list[Any]:
    prefix = schema.get("prefixItems") or []
    items = schema.get("items", True)
    if isinstance(items, list):  # draft-4 tuple form
        prefix, items = items, schema.get("additionalItems", True)
    lo = int(schema.get("minItems", 0))
    hi = schema.get("maxItems")
    hi = int(hi) if hi is not None else max(lo, 3)
    if items is False:
        hi = min(hi, len(prefix))
    start = max(lo, 1) if hi >= 1 else 0
    n = ctx.rng.randint(start, max(start, min(hi, start + 2)))
    if depth > 8:
        n = lo
    out: list[Any] = []
    unique = schema.get("uniqueItems", False)
    attempts = 0
    while len(out) < n and attempts < n * 10 + 10:
        attempts += 1
        sub = prefix[len(out)] if len(out) < len(prefix) else items
        value = _instance(sub, root, ctx, depth + 1)
        if unique and value in out:
            continue
        out.append(value)
    return out


def schema_instance(schema: dict[str, Any], seed: int | str = 0, words: Iterable[str] = ()) -> Any:
    """A deterministic instance of `schema` (a JSON Schema subset: type, properties, required,
    additionalProperties, min/maxProperties, items/prefixItems, min/maxItems, uniqueItems, enum,
    const, anyOf/oneOf (first non-null branch), allOf (merged), local $ref/$defs, string
    min/maxLength and common formats (patterns are not supported), integer/number bounds incl.
    exclusive ones and multipleOf, boolean, null). `words` seeds the phrases used for strings."""
    text = " ".join(words)
    ctx = _Ctx(random.Random(_h64("schema", str(seed))), "schema", text, text)
    return _instance(schema, schema, ctx, 0)
