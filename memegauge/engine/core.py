"""The call engine: every model call of every stage goes through `Engine.chat`.

Per call: cache lookup → (in-process de-duplication) → per-model gate (concurrency, rpm) → one
backend attempt → refusal / parse check → classified, bounded, jittered retries (`_retried`) → the
result committed to the store → only then returned to the stage. Failures come back as a failed
`CallOutcome` with their class; they are never turned into a value.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import logging
import random
import time
import weakref
from collections.abc import Awaitable, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from collections.abc import Callable, Iterable, Iterator

from memegauge.engine.content import NOT_PARSED, Parser, check_content, looks_like_refusal, without_reasoning
from memegauge.engine.concurrency import ConcurrencyController, ControllerSettings
from memegauge.engine.interrupt import StopSignal
from memegauge.engine.limits import ModelGate
from memegauge.engine.progress import CallProgress
from memegauge.engine.store import Store, canonical_json
from memegauge.images.check import downscale_plan
from memegauge.models import create_backend
from memegauge.models.server_load import watch_load
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.types import (
    CallRecord,
    CallStatus,
    ChatRequest,
    ChatResult,
    ErrorClass,
    ImagePart,
    InputError,
    MemeGaugeError,
    ModelBackend,
    ModelCallError,
    ParseFailure,
    Usage,
)

log = logging.getLogger(__name__)

CALL_PRIORITY: contextvars.ContextVar[int] = contextvars.ContextVar("memegauge_call_priority", default=0)
"""The priority of the calls made in this context (and the tasks it starts) when they wait for a model's
slots: higher goes first (`ModelGate`). Scheduling only: it changes no request, key or record."""


@contextmanager
def call_priority(level: int) -> Iterator[None]:
    """Calls made inside (and in tasks started inside) wait for model slots at priority `level`:
    e.g. a method's critical path ahead of its bulk calls."""
    token = CALL_PRIORITY.set(level)
    try:
        yield
    finally:
        CALL_PRIORITY.reset(token)

T = TypeVar("T")
CONTENT_ERRORS = (ErrorClass.REFUSAL, ErrorClass.UNPARSEABLE, ErrorClass.TRUNCATED)
WINDOW = 2048  # calls under way at once in one chat_many (well above any model's max_concurrency)


@dataclass
class CallOutcome(Generic[T]):
    """What a stage gets back: the stored record, the parsed value (None on failure), and whether
    it came from the cache."""

    record: CallRecord
    value: T | None
    cached: bool

    @property
    def ok(self) -> bool:
        return self.record.status is CallStatus.OK and self.value is not None

    @property
    def text(self) -> str | None:
        return self.record.text

    @property
    def error_class(self) -> ErrorClass | None:
        return self.record.error_class


def request_for_store(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The request as stored and hashed: images by sha256 (and path, outside the key)."""
    messages = []
    for message in request.messages:
        parts = []
        for part in message.content:
            if isinstance(part, ImagePart):
                image = {"type": "image", "sha256": part.sha256}
                if not spec.vision:
                    image["alt_text"] = part.alt_text  # what a text-only model actually reads
                parts.append(image)
            else:
                parts.append({"type": "text", "text": part.text})
        messages.append({"role": message.role, "content": parts})
    return {
        "model": spec.identity,
        "params": request.params.model_dump(mode="json"),
        # `logprobs` enters the key only when asked for: every key made before it existed stays the same
        "output": request.output.model_dump(mode="json", exclude=None if request.output.logprobs else {"logprobs"}),
        "messages": messages,
        "sample_index": request.sample_index,
    }


def cache_key(spec: ModelSpec, request: ChatRequest) -> str:
    return _key_of(request_for_store(spec, request))


def _key_of(stored: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(stored).encode()).hexdigest()


def _image_paths(request: ChatRequest) -> list[str]:
    return [str(p.path) for m in request.messages for p in m.content if isinstance(p, ImagePart)]


class Engine:
    """Runs model calls for one run (or for none, e.g. `memegauge models --check`)."""

    def __init__(self, store: Store, registry: ModelRegistry, *, run_id: int | None = None,
                 execution_id: int | None = None, progress: CallProgress | None = None,
                 refusal_detector: Callable[[str], bool] | None = None,
                 seed: int | None = None, stop: StopSignal | None = None, budget: float | None = None):
        self.store = store
        self.budget = budget  # USD this engine may spend on fresh calls (`--budget`); None: no limit
        self.spent = 0.0
        self.stop = stop or StopSignal()  # Ctrl-C: no new sends, answers in flight still stored
        self.seed = seed  # the run's seed: part of every T > 0 call's key (see `seeded`)
        self.registry = registry
        self.run_id = run_id
        self.execution_id = execution_id
        self.progress = progress or CallProgress(enabled=False)
        # progress lines show the `auto` limits in force; through a weak reference, as a bound method would
        # make engine ↔ progress a reference cycle that only the collector frees (tests/test_scale.py)
        engine = weakref.ref(self)
        self.progress.limits = lambda: found.concurrency() if (found := engine()) is not None else {}
        self.failed_here: set[str] = set()  # failed in this engine: not retried again in it
        self.asked: set[str] = set()  # every call key this engine was asked for
        self.failures: dict[str, tuple[str, str]] = {}  # key → (stage, error class) still failed
        self.refusal_detector = refusal_detector or looks_like_refusal
        self.backends: dict[str, ModelBackend] = {}
        self.gates: dict[str, ModelGate] = {}
        self.inflight: dict[str, asyncio.Future[CallRecord]] = {}
        self.workers: set[asyncio.Future[None]] = set()  # chat_many's tasks, ended by `aclose`
        self.writer = CallWriter(store)
        self.calls_made = 0

    # ---- public ---------------------------------------------------------------------------------

    async def chat(self, request: ChatRequest, parse: Parser | None = None,
                   detect_refusal: bool = True) -> CallOutcome:
        """One logical call: from the cache when possible, else from the model, stored first."""
        request = self.seeded(request)
        spec = self.registry.get(request.model)
        stored = request_for_store(spec, request)  # built once: the key, and the record if it is called
        key = _key_of(stored)
        self.progress.submitted(request.stage)
        cached = self.store.get_call(key)
        # A failed call is never a final answer: one that failed in an earlier execution or another
        # run is asked again (within the usual bounds); one that failed in this engine is not, so a
        # stage asking twice does not double the retries.
        if cached and (cached.status is CallStatus.OK or key in self.failed_here):
            await self.writer.link(self.run_id, key, request.stage, self.execution_id)
            return self._outcome(cached, parse, cached=True)
        if key in self.inflight:  # same request asked twice at once: one call serves both
            record = await asyncio.shield(self.inflight[key])
            await self.writer.link(self.run_id, key, request.stage, self.execution_id)
            return self._outcome(record, parse, cached=True)
        future: asyncio.Future[CallRecord] = asyncio.get_running_loop().create_future()
        self.inflight[key] = future
        try:
            record, parsed = await self._call(spec, request, key, stored, parse, detect_refusal)
            if record.error_class is ErrorClass.NO_VISION:  # not stored: the registry is wrong
                raise no_vision_error(spec, record.error)
            await self.writer.put(record, self.run_id, self.execution_id)  # committed before it is used
            self.calls_made += 1
            self.spent += record.cost
            if record.status is not CallStatus.OK:
                self.failed_here.add(key)
            record = record.model_copy(update={"request": {}})  # stored; stages need the answer
            future.set_result(record)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self.inflight[key]
            self.stop.settled(key)  # its answer (or failure) is stored: nothing paid is in flight
        return self._outcome(record, parse, cached=False, parsed=parsed)

    async def chat_many(self, requests: Iterable[ChatRequest], parse: Parser | None = None,
                        detect_refusal: bool = True) -> list[CallOutcome]:
        """Run requests concurrently (limits still apply per model); results in input order.

        At most `WINDOW` calls are under way at once, started in input order: enough to keep every
        model's slots full, while memory stays bounded by what is in flight rather than by the
        number of requests (200k requests are not 200k live coroutines)."""
        results: dict[int, CallOutcome] = {}
        # No more workers than requests: a worker costs a task even when it finds nothing to do,
        # and AdamMeme asks for 3 reference candidates at a time thousands of times (2,048 idle
        # tasks each stalled a 1,000-meme run's event loop for ~27 s before any call was sent).
        workers = min(WINDOW, len(requests)) if isinstance(requests, Sized) else WINDOW
        pending = iter(enumerate(requests))  # a generator is read as calls start, never whole
        stopped: list[bool] = []

        async def worker() -> None:
            for index, request in pending:
                if stopped:  # another call raised (e.g. a model refusing images): start no more
                    return
                try:
                    results[index] = await self.chat(request, parse, detect_refusal)
                except BaseException:
                    stopped.append(True)
                    raise

        tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
        self.workers.update(tasks)  # `aclose` ends those still running when one raised
        await asyncio.gather(*tasks)
        self.workers.difference_update(tasks)
        return [results[i] for i in range(len(results))]

    def _check_budget(self) -> None:
        """No new paid call once this engine's fresh calls cost the budget (calls in flight finish)."""
        if self.budget is not None and self.spent >= self.budget:
            raise BudgetReached(self.spent, self.budget, self.calls_made)

    def seeded(self, request: ChatRequest) -> ChatRequest:
        """The request with the run's seed when it samples (T > 0) and names no seed of its own.

        The seed then enters the cache key: the same seed replays bit for bit, another seed draws
        afresh (personas, tasks, Miners …) instead of replaying the first seed's answers. Greedy
        calls (T = 0) do not depend on a seed and stay shared between seeds.
        """
        params = request.params
        if self.seed is None or params.temperature == 0 or params.seed is not None:
            return request
        return request.model_copy(update={"params": params.model_copy(update={"seed": self.seed})})

    def backend(self, name: str) -> ModelBackend:
        if name not in self.backends:
            self.backends[name] = create_backend(self.registry.get(name))
        return self.backends[name]

    def backend_counters(self) -> dict[str, int]:
        """What the backends counted of their own work (e.g. `hf.batches_split`), summed over the
        models; a backend counts by exposing a `counters` dict."""
        totals: dict[str, int] = {}
        for backend in self.backends.values():
            for name, value in (getattr(backend, "counters", None) or {}).items():
                totals[name] = totals.get(name, 0) + int(value)
        return totals

    async def aclose(self) -> None:
        """End the calls still under way (a sibling raised: disk full, no vision …), then close the
        clients: a call left running would otherwise send on a closed client and print a traceback."""
        running = [task for task in self.workers if not task.done()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        self.workers.clear()
        for backend in self.backends.values():
            await backend.aclose()
        self.backends.clear()

    # ---- internals ------------------------------------------------------------------------------

    def _outcome(self, record: CallRecord, parse: Parser | None, cached: bool,
                 parsed: Any = NOT_PARSED) -> CallOutcome:
        self.asked.add(record.key)
        outcome = self._judged(record, parse, cached, parsed)
        # after the judgement, keyed: progress counts failed calls as `failure_summary` does (a call asked
        # again, or answered on a later try, is one call; a cached answer the parser now refuses failed)
        self.progress.finished(record.key not in self.failures, cached, record.stage or "",
                               truncated=record.finish_reason == "length", key=record.key)
        return outcome

    def _judged(self, record: CallRecord, parse: Parser | None, cached: bool,
                parsed: Any = NOT_PARSED) -> CallOutcome:
        if record.status is not CallStatus.OK or record.text is None:
            return self._failed(CallOutcome(record, None, cached))
        # a fresh answer was parsed when it was checked (`check_content`): parsed once, not again here
        value = parsed if parsed is not NOT_PARSED else parse(record.text) if parse else record.text
        if isinstance(value, ParseFailure):  # parser changed since the call was cached
            failed = record.model_copy(update={"status": CallStatus.FAILED,
                                               "error_class": ErrorClass.UNPARSEABLE,
                                               "error": value.reason})
            return self._failed(CallOutcome(failed, None, cached))
        self.failures.pop(record.key, None)
        return CallOutcome(record, value, cached)

    def _failed(self, outcome: CallOutcome) -> CallOutcome:
        record = outcome.record
        self.failures[record.key] = (record.stage or "", (record.error_class or ErrorClass.SERVER).value)
        return outcome

    def failure_summary(self) -> dict[str, Any]:
        """What this engine's calls left failed: `{failed, asked, by_stage: {stage: {class: n}}}`."""
        by_stage: dict[str, dict[str, int]] = {}
        for stage, error_class in self.failures.values():
            counts = by_stage.setdefault(stage, {})
            counts[error_class] = counts.get(error_class, 0) + 1
        return {"failed": len(self.failures), "asked": len(self.asked),
                "by_stage": {s: dict(sorted(c.items())) for s, c in sorted(by_stage.items())}}

    def _gate(self, spec: ModelSpec) -> ModelGate:
        if spec.name not in self.gates:
            self.gates[spec.name] = shared_gate(spec)
        return self.gates[spec.name]

    def concurrency(self) -> dict[str, int | str]:
        """The limit in force per model this engine called: a number, or `auto` ones as
        `"auto:48"` (summed over replicas), for progress lines and the run's timing."""
        return {name: (f"auto:{gate.capacity}" if gate.controllers else gate.capacity)
                for name, gate in sorted(self.gates.items())}

    async def _call(self, spec: ModelSpec, request: ChatRequest, key: str, stored: dict[str, Any],
                    parse: Parser | None, detect_refusal: bool) -> tuple[CallRecord, Any]:
        """The call's record, and what the parser read from its answer (`NOT_PARSED` when it failed)."""
        backend = self.backend(spec.name)
        state = _CallState()
        started = time.monotonic()
        try:
            while True:
                try:
                    await self._attempt(spec, backend, request, key, parse, detect_refusal, state)
                    break
                except ModelCallError as exc:
                    pause = _retry_pause(spec, state, exc)
                    if pause is None:
                        raise
                self.progress.retry_started()
                await asyncio.sleep(pause)
        except ModelCallError as exc:
            return self._record(spec, request, key, stored, state, time.monotonic() - started, error=exc), NOT_PARSED
        return self._record(spec, request, key, stored, state, time.monotonic() - started), state.parsed

    async def _attempt(self, spec: ModelSpec, backend: ModelBackend, request: ChatRequest, key: str,
                       parse: Parser | None, detect_refusal: bool, state: _CallState) -> None:
        if state.attempts:
            self.progress.retry_ended()
        state.attempts += 1
        t0 = time.monotonic()
        gate = self._gate(spec)
        _watch_load(gate, backend)
        try:
            async with gate.slot(CALL_PRIORITY.get()):
                await self.stop.send(key)  # after a Ctrl-C: parked here, never sent
                self._check_budget()  # at the send, not the submit: calls queued for a slot wait here
                self.progress.sent()
                sent = time.monotonic()
                result = await _paced(gate, backend.complete(request), spec.timeout_s)
                gate.succeeded(result.replica, time.monotonic() - sent)  # in its slot: counted in flight
            state.add_usage(result)
            result = without_reasoning(result)
            state.finish_reason, state.reasoning = result.finish_reason, result.reasoning
            state.logprobs = result.logprobs
            state.parsed = check_content(result, parse, detect_refusal and self.refusal_detector)
            state.text = result.text
        except TimeoutError:
            error = ModelCallError(ErrorClass.TIMEOUT, f"no answer within {spec.timeout_s:g} s")
            self._note_failure(spec, key, state, error, time.monotonic() - t0)
            raise error from None
        except ModelCallError as error:
            self._note_failure(spec, key, state, error, time.monotonic() - t0)
            raise
        finally:
            if state.text is None:  # a failed attempt holds no answer: a retry is sent anew
                self.stop.settled(key)

    def _note_failure(self, spec: ModelSpec, key: str, state: _CallState, error: ModelCallError,
                      latency: float) -> None:
        if error.error_class in CONTENT_ERRORS:
            state.content_failures += 1
        log.info("%s: attempt %d failed (%s): %s", spec.name, state.attempts, error.error_class.value,
                 str(error)[:200])
        self.store.put_attempt(key, spec.name, self.run_id, state.attempts, error.error_class,
                               str(error)[:2000], latency)

    def _record(self, spec: ModelSpec, request: ChatRequest, key: str, stored: dict[str, Any],
                state: _CallState, latency: float, error: ModelCallError | None = None) -> CallRecord:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s %s: %s after %d attempt(s), %.2f s", request.stage, spec.name,
                      error.error_class.value if error else "ok", state.attempts, latency)
        stored = {**stored, "image_paths": _image_paths(request)}  # the key's part, and the paths
        downscaled = _images_downscaled(spec, request)
        if downscaled:  # outside the key, like the paths: what this model was actually shown
            stored["images_downscaled"] = downscaled
        return CallRecord(
            key=key, model=spec.name, stage=request.stage, request=stored,
            status=CallStatus.FAILED if error else CallStatus.OK,
            text=None if error else state.text,
            error_class=error.error_class if error else None,
            error=str(error)[:2000] if error else "",
            attempts=state.attempts, usage=state.usage,
            cost=spec.cost(state.usage.prompt_tokens, state.usage.completion_tokens),
            latency_s=latency, created=time.time(), finish_reason=state.finish_reason,
            reasoning=state.reasoning, images_sent=_images_sent(spec, request),
            logprobs={} if error else state.logprobs)


class CallWriter:
    """Commits calls for the engine: every call (or cached call's link) that finishes in one turn of the
    event loop is written in one transaction (`Store.put_calls`), and each caller waits for that commit
    before it goes on, so an answer is still stored before any stage uses it. At 64 calls in flight the
    answers come in bursts; one commit each was two thirds of the store's statements per call."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.records: list[CallRecord] = []
        self.links: list[tuple[int, str, str, int | None, bool]] = []
        self.committed: asyncio.Future[None] | None = None  # the commit the calls now waiting will share

    async def put(self, record: CallRecord, run_id: int | None, execution_id: int | None) -> None:
        """Store a fresh call (and its link to the run); returns once it is committed."""
        self.records.append(record)
        if run_id is not None:
            self.links.append((run_id, record.key, record.stage, execution_id, True))
        await self._commit()

    async def link(self, run_id: int | None, key: str, stage: str, execution_id: int | None) -> None:
        """Link a stored call to the run (a cached answer, or one another stage's request got)."""
        if run_id is None:
            return
        self.links.append((run_id, key, stage, execution_id, False))
        await self._commit()

    async def _commit(self) -> None:
        if self.committed is None:
            self.committed = asyncio.get_running_loop().create_future()
            # after the callbacks already due in this turn: the answers that arrived with this one
            asyncio.get_running_loop().call_soon(self._write)
        # shielded: a caller cancelled while it waits (Ctrl-C) must not cancel the others' commit
        await asyncio.shield(self.committed)

    def _write(self) -> None:
        committed, records, links = self.committed, self.records, self.links
        self.committed, self.records, self.links = None, [], []
        if committed is None:
            return
        try:
            self.store.put_calls(records, links)
        except BaseException as exc:  # disk full …: every call of the transaction fails with it
            committed.set_exception(exc)
            committed.exception()  # retrieved: each waiter raises it itself
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: the loop's too
                raise
        else:
            committed.set_result(None)


class BudgetReached(MemeGaugeError):
    """The run spent its `--budget`: it stops sending, stores the answers in flight and is marked
    `stopped` (resumable: a rerun replays every stored answer and goes on)."""

    label = "stopped"  # the command line's word for it (exit 1), not "failed"

    def __init__(self, spent: float, budget: float, calls: int, run: str | None = None) -> None:
        self.spent, self.budget, self.calls = spent, budget, calls
        where = f"run {run!r} is stopped (not done): " if run else ""
        super().__init__(f"budget reached: the {calls} calls made cost ${spent:.4f} of the ${budget:g} budget; "
                         f"{where}every answer received is stored. Rerun the same command to continue "
                         "(stored answers are replayed, not paid again); --budget limits each rerun afresh")


def no_vision_error(spec: ModelSpec, detail: str) -> InputError:
    """The one message for a model that is sent pictures but accepts none."""
    return InputError(
        f"model {spec.name!r} ({spec.model or spec.backend}) does not accept image input: {detail[:200]}",
        where=f"model registry, entry {spec.name!r}",
        fix=f"add `vision: false` to {spec.name!r} so it reads the meme text and caption instead, "
            "or point it at a vision-language model")


class _CallState:
    """Mutable per-call bookkeeping shared by the attempts of one call."""

    def __init__(self) -> None:
        self.attempts = 0
        self.content_failures = 0
        self.text: str | None = None
        self.finish_reason = ""
        self.reasoning = ""
        self.logprobs: dict[str, float] = {}
        self.usage = Usage()
        self.parsed: Any = NOT_PARSED  # what the parser read from the answer that passed the checks

    def add_usage(self, result: ChatResult) -> None:
        self.usage = Usage(prompt_tokens=self.usage.prompt_tokens + result.usage.prompt_tokens,
                           completion_tokens=self.usage.completion_tokens
                           + result.usage.completion_tokens)


def _images_sent(spec: ModelSpec, request: ChatRequest) -> int:
    """How many pictures the model received: none when it is text-only (it reads alt text)."""
    if not spec.vision:
        return 0
    return sum(isinstance(p, ImagePart) for m in request.messages for p in m.content)


def _images_downscaled(spec: ModelSpec, request: ChatRequest) -> list[dict[str, Any]]:
    """The pictures sent smaller than they are, to fit the model's `max_image_pixels`."""
    if not spec.vision or not spec.max_image_pixels:
        return []
    plans = []
    for message in request.messages:
        for part in message.content:
            plan = isinstance(part, ImagePart) and downscale_plan(part.path, spec.max_image_pixels)
            if plan:
                plans.append({"sha256": part.sha256, **plan})
    return plans


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, ModelGate]] = weakref.WeakKeyDictionary()
_GATES_OUTSIDE_A_LOOP: dict[str, ModelGate] = {}
_CONTROLLERS: dict[str, ConcurrencyController] = {}


def shared_gate(spec: ModelSpec) -> ModelGate:
    """The gate of what serves `spec`'s calls, one per event loop: every engine (every stage, every
    concurrent run of this process) shares it, so AdamMeme's agent and its targets, or two runs, do
    not each assume the server's whole capacity.

    Keyed by what serves the calls, not the registry name: personas of one model (entries differing
    only in system prompt) share its server's slots and its provider's rpm, so they must share one
    gate, or more calls are in flight than slots and time out while queued. An `auto` model's
    controllers (one per replica URL) live as long as the process: a second run starts at the pace
    the first one found."""
    try:
        gates = _GATES.setdefault(asyncio.get_running_loop(), {})
    except RuntimeError:  # asked outside a loop (a gate binds to none until a call waits in it)
        gates = _GATES_OUTSIDE_A_LOOP
    key = (f"{spec.backend}|{spec.model}|{'|'.join(spec.base_url)}|{spec.max_concurrency}|"
           f"{spec.max_concurrency_ceiling}|{spec.rpm}")
    if key not in gates:
        controllers = None
        if spec.auto_concurrency:
            controllers = {url: _CONTROLLERS.setdefault(
                f"{spec.backend}|{spec.model}|{url}|{spec.max_concurrency_ceiling}",
                ConcurrencyController(ControllerSettings(ceiling=spec.max_concurrency_ceiling)))
                for url in spec.base_url}
        gates[key] = ModelGate(spec.fixed_concurrency, spec.rpm, controllers)
    return gates[key]


def _watch_load(gate: ModelGate, backend: ModelBackend) -> None:
    """An `auto` gate reads its servers' own load where they publish it (vLLM's `/metrics` …),
    watched while calls come; a server that publishes none is paced by latency and errors alone."""
    if not gate.controllers or not getattr(backend, "publishes_load", False):
        return
    if gate.watcher is None or (gate.watcher.done() and not gate.watcher.cancelled()
                                and gate.watcher.exception() is None and gate.watcher.result() == "idle"):
        gate.watcher = asyncio.create_task(watch_load(list(gate.controllers), gate.loaded,
                                                      lambda: gate.in_use > 0))


async def _paced(gate: ModelGate, call: Awaitable[ChatResult], timeout_s: float) -> ChatResult:
    """The backend's answer within the timeout; a failure is told to the gate (an `auto` limit
    shrinks on overload) before it is raised."""
    try:
        return await asyncio.wait_for(call, timeout=timeout_s)
    except TimeoutError:
        gate.failed("", ErrorClass.TIMEOUT.value, None)
        raise
    except ModelCallError as error:
        gate.failed(getattr(error, "replica", ""), error.error_class.value, error.retry_after)
        raise


def _retry_pause(spec: ModelSpec, state: _CallState, error: ModelCallError) -> float | None:
    """Seconds to wait before the next attempt of a call whose last attempt failed with `error`, or None
    when it is not tried again: its class is final (`ErrorClass.retryable`), or the call has made
    `max_retries` + 1 attempts, or its answers failed the content checks more than `content_retries` times.

    The pause grows exponentially with a jitter (`backoff_s` · 2^(attempt − 1) + uniform(0, `backoff_s`),
    at most `backoff_max_s`), and is never shorter than the pause a 429 asked for (`Retry-After`, itself
    capped at `backoff_max_s`). A plain loop rather than tenacity's `AsyncRetrying`, which cost ~0.3 ms of
    CPU per call (a retrier, its state and six `inspect.iscoroutinefunction` checks per call;
    bench/cpu_per_call.py): the same rule, written once."""
    if not error.error_class.retryable or state.attempts > spec.max_retries:
        return None
    if state.content_failures > min(spec.content_retries, spec.max_retries):
        return None
    try:
        base = spec.backoff_s * 2 ** (state.attempts - 1) + random.uniform(0, spec.backoff_s)
    except OverflowError:
        base = spec.backoff_max_s
    base = max(0.0, min(base, spec.backoff_max_s))
    hint = error.retry_after
    return max(base, min(hint, spec.backoff_max_s)) if hint else base
