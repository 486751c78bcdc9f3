"""What keeps a large run fast and bounded: no reference cycle per call, fewer young collections while a
run is open, judge requests built as their calls start, and section headers found without rescanning
the text. Figures behind them: bench/store_scale.py and the closing note of issue 11."""

from __future__ import annotations

import asyncio
import gc
import itertools

import pytest

from memegauge.arena import judging
from memegauge.engine import RUN_GC_THRESHOLD, Engine, Store, open_run
from memegauge.parse import parse_rating, sections

from helpers.arena_scripted import config, make_registry, records
from helpers.arena_scripted import run as run_arena_config
from helpers.engine import engine_registry as registry
from helpers.engine import request

pytestmark = pytest.mark.usefixtures("engine_scripts")


def test_successful_calls_leave_no_reference_cycles(tmp_path):
    """A retrier iterated with `async for` points at its own state: one cycle per call, which the
    collector had to find by scanning everything a 200k-call run keeps."""
    store = Store(tmp_path / "s.db")

    async def go():
        async with open_run(store, registry(), name="r", method="test", config={}) as (_, engine):
            await engine.chat_many([request(f"Rate item {i}. End with Rating: [[n]]") for i in range(40)],
                                   parse=parse_rating)

    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        asyncio.run(go())
        gc.collect()
        leaked = {type(o).__module__ + "." + type(o).__qualname__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not {name for name in leaked if name.startswith("memegauge.")}


def test_a_run_collects_young_objects_less_often_and_restores_the_setting(tmp_path):
    store = Store(tmp_path / "s.db")
    before = gc.get_threshold()
    seen = []

    async def go():
        async with open_run(store, registry(), name="r", method="test", config={}) as (_, engine):
            seen.append(gc.get_threshold())
            await engine.chat(request())

    asyncio.run(go())
    assert seen == [(max(before[0], RUN_GC_THRESHOLD), *before[1:])]
    assert gc.get_threshold() == before


def test_judge_requests_are_built_as_their_calls_start(tmp_path, monkeypatch):
    """12k judgments rendered up front held the first judge call back by a second."""
    built = []
    render = judging.judge_request
    monkeypatch.setattr(judging, "judge_request", lambda *a, **k: built.append(1) or render(*a, **k))
    built_at_first_judge_call = []
    chat_many = Engine.chat_many

    async def spy(self, requests, *args, **kwargs):
        pending = iter(requests)
        first = next(pending, None)
        if first is not None and first.stage == judging.STAGE:
            built_at_first_judge_call.append(len(built))
        head = [] if first is None else [first]
        return await chat_many(self, itertools.chain(head, pending), *args, **kwargs)

    monkeypatch.setattr(Engine, "chat_many", spy)
    store = Store(tmp_path / "s.db")
    run_arena_config(config(tmp_path, n_memes=3), store, make_registry())
    assert built_at_first_judge_call == [1]
    assert len(built) == len(records(store, "arena", "judgment")) > 20


def test_headers_keep_their_markup_and_stop_at_the_previous_header():
    """Headers are found from their bracket and the markup before it read backwards (one pass over
    the text, not one per position); the spans are those of the forward pattern they replace."""
    text = "intro\n**[Overall Judge]**: A\n[Correctness]**[Overall Judge]** B\n## [Overall Judge] Tie"
    hits = sections._header_hits(text, "Overall Judge")
    assert [(rank, text[s:e]) for rank, s, e in hits] == [
        (0, "**[Overall Judge]**:"), (1, "**[Overall Judge]** "), (0, "## [Overall Judge] ")]
    glued = "[Overall Judge]**[Overall Judge] B"  # the second header's stars close the first one
    assert [(rank, glued[s:e]) for rank, s, e in sections._header_hits(glued, "Overall Judge")] == [
        (0, "[Overall Judge]**"), (1, "[Overall Judge] ")]
