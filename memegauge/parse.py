"""Robust extraction of structured answers from free-form model text.

Every stage asks a model for an answer in a fixed shape (a JSON object, ``Rating: [[n]]``, an
``[Overall Judge]`` verdict, multiple-choice letters, bracketed sections, ``## Final Response:``,
``[USER n]:`` lines). Models follow those shapes loosely, so these parsers accept the messy variants
real models write and reject what cannot be read with confidence.

Rules shared by every parser:

* **Never raise on bad text.** Each returns its value or ``ParseFailure(reason=..., text=text[:500])``
  (a falsy record), so the engine can classify the call as *unparseable*, retry it and store why.
  ``None``/bytes input is coerced to text rather than raising.
* **Markdown is noise.** Bold/italic markers, ``#`` headers, code spans, ``'''`` quotes and simple
  HTML tags (``<b>``, ``<p>``) around the interesting part are tolerated.
* **The final statement wins** where a text may hold several answers: the last rating, the last
  ``[Overall Judge]`` section, the last ``[[verdict]]``, the last explicit ``Answer: X``, the last
  ``Final Response`` header. Two exceptions, because there the first occurrence is the content:
  JSON (the first candidate that parses) and named sections (the first header of each name).
* **Ambiguity is a failure, not a guess.** An out-of-range rating, ``[[7.5]]``, a plain "Tie" with no
  strong/weak, two letters for a single-answer question, or both A and B with nothing to choose
  between them all return a failure with a reason a person can act on.
* **Case-insensitive keywords, case-sensitive letters.** ``rating``, ``tie``, ``answer`` match in any
  case, but an answer letter must be a capital (``"A person"`` is not option A, the ``T`` of
  ``"The"`` is never a letter); a lone lowercase letter is accepted only when it is the whole answer.

Only the standard library is used (``json``, ``re``, ``ast``).
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from memegauge.types import ParseFailure

__all__ = [
    "A",
    "B",
    "TIE",
    "TIE_STRONG",
    "TIE_WEAK",
    "VERDICTS",
    "JUDGE_DIMENSIONS",
    "parse_json",
    "parse_rating",
    "parse_verdict",
    "parse_dimension_verdicts",
    "parse_choice",
    "parse_sections",
    "parse_sections_partial",
    "parse_final_response",
    "parse_labelled_lines",
    "starts_yes_no",
    "looks_like_refusal",
    "strip_reasoning",
]

A = "A"
B = "B"
TIE_STRONG = "Tie (both strong)"
TIE_WEAK = "Tie (both weak)"
TIE = "Tie"
VERDICTS = (A, B, TIE_STRONG, TIE_WEAK, TIE)
"""The verdicts a MemeArena judge may give: Fig. 11 asks for A, B, Tie (both strong) or Tie (both
weak), and its own format line reads ``A/B/Tie``, so a plain ``Tie`` (kind unknown) is a verdict too."""

JUDGE_DIMENSIONS = (
    "Instruction Following",
    "Correctness",
    "Redundancy",
    "Relevance",
    "Accuracy",
    "Overall Judge",
)
"""Section headers of a MemeArena judgment, in the order the prompt asks for them."""

_KEEP = 500  # failure records keep this much of the text: enough to debug, small in the store


def _as_text(text: Any) -> str:
    if text is None:
        return ""
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return text if isinstance(text, str) else str(text)


_THINK = re.compile(r"(?is)<(think|thinking|reasoning)>(.*?)(?:</\1>|\Z)")
_THINK_CLOSE = re.compile(r"(?is)^(.*?)</(?:think|thinking|reasoning)>")


def strip_reasoning(text: Any) -> tuple[str, str]:
    """(answer, reasoning): a reasoning model's ``<think>…</think>`` blocks taken out of its text.

    Reasoning is kept by the engine but never parsed as the answer. An unterminated ``<think>``
    (output cut inside its reasoning) leaves no answer. A lone ``</think>`` (servers whose chat
    template opens the block in the prompt) ends the reasoning that precedes it.
    """
    text = _as_text(text)
    if "<" not in text:
        return text, ""
    reasoning = [m.group(2).strip() for m in _THINK.finditer(text)]
    answer = _THINK.sub("", text)
    closed = _THINK_CLOSE.match(answer)
    if closed:
        reasoning.insert(0, closed.group(1).strip())
        answer = answer[closed.end():]
    if not reasoning:
        return text, ""
    return answer.strip(), "\n\n".join(r for r in reasoning if r)


def _fail(reason: str, text: str) -> ParseFailure:
    return ParseFailure(reason=reason, text=text[:_KEEP])


_HTML = re.compile(r"</?[A-Za-z][^<>\n]{0,40}>")
_MARKDOWN = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|`+|'''|\"\"\"|^[ \t]*[#>]+", re.M)


def _demarkdown(text: str) -> str:
    return _MARKDOWN.sub("", _HTML.sub("", text))


# ==================================================================================================
# JSON
# ==================================================================================================

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
    text = _as_text(text)
    if not text.strip():
        return _fail("empty text", text)
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
        return _fail(chosen.reason, text)
    return value


def _scan_json(text: str) -> Any:
    reason = "no JSON object found"
    starts = (i for i, c in enumerate(text) if c in "{[")
    for _, start in zip(range(_MAX_STARTS), starts, strict=False):  # at most _MAX_STARTS starts
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


# ==================================================================================================
# Ratings
# ==================================================================================================

_NUMBER = r"(-?\d{1,6}(?:\.\d{1,6})?)(?!\d)"
_RATING_BRACKETS = re.compile(rf"\[\[[ \t*]*{_NUMBER}[ \t*]*(?:/[ \t]*\d+[ \t]*)?\]\]")
_RATING_LABEL = re.compile(
    rf"\bratings?\b(?:[ \t]*\([^()\n]{{0,20}}\))?[\s*_#:=`~>]*(?:[-–—][ \t]+)?\[{{0,2}}[ \t]*{_NUMBER}",
    re.I,
)


def parse_rating(text: str, low: int = 1, high: int = 10) -> int | ParseFailure:
    """Read a Scorer's rating (AdamMeme Fig. 11): ``Rating: [[n]]`` and its loose variants.

    Recognised: ``[[n]]``, ``Rating: [[n]]``, ``Rating: n``, ``Rating: n/10``, ``Rating (1-10): n``,
    with markdown around any part (``**Rating:** [[7]]``, ``### Rating: 7``, ``*Rating*: **[[3]]**``),
    in any case. The last rating in the text wins, because scorers often restate a provisional score
    before the final one; if that last one is unusable the result is a failure, not an earlier score.
    ``n.0`` counts as ``n``; any other decimal is "non-integer rating"; outside ``low..high`` is a
    failure naming the range.
    """
    text = _as_text(text)
    hits = [(m.start(), m.group(1)) for rx in (_RATING_BRACKETS, _RATING_LABEL) for m in rx.finditer(text)]
    if not hits:
        return _fail("no rating found", text)
    raw = max(hits)[1]
    whole, _, fraction = raw.partition(".")
    if fraction.strip("0"):
        return _fail(f"non-integer rating {raw}", text)
    value = int(whole)
    if not low <= value <= high:
        return _fail(f"rating {value} out of range {low}..{high}", text)
    return value


# ==================================================================================================
# Sections (shared by verdicts, sections)
# ==================================================================================================

# Possessive: "**" and "*" both match a run of stars, and backtracking over every split of a
# long run is exponential.
_PREFIX = r"(?:\*\*|__|\*|<b>|<strong>|'''|```|#{1,6}[ \t]*)*+"
# Closing markup right after a header ("**[Name]**:", "[Name]:**", "[Name]</b>"). A "**" after
# "[Name]: " with a space opens bold content instead, so it is left alone.
_CLOSE = r"(?:\*\*|__|\*|</b>|</strong>)"
_SUFFIX = rf"{_CLOSE}?[ \t]*(?:[:：]{_CLOSE}?)?"
_LEAD_JUNK = re.compile(r"^[\s:：]*")
_TAIL_JUNK = re.compile(r"(?:\s|'''|```)*$")
_GENERIC_HEADER = re.compile(rf"(?m)^[ \t>]*{_PREFIX}\[([A-Za-z][A-Za-z /&-]{{2,40}})\]")
_VERDICT_LIKE = re.compile(r"(?i)^(?:model|answer|assistant|response|option)\s+[ab]$|^tie\b")


def _name_pattern(name: str) -> str:
    return r"\s+".join(re.escape(word) for word in name.split())


_MARKUP_BEFORE = re.compile(rf"{_PREFIX}\Z")


@lru_cache(maxsize=256)
def _header_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The bracketed (``[Name]``, from its bracket) and bare (``Name:`` at a line start) patterns."""
    words = _name_pattern(name)
    bracketed = re.compile(rf"\[\s*{words}\s*\]{_SUFFIX}", re.I)
    bare = re.compile(rf"(?m)^[ \t>]*{_PREFIX}{words}(?=[ \t*_]*(?:[:：]|$)){_SUFFIX}", re.I)
    return bracketed, bare


def _header_hits(text: str, name: str) -> list[tuple[int, int, int]]:
    """(rank, start, end) of every header for ``name``; lower rank = more trustworthy form."""
    bracketed, bare = _header_patterns(name)
    hits, floor = [], 0
    for m in bracketed.finditer(text):
        start = _markup_start(text, max(floor, text.rfind("\n", 0, m.start()) + 1), m.start())
        hits.append((0 if _at_line_start(text, start) else 1, start, m.end()))
        floor = m.end()
    hits += [(2, m.start(), m.end()) for m in bare.finditer(text)]
    return hits


def _markup_start(text: str, low: int, bracket: int) -> int:
    """Where the markup run ending at a header's bracket begins ("**[Name]" starts at the stars).

    The bracket is found first and the markup read backwards from it, within its line and after the
    previous header: a pattern that opens with optional markup is tried at every position of the
    text, which made a long judgment take milliseconds per header name."""
    return _MARKUP_BEFORE.search(text, low, bracket).start()


def _at_line_start(text: str, pos: int) -> bool:
    # Only the current line is looked at (not the whole text before `pos`): a judgment has dozens
    # of headers, and copying the prefix for each made parsing quadratic in the text's length.
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    return not line.strip(" \t>")


def _locate(text: str, names: Iterable[str], last: bool) -> dict[str, tuple[int, int]]:
    """The chosen (start, end) header of each name that occurs: best form, first or last of it."""
    located = {}
    for name in names:
        hits = _header_hits(text, name)
        if hits:
            best = min(rank for rank, _, _ in hits)
            spans = sorted((s, e) for rank, s, e in hits if rank == best)
            located[name] = spans[-1] if last else spans[0]
    return located


def _contents(text: str, located: dict[str, tuple[int, int]], extra: Iterable[int] = ()) -> dict[str, str]:
    # Only the chosen headers (plus `extra`) end a section, so an inline mention of another
    # section's name inside the content does not cut it short.
    bounds = sorted({s for s, _ in located.values()} | set(extra))
    out = {}
    for name, (_, end) in located.items():
        stop = next((b for b in bounds if b >= end), len(text))
        body = _LEAD_JUNK.sub("", text[end:stop])
        out[name] = _TAIL_JUNK.sub("", body)
    return out


def parse_sections_partial(text: str, names: list[str]) -> dict[str, str]:
    """Whatever of the named sections the text holds, ``{name: content}`` in ``names`` order.

    A header is ``[Name]`` (optionally bold or quoted: ``**[Name]**``, ``**[Name]:**``,
    ``<b>[Name]</b>``, ``'''[Name]``), followed by ``:`` or a newline; failing that, ``Name:`` or a
    ``### Name`` heading on a line of its own. Names match case-insensitively with any whitespace.
    A section runs until the next header of a *requested* name; other bracketed text stays in it.
    When a name occurs several times, a header at the start of a line beats an inline one, and
    the first such header wins (later ones are usually the model quoting the format). Empty
    sections are left out, so they count as missing.
    """
    text = _as_text(text)
    contents = _contents(text, _locate(text, names, last=False))
    return {name: contents[name] for name in names if contents.get(name)}


def parse_sections(text: str, names: list[str]) -> dict[str, str] | ParseFailure:
    """All named sections (see `parse_sections_partial`), or a failure naming the missing ones."""
    text = _as_text(text)
    found = parse_sections_partial(text, names)
    missing = [name for name in names if name not in found]
    if missing:
        return _fail("missing sections: " + ", ".join(missing), text)
    return found


# ==================================================================================================
# Verdicts
# ==================================================================================================

_NAMED = r"(?:model|answer|assistant|response|option|candidate)"
_DOUBLE = re.compile(r"\[\[([^\[\]\n]{1,40})\]\]")
_STRICT_LETTER = re.compile(rf"(?i)^\W*(?:{_NAMED}\s*)?([ab])\W*$")
_STRICT_TIE = re.compile(r"(?is)^\W*tie\b(.*)$")
_STRICT_BOTH = re.compile(r"(?i)^\W*both\s+(?:are\s+|answers\s+(?:are\s+)?)?(strong|weak)\W*$")
_ECHO = re.compile(r"(?<![\w'’])A\s*/\s*B(?:\s*/\s*Tie(?:\s*\([^()]*\))?(?:\s*/\s*Tie\s*\([^()]*\))*)?(?![\w'’])",
                   re.I)
# The kind right after "Tie": "(both strong)", "- both weak", ". Both answers are equally weak";
# not a "strong" further on ("Tie — Model A discusses strong ...").
_QUALIFIER = re.compile(
    r"(?i)[\s\-–—:,.(\[]*(?:both\s+(?:answers\s+|models\s+|responses\s+)?(?:are\s+)?(?:equally\s+)?)?(strong|weak)\b")
_MENTION = re.compile(
    rf"(?P<tie>(?i:\btie\b))|(?i:\b{_NAMED})\s+(?P<named>[AB])(?![\w'’])|(?<![\w'’])(?P<bare>[AB])(?![\w'’])"
)
_LABEL = re.compile(
    r"(?i)\b(?:verdict|winner|judg(?:e)?ment|decision|final answer|conclusion|overall)\s*(?:is|:|：|-)\s*"
)
_COMPARATIVE = re.compile(
    rf"(?<![\w'’])(?P<a>[AB])(?![\w'’])\s+(?i:is|performs|does|did|was)\s+(?i:better|superior|stronger|preferable)"
    rf"|(?<![\w'’])(?P<b>[AB])(?![\w'’])\s+(?i:wins|outperforms)"
    rf"|(?i:favou?r(?:s|ed|ing)?|prefer(?:s|red)?)\s+(?i:{_NAMED}\s+)?(?P<c>[AB])(?![\w'’])"
    rf"|(?<![\w'’])(?P<d>[AB])(?![\w'’])\s+(?i:is|was)\s+(?i:the\s+)?(?i:winner|clear\s+winner)"
)
# After a bare capital A the next lowercase word decides: "A is better" is a verdict,
# "A detailed comparison" is an article.
_VERDICT_VERBS = {
    "is", "was", "wins", "won", "performs", "outperforms", "does", "did", "better", "provides",
    "offers", "has", "gives", "shows", "demonstrates", "edges", "takes", "should", "clearly",
    "slightly", "overall",
}
_ALTERNATIVE = re.compile(rf"(?i:{_NAMED}\s+)?[AB]\s+(?i:or|and|vs\.?|versus)\s+(?i:{_NAMED}\s+)?[AB](?![\w'’])")
_SHORT_WORDS = 15
_SHORT_TEXT = 60  # a text this short with no section or [[...]] may be the bare verdict itself
_Reading = Any  # a verdict, a ParseFailure, or None when the reader does not apply


def parse_verdict(text: str) -> str | ParseFailure:
    """Read a MemeArena judge's overall verdict: one of `VERDICTS`.

    Where: the last ``[Overall Judge]`` section (up to the next ``[Section]`` header; ``Overall Judge:``
    without brackets also counts), else the last ``[[A]]``/``[[B]]``/``[[Tie (both strong)]]`` in the
    text, else the whole text when it is short (a bare ``"B"``). Within the section: ``A``,
    ``Model B``, ``Answer A``, ``B is better``, ``Tie (both weak)``, ``Tie - both strong``, markdown
    and case tolerated. A "Tie" with no strong/weak is a failure ("tie without strong/weak"), as is
    any other token (``[[C]]``), or a text naming both A and B without saying which wins.
    """
    text = _as_text(text)
    if not text.strip():
        return _fail("no verdict found (empty text)", text)
    located = _locate(text, JUDGE_DIMENSIONS, last=True)
    if "Overall Judge" in located:
        # The section is authoritative: a [[A]] elsewhere may belong to another dimension.
        verdict = _read_verdict(_contents(text, located, _generic_bounds(text))["Overall Judge"])
    elif _DOUBLE.search(text):
        verdict = _read_verdict(f"[[{_DOUBLE.findall(text)[-1]}]]")
    elif len(text.strip()) <= _SHORT_TEXT:
        verdict = _read_verdict(text)
    else:
        verdict = ParseFailure(reason="no verdict found")
    return _fail(verdict.reason, text) if isinstance(verdict, ParseFailure) else verdict


def parse_dimension_verdicts(text: str, dimensions: list[str]) -> dict[str, str | ParseFailure]:
    """Per-dimension verdicts of a judgment with ``[Dimension] verdict`` sections.

    Each section is read as in `parse_verdict` (same value space). A missing section, or one
    holding only analysis with no decidable verdict, maps to a `ParseFailure` whose reason names
    the dimension; the other dimensions are still returned.
    """
    text = _as_text(text)
    located = _locate(text, set(dimensions) | set(JUDGE_DIMENSIONS), last=True)
    contents = _contents(text, located, _generic_bounds(text))
    out: dict[str, str | ParseFailure] = {}
    for dim in dimensions:
        if dim not in contents:
            out[dim] = _fail(f"missing section [{dim}]", text)
            continue
        verdict = _read_verdict(contents[dim])
        if verdict is None:
            verdict = ParseFailure(reason="no verdict found")
        out[dim] = _fail(f"[{dim}] {verdict.reason}", text) if isinstance(verdict, ParseFailure) else verdict
    return out


def _generic_bounds(text: str) -> list[int]:
    return [m.start() for m in _GENERIC_HEADER.finditer(text) if not _VERDICT_LIKE.match(m.group(1))]


def _tie(rest: str) -> str:
    """A tie's kind from the words after it; a plain "Tie" (the prompt's own ``A/B/Tie``) is TIE."""
    m = _QUALIFIER.match(rest[:60])
    if not m:
        return TIE
    return TIE_STRONG if m.group(1).lower() == "strong" else TIE_WEAK


def _strict_verdict(fragment: str) -> _Reading:
    """The fragment *is* a verdict and nothing else (any case)."""
    fragment = _demarkdown(fragment).strip()
    m = _STRICT_LETTER.match(fragment)
    if m:
        return m.group(1).upper()
    m = _STRICT_TIE.match(fragment)
    if m and len(m.group(1).split()) <= 4:
        return _tie(m.group(1))
    m = _STRICT_BOTH.match(fragment)
    if m:
        return TIE_STRONG if m.group(1).lower() == "strong" else TIE_WEAK
    return None


def _mentions(fragment: str) -> list[tuple[int, Any]]:
    found = []
    for m in _MENTION.finditer(fragment):
        if m.group("tie"):
            found.append((m.start(), _tie(fragment[m.end():])))
        elif m.group("named"):
            found.append((m.start(), m.group("named")))
        elif _bare_letter_ok(fragment, m.end()):
            found.append((m.start(), m.group("bare")))
    return found


def _bare_letter_ok(fragment: str, end: int) -> bool:
    following = re.match(r"\s+([a-z]+)", fragment[end:])
    return not following or following.group(1) in _VERDICT_VERBS


def _leading(fragment: str) -> _Reading:
    """A verdict that opens the fragment: "B.", "Model A wins", "Tie (both weak) because ...".

    Not when the opening is half of an alternative ("Model A or Model B") or the text goes on to
    favour the other answer ("A is better at X, but B is better at Y").
    """
    fragment = fragment.lstrip(" \t\r\n:-–—.>(\"'→⇒=")
    mentions = _mentions(fragment)
    if not mentions or mentions[0][0] != 0:
        return None
    first = mentions[0][1]
    if first in (A, B):
        if _ALTERNATIVE.match(fragment):
            return ParseFailure(reason="ambiguous verdict (A or B)")
        if not _states_verdict(fragment):
            return None  # "Model A provides ..." opens an analysis, not a verdict
        compared = _comparative(fragment)
        if isinstance(compared, ParseFailure) or (compared is not None and compared != first):
            return ParseFailure(reason="conflicting verdicts (A and B both favoured)")
    return first


_MENTION_HEAD = re.compile(rf"(?i:{_NAMED}\s+)?[AB](?![\w'’])")
_VERDICT_TAIL = re.compile(
    r"(?i)(?:[ \t]*(?:\n|$)|\s*[.,;:!)\]—–-]|\s(?:wins|won|is\s+(?:the\s+)?(?:better|superior|stronger|preferable|preferred|winner)"  # noqa: E501 (one regular expression, read whole)
    r"|performs\s+better|outperforms|edges|takes\s+(?:it|this)|clearly|slightly|overall|because|since|as\b))")


def _states_verdict(fragment: str) -> bool:
    """Whether an opening mention of A or B is the verdict itself: alone, or followed by a verdict
    verb ("wins", "is better") or punctuation, not by analysis ("Model A provides ...")."""
    head = _MENTION_HEAD.match(fragment)
    return bool(head) and bool(_VERDICT_TAIL.match(fragment[head.end():]))


def _labelled(fragment: str) -> _Reading:
    for m in reversed(list(_LABEL.finditer(fragment))):
        verdict = _leading(fragment[m.end():])
        if verdict is not None:
            return verdict
    return None


def _last_line_strict(fragment: str) -> _Reading:
    """Analysis followed by a line that is only the verdict: that line decides."""
    lines = [line for line in fragment.splitlines() if line.strip()]
    return _strict_verdict(lines[-1]) if len(lines) >= 2 else None


def _last_line(fragment: str) -> _Reading:
    lines = [line for line in fragment.splitlines() if line.strip()]
    if len(lines) < 2 or len(lines[-1].split()) > 8:
        return None
    return _strict_verdict(lines[-1]) or _leading(lines[-1])


def _comparative(fragment: str) -> _Reading:
    letters = {m.group("a") or m.group("b") or m.group("c") or m.group("d")
               for m in _COMPARATIVE.finditer(fragment)}
    if len(letters) == 1:
        return letters.pop()
    return ParseFailure(reason="conflicting verdicts (A and B both favoured)") if letters else None


def _short_mentions(fragment: str) -> _Reading:
    if len(fragment.split()) > _SHORT_WORDS:
        return None
    mentions = [v for _, v in _mentions(fragment)]
    ties = [v for v in mentions if v in (TIE_STRONG, TIE_WEAK)]
    if ties:  # "tie (both weak)" is too specific to be anything but the verdict
        return ties[0]
    letters = {v for v in mentions if v in (A, B)}
    if len(letters) == 2:
        return ParseFailure(reason="ambiguous verdict (mentions both A and B)")
    if letters:
        # "Model A is weaker." names one answer to criticise it: no verdict for it.
        return None if _BAD.search(fragment) else letters.pop()
    return TIE if TIE in mentions else None


# Comparative cues for a dimension block that is all analysis (MemeArena Fig. 15): what the text
# says of each answer. Read only when no explicit verdict exists, and only when decisive.
_SUBJECT = re.compile(rf"(?<![\w'’])(?i:{_NAMED})\s+(?P<m>[AB])(?![\w])")
_GOOD = re.compile(
    r"(?i)\bmore\s+(?:accurate|detailed|structured|comprehensive|relevant|thorough|complete|precise|"
    r"focused|nuanced|coherent|logical|factual|correct|insightful|specific)\b|\bbetter\b|\bsuperior\b|"
    r"\bstronger\b|\bclearer\b|\bpreferable\b|\bhighly\s+relevant\b|\baligns?\s+(?:more\s+)?closely\b")
_BAD = re.compile(
    r"(?i)\blacks?\b|\blacking\b|\bless\s+\w+|\bexcessive\b|\bunnecessary\b|\bredundant\b|\bverbose\b|"
    r"\bweaker\b|\binaccura\w+|\bincorrect\w*|\bmiss(?:es|ing)\b|\bfails?\b|\boverly\b|\bvague\b|"
    r"\bsuperficial\b|\bhallucinat\w*|\b(?:somewhat|too)\s+general\b|\berrors?\b")


def _cues(fragment: str) -> _Reading:
    """Analysis only: each sentence's words credited to the answer it is about (from each mention
    of "Model A"/"Model B" to the next). A verdict only when one answer gets praise and no criticism
    while the other gets none: anything less clear is no reading, never a guess."""
    good = {A: 0, B: 0}
    bad = {A: 0, B: 0}
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", fragment):
        marks = list(_SUBJECT.finditer(sentence))
        for i, m in enumerate(marks):
            stop = marks[i + 1].start() if i + 1 < len(marks) else len(sentence)
            segment = sentence[m.end():stop]
            good[m.group("m")] += len(_GOOD.findall(segment))
            bad[m.group("m")] += len(_BAD.findall(segment))
    for winner, loser in ((A, B), (B, A)):
        if good[winner] > 0 and bad[winner] == 0 and good[loser] - bad[loser] <= 0 < good[winner]:
            if good[loser] == 0 or bad[loser] > 0:
                return winner
    return None


_VERDICT_READERS: tuple[Callable[[str], Any], ...] = (
    _strict_verdict, _last_line_strict, _labelled, _last_line, _leading, _comparative, _short_mentions,
    _cues,
)


def _read_verdict(fragment: str) -> str | ParseFailure:
    """A verdict from a section's content; readers run from most to least explicit."""
    doubles = _DOUBLE.findall(fragment)
    if doubles:
        verdict = _strict_verdict(doubles[-1])
        return verdict if verdict is not None else ParseFailure(reason=f"unknown verdict {doubles[-1]!r}")
    cleaned = _demarkdown(fragment).strip()
    if not cleaned:
        return ParseFailure(reason="empty verdict")
    # The prompt's own "A/B/Tie" copied back is not a choice; what follows it may be.
    cleaned = _ECHO.sub(" ", cleaned).strip()
    if not cleaned:
        return ParseFailure(reason="verdict template echoed (A/B/Tie)")
    for reader in _VERDICT_READERS:
        verdict = reader(cleaned)
        if verdict is not None:
            return verdict
    return ParseFailure(reason="no verdict found")


# ==================================================================================================
# Multiple choice
# ==================================================================================================

_NONE_MARK = "-"
_CHOICE_NOISE = re.compile(r"[*`_#>\"“”‘]|(?<![A-Za-z])['’]|['’](?![A-Za-z])|</?[A-Za-z][^<>\n]{0,20}>")
_TOKEN = re.compile(r"([(\[]?)([A-Z]{1,26})([)\]]?\.?)(?![A-Za-z0-9'’])")
_SEPARATOR = re.compile(r"\s*(?:[,;/&+]|\band\b|\bor\b)?\s*")
_TOKEN_START = re.compile(r"(?<![A-Za-z0-9'’])[(\[]?[A-Z]")
_EXPLICIT = re.compile(
    r"(?i:\b(?:final\s+|correct\s+)?(?:answers?|choices?|options?|selections?|letters?)\b|答案)"
    r"(?:\s+(?i:is|are|would\s+be|should\s+be|will\s+be))?\s*[:：=\-]?\s*"
)
_NONE_WHOLE = re.compile(r"(?i)\W*(?:none(?:\s+of\s+(?:the\s+)?(?:above|options|them))?|no\s+(?:correct\s+)?options?)\W*")  # noqa: E501 (one regular expression, read whole)
_NONE_LEAD = re.compile(r"(?i)\W*none\b")
_LOWER_WHOLE = re.compile(r"\W*[(\[]?([a-z])[)\]]?\W*")
# "A" and "I" are words; followed by a lowercase word they are an article or a pronoun, unless
# that word is one that joins or asserts answer letters.
_CONNECTORS = {"and", "or", "is", "are", "was", "were", "would", "should", "seems", "only", "both", "as",
               "because", "since", "given", "due"}


def parse_choice(
    text: str, multi: bool, n_options: int, allow_none: bool = False,
    options: Sequence[str] | None = None,
) -> tuple[int, ...] | ParseFailure:
    """Read multiple-choice letters (MemeQA) as sorted 0-based option indexes.

    Accepted: ``B``, ``(B)``, ``B.``, ``B)``, ``**B**``, ``Answer: B``, ``The answer is B``,
    ``Option B``, ``ACD``, ``A, C, D``, ``A C D``, ``A and C``; ``N``/``None``/``None of the above``
    give ``()`` when ``allow_none``, else a failure. Precedence: the last explicit "answer is X" /
    "Answer: X"; else the answer's first token; else, the single distinct letter group that appears
    anywhere (two different groups are ambiguous). Letters must be capitals standing alone or in a
    compact run ("ACD"); "A"/"I" followed by an ordinary lowercase word are read as English. A lone
    lowercase letter ("b") counts only when it is the whole answer. Duplicates collapse. Letters
    past ``n_options``, several letters when ``multi`` is False, and "N" mixed with letters are
    failures. With 14 or more options "N" is the 14th letter and only the word "None" means none.

    With ``options`` (the option texts as shown), a reply is also read by what it quotes: the whole
    reply being one option's text ("None of the above" in None+ is that option, not 'N'), or lines
    that each give a letter and that option's text ("A. CDC" is A, not ACDC; "A. Biden is" and
    "C. Trump is" on two lines are AC). Lowercase letters count after an explicit "answer is"
    ("The answer is (b).") and as a whole reply of valid letters ("ac"). ``<think>`` blocks are
    never read.
    """
    text = _as_text(text)
    answer, _ = strip_reasoning(text)
    cleaned = _CHOICE_NOISE.sub("", answer).strip()
    if not cleaned:
        return _fail("empty answer", text)
    letters = _option_text_letters(cleaned, options, n_options) if options else ""
    letters = letters or _choice_letters(cleaned, n_options)
    if not letters:
        return _fail("no answer letter found", text)
    return _validate_choice(letters, multi, n_options, allow_none, text)


def _normal_option(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


_OPTION_LINE = re.compile(r"^\W*?[(\[]?([A-Za-z])[)\].:]\s*(.*)$")


def _option_text_letters(cleaned: str, options: Sequence[str], n_options: int) -> str:
    """Letters read from quoted option texts (see `parse_choice`), or "" when the reply is not so."""
    normal = [_normal_option(o) for o in options[:n_options]]
    if _NONE_WHOLE.fullmatch(cleaned) and normal.count("none of the above") == 1:
        return chr(65 + normal.index("none of the above"))  # None+: "None" is that option
    if re.fullmatch(r"\W*[(\[]?[A-Za-z]{1,4}[)\].]?\W*", cleaned):
        return ""  # a bare letter group is letters, even where an option reads "a" (MemeQA has one)
    whole = _normal_option(re.sub(r"(?i)^\W*(?:the\s+)?(?:final\s+|correct\s+)?answer\s*(?:is|:)\s*", "", cleaned))
    if whole and whole in normal and normal.count(whole) == 1:
        return chr(65 + normal.index(whole))
    lines = [line for line in cleaned.splitlines() if line.strip()]
    while lines and _EXPLICIT.fullmatch(lines[0].strip()):
        lines = lines[1:]  # an "Answer:" line above the option lines
    letters = ""
    for line in lines:
        m = _OPTION_LINE.match(line.strip())
        if not m:
            return ""
        index = ord(m.group(1).upper()) - 65
        quoted = _normal_option(m.group(2))
        if not 0 <= index < len(normal) or not quoted:
            return ""
        shown = normal[index]
        if not (shown.startswith(quoted) or quoted.startswith(shown)):
            return ""  # the text after the letter is not that option's: not an option line
        letters += m.group(1).upper()
    return letters


def _lower_letters(cleaned: str, n_options: int) -> str:
    """A whole reply of lowercase letters ("b", "ac", "a, c"), all of them valid option letters."""
    tokens = [t for t in re.split(r"[\s,;/&+()\[\].]+|\band\b", cleaned) if t]
    if not tokens or not all(re.fullmatch(r"[a-z]{1,26}", t) for t in tokens):
        return ""
    letters = "".join(tokens)
    valid = {chr(97 + i) for i in range(n_options)}
    return letters.upper() if set(letters) <= valid else ""


def _choice_letters(cleaned: str, n_options: int) -> str:
    if _NONE_WHOLE.fullmatch(cleaned):
        return _NONE_MARK
    lower = _LOWER_WHOLE.fullmatch(cleaned)
    if lower:
        return lower.group(1).upper()
    lowers = _lower_letters(cleaned, n_options)
    if lowers:
        return lowers
    for m in reversed(list(_EXPLICIT.finditer(cleaned))):
        letters, _ = _letter_group(cleaned, m.end(), lowercase_ok=True, n_options=n_options)
        if letters:
            return letters
    return _letter_group(cleaned, 0)[0] or _unique_group(cleaned, n_options)


_LOWER_TOKEN = re.compile(r"([(\[]?)([a-z]{1,26})([)\]]?\.?)(?![A-Za-z0-9'’])")


def _letter_group(s: str, pos: int, lowercase_ok: bool = False, n_options: int = 26) -> tuple[str, int]:
    """The letter group at ``s[pos:]`` ("A, C and D" → "ACD") and where it ends; "" if none.

    After an explicit "answer is", lowercase option letters count too ("(b)", "ac"), unless they
    read as a word ("a good one"). After a marked token ("A." or "(A)"), a bare run of capitals
    with no separator is the option's text ("A. CDC"), not more letters.
    """
    none = _NONE_LEAD.match(s, pos)
    if none:
        return _NONE_MARK, none.end()
    letters, end, marked = "", pos, False
    while True:
        m = _TOKEN.match(s, pos)
        if m is None and lowercase_ok:
            m = _LOWER_TOKEN.match(s, pos)
            if m and (set(m.group(2)) - {chr(97 + i) for i in range(n_options)} or _reads_as_word(m, s)
                      or (len(m.group(2)) == 1 and m.group(2) in "ai" and not (m.group(1) or m.group(3))
                          and re.match(r"\s+[a-z]", s[m.end():]))):
                m = None
        if m is None or _reads_as_word(m, s):
            break
        bare_run = not (m.group(1) or m.group(3)) and len(m.group(2)) > 1
        if marked and bare_run and not re.search(r"[,;/&+]|\band\b|\bor\b", s[end:m.start()]):
            break
        letters, end = letters + m.group(2).upper(), m.end()
        marked = bool(m.group(1) or m.group(3))
        pos = _SEPARATOR.match(s, m.end()).end()
    return letters, end


def _reads_as_word(m: re.Match, s: str) -> bool:
    if m.group(1) or m.group(3) or m.group(2) not in ("A", "I", "a", "i"):
        return False
    following = re.match(r"\s+([a-z]+)", s[m.end():])
    return bool(following) and following.group(1) not in _CONNECTORS


def _unique_group(s: str, n_options: int) -> str:
    valid = {chr(65 + i) for i in range(n_options)} | {"N"}
    groups, covered = set(), 0
    for m in _TOKEN_START.finditer(s):
        if m.start() < covered:
            continue
        group, covered = _letter_group(s, m.start())
        if group and group != _NONE_MARK and set(group) <= valid:
            groups.add(group)
    return groups.pop() if len(groups) == 1 else ""


def _validate_choice(letters: str, multi: bool, n_options: int, allow_none: bool, text: str):
    if n_options <= 13:  # "N" is not an option letter, so it is the none-answer
        letters = letters.replace("N", _NONE_MARK)
    if _NONE_MARK in letters:
        if not allow_none:
            return _fail("'none of the options' answer not allowed here", text)
        if set(letters) != {_NONE_MARK}:
            return _fail("'N' (none) combined with option letters", text)
        return ()
    beyond = sorted({c for c in letters if ord(c) - 65 >= n_options})
    if beyond:
        return _fail(f"option {', '.join(beyond)} out of range ({n_options} options)", text)
    indexes = tuple(sorted({ord(c) - 65 for c in letters}))
    if not multi and len(indexes) > 1:
        return _fail("several options for a single-answer question", text)
    return indexes


# ==================================================================================================
# Final response, labelled lines, yes/no, refusals
# ==================================================================================================

_FINAL = re.compile(
    r"(?im)^[ \t>]*(?P<hash>#{1,6}[ \t#]*)?(?P<bold>\*\*|__)?[ \t]*\[?final[ \t]+response\]?[ \t]*"
    r"(?:\*\*|__)?[ \t]*(?P<colon>[:：])?[ \t]*(?:\*\*|__)?"
)


def parse_final_response(text: str) -> str | ParseFailure:
    """The text after the last ``## Final Response:`` header (AdamMeme senior agent, Fig. 9).

    The header must start a line and be marked as a header by ``#``, bold, or a colon:
    ``## Final Response:``, ``## ## Final Response:``, ``**Final Response:**``,
    ``### Final Response``, ``Final Response:``. A code fence wrapping the answer is removed.
    No header → "no final response header"; header with nothing after it → "empty final response".
    """
    text = _as_text(text)
    headers = [m for m in _FINAL.finditer(text) if m.group("hash") or m.group("bold") or m.group("colon")]
    if not headers:
        return _fail("no final response header", text)
    body = _LEAD_JUNK.sub("", text[headers[-1].end():])
    if body.startswith("```"):  # the answer wrapped in a code fence: drop the opening line
        body = body.partition("\n")[2]
    body = _TAIL_JUNK.sub("", body).strip()
    return body if body else _fail("empty final response", text)


_ANY_LABEL = re.compile(r"\[\s*[A-Za-z][A-Za-z _-]{0,30}?\s*\d+\s*\]")


def parse_labelled_lines(text: str, prefix: str, count: int) -> list[str] | ParseFailure:
    """Contents of ``[PREFIX 1]: ...`` .. ``[PREFIX count]: ...`` in number order (MemeArena Fig. 7).

    Labels may be bold (``**[USER 1]:**``) or unbracketed at a line start (``User 1:``), in any
    case. A content runs over lines until the next ``[WORD n]`` label of any kind, so ``[TASK 1]``
    after ``[USER 3]`` does not leak into it; HTML tags are dropped. For a repeated number the first
    non-empty content wins. Extra labels beyond ``count`` are ignored; fewer is a failure.
    """
    text = _as_text(text)
    words = _name_pattern(prefix) if prefix.strip() else re.escape(prefix)
    label = re.compile(
        rf"(?:\*\*|__)?\[\s*{words}\s*(\d+)\s*\]{_SUFFIX}"
        rf"|(?m:^)[ \t>*_#-]*{words}[ \t]*(\d+)[ \t]*{_CLOSE}?[ \t]*[:：]{_CLOSE}?",
        re.I,
    )
    matches = list(label.finditer(text))
    bounds = sorted({m.start() for m in matches} | {m.start() for m in _ANY_LABEL.finditer(text)})
    found: dict[int, str] = {}
    for m in matches:
        stop = next((b for b in bounds if b >= m.end()), len(text))
        content = _LEAD_JUNK.sub("", _HTML.sub("", text[m.end():stop])).strip()
        number = int(m.group(1) or m.group(2))
        if content and number not in found:
            found[number] = content
    missing = [str(i) for i in range(1, count + 1) if i not in found]
    if missing:
        return _fail(f"found {count - len(missing)} of {count} [{prefix} n] labels; missing {', '.join(missing)}", text)
    return [found[i] for i in range(1, count + 1)]


_YES_NO_LEAD = re.compile(r"^(?:[\s\"'“”‘’«»\-:.(\[]|</?[A-Za-z][^<>\n]{0,20}>)*")
_YES_NO_LABEL = re.compile(r"(?i)^(?:final\s+)?(?:answer|response|judg(?:e)?ment|verdict|decision|output)\s*[:：\-]\s*")
_YES_NO_HEDGE = re.compile(
    r"(?i)^(?:I\s+(?:would\s+)?(?:say|think|believe|answer)|I['’]d\s+say|my\s+answer\s+is|the\s+answer\s+is)"
    r"\s*[:,]?\s*")
_YES_NO = re.compile(r"(?i)^(yes|no)\b(?!\s*(?:/|or)\s*(?:yes|no)\b)")
_YES_NO_ALONE = re.compile(r"(?i)^(yes|no)\s*(?:[,.;:!—–-]|$)")


def starts_yes_no(text: str) -> bool | ParseFailure:
    """True/False for an answer that opens with Yes/No (AdamMeme Judge and Examiner, Fig. 8).

    Leading whitespace, markdown, quotes and one label such as ``Answer:`` or hedge such as "I would
    say" are skipped; case does not
    matter; "Yes/No" or "yes or no" (an echoed instruction) is a failure, as is anything else.
    """
    text = _as_text(text)
    head = _YES_NO_LEAD.sub("", _demarkdown(text))
    hedged = _YES_NO_HEDGE.match(head)
    head = _YES_NO_LEAD.sub("", (_YES_NO_HEDGE if hedged else _YES_NO_LABEL).sub("", head))
    # after a hedge the word must stand alone ("I'd say yes, …"): "I think no other category …" is prose
    m = (_YES_NO_ALONE if hedged else _YES_NO).match(head)
    if not m:
        reason = "empty text" if not text.strip() else "does not start with Yes or No"
        return _fail(reason, text)
    return m.group(1).lower() == "yes"


_APOS = "['’]"
_REFUSAL_STRONG = re.compile(
    rf"(?i)\b(?:I{_APOS}?m\s+sorry|I\s+am\s+sorry|I\s+apologi[sz]e|sorry)\b[^.\n]{{0,40}}?"
    rf"\b(?:can{_APOS}?t|cannot|can\s+not|won{_APOS}?t|will\s+not|unable|not\s+able)\b"
    rf"|\bI\s*(?:can{_APOS}?t|cannot|can\s+not|won{_APOS}?t|will\s+not|am\s+unable\s+to|am\s+not\s+able\s+to"
    rf"|{_APOS}m\s+unable\s+to|{_APOS}m\s+not\s+able\s+to)\s+(?:help|assist|provide|comply|fulfil|engage"
    rf"|analy[sz]e|evaluate|discuss|do\s+that|answer|respond|support|create|generate|rewrite|modify"
    rf"|participate|complete|process|continue|share|offer|give)"
    rf"|\bI\s+(?:must|have\s+to)\s+(?:respectfully\s+)?decline"
    r"|抱歉|拒答|对不起|我不能|我无法|无法(?:回答|提供|协助|帮助)|不能(?:回答|提供|协助)"
)
_REFUSAL_WEAK = re.compile(
    r"(?i)\bas\s+an\s+ai\b|\bas\s+a\s+(?:large\s+)?language\s+model\b|\bnot\s+comfortable\b"
    r"|\bagainst\s+(?:my|the)\s+(?:guidelines|polic(?:y|ies))\b"
)
_REFUSAL_HEAD = 200  # a refusal is said up front ...
_REFUSAL_LONG = 1000  # ... and an answer longer than this is doing real work despite a disclaimer
_REFUSAL_SHORT = 300  # a short answer is nothing but whatever it says


def looks_like_refusal(text: str) -> bool:
    """Heuristic: is declining to answer the gist of this text?

    True for empty text; for a strong refusal phrase ("I'm sorry, but I can't", "I cannot help
    with", "I can't assist", "I must decline", Chinese 抱歉/拒答/我不能/无法回答) in the first 200
    characters of an answer of at most 1,000 characters; and for any refusal phrase, including the
    weak ones ("As an AI", "against my guidelines"), in an answer of at most 300 characters. A
    passing mention deep in a long analysis is not a refusal. Callers use it when the expected
    parse fails, to tell "refused" from "unparseable".
    """
    text = _demarkdown(_as_text(text)).strip()
    if not text:
        return True
    if len(text) <= _REFUSAL_SHORT:
        return bool(_REFUSAL_STRONG.search(text) or _REFUSAL_WEAK.search(text))
    return len(text) <= _REFUSAL_LONG and bool(_REFUSAL_STRONG.search(text[:_REFUSAL_HEAD]))
