"""Yes/no answers: whether a text starts by saying yes or no."""

from __future__ import annotations

import re

from memegauge.parse.text import as_text, demarkdown, fail
from memegauge.types import ParseFailure


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
    text = as_text(text)
    head = _YES_NO_LEAD.sub("", demarkdown(text))
    hedged = _YES_NO_HEDGE.match(head)
    head = _YES_NO_LEAD.sub("", (_YES_NO_HEDGE if hedged else _YES_NO_LABEL).sub("", head))
    # after a hedge the word must stand alone ("I'd say yes, …"): "I think no other category …" is prose
    m = (_YES_NO_ALONE if hedged else _YES_NO).match(head)
    if not m:
        reason = "empty text" if not text.strip() else "does not start with Yes or No"
        return fail(reason, text)
    return m.group(1).lower() == "yes"
