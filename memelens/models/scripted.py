"""Deterministic scripted models for tests: answers come from rules, a recorded transcript, or a
Python responder registered under the spec's `model` id.

Registry YAML form::

    judge-a:
      backend: scripted
      model: judge-a
      extra:
        rules:                       # first match wins; `match` is a regex over the whole prompt
          - {match: "Rating: \\[\\[", response: "Close to the reference. Rating: [[7]]"}
          - {match: "harmful", response: ["Yes", "No"]}   # a list is indexed by sample_index
          - {match: "boom", error: rate_limit}            # raise a classified error instead
        transcript: calls.jsonl      # {"prompt_sha256": ..., "response": ...} lines, checked first
        default: "I do not know."

Python form (tests): `register_script("judge-a", lambda request: "...")`; a responder may return a
string, a `ChatResult`, or raise `ModelCallError`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable

from memelens.config import ModelSpec
from memelens.types import ChatRequest, ChatResult, ErrorClass, ModelCallError, Usage

Responder = Callable[[ChatRequest], "str | ChatResult"]
SCRIPTS: dict[str, Responder] = {}


def register_script(model_id: str, responder: Responder) -> None:
    """Make `backend: scripted, model: model_id` answer with `responder`."""
    SCRIPTS[model_id] = responder


def prompt_text(request: ChatRequest) -> str:
    """The whole conversation as text (images as their alt text): what rules match against."""
    return "\n".join(f"{m.role}: {m.text()}" for m in request.messages)


def prompt_sha256(request: ChatRequest) -> str:
    return hashlib.sha256(prompt_text(request).encode()).hexdigest()


class ScriptedBackend:
    """`backend: scripted` models; see the module docstring."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.vision = spec.vision
        self.rules = [_Rule(r) for r in spec.extra.get("rules", [])]
        self.transcript = _load_transcript(spec.extra.get("transcript"))
        self.default = spec.extra.get("default")
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.calls += 1
        text = self._answer(request)
        if isinstance(text, ChatResult):
            return text
        prompt = prompt_text(request)
        return ChatResult(text=text, usage=Usage(prompt_tokens=len(prompt.split()),
                                                 completion_tokens=len(text.split())),
                          served_model=self.spec.model)

    async def aclose(self) -> None:
        return None

    def _answer(self, request: ChatRequest) -> "str | ChatResult":
        if self.spec.model in SCRIPTS:
            return SCRIPTS[self.spec.model](request)
        if self.transcript:
            answer = self.transcript.get(prompt_sha256(request))
            if answer is not None:
                return answer
        prompt = prompt_text(request)
        for rule in self.rules:
            if rule.pattern.search(prompt):
                return rule.respond(request)
        if self.default is not None:
            return str(self.default)
        raise ModelCallError(ErrorClass.BAD_REQUEST,
                             f"scripted model {self.spec.name!r} has no answer for this prompt")


class _Rule:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.pattern = re.compile(raw.get("match", ""), re.S)
        self.response = raw.get("response", "")
        self.error = raw.get("error")

    def respond(self, request: ChatRequest) -> str:
        if self.error:
            raise ModelCallError(ErrorClass(self.error), "scripted failure")
        if isinstance(self.response, list):
            return str(self.response[request.sample_index % len(self.response)])
        if isinstance(self.response, (dict,)):
            return json.dumps(self.response)
        return str(self.response)


def _load_transcript(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    entries = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            entries[item["prompt_sha256"]] = item["response"]
    return entries
