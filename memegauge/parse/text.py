"""Text helpers the parsers share (and the engine's answer checks): coercing any value to text, taking a reasoning
model's ``<think>`` blocks out, dropping markdown, and the failure record."""

from __future__ import annotations

import re
from typing import Any

from memegauge.types import ParseFailure

KEEP = 500  # failure records keep this much of the text: enough to debug, small in the store


def as_text(text: Any) -> str:
    """`text` as a string: None is empty, bytes are decoded (never raises)."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return text if isinstance(text, str) else str(text)


def fail(reason: str, text: str) -> ParseFailure:
    return ParseFailure(reason=reason, text=text[:KEEP])


HTML = re.compile(r"</?[A-Za-z][^<>\n]{0,40}>")
_MARKDOWN = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|`+|'''|\"\"\"|^[ \t]*[#>]+", re.M)


def demarkdown(text: str) -> str:
    return _MARKDOWN.sub("", HTML.sub("", text))


_THINK = re.compile(r"(?is)<(think|thinking|reasoning)>(.*?)(?:</\1>|\Z)")
_THINK_CLOSE = re.compile(r"(?is)^(.*?)</(?:think|thinking|reasoning)>")


def strip_reasoning(text: Any) -> tuple[str, str]:
    """(answer, reasoning): a reasoning model's ``<think>…</think>`` blocks taken out of its text.

    Reasoning is kept by the engine but never parsed as the answer. An unterminated ``<think>``
    (output cut inside its reasoning) leaves no answer. A lone ``</think>`` (servers whose chat
    template opens the block in the prompt) ends the reasoning that precedes it.
    """
    text = as_text(text)
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
