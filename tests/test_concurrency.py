"""`max_concurrency: auto`: the pure controller, the gate it moves, and the engine against the test
server's batching and hard-cap modes (issue 38)."""

from __future__ import annotations

import asyncio

import pytest

from memegauge.engine import Store
from memegauge.engine.concurrency import ConcurrencyController, ControllerSettings
from memegauge.engine.limits import ModelGate
from memegauge.models.spec import ModelSpec
from memegauge.testing.server import start_server
from memegauge.testing.workload import probe_registry, run_workload


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def controller(**settings) -> tuple[ConcurrencyController, Clock]:
    clock = Clock()
    return ConcurrencyController(ControllerSettings(**settings), clock=clock), clock


def simulate(answers: int, capacity: int, hard_cap: int, lag: float = 0.0, step: float = 0.3
             ) -> tuple[list[int], int, float]:
    """A batching server without a network: `capacity` requests at once for `step` s each (latency in
    steady state: step × in_flight / capacity past it, Little's law), plus a client's own lag; a 429
    past `hard_cap` in flight. Returns the limit at each answer, the 429s and the time taken."""
    c, clock = controller()
    limits, refused = [], 0
    while len(limits) < answers:
        in_flight = c.limit
        if hard_cap and in_flight > hard_cap:
            refused += 1
            c.on_error("rate_limit", 0.1, in_flight)
            clock.now += 0.01
            continue
        latency = step * max(1.0, in_flight / capacity if capacity else 1.0) + lag
        c.on_success(latency, in_flight)
        clock.now += latency / in_flight
        limits.append(in_flight)
    return limits, refused, clock.now


def test_the_limit_grows_while_latency_holds_throughput_grows_and_the_limit_is_used():
    limits, _, _ = simulate(300, capacity=10_000, hard_cap=0)
    assert limits[0] == 8 and limits[-1] > 100


def test_the_limit_stops_growing_when_throughput_does():
    """Latency holds but answers a second do not grow (a client that cannot go faster): the limit
    stays within 1.5 × the limit that last raised throughput."""
    c, clock = controller()
    for _ in range(2000):
        c.on_success(0.3, in_flight=c.limit)
        clock.now += 1 / 50  # 50 answers a second, whatever the limit
    assert c.limit <= 30  # (over 100 where throughput grows, above)


def serve(c: ConcurrencyController, clock: Clock, answers: int, latency: float) -> None:
    """`answers` answers at `latency` with the limit in flight (the clock moves as they come)."""
    for _ in range(answers):
        c.on_success(latency, in_flight=c.limit)
        clock.now += latency / c.limit


def test_an_unused_limit_does_not_grow():
    c, _ = controller()
    for _ in range(500):
        c.on_success(0.3, in_flight=2)
    assert c.limit == 8


def test_on_a_batching_server_the_limit_passes_its_capacity_and_settles_under_its_hard_cap():
    limits, refused, elapsed = simulate(3000, capacity=48, hard_cap=96)
    assert limits[0] == 8 and max(limits[:200]) > 48  # past the server's batch within 200 answers
    assert 48 <= min(limits[-1000:]) and max(limits[-1000:]) <= 96 and refused <= 3
    assert elapsed <= 1.1 * 3000 * 0.3 / 48  # within 10% of the server-bound ideal


def test_a_client_lag_on_every_answer_is_not_read_as_a_queue():
    """A busy client machine adds the same lag to every answer: the limit still reaches the
    server's capacity (a shortest-latency reference would read the lag as a queue and shrink it)."""
    limits, _, _ = simulate(3000, capacity=48, hard_cap=96, lag=0.4)
    assert min(limits[-1000:]) >= 48


def test_against_an_apis_limit_the_limit_settles_at_or_under_it_after_a_few_429s():
    limits, refused, _ = simulate(2000, capacity=0, hard_cap=10)
    assert max(limits[-1500:]) <= 10 and refused <= 3 and min(limits[-1500:]) >= 7


def test_overload_cuts_once_per_round_trip_and_a_429_caps_the_limit_there():
    c, clock = controller()
    serve(c, clock, 100, 0.1)
    assert c.limit > 12
    for _ in range(5):  # one overshoot's burst of 429s, 12 in flight
        c.on_error("rate_limit", 0.5, in_flight=12)
    assert c.decreases == 1 and c.overloads == 5
    assert c.limit == 8 and c.cap == pytest.approx(12 * 0.7)  # the cut: 70% of what was in flight
    assert c.pause_left() == pytest.approx(0.5)
    serve(c, clock, 1000, 0.1)  # latency holds, but the cap holds the limit
    assert c.limit == 8
    clock.now += 31  # no overload for cap_hold_s: the cap is probed one higher
    serve(c, clock, 1, 0.1)
    assert c.limit == 9
    clock.now += 0.2  # a round trip later: a new 429 cuts again
    c.on_error("server", None, in_flight=9)  # a server error cuts, and sets no cap
    assert c.decreases == 2 and c.limit == 6 and c.cap == pytest.approx(12 * 0.7 + 1)


def test_errors_that_are_not_overload_leave_the_limit_alone():
    c, _ = controller()
    for kind in ("bad_request", "unparseable", "refusal"):
        c.on_error(kind, None, in_flight=8)
    assert c.limit == 8 and c.overloads == 0


def test_the_servers_queue_holds_the_limit_and_the_ceiling_bounds_it():
    c, clock = controller(ceiling=40)
    serve(c, clock, 500, 0.3)
    assert c.limit == 40
    c.on_load(running=16, waiting=5)
    assert c.limit == 20  # 16 running + √16
    c.on_load(running=16, waiting=0)  # none waits: the hold is raised by its square root
    serve(c, clock, 200, 0.3)
    assert c.limit == 24
    for _ in range(3):
        c.on_load(running=24, waiting=0)
    assert c.load_cap == float("inf")  # past the ceiling: no hold left
    serve(c, clock, 200, 0.3)
    assert c.limit == 40


def test_a_gate_hands_slots_out_as_an_auto_limit_grows():
    async def main() -> list[int]:
        controllers = {"u": ConcurrencyController(ControllerSettings(initial=2))}
        gate = ModelGate(8, None, controllers)
        in_flight, peaks = 0, []

        async def call() -> None:
            nonlocal in_flight
            async with gate.slot():
                in_flight += 1
                peaks.append(in_flight)
                await asyncio.sleep(0.01)
                gate.succeeded("u", 0.01)
                in_flight -= 1

        await asyncio.gather(*(call() for _ in range(200)))
        return peaks

    peaks = asyncio.run(main())
    assert peaks[0] == 1 and max(peaks[:2]) <= 2 and max(peaks) > 8


def test_auto_is_the_default_and_a_number_keeps_a_fixed_limit():
    auto = ModelSpec(name="m", backend="openai", model="m", base_url="http://127.0.0.1:9/v1")
    assert auto.max_concurrency == "auto" and auto.auto_concurrency and auto.max_concurrency_ceiling == 256
    assert not ModelSpec(name="m", backend="scripted").auto_concurrency  # served here: fixed 8
    assert ModelSpec(name="m", backend="scripted").fixed_concurrency == 8
    fixed = auto.model_copy(update={"max_concurrency": 4})
    assert not fixed.auto_concurrency and fixed.fixed_concurrency == 4
    with pytest.raises(ValueError):
        ModelSpec(name="m", backend="scripted", max_concurrency=0)
    with pytest.raises(ValueError):
        ModelSpec(name="m", backend="scripted", max_concurrency="lots")


def _workload(tmp_path, server, concurrency, calls, name):
    registry = probe_registry(server.base_url, concurrency, backoff_s=0.02, backoff_max_s=0.2)
    return asyncio.run(run_workload(Store(tmp_path / f"{name}.db"), registry, calls, name))


def test_auto_finds_a_batching_servers_pace_and_figures_do_not_depend_on_it(tmp_path):
    """Capacity 12 at 100 ms a step, 429 beyond 24 in flight: auto goes past today's 8 without a
    failed call, and every answer is the same at limit 1, 8 and auto."""
    with start_server(latency_ms=100, capacity=12, hard_cap=24) as server:
        auto = _workload(tmp_path, server, "auto", 300, "auto")
        assert server.stats["max_in_flight"] > 8  # it grew past the old default
        server.reset()
        one = _workload(tmp_path, server, 1, 20, "one")
        eight = _workload(tmp_path, server, 8, 300, "eight")
    assert not any(auto["error_classes"]) and not any(eight["error_classes"])
    assert auto["values"] == eight["values"] and auto["values"][:20] == one["values"]
    limit = auto["concurrency"]["probe"]
    assert limit.startswith("auto:") and int(limit.removeprefix("auto:")) > 8
    assert eight["concurrency"] == {"probe": 8}


def test_auto_settles_under_an_apis_limit_without_failing_a_call(tmp_path):
    """A server answering 429 to a request arriving with 10 in flight: auto learns the cap from the
    429s it provokes and stays at or under 10; every call succeeds (retried within bounds)."""
    with start_server(latency_ms=50, hard_cap=10) as server:
        result = _workload(tmp_path, server, "auto", 300, "capped")
        overloaded = server.stats["overloaded"]
    assert not any(result["error_classes"]) and overloaded > 0
    assert int(result["concurrency"]["probe"].removeprefix("auto:")) <= 10


def test_progress_lines_show_the_auto_limits_in_force():
    from memegauge.engine.progress import CallProgress

    progress = CallProgress(enabled=False)
    progress.limits = lambda: {"qwen-vl": "auto:64", "fixed": 8}
    assert progress.line().endswith(" · in flight ≤ qwen-vl auto:64")
    progress.limits = lambda: {"fixed": 8}
    assert "in flight" not in progress.line()


VLLM_METRICS = """# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="qwen"} 48.0
vllm:num_requests_waiting{model_name="qwen"} 7.0
vllm:num_requests_running{model_name="llava"} 2.0
vllm:gpu_cache_usage_perc{model_name="qwen"} 0.91
"""


def test_a_servers_published_load_is_read_from_vllm_sglang_and_llama_cpp():
    from memegauge.models.server_load import parse_metrics, parse_slots

    assert parse_metrics(VLLM_METRICS) == (50, 7)
    assert parse_metrics("sglang:num_running_reqs{a=\"b\"} 12\nsglang:num_queue_reqs{a=\"b\"} 3\n") == (12, 3)
    assert parse_metrics("# nothing of the kind\nprocess_cpu_seconds_total 3.5\n") is None
    assert parse_slots([{"id": 0, "is_processing": True}, {"id": 1, "is_processing": False}]) == (1, 0)
    assert parse_slots([{"id": 0, "is_processing": True}]) == (1, 1)
    assert parse_slots({"error": "slots endpoint disabled"}) is None


def test_the_test_servers_metrics_hold_auto_at_its_batch_while_requests_wait(tmp_path):
    """The batching server publishes vLLM's gauges at /metrics; the engine's watcher reads them
    while calls are under way (`on_load`'s effect on the limit is tested above, without a clock)."""
    import urllib.request

    from memegauge.engine.core import _CONTROLLERS
    from memegauge.models.server_load import parse_metrics

    with start_server(latency_ms=100, capacity=12) as server:
        with urllib.request.urlopen(server.url + "/metrics") as response:
            assert parse_metrics(response.read().decode()) == (0, 0)
        result = _workload(tmp_path, server, "auto", 400, "metrics")
    assert not any(result["error_classes"])
    controller = next(c for k, c in _CONTROLLERS.items() if str(server.port) in k)
    assert controller.load_reports >= 2 and controller.load_holds >= 1  # it saw requests waiting
