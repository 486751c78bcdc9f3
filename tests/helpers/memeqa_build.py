"""Scripted models of a MemeQA build (`qa build`): a generator answering App. E prompts in their format, a
discriminator that is right on some questions and wrong on others, and a blind model; `registry()` registers
them and returns their registry."""

from __future__ import annotations

import hashlib
import re

from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.models.scripted import register_script


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def generator_script(request) -> str:
    """Answers App. E prompts in their format: comma list (cloze) or one statement a line."""
    text = request.messages[0].text()
    k = int(re.search(r"(?:Give|Write) (\d+)", text).group(1))
    tag = _digest(text) % 1000
    if "in the blank of this sentence" in text:
        return ", ".join(f"word{tag}x{j}r{request.sample_index}" for j in range(k))
    return "\n".join(f"- Wrong statement {tag}.{j} round {request.sample_index}" for j in range(k))


def discriminator_script(request) -> str:
    """Picks a letter from a hash of the prompt: right on some questions, wrong on others."""
    text = request.messages[0].text()
    return "ABC"[_digest(text) % 3] if "one letter" in text else "AB"[_digest(text) % 2]


def blind_script(request) -> str:
    return "B"


def registry() -> ModelRegistry:
    register_script("gen", generator_script)
    register_script("disc", discriminator_script)
    register_script("blind", blind_script)
    return ModelRegistry({n: ModelSpec(name=n, backend="scripted", model=n, vision=n == "disc")
                          for n in ("gen", "disc", "blind")})
