"""Ratings: the last ``Rating: [[n]]`` (or a labelled number) of a text, within the asked range."""

from __future__ import annotations

import re

from memegauge.parse.text import as_text, fail
from memegauge.types import ParseFailure


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
    text = as_text(text)
    hits = [(m.start(), m.group(1)) for rx in (_RATING_BRACKETS, _RATING_LABEL) for m in rx.finditer(text)]
    if not hits:
        return fail("no rating found", text)
    raw = max(hits)[1]
    whole, _, fraction = raw.partition(".")
    if fraction.strip("0"):
        return fail(f"non-integer rating {raw}", text)
    value = int(whole)
    if not low <= value <= high:
        return fail(f"rating {value} out of range {low}..{high}", text)
    return value
