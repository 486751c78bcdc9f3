"""Call engine + store: caching, classified bounded retries, limits, de-duplication, accounting."""

from __future__ import annotations

import asyncio
import time

import pytest

from helpers.engine import engine_registry as registry
from helpers.engine import request
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.records import Record
from memegauge.engine import Engine, cache_key, open_run
from memegauge.models.scripted import register_script
from memegauge.parse import parse_rating
from memegauge.types import (ChatRequest, ChatResult, ErrorClass, ImagePart, Message,
                            SamplingParams, Usage)


pytestmark = pytest.mark.usefixtures("engine_scripts")


def run(coro):
    return asyncio.run(coro)


def test_cache_replays_with_zero_calls(store, engine_scripts):
    async def go(name):
        async with open_run(store, registry(), name=name, method="t", config={"a": 1},
                            progress=False) as (_, engine):
            outs = await engine.chat_many([request(sample_index=i) for i in range(5)],
                                          parse=parse_rating)
            return [o.value for o in outs], engine.calls_made

    values, made = run(go("first"))
    assert values == [7] * 5 and made == 5 and engine_scripts["m"] == 5
    values2, made2 = run(go("first"))  # same run name: resume
    values3, made3 = run(go("second"))  # another run, same config: global cache
    assert values2 == values3 == values and made2 == made3 == 0 and engine_scripts["m"] == 5
    summary = store.run_summary("first")
    assert summary["calls"] == 5 and summary["calls_made"] == 5
    assert summary["last_execution_new_calls"] == 0 and summary["executions"] == 2
    assert store.run_summary("second")["cached"] == 5


def test_a_small_chat_many_starts_no_idle_workers(store):
    """A few requests get as many workers as requests: AdamMeme asks for its 3 reference candidates
    thousands of times, and 2,048 idle worker tasks per ask stalled a 1,000-meme run's event loop for
    ~27 s before any call was sent (bench/adammeme_schedule.py)."""
    register_script("tasks", lambda req: "ok")
    created = []

    async def go():
        reg = registry()
        reg.add(ModelSpec(name="tasks", backend="scripted", model="tasks"))
        async with open_run(store, reg, name="w", method="t", config={},
                            progress=False) as (_, engine):
            loop = asyncio.get_running_loop()
            loop.set_task_factory(lambda loop, coro, **kw: created.append(1) or asyncio.Task(coro, loop=loop, **kw))
            try:
                return await engine.chat_many([request(model="tasks", sample_index=i) for i in range(3)])
            finally:
                loop.set_task_factory(None)

    assert [o.text for o in run(go())] == ["ok"] * 3
    assert len(created) <= 3 * 3  # a worker per request, and what each call itself starts


def test_rate_limits_are_retried_and_recorded(store, engine_scripts):
    async def go():
        async with open_run(store, registry(), name="r", method="t", config={},
                            progress=False) as (run_, engine):
            return await engine.chat(request(model="flaky"), parse=parse_rating)

    outcome = run(go())
    assert outcome.ok and outcome.value == 5 and outcome.record.attempts == 3
    run_id = store.run_row("r")["id"]
    assert store.attempt_counts(run_id) == {"rate_limit": 2}


def test_bad_request_is_not_retried_and_never_a_value(store):
    async def go():
        async with open_run(store, registry(), name="b", method="t", config={},
                            progress=False) as (_, engine):
            return await engine.chat(request(model="bad"), parse=parse_rating)

    outcome = run(go())
    assert not outcome.ok and outcome.value is None
    assert outcome.error_class is ErrorClass.BAD_REQUEST and outcome.record.attempts == 1
    assert store.run_summary("b")["failed_calls"] == 1


@pytest.mark.parametrize("model,error_class", [("refuser", ErrorClass.REFUSAL),
                                               ("garbled", ErrorClass.UNPARSEABLE)])
def test_content_failures_retry_within_bound_then_record(store, model, error_class):
    reg = registry(content_retries=1, max_retries=5)

    async def go():
        async with open_run(store, reg, name=model, method="t", config={},
                            progress=False) as (_, engine):
            return await engine.chat(request(model=model), parse=parse_rating)

    outcome = run(go())
    assert not outcome.ok and outcome.value is None and outcome.error_class is error_class
    assert outcome.record.attempts == 2  # first try + content_retries
    assert store.run_row(model)["status"] == "incomplete"  # a run with a failed call is not done
    # a failed call is never final: the rerun asks again (and fails again here), never a value
    again = run(go())
    assert not again.cached and not again.ok and again.error_class is error_class
    assert again.record.attempts == 2 and store.attempt_counts(store.run_row(model)["id"])[error_class.value] == 4


def test_failed_calls_are_retried_by_every_rerun_and_every_other_run_but_once_per_engine(store):
    reg = registry(content_retries=0)

    async def go(name):
        async with open_run(store, reg, name=name, method="t", config={}, progress=False) as (_, engine):
            await engine.chat(request(model="garbled"), parse=parse_rating)
            await engine.chat(request(model="garbled"), parse=parse_rating)  # asked twice: one call
            return engine.calls_made, engine.failure_summary()

    made, summary = run(go("rf"))
    assert made == 1 and summary == {"failed": 1, "asked": 1, "by_stage": {"test": {"unparseable": 1}}}
    assert run(go("rf"))[0] == 1  # the same run, rerun
    assert run(go("other"))[0] == 1  # another run


def test_identical_concurrent_requests_share_one_call(store, engine_scripts):
    async def go():
        async with open_run(store, registry(), name="d", method="t", config={},
                            progress=False) as (_, engine):
            outs = await engine.chat_many([request()] * 4, parse=parse_rating)
            return outs, engine.calls_made

    outs, made = run(go())
    assert made == 1 and engine_scripts["m"] == 1 and all(o.value == 7 for o in outs)


def test_concurrency_cap_and_rpm(store):
    in_flight, peak = [0], [0]

    class Slow:
        vision = False

        async def complete(self, req):
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            await asyncio.sleep(0.02)
            in_flight[0] -= 1
            return ChatResult(text="Rating: [[3]]", usage=Usage(prompt_tokens=2,
                                                                completion_tokens=3))

        async def aclose(self):
            pass

    reg = registry(max_concurrency=3, price_in=1.0, price_out=2.0)
    engine = Engine(store, reg)
    engine.backends["slow"] = Slow()
    run(engine.chat_many([request(model="slow", sample_index=i) for i in range(12)]))
    assert peak[0] == 3

    paced = Engine(store, registry(rpm=600))  # 0.1 s apart
    paced.backends["slow"] = Slow()
    t0 = time.monotonic()
    run(paced.chat_many([request(model="slow", sample_index=100 + i) for i in range(4)]))
    assert time.monotonic() - t0 >= 0.3
    record = store.get_call(cache_key(reg.get("slow"), request(model="slow", sample_index=0)))
    assert record.usage.total == 5 and record.cost == pytest.approx((2 * 1 + 3 * 2) / 1e6)


def test_cache_key_covers_params_sample_and_image_hash(tmp_path):
    spec = registry().get("m")
    img1, img2 = tmp_path / "a.png", tmp_path / "b.png"
    img1.write_bytes(b"one")
    img2.write_bytes(b"two")
    base = request()
    keys = {
        cache_key(spec, base),
        cache_key(spec, request(sample_index=1)),
        cache_key(spec, request(params=SamplingParams(temperature=1.0))),
        cache_key(spec, ChatRequest(model="m", messages=[Message.user(ImagePart.of(img1), "x")])),
        cache_key(spec, ChatRequest(model="m", messages=[Message.user(ImagePart.of(img2), "x")])),
    }
    assert len(keys) == 5
    copy = tmp_path / "copy.png"
    copy.write_bytes(b"one")  # same bytes elsewhere: same key (the path is not part of it)
    assert cache_key(spec, ChatRequest(model="m", messages=[Message.user(ImagePart.of(copy), "x")])) \
        == cache_key(spec, ChatRequest(model="m", messages=[Message.user(ImagePart.of(img1), "x")]))
    assert cache_key(spec, request(stage="other")) == cache_key(spec, base)  # stage: accounting only


def test_same_name_other_config_is_refused(store):
    from memegauge.types import InputError

    async def go(cfg):
        async with open_run(store, registry(), name="x", method="t", config=cfg, progress=False):
            pass

    run(go({"a": 1}))
    with pytest.raises(InputError, match="different config"):
        run(go({"a": 2}))


class _Item(Record):
    KIND = "k"
    KEY = ("name",)

    name: str
    v: int


def test_records_upsert_in_first_insertion_order(store):
    async def go():
        async with open_run(store, registry(), name="rec", method="t", config={},
                            progress=False) as (r, _):
            r.put(_Item(name="b", v=1))
            r.put_many([_Item(name="a", v=2), _Item(name="b", v=3)])
            return r.all(_Item), r.get(_Item, "a"), r.id

    records, one, run_id = run(go())
    assert [(x.key, x.v) for x in records] == [("b", 3), ("a", 2)] and one.v == 2
    assert list(store.record_items(run_id, "k")) == [("b", {"name": "b", "v": 3}), ("a", {"name": "a", "v": 2})]


def test_personas_of_one_model_share_its_gate(store) -> None:
    base = ModelSpec(name="judge-1", backend="scripted", model="m", max_concurrency=2)
    specs = {"judge-1": base, "judge-2": base.model_copy(update={"name": "judge-2", "system_prompt": "Be strict."}),
             "other": ModelSpec(name="other", backend="scripted", model="o")}
    engine = Engine(store, ModelRegistry(specs))
    assert engine._gate(specs["judge-1"]) is engine._gate(specs["judge-2"])
    assert engine._gate(specs["other"]) is not engine._gate(specs["judge-1"])


def test_a_model_gate_serves_waiters_by_priority_then_arrival():
    from memegauge.engine.limits import ModelGate

    async def go():
        gate = ModelGate(1, None)
        order: list[str] = []

        async def call(name: str, priority: int) -> None:
            async with gate.slot(priority):
                order.append(name)
                await asyncio.sleep(0.01)

        async with gate.slot(0):  # the only slot is busy: the rest queue
            tasks = [asyncio.create_task(call(n, p)) for n, p in
                     (("bulk-1", 0), ("chain-1", 5), ("bulk-2", 0), ("chain-2", 5))]
            cancelled = asyncio.create_task(call("cancelled", 9))
            await asyncio.sleep(0.01)
            cancelled.cancel()
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        return order, gate.in_use

    order, in_use = asyncio.run(go())
    assert order == ["chain-1", "chain-2", "bulk-1", "bulk-2"] and in_use == 0


def test_progress_counts_failed_calls_as_the_failure_summary_does(store):
    """Issue 34: an AdamMeme run's progress said 'failed 180' where its final line said 30 calls failed. A call
    asked again (a shared reference asked once per target) is one failed call."""
    from memegauge.types import ModelCallError

    asks = {"n": 0}

    def later(req: ChatRequest) -> str:
        asks["n"] += 1
        if asks["n"] <= 1:
            raise ModelCallError(ErrorClass.SERVER, "down")
        return "Rating: [[5]]"

    register_script("later", later)

    async def go():
        reg = registry(max_retries=0)
        reg.add(ModelSpec(name="later", backend="scripted", model="later", max_retries=0, backoff_s=0.001))
        async with open_run(store, reg, name="p", method="t", config={}, progress=False) as (_, engine):
            for _ in range(3):  # the same failing call, asked three times
                await engine.chat(request(model="bad"), parse=parse_rating)
            await engine.chat(request(model="later"), parse=parse_rating)  # fails
            await engine.chat(request(model="later"), parse=parse_rating)  # the failure, again (one call)
            await engine.chat(request(model="later", sample_index=1), parse=parse_rating)  # answered
            return engine.progress.failed, engine.failure_summary()

    shown, summary = run(go())
    assert summary["failed"] == 2 and shown == 2  # counting every failed answer said 5
