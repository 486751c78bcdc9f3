"""Model families, for judge panels (MemeArena §2.3: judges of distinct families, so that no family's
shared training data and habits decide a battle twice).

A registry entry's `family:` says it; without one it is read from the provider's model id (or the
registry name) when exactly one known family's pattern matches it, and left unknown otherwise (a
panel check cannot compare an unknown family, so it says so rather than guess).
"""

from __future__ import annotations

import re

# family → pattern over the lower-cased model id (a word start, so "step" does not match "stepwise-…"
# inside another name). Register a family here; an entry's `family:` overrides the guess.
FAMILY_PATTERNS: dict[str, re.Pattern[str]] = {family: re.compile(pattern) for family, pattern in {
    "openai": r"(^|[/_:-])(gpt|o[134](-mini)?($|[-_]))",
    "anthropic": r"(^|[/_:-])claude",
    "google": r"(^|[/_:-])(gemini|gemma|paligemma)",
    "qwen": r"(^|[/_:-])(qwen|qwq|qvq)",
    "llava": r"(^|[/_:-])llava",
    "meta-llama": r"(^|[/_:-])llama",
    "internvl": r"(^|[/_:-])internvl",
    "mistral": r"(^|[/_:-])(mistral|pixtral|mixtral)",
    "deepseek": r"(^|[/_:-])deepseek",
    "glm": r"(^|[/_:-])(glm|cogvlm)",
    "minicpm": r"(^|[/_:-])minicpm",
    "stepfun": r"(^|[/_:-])step-\d",
    "doubao": r"(^|[/_:-])doubao",
    "phi": r"(^|[/_:-])phi-?\d",
    "smolvlm": r"(^|[/_:-])(smolvlm|idefics)",
}.items()}


def guess_family(*names: str) -> str | None:
    """The one family whose pattern matches the first name that matches any; None when none matches
    or several do (e.g. a LLaVA fine-tune of a Qwen model: ambiguous, so not guessed)."""
    for name in names:
        found = [f for f, pattern in FAMILY_PATTERNS.items() if pattern.search(name.lower())]
        if found:
            return found[0] if len(found) == 1 else None
    return None
