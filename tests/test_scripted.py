"""The scripted test backend picks a role by the request's stage, never by the prompt's wording."""

from __future__ import annotations

import asyncio

import pytest

from memegauge.models.spec import ModelSpec
from memegauge.models.scripted import ScriptedBackend, register_script
from memegauge.types import ChatRequest, Message, ModelCallError


def _ask(backend: ScriptedBackend, stage: str, text: str = "same words for every role") -> str:
    request = ChatRequest(model="m", messages=[Message.user(text)], stage=stage)
    return asyncio.run(backend.complete(request)).text


def test_registered_responders_dispatch_on_the_most_specific_stage():
    register_script("by-stage", {"adammeme.mining": lambda r: "miner",
                                 "adammeme.mining.judge": lambda r: "judge"})
    backend = ScriptedBackend(ModelSpec(name="m", backend="scripted", model="by-stage"))
    assert _ask(backend, "adammeme.mining") == "miner"
    assert _ask(backend, "adammeme.mining.judge") == "judge"
    assert _ask(backend, "adammeme.mining.examiner") == "miner"  # below mining, no own responder
    with pytest.raises(ModelCallError, match="no answer for stage 'adammeme.miningx'"):
        _ask(backend, "adammeme.miningx")  # a prefix of the name is not a parent stage


def test_yaml_rules_can_name_a_stage():
    spec = ModelSpec(name="m", backend="scripted", model="rules", extra={"rules": [
        {"stage": "arena.judging", "response": "[Overall Judge] A"},
        {"stage": "arena.answers", "match": "risk", "response": "[Background Knowledge] risky"},
        {"match": "", "response": "anything else"}]})
    backend = ScriptedBackend(spec)
    assert _ask(backend, "arena.judging") == "[Overall Judge] A"
    assert _ask(backend, "arena.answers", "what is the risk") == "[Background Knowledge] risky"
    assert _ask(backend, "arena.answers", "no match here") == "anything else"
