"""Named sections (``[Name]: ...``): locating headers in the forms models write, and their contents.
The header finding here is shared with the verdict parser."""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Iterable

from memegauge.parse.text import as_text, fail
from memegauge.types import ParseFailure


# Possessive: "**" and "*" both match a run of stars, and backtracking over every split of a
# long run is exponential.
PREFIX = r"(?:\*\*|__|\*|<b>|<strong>|'''|```|#{1,6}[ \t]*)*+"
# Closing markup right after a header ("**[Name]**:", "[Name]:**", "[Name]</b>"). A "**" after
# "[Name]: " with a space opens bold content instead, so it is left alone.
CLOSE = r"(?:\*\*|__|\*|</b>|</strong>)"
SUFFIX = rf"{CLOSE}?[ \t]*(?:[:：]{CLOSE}?)?"
LEAD_JUNK = re.compile(r"^[\s:：]*")
TAIL_JUNK = re.compile(r"(?:\s|'''|```)*$")
GENERIC_HEADER = re.compile(rf"(?m)^[ \t>]*{PREFIX}\[([A-Za-z][A-Za-z /&-]{{2,40}})\]")


def name_pattern(name: str) -> str:
    return r"\s+".join(re.escape(word) for word in name.split())


_MARKUP_BEFORE = re.compile(rf"{PREFIX}\Z")


@lru_cache(maxsize=256)
def _header_patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The bracketed (``[Name]``, from its bracket) and bare (``Name:`` at a line start) patterns."""
    words = name_pattern(name)
    bracketed = re.compile(rf"\[\s*{words}\s*\]{SUFFIX}", re.I)
    bare = re.compile(rf"(?m)^[ \t>]*{PREFIX}{words}(?=[ \t*_]*(?:[:：]|$)){SUFFIX}", re.I)
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


def locate_headers(text: str, names: Iterable[str], last: bool) -> dict[str, tuple[int, int]]:
    """The chosen (start, end) header of each name that occurs: best form, first or last of it."""
    located = {}
    for name in names:
        hits = _header_hits(text, name)
        if hits:
            best = min(rank for rank, _, _ in hits)
            spans = sorted((s, e) for rank, s, e in hits if rank == best)
            located[name] = spans[-1] if last else spans[0]
    return located


def section_bodies(text: str, located: dict[str, tuple[int, int]], extra: Iterable[int] = ()) -> dict[str, str]:
    # Only the chosen headers (plus `extra`) end a section, so an inline mention of another
    # section's name inside the content does not cut it short.
    bounds = sorted({s for s, _ in located.values()} | set(extra))
    out = {}
    for name, (_, end) in located.items():
        stop = next((b for b in bounds if b >= end), len(text))
        body = LEAD_JUNK.sub("", text[end:stop])
        out[name] = TAIL_JUNK.sub("", body)
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
    text = as_text(text)
    contents = section_bodies(text, locate_headers(text, names, last=False))
    return {name: contents[name] for name in names if contents.get(name)}


def parse_sections(text: str, names: list[str]) -> dict[str, str] | ParseFailure:
    """All named sections (see `parse_sections_partial`), or a failure naming the missing ones."""
    text = as_text(text)
    found = parse_sections_partial(text, names)
    missing = [name for name in names if name not in found]
    if missing:
        return fail("missing sections: " + ", ".join(missing), text)
    return found
