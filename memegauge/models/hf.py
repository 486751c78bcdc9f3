"""`backend: hf` — a local Hugging Face model answers MemeGauge requests: a vision-language model
(`AutoModelForImageTextToText`, e.g. Qwen2-VL, LLaVA) sees the meme picture through its own
processor and chat template; a text-only causal LM reads the picture's alt text. A LoRA adapter
(`adapter:`, e.g. a `qa finetune` output's `best/`) is loaded on top of the base, so a fine-tuned
model is evaluated exactly like its base.

Registry YAML::

    qwen2-vl-ft:
      backend: hf
      model: /models/Qwen2-VL-7B-Instruct   # a local folder; nothing is downloaded
      adapter: runs/ft/best                # optional
      max_concurrency: 8                   # requests that can wait for one batch
      extra: {device: auto, dtype: auto, batch_size: 8}

`vision` defaults to what the folder holds (a `vision_config` in config.json). torch and
transformers (the `train` extra) are imported when the backend is built, never before.

Requests are generated in batches: whatever is waiting when the model is free (up to
`extra.batch_size`: 8 on a GPU, 1 on a CPU by default) goes through `generate` as one left-padded
batch, in a worker thread. Greedy requests batch together, the oldest waiting request with those
nearest its length (text characters and picture pixels), so that padding stays small; a sampled
request (temperature > 0) runs alone so that its seed decides its sample. The next batch's pictures
are read and put through the processor in a thread of their own while the model generates the
current batch (one batch ahead at most, so memory stays bounded).

A batch that runs out of memory (torch's OutOfMemoryError, or the CPU allocator's) is split in
halves, and batches are kept to the half from then on: the size that fits is remembered. Each split
is logged once and counted (`counters["hf.batches_split"]`, which `qa eval` stores in its report
beside `hf.batches` and `hf.batched_requests`: generate calls and the requests they carried).
A batch that fails otherwise (a processor or shape error) is retried one request at a time; a
request that still fails is that request's BAD_REQUEST, not the batch's, and the others are
answered; a single request out of memory is a SERVER error, which the engine retries.

`extra.max_pixels` (processors with dynamic resolution, e.g. Qwen2-VL's: at most this many pixels
per picture) and `extra.image_size` (any VLM: a picture's longest side is shrunk to this many pixels
before the processor) bound a picture's vision tokens; both default to the model's own processor.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from memegauge.models.hf_local import (LocalModel, chat_messages, encode_prompts, generate_rows,
                                      is_out_of_memory, load_local_model, picture_settings,
                                      release_cached_memory)
from memegauge.models.spec import ModelSpec
from memegauge.types import ChatRequest, ChatResult, ErrorClass, ImagePart, InputError, ModelCallError, Usage


log = logging.getLogger(__name__)
PIXELS_PER_TOKEN = 28 * 28  # a Qwen2-VL vision token: 14-pixel patches merged 2×2 (an ordering key only)


@dataclass
class _Waiting:
    request: ChatRequest
    answer: asyncio.Future
    length: float = 0.0  # the prompt's size, for grouping requests of like length


def prompt_length(request: ChatRequest) -> float:
    """An estimate of a request's prompt tokens, known before its pictures are processed: its text's
    characters and its pictures' pixels (read from the file header only) per vision token."""
    from PIL import Image  # lazy: Pillow only when a request is sized

    size = 0.0
    for message in request.messages:
        for part in message.content:
            if isinstance(part, ImagePart):
                try:
                    with Image.open(part.path) as image:
                        size += image.width * image.height / PIXELS_PER_TOKEN
                except OSError:  # unreadable: the processor says so when the batch is prepared
                    pass
            else:
                size += len(part.text)
    return size


class HFBackend:
    """`backend: hf` models of the registry."""

    def __init__(self, spec: ModelSpec, local: LocalModel | None = None,
                 max_prompt_tokens: int | None = None) -> None:
        """The model `spec` names, loaded; or `local`, a model already loaded (fine-tuning's dev
        evaluation, whose text prompts are cut to `max_prompt_tokens` as its training ones are)."""
        self.spec = spec
        extra = spec.extra
        self.local = local or load_local_model(
            spec.model, spec.adapter_folder, extra.get("device", "auto"), extra.get("dtype", "auto"),
            extra.get("processor"), picture_settings(extra.get("max_pixels"), extra.get("image_size"),
                                                     f"model {spec.name!r}"))
        self.max_prompt_tokens = max_prompt_tokens
        if spec.vision and not self.local.vision:  # the run would count pictures never seen
            raise InputError(f"{spec.model} holds a text-only model, but {spec.name!r} says `vision: true`",
                             f"model {spec.name!r}", "remove `vision: true` (it reads the meme text "
                             "and caption), or point `model` at a vision-language model folder")
        self.vision = self.local.vision and bool(spec.vision)
        default_batch = 8 if self.local.device.startswith("cuda") else 1
        self.batch_size = spec.serving.batch_size or default_batch
        self.fits = self.batch_size  # the largest batch not known to run out of memory
        self.counters = {"hf.batches": 0, "hf.batched_requests": 0, "hf.batches_split": 0}
        self.waiting: list[_Waiting] = []
        self.worker: asyncio.Task | None = None
        self.preparer = ThreadPoolExecutor(1, thread_name_prefix="hf-prepare")

    async def complete(self, request: ChatRequest) -> ChatResult:
        waiting = _Waiting(request, asyncio.get_running_loop().create_future(), prompt_length(request))
        self.waiting.append(waiting)
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._serve())
        started = time.monotonic()
        generated = await waiting.answer
        params = request.params
        return ChatResult(text=generated.text,
                          usage=Usage(prompt_tokens=generated.prompt_tokens,
                                      completion_tokens=generated.completion_tokens),
                          # not cut unless it ran to max_tokens (a model may also stop on an end
                          # token of its generation config that the tokenizer does not name)
                          finish_reason="stop" if generated.stopped or generated.completion_tokens
                          < params.max_tokens else "length",
                          served_model=str(self.spec.model), latency_s=time.monotonic() - started,
                          logprobs=generated.logprobs if request.output.logprobs else {})

    async def _serve(self) -> None:
        """Generate batches while requests wait, preparing the next batch (its pictures read and
        processed) while the current one generates; a request whose caller gave up is skipped."""
        ahead = self._prepare_next()
        while ahead is not None:
            batch, prepared = ahead
            rows = await prepared
            ahead = self._prepare_next()
            ready = [(w, row) for w, row in zip(batch, rows, strict=True) if not isinstance(row, BaseException)]
            for w, row in zip(batch, rows, strict=True):
                if isinstance(row, BaseException):  # this request's picture or prompt, not the batch
                    _settle(w.answer, error=ModelCallError(
                        ErrorClass.BAD_REQUEST, f"preparing the prompt failed: {type(row).__name__}: {row}"))
            if ready:
                await self._run([w for w, _ in ready], [row for _, row in ready])

    def _prepare_next(self) -> tuple[list[_Waiting], asyncio.Future] | None:
        self.waiting = [w for w in self.waiting if not w.answer.done()]
        if not self.waiting:
            return None
        batch = self._next_batch()
        prepared = asyncio.get_running_loop().run_in_executor(
            self.preparer, self._prepare, [w.request for w in batch])
        return batch, prepared

    def _next_batch(self) -> list[_Waiting]:
        """The oldest waiting request (served now, whatever its length) and, when it is greedy, the
        greedy requests of its max_tokens nearest its length, up to the batch size that fits."""
        first = self.waiting[0]
        params = first.request.params
        if params.temperature > 0:
            batch = [first]
        else:
            alike = [w for w in self.waiting if w.request.params.temperature == 0
                     and w.request.params.max_tokens == params.max_tokens]
            batch = sorted(alike, key=lambda w: abs(w.length - first.length))[:self.fits]  # stable: first stays
        for w in batch:
            self.waiting.remove(w)
        return batch

    def _prepare(self, requests: list[ChatRequest]) -> list[Any]:
        """In the preparing thread: each request rendered and encoded (pictures read from disk and
        processed), or the exception that stopped it."""
        rows: list[Any] = []
        for request in requests:
            try:
                messages, images = chat_messages(request.messages, self.vision, self.spec.system_prompt,
                                                 self.local.pictures.image_size)
                rows += encode_prompts(self.local, [(self.local.render(messages), images)],
                                       self.max_prompt_tokens)
            except Exception as exc:  # noqa: BLE001 — an unreadable picture, a processor error
                rows.append(exc)
        return rows

    async def _run(self, batch: list[_Waiting], rows: list[Any]) -> None:
        if len(batch) > self.fits:  # picked (or prepared) before a smaller size was found to fit
            for start in range(0, len(batch), self.fits):
                await self._run(batch[start:start + self.fits], rows[start:start + self.fits])
            return
        params = batch[0].request.params
        self.counters["hf.batches"] += 1
        self.counters["hf.batched_requests"] += len(batch)
        try:
            results = await asyncio.to_thread(generate_rows, self.local, rows, params.max_tokens,
                                              params.temperature, params.seed,
                                              any(w.request.output.logprobs for w in batch))
        except Exception as exc:  # noqa: BLE001 — out of memory, a shape or processor error
            await self._failed(batch, rows, exc)
            return
        for w, result in zip(batch, results, strict=True):
            _settle(w.answer, result=result)

    async def _failed(self, batch: list[_Waiting], rows: list[Any], exc: Exception) -> None:
        """Out of memory: the batch in halves, and the half remembered as the size that fits;
        another failure: each request alone (one of them may be the cause). A single request's
        failure is settled, never raised: an escaping error would end the worker and leave every
        waiting caller waiting forever."""
        memory = is_out_of_memory(exc)
        if memory:
            release_cached_memory()
        if len(batch) > 1:
            size = (len(batch) + 1) // 2 if memory else 1
            if memory:
                self._split(len(batch), size, exc)
            for start in range(0, len(batch), size):
                await self._run(batch[start:start + size], rows[start:start + size])
            return
        error = ErrorClass.SERVER if memory else ErrorClass.BAD_REQUEST  # memory may free up: retried
        _settle(batch[0].answer, error=ModelCallError(error, f"generation failed: {type(exc).__name__}: {exc}"))

    def _split(self, size: int, half: int, exc: Exception) -> None:
        self.counters["hf.batches_split"] += 1
        self.fits = min(self.fits, half)
        log.warning("%s: a batch of %d ran out of memory (%s); split in halves, batches of at most %d "
                    "from now on", self.spec.name, size, type(exc).__name__, self.fits)

    async def aclose(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
        self.preparer.shutdown(wait=False, cancel_futures=True)
        self.local = None


def _settle(future: asyncio.Future, result: Any = None, error: BaseException | None = None) -> None:
    if future.done():  # the caller timed out or was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
