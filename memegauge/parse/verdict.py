"""Pairwise verdicts: ``A``, ``B`` or a tie, read from the ``[Overall Judge]`` section of a judgment (the
`OutputKind.VERDICT` shape) and from per-dimension sections. The headers a judgment may hold besides
``[Overall Judge]`` are the caller's vocabulary (MemeArena's: `memegauge.arena.verdicts`), passed in."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable, Iterable

from memegauge.parse.sections import GENERIC_HEADER, locate_headers, section_bodies
from memegauge.parse.text import as_text, demarkdown, fail
from memegauge.types import ParseFailure

A = "A"
B = "B"
TIE_STRONG = "Tie (both strong)"
TIE_WEAK = "Tie (both weak)"
TIE = "Tie"  # the kind unknown: a format line reading ``A/B/Tie`` makes a plain "Tie" a verdict too
OVERALL_JUDGE = "Overall Judge"  # the section holding a judgment's verdict (`OutputKind.VERDICT`)

_VERDICT_LIKE = re.compile(r"(?i)^(?:model|answer|assistant|response|option)\s+[ab]$|^tie\b")
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


def parse_verdict(text: str, sections: Iterable[str] = ()) -> str | ParseFailure:
    """The overall verdict of a pairwise judgment: `A`, `B`, `TIE_STRONG`, `TIE_WEAK` or `TIE`.
    `sections`: the other section headers the judgment may hold (the caller's vocabulary, e.g. MemeArena's
    dimensions): each ends the section before it, so one is never read as part of another.

    Where: the last ``[Overall Judge]`` section (up to the next ``[Section]`` header; ``Overall Judge:``
    without brackets also counts), else the last ``[[A]]``/``[[B]]``/``[[Tie (both strong)]]`` in the
    text, else the whole text when it is short (a bare ``"B"``). Within the section: ``A``,
    ``Model B``, ``Answer A``, ``B is better``, ``Tie (both weak)``, ``Tie - both strong``, markdown
    and case tolerated. A "Tie" with no strong/weak is a failure ("tie without strong/weak"), as is
    any other token (``[[C]]``), or a text naming both A and B without saying which wins.
    """
    text = as_text(text)
    if not text.strip():
        return fail("no verdict found (empty text)", text)
    located = locate_headers(text, (*sections, OVERALL_JUDGE), last=True)
    if OVERALL_JUDGE in located:
        # The section is authoritative: a [[A]] elsewhere may belong to another dimension.
        verdict = _read_verdict(section_bodies(text, located, _generic_bounds(text))[OVERALL_JUDGE])
    elif _DOUBLE.search(text):
        verdict = _read_verdict(f"[[{_DOUBLE.findall(text)[-1]}]]")
    elif len(text.strip()) <= _SHORT_TEXT:
        verdict = _read_verdict(text)
    else:
        verdict = ParseFailure(reason="no verdict found")
    return fail(verdict.reason, text) if isinstance(verdict, ParseFailure) else verdict


def parse_dimension_verdicts(text: str, dimensions: list[str],
                             sections: Iterable[str] = ()) -> dict[str, str | ParseFailure]:
    """Per-dimension verdicts of a judgment with ``[Dimension] verdict`` sections.

    Each section is read as in `parse_verdict` (same value space; `sections` likewise). A missing section, or one
    holding only analysis with no decidable verdict, maps to a `ParseFailure` whose reason names
    the dimension; the other dimensions are still returned.
    """
    text = as_text(text)
    located = locate_headers(text, {*dimensions, *sections, OVERALL_JUDGE}, last=True)
    contents = section_bodies(text, located, _generic_bounds(text))
    out: dict[str, str | ParseFailure] = {}
    for dim in dimensions:
        if dim not in contents:
            out[dim] = fail(f"missing section [{dim}]", text)
            continue
        verdict = _read_verdict(contents[dim])
        if verdict is None:
            verdict = ParseFailure(reason="no verdict found")
        out[dim] = fail(f"[{dim}] {verdict.reason}", text) if isinstance(verdict, ParseFailure) else verdict
    return out


def _generic_bounds(text: str) -> list[int]:
    return [m.start() for m in GENERIC_HEADER.finditer(text) if not _VERDICT_LIKE.match(m.group(1))]


def _tie(rest: str) -> str:
    """A tie's kind from the words after it; a plain "Tie" (the prompt's own ``A/B/Tie``) is TIE."""
    m = _QUALIFIER.match(rest[:60])
    if not m:
        return TIE
    return TIE_STRONG if m.group(1).lower() == "strong" else TIE_WEAK


def _strict_verdict(fragment: str) -> _Reading:
    """The fragment *is* a verdict and nothing else (any case)."""
    fragment = demarkdown(fragment).strip()
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
    r"(?i)(?:[ \t]*(?:\n|$)|\s*[.,;:!)\]—–-]|\s(?:wins|won"
    r"|is\s+(?:the\s+)?(?:better|superior|stronger|preferable|preferred|winner)"
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
    cleaned = demarkdown(fragment).strip()
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
