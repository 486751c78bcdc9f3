"""Final responses: the text after the last ``## Final Response:`` header."""

from __future__ import annotations

import re

from memegauge.parse.sections import LEAD_JUNK, TAIL_JUNK
from memegauge.parse.text import as_text, fail
from memegauge.types import ParseFailure


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
    text = as_text(text)
    headers = [m for m in _FINAL.finditer(text) if m.group("hash") or m.group("bold") or m.group("colon")]
    if not headers:
        return fail("no final response header", text)
    body = LEAD_JUNK.sub("", text[headers[-1].end():])
    if body.startswith("```"):  # the answer wrapped in a code fence: drop the opening line
        body = body.partition("\n")[2]
    body = TAIL_JUNK.sub("", body).strip()
    return body if body else fail("empty final response", text)
