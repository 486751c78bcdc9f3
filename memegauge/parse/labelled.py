"""Labelled lines: ``[USER 1]: ...`` ... ``[USER n]: ...``, exactly `count` of them."""

from __future__ import annotations

import re

from memegauge.parse.sections import CLOSE, LEAD_JUNK, SUFFIX, name_pattern
from memegauge.parse.text import HTML, as_text, fail
from memegauge.types import ParseFailure


_ANY_LABEL = re.compile(r"\[\s*[A-Za-z][A-Za-z _-]{0,30}?\s*\d+\s*\]")


def parse_labelled_lines(text: str, prefix: str, count: int) -> list[str] | ParseFailure:
    """Contents of ``[PREFIX 1]: ...`` .. ``[PREFIX count]: ...`` in number order (MemeArena Fig. 7).

    Labels may be bold (``**[USER 1]:**``) or unbracketed at a line start (``User 1:``), in any
    case. A content runs over lines until the next ``[WORD n]`` label of any kind, so ``[TASK 1]``
    after ``[USER 3]`` does not leak into it; HTML tags are dropped. For a repeated number the first
    non-empty content wins. Extra labels beyond ``count`` are ignored; fewer is a failure.
    """
    text = as_text(text)
    words = name_pattern(prefix) if prefix.strip() else re.escape(prefix)
    label = re.compile(
        rf"(?:\*\*|__)?\[\s*{words}\s*(\d+)\s*\]{SUFFIX}"
        rf"|(?m:^)[ \t>*_#-]*{words}[ \t]*(\d+)[ \t]*{CLOSE}?[ \t]*[:：]{CLOSE}?",
        re.I,
    )
    matches = list(label.finditer(text))
    bounds = sorted({m.start() for m in matches} | {m.start() for m in _ANY_LABEL.finditer(text)})
    found: dict[int, str] = {}
    for m in matches:
        stop = next((b for b in bounds if b >= m.end()), len(text))
        content = LEAD_JUNK.sub("", HTML.sub("", text[m.end():stop])).strip()
        number = int(m.group(1) or m.group(2))
        if content and number not in found:
            found[number] = content
    missing = [str(i) for i in range(1, count + 1) if i not in found]
    if missing:
        return fail(f"found {count - len(missing)} of {count} [{prefix} n] labels; missing {', '.join(missing)}", text)
    return [found[i] for i in range(1, count + 1)]
