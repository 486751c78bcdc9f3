"""What the engine checks of an answer before a stage sees it: a reasoning model's ``<think>`` blocks taken
out (kept beside the answer, never parsed), and an output the stage cannot use classified — cut by the
provider's filter, truncated, refused or unparseable — so the call is retried and its failure recorded.
The refusal detector is here; ``<think>`` blocks are split by `memegauge.parse.text.strip_reasoning`, which
the choice parser uses too.

These are the engine's own checks, for every method alike; the answer shapes a stage parses are in
`memegauge.parse`, and the engine never imports a method's vocabulary.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable

from memegauge.parse.text import as_text, demarkdown, strip_reasoning
from memegauge.types import ChatResult, ErrorClass, ModelCallError, ParseFailure

Parser = Callable[[str], Any]
NOT_PARSED: Any = object()  # `check_content`'s answer when it did not parse the text (no parser, or it failed)

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
    text = demarkdown(as_text(text)).strip()
    if not text:
        return True
    if len(text) <= _REFUSAL_SHORT:
        return bool(_REFUSAL_STRONG.search(text) or _REFUSAL_WEAK.search(text))
    return len(text) <= _REFUSAL_LONG and bool(_REFUSAL_STRONG.search(text[:_REFUSAL_HEAD]))


def without_reasoning(result: ChatResult) -> ChatResult:
    """The answer without `<think>` blocks; the reasoning kept beside it, never parsed."""
    answer, thought = strip_reasoning(result.text)
    if not thought:
        return result
    reasoning = "\n\n".join(r for r in (result.reasoning, thought) if r)
    return result.model_copy(update={"text": answer, "reasoning": reasoning})


def check_content(result: ChatResult, parse: Parser | None,
                   refusal_detector: Callable[[str], bool] | None | bool) -> Any:
    """Classify an output the stage cannot use; return what `parse` read from it (`NOT_PARSED` without a
    parser), so that the engine hands the stage that value rather than parsing the answer again. An answer
    that parses into what the stage asked for is used whatever it quotes: a Scorer or judge citing a
    target's refusal ("the assistant replied 'I'm sorry, I can't …' … Rating: [[1]]") has done its job and
    is never a refusal itself."""
    if result.finish_reason == "content_filter":
        raise ModelCallError(ErrorClass.REFUSAL, "stopped by the provider's content filter")
    checked = parse is not None or bool(refusal_detector)
    if checked and result.finish_reason == "length" and not result.text.strip():
        # an agent cut before its answer (often inside its reasoning); a target's or a MemeQA
        # answer is the model's answer even when empty: graded as such, flagged as truncated
        raise ModelCallError(ErrorClass.TRUNCATED, "no answer before max_tokens (cut while reasoning?)")
    if parse is not None:
        value = parse(result.text)
        if not isinstance(value, ParseFailure):
            return value
    if refusal_detector and refusal_detector(result.text):
        raise ModelCallError(ErrorClass.REFUSAL, f"model refused: {result.text[:200]!r}")
    if parse is not None:
        if result.finish_reason == "length":
            raise ModelCallError(ErrorClass.TRUNCATED, f"{value.reason} (output cut at max_tokens)")
        # the reply itself in the message: a failed call stores no answer text, and a person deciding
        # whether the reader or the model is at fault needs to see what was written
        raise ModelCallError(ErrorClass.UNPARSEABLE, f"{value.reason}; the reply: {result.text[:300]!r}")
    return NOT_PARSED
