"""JSON answers: the first JSON object or array in a text (fenced, embedded in prose, or with the lenient
fixes real models need: trailing commas, Python literals)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from memegauge.parse.text import as_text, fail
from memegauge.types import ParseFailure


# An unterminated fence still counts: a truncated answer often loses its closing ```.
_FENCE = re.compile(r"```[ \t]*[\w+.-]*[ \t]*\n?(.*?)(?:```|\Z)", re.S)
_MAX_STARTS = 200  # bounds the work on long prose full of brackets
_PY_STRING = r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'"
_TRAILING_COMMA = re.compile(rf"({_PY_STRING})|,(\s*[}}\]])", re.S)
_JSON_WORDS = re.compile(rf"({_PY_STRING})|\b(true|false|null)\b", re.S)
_PY_WORDS = {"true": "True", "false": "False", "null": "None"}


def parse_json(text: str) -> dict | list | ParseFailure:
    """Extract the JSON object or array a model meant to write.

    Tried in order: each fenced block (```json or bare ```), first that parses; then the first
    balanced ``{...}``/``[...]`` in the text, skipping prose before and after it. Bracket matching
    respects strings, so braces inside strings do not count. A candidate parses as strict JSON, then
    JSON without trailing commas, then as a Python literal (single quotes, True/False/None, mixed with
    true/false/null), which is unambiguous because ``ast.literal_eval`` accepts only literals.
    Python-only values (tuples, int keys) are normalised to JSON; sets, bytes and complex numbers are
    rejected. A top-level string or number is not accepted.

    An opening bracket that never closes ends the search with "truncated JSON (unbalanced braces)":
    a complete array nested inside a truncated object is a fragment, not the answer.
    """
    text = as_text(text)
    if not text.strip():
        return fail("empty text", text)
    fence_failure = None
    for block in _FENCE.findall(text):
        value = _scan_json(block)
        if not isinstance(value, ParseFailure):
            return value
        fence_failure = value if fence_failure is None else fence_failure
    # Fenced blocks were tried whole; the prose outside them is scanned on its own, so a broken
    # fenced block cannot swallow a good object after it.
    value = _scan_json(_FENCE.sub(" ", text))
    if isinstance(value, ParseFailure):
        found_nothing = value.reason == "no JSON object found"
        # ParseFailure is falsy, hence the explicit None test.
        chosen = fence_failure if fence_failure is not None and found_nothing else value
        return fail(chosen.reason, text)
    return value


def _scan_json(text: str) -> Any:
    reason = "no JSON object found"
    starts = (i for i, c in enumerate(text) if c in "{[")
    for _, start in zip(range(_MAX_STARTS), starts, strict=False):
        end = _balanced_end(text, start)
        if end is None:
            return ParseFailure(reason="truncated JSON (unbalanced braces)")
        if end < 0:
            continue  # mismatched closer: prose like "[see {note]" rather than JSON
        value, error = _load(text[start:end])
        if error is None:
            return value
        reason = f"invalid JSON: {error}"
    return ParseFailure(reason=reason)


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the bracket closing ``text[start]``; None if it never closes, -1 on mismatch."""
    closers = {"{": "}", "[": "]"}
    stack: list[str] = []
    quote, prev, i = "", "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        # A single quote opens a string only where a value may start, so the apostrophe of
        # "user's" in bracketed prose does not swallow the rest of the text.
        elif c == '"' or (c == "'" and prev and prev in "{[,:"):
            quote = c
        elif c in closers:
            stack.append(closers[c])
        elif c in "}]":
            if c != stack.pop():
                return -1
            if not stack:
                return i + 1
        if not quote and not c.isspace():
            prev = c
        i += 1
    return None


def _load(candidate: str) -> tuple[Any, str | None]:
    """(value, None) when the candidate parses to an object/array, else (None, why)."""
    try:
        value = json.loads(candidate)
        return (value, None) if isinstance(value, (dict, list)) else (None, "not an object or array")
    except (ValueError, RecursionError) as exc:
        error = str(exc)
    for attempt in (_lenient_json, _python_literal):
        try:
            value = attempt(candidate)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, (dict, list)):
            return value, None
    return None, error


def _lenient_json(candidate: str) -> Any:
    return json.loads(_TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), candidate))


def _python_literal(candidate: str) -> Any:
    pythonic = _JSON_WORDS.sub(lambda m: m.group(1) or _PY_WORDS[m.group(2)], candidate)
    # The round trip turns tuples into lists and int keys into strings, and raises on sets/bytes.
    return json.loads(json.dumps(ast.literal_eval(pythonic)))
