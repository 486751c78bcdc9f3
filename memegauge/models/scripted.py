"""Deterministic scripted models for tests: answers come from rules, a recorded transcript, or a
Python responder registered under the spec's `model` id.

A role is recognised by the request's `stage` (``adammeme.mining.judge``, ``arena.judging`` …), which
every request carries, never by the wording of its prompt template: a reworded prompt must not change
which role answers. A stage selector matches that stage or any stage below it (``adammeme.mining``
matches ``adammeme.mining.judge``); the most specific selector wins.

Registry YAML form::

    judge-a:
      backend: scripted
      model: judge-a
      extra:
        rules:                       # first match wins; a rule names a stage, a regex, or both
          - {stage: arena.judging, response: "[Overall Judge] A"}
          - {stage: adammeme.scoring.scorer, match: "harmful", response: ["Rating: [[3]]", "Rating: [[7]]"]}
          - {match: "boom", error: rate_limit}            # raise a classified error instead
        transcript: calls.jsonl      # {"prompt_sha256": ..., "response": ...} lines, checked first
        default: "I do not know."

A list response is indexed by sample_index. Python form (tests): `register_script("judge-a", fn)` or
`register_script("judge-a", {"arena.judging": judge, "arena.answers": answer})`; a responder gets the
request and may return a string, a `ChatResult`, or raise `ModelCallError`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any
from collections.abc import Callable

from memegauge.models.spec import ModelSpec
from memegauge.types import ChatRequest, ChatResult, ErrorClass, ModelCallError, Usage

Responder = Callable[[ChatRequest], "str | ChatResult"]
SCRIPTS: dict[str, Responder] = {}


def register_script(model_id: str, responder: Responder | dict[str, Responder]) -> None:
    """Make `backend: scripted, model: model_id` answer with `responder`, or with the responder of
    the most specific stage selector that covers the request's stage (see the module docstring)."""
    SCRIPTS[model_id] = by_stage(responder) if isinstance(responder, dict) else responder


def stage_covers(selector: str, stage: str | None) -> bool:
    """Whether a stage selector names `stage` or a stage above it in the dotted hierarchy."""
    return bool(stage) and (stage == selector or stage.startswith(selector + "."))


def by_stage(responders: dict[str, Responder]) -> Responder:
    """One responder that dispatches on `request.stage`; a stage no selector covers is a bad request."""
    def respond(request: ChatRequest) -> str | ChatResult:
        covering = [s for s in responders if stage_covers(s, request.stage)]
        if not covering:
            raise ModelCallError(ErrorClass.BAD_REQUEST, f"scripted model has no answer for stage "
                                                         f"{request.stage!r} (scripted: {sorted(responders)})")
        return responders[max(covering, key=len)](request)

    return respond


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

    def _answer(self, request: ChatRequest) -> str | ChatResult:
        if self.spec.model in SCRIPTS:
            return SCRIPTS[self.spec.model](request)
        if self.transcript:
            answer = self.transcript.get(prompt_sha256(request))
            if answer is not None:
                return answer
        prompt = prompt_text(request)
        for rule in self.rules:
            if rule.applies(request, prompt):
                return rule.respond(request)
        if self.default is not None:
            return str(self.default)
        raise ModelCallError(ErrorClass.BAD_REQUEST,
                             f"scripted model {self.spec.name!r} has no answer for this prompt")


class _Rule:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.stage = raw.get("stage")
        self.pattern = re.compile(raw.get("match", ""), re.S)
        self.response = raw.get("response", "")
        self.error = raw.get("error")

    def applies(self, request: ChatRequest, prompt: str) -> bool:
        if self.stage and not stage_covers(self.stage, request.stage):
            return False
        return bool(self.pattern.search(prompt))

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
