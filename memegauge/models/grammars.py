"""GBNF grammars and JSON-schema caps that constrain the embedded model's answers.

Every builder here is a pure function returning a llama.cpp GBNF grammar string (or a new schema
dict); nothing imports llama.cpp, so the module is cheap to import and easy to unit-test. The
embedded backend picks a builder from the request's `OutputSpec`:

=========  ==============================================================================
kind       answer shape the grammar forces
=========  ==============================================================================
RATING     ``<explanation, one paragraph>\\nRating: [[n]]`` with ``lo <= n <= hi``
VERDICT    ``<reasons, one paragraph>`` then one ``[Dimension] V`` line per dimension, then
           ``[Overall Judge] V``; V is ``A``, ``B``, ``Tie (both strong)`` or ``Tie (both weak)``
CHOICE     one option letter (``B``); with ``multi``: 1..n distinct letters in alphabetical
           order (``ACD``); ``N`` as well when ``allow_none``
TEXT       with sections: ``[Background Knowledge] ...\\n[Reasoning] ...`` (one paragraph each)
JSON       not a GBNF: :func:`bounded_json_schema` adds ``maxItems`` / ``maxLength`` /
           ``additionalProperties`` caps so decoding terminates, then llama.cpp constrains
           to the schema itself
=========  ==============================================================================

Free text inside a grammar is *bounded* (at most ``max_chars`` characters) and kept to one
paragraph: it may not contain a newline, ``[`` or ``]``, so a small model cannot flood newlines,
forge a second ``Rating: [[n]]`` or open a section header early, and it always reaches the
closing part of the format before ``max_tokens`` runs out (see :func:`chars_budget`).
"""

from __future__ import annotations

import copy
import string
from typing import Any
from collections.abc import Sequence

#: The four verdicts of a MemeArena judge (Fig. 11), in the order the grammar lists them.
VERDICTS: tuple[str, ...] = ("A", "B", "Tie (both strong)", "Tie (both weak)")

#: The last line of every verdict.
OVERALL_JUDGE = "Overall Judge"

#: Defaults for :func:`bounded_json_schema`.
DEFAULT_MAX_ITEMS = 10
DEFAULT_MAX_STRING = 1000
DEFAULT_MAX_PROPERTIES = 6


def gbnf_literal(text: str) -> str:
    """Quote `text` as a GBNF string literal (escaping backslash, quote and control characters)."""
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def chars_budget(max_tokens: int, reserve_tokens: int, chars_per_token: float = 2.0,
                 cap: int = 1500, floor: int = 8) -> int:
    """How many characters of free text fit in `max_tokens` after `reserve_tokens` for the fixed
    parts of a format (headers, the rating line, verdict lines).

    English averages about four characters a token; two is a safe lower bound even for the noise a
    tiny model writes, so a bounded paragraph always leaves room for the closing part. The result
    is clamped to [`floor`, `cap`]: at least a few characters (the text must be non-empty), at most
    a long paragraph.
    """
    budget = int((max_tokens - reserve_tokens) * chars_per_token)
    return max(floor, min(cap, budget))


def _paragraph_rules(name: str, max_chars: int) -> list[str]:
    """Rules for `name`: non-empty text of at most `max_chars` characters on one line.

    The first character is visible (no leading blank); no character is a newline or a square
    bracket.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    rest = f"[^\\n\\r\\[\\]]{{0,{max_chars - 1}}}" if max_chars > 1 else ""
    return [f"{name} ::= [^ \\t\\n\\r\\[\\]] {rest}".rstrip()]


def rating_grammar(lo: int = 1, hi: int = 10, max_chars: int = 800) -> str:
    """Grammar for an explanation followed by ``Rating: [[n]]`` (AdamMeme's Scorer, Fig. 13).

    The answer is one non-empty paragraph of at most `max_chars` characters (no newline, no square
    brackets), a newline, then ``Rating: [[n]]`` with an integer ``lo <= n <= hi``; nothing follows.
    """
    if lo > hi:
        raise ValueError(f"empty rating range {lo}..{hi}")
    numbers = " | ".join(gbnf_literal(str(n)) for n in range(hi, lo - 1, -1))
    return "\n".join([
        'root ::= explanation "\\nRating: [[" score "]]"',
        *_paragraph_rules("explanation", max_chars),
        f"score ::= {numbers}",
    ]) + "\n"


def verdict_grammar(sections: Sequence[str] = (), max_chars: int = 600) -> str:
    """Grammar for a MemeArena judgment (Fig. 11) that always ends with the overall verdict.

    Shape (each verdict is ``A``, ``B``, ``Tie (both strong)`` or ``Tie (both weak)``)::

        <short reasons: one paragraph, at most max_chars characters>
        [Instruction Following] A
        [Correctness] Tie (both weak)
        ...one line per name in `sections`, in order...
        [Overall Judge] B

    A name ``Overall Judge`` in `sections` is ignored (the overall line is always last, once).
    Section names must not contain ``[``, ``]`` or a newline.
    """
    names = [s for s in sections if s != OVERALL_JUDGE]
    _check_names(names)
    lines = [gbnf_literal(f"\n[{name}] ") + " verdict" for name in names]
    lines.append(gbnf_literal(f"\n[{OVERALL_JUDGE}] ") + " verdict")
    return "\n".join([
        "root ::= reasons " + " ".join(lines),
        *_paragraph_rules("reasons", max_chars),
        "verdict ::= " + " | ".join(gbnf_literal(v) for v in VERDICTS),
    ]) + "\n"


def option_letters(n_options: int) -> list[str]:
    """The first `n_options` capital letters (``A``, ``B``, ...)."""
    if not 1 <= n_options <= 26:
        raise ValueError(f"n_options must be in 1..26, got {n_options}")
    return list(string.ascii_uppercase[:n_options])


def choice_grammar(n_options: int = 4, multi: bool = False, allow_none: bool = False) -> str:
    """Grammar for a multiple-choice answer made only of option letters (MemeQA, App. D).

    * single: exactly one of the first `n_options` letters (``C``);
    * `multi`: one or more distinct letters in alphabetical order (``ACD``) — every non-empty
      subset is reachable, none twice;
    * `allow_none`: ``N`` ("none of the options", MemeQA None−) is allowed as the whole answer.

    `allow_none` with 14 or more options is refused: ``N`` would then also be an option letter.
    """
    letters = option_letters(n_options)
    if allow_none and "N" in letters:
        raise ValueError("allow_none needs fewer than 14 options: 'N' is an option letter here")
    rules: list[str] = []
    if not multi:
        alternatives = [gbnf_literal(letter) for letter in letters]
        if allow_none:
            alternatives.append('"N"')
        rules.append("root ::= " + " | ".join(alternatives))
        return "\n".join(rules) + "\n"
    # from-k ::= a non-empty ordered subset of letters[k:]
    #         = letters[k] after-(k+1)?  |  from-(k+1)      (after-j ::= from-j)
    alternatives = ["subset"]
    if allow_none:
        alternatives.append('"N"')
    rules.append("root ::= " + " | ".join(alternatives))
    rules.append("subset ::= from-0")
    last = len(letters) - 1
    for k, letter in enumerate(letters):
        if k == last:
            rules.append(f"from-{k} ::= {gbnf_literal(letter)}")
        else:
            rules.append(f"from-{k} ::= {gbnf_literal(letter)} from-{k + 1}? | from-{k + 1}")
    return "\n".join(rules) + "\n"


def sections_grammar(sections: Sequence[str], max_chars: int = 600) -> str:
    """Grammar for a sectioned answer, e.g. MemeArena's ``[Background Knowledge]`` /
    ``[Reasoning]`` chain of thought (Fig. 9)::

        [Background Knowledge] <one paragraph>
        [Reasoning] <one paragraph>

    Every section appears once, in the given order, with a non-empty paragraph of at most
    `max_chars` characters (no newline, no square brackets).
    """
    names = list(sections)
    if not names:
        raise ValueError("sections_grammar needs at least one section")
    _check_names(names)
    parts = []
    for i, name in enumerate(names):
        header = f"[{name}] " if i == 0 else f"\n[{name}] "
        parts.append(f"{gbnf_literal(header)} body")
    return "\n".join([
        "root ::= " + " ".join(parts),
        *_paragraph_rules("body", max_chars),
    ]) + "\n"


def _check_names(names: Sequence[str]) -> None:
    for name in names:
        if not name or any(c in name for c in "[]\n\r"):
            raise ValueError(f"bad section name {name!r}: must be non-empty, without [ ] or newlines")


def bounded_json_schema(schema: dict[str, Any], max_items: int = DEFAULT_MAX_ITEMS,
                        max_string: int = DEFAULT_MAX_STRING,
                        max_properties: int = DEFAULT_MAX_PROPERTIES) -> dict[str, Any]:
    """A copy of `schema` in which constrained decoding must terminate.

    Recursively (through ``properties``, ``items``, ``prefixItems``, ``additionalProperties``,
    ``anyOf`` / ``oneOf`` / ``allOf``, ``$defs`` / ``definitions``):

    * an array without ``maxItems`` gets ``maxItems: max_items`` (never below its ``minItems``);
    * a string without ``maxLength``, ``enum``, ``const`` or ``pattern`` gets
      ``maxLength: max_string``;
    * an object with ``properties`` and no ``additionalProperties`` gets
      ``additionalProperties: false`` (a small model would otherwise invent keys);
    * an object of free keys (``additionalProperties`` a schema) without ``maxProperties`` gets
      ``maxProperties: max_properties``.

    Caps the caller already set are kept. The input is not modified.
    """
    result = copy.deepcopy(schema)
    _bound(result, max_items, max_string, max_properties)
    return result


def _bound(node: Any, max_items: int, max_string: int, max_properties: int) -> None:
    if isinstance(node, list):
        for child in node:
            _bound(child, max_items, max_string, max_properties)
        return
    if not isinstance(node, dict):
        return
    types = node.get("type")
    types = set(types) if isinstance(types, list) else {types} if types else set()
    if ("array" in types or "items" in node or "prefixItems" in node) and "maxItems" not in node:
        node["maxItems"] = max(max_items, int(node.get("minItems", 0)))
    if "string" in types and not ({"maxLength", "enum", "const", "pattern", "format"} & set(node)):
        node["maxLength"] = max(max_string, int(node.get("minLength", 0)))
    if "object" in types or "properties" in node:
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        extra = node.get("additionalProperties")
        if "properties" not in node and extra is not False and "maxProperties" not in node:
            node["maxProperties"] = max(max_properties, int(node.get("minProperties", 0)))
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        if isinstance(node.get(key), dict):
            for child in node[key].values():
                _bound(child, max_items, max_string, max_properties)
    for key in ("items", "additionalProperties", "not", "contains"):
        if isinstance(node.get(key), (dict, list)):
            _bound(node[key], max_items, max_string, max_properties)
    for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
        if isinstance(node.get(key), list):
            _bound(node[key], max_items, max_string, max_properties)


def fit_json_schema(schema: dict[str, Any], max_tokens: int, max_items: int = DEFAULT_MAX_ITEMS,
                    max_properties: int = DEFAULT_MAX_PROPERTIES,
                    chars_per_token: float = 2.0) -> dict[str, Any]:
    """:func:`bounded_json_schema` with string caps chosen so the whole answer fits `max_tokens`.

    Every free string value (no ``enum``/``const``/``pattern``) shares the character budget of `max_tokens`
    (after an allowance for keys and
    punctuation): each gets at most ``budget / slots`` characters, where `slots` counts how many
    such strings the largest answer can hold (an array of strings counts ``maxItems`` times). A
    cap the caller set is kept when it is smaller. The per-string cap never drops below 24
    characters nor exceeds :data:`DEFAULT_MAX_STRING`; a schema whose fixed parts alone exceed
    `max_tokens` can still be cut off — give such a call more tokens.
    """
    shaped = bounded_json_schema(schema, max_items=max_items, max_string=_UNCAPPED,
                                 max_properties=max_properties)
    slots, keys = _count_slots(shaped, 1)
    if slots == 0:
        return bounded_json_schema(schema, max_items, DEFAULT_MAX_STRING, max_properties)
    reserve = 8 + 3 * slots + 4 * keys
    budget = chars_budget(max_tokens, reserve, chars_per_token, cap=DEFAULT_MAX_STRING * slots,
                          floor=24 * slots)
    per_string = max(24, min(DEFAULT_MAX_STRING, budget // slots))
    fitted = bounded_json_schema(schema, max_items, per_string, max_properties)
    _clamp_strings(fitted, per_string)
    return fitted


def _clamp_strings(node: Any, limit: int) -> None:
    """Lower every string's ``maxLength`` to `limit`, in place. (Free keys stay unbounded: this
    llama.cpp build drops a grammar with ``propertyNames`` and decodes unconstrained.)"""
    if isinstance(node, list):
        for child in node:
            _clamp_strings(child, limit)
        return
    if not isinstance(node, dict):
        return
    if "maxLength" in node:
        node["maxLength"] = max(int(node.get("minLength", 0)), min(int(node["maxLength"]), limit))
    for child in node.values():
        if isinstance(child, (dict, list)):
            _clamp_strings(child, limit)


_UNCAPPED = 10**9  # marker cap used while counting string slots


def _count_slots(node: Any, multiplier: int) -> tuple[int, int]:
    """(uncapped strings, keys) the largest instance of `node` can hold, times `multiplier`."""
    if not isinstance(node, dict):
        return 0, 0
    slots = keys = 0
    if "maxLength" in node:
        slots += multiplier
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and node[key]:
            counted = [_count_slots(child, multiplier) for child in node[key]]
            best = max(counted)
            slots, keys = slots + best[0], keys + best[1]
    for child in node.get("allOf") or ():
        s, k = _count_slots(child, multiplier)
        slots, keys = slots + s, keys + k
    if isinstance(node.get("properties"), dict):
        for child in node["properties"].values():
            s, k = _count_slots(child, multiplier)
            slots, keys = slots + s, keys + k + multiplier
    if isinstance(node.get("additionalProperties"), dict):
        times = multiplier * int(node.get("maxProperties", DEFAULT_MAX_PROPERTIES))
        s, k = _count_slots(node["additionalProperties"], times)
        slots, keys = slots + s + times, keys + k  # each free key is a string too
    if isinstance(node.get("items"), dict):
        s, k = _count_slots(node["items"], multiplier * int(node.get("maxItems", 1)))
        slots, keys = slots + s, keys + k
    for child in node.get("prefixItems") or ():
        s, k = _count_slots(child, multiplier)
        slots, keys = slots + s, keys + k
    return slots, keys
