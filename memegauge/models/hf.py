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
batch, in a worker thread. Greedy requests batch together; a sampled request (temperature > 0)
runs alone so that its seed decides its sample. A batch that fails (memory, a processor error) is
retried one request at a time; a request that still fails is that request's BAD_REQUEST, not the
batch's, and the others are answered.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memegauge.models.hf_local import chat_messages, generate, load_local_model
from memegauge.types import ChatRequest, ChatResult, ErrorClass, InputError, ModelCallError, Usage

if TYPE_CHECKING:
    from memegauge.config import ModelSpec


@dataclass
class _Waiting:
    request: ChatRequest
    answer: asyncio.Future


class HFBackend:
    """`backend: hf` models of the registry."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        extra = spec.extra
        self.local = load_local_model(spec.model, spec.adapter_folder,
                                      extra.get("device", "auto"), extra.get("dtype", "auto"),
                                      extra.get("processor"))
        if spec.vision and not self.local.vision:  # the run would count pictures never seen
            raise InputError(f"{spec.model} holds a text-only model, but {spec.name!r} says `vision: true`",
                             f"model {spec.name!r}", "remove `vision: true` (it reads the meme text "
                             "and caption), or point `model` at a vision-language model folder")
        self.vision = self.local.vision and bool(spec.vision)
        default_batch = 8 if self.local.device.startswith("cuda") else 1
        self.batch_size = int(extra.get("batch_size", default_batch))
        self.waiting: list[_Waiting] = []
        self.worker: asyncio.Task | None = None

    async def complete(self, request: ChatRequest) -> ChatResult:
        waiting = _Waiting(request, asyncio.get_running_loop().create_future())
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
                          served_model=str(self.spec.model), latency_s=time.monotonic() - started)

    async def _serve(self) -> None:
        """Generate batches while requests wait; a request whose caller gave up is skipped."""
        while True:
            self.waiting = [w for w in self.waiting if not w.answer.done()]
            if not self.waiting:
                return
            batch = self._next_batch()
            await self._run(batch)

    def _next_batch(self) -> list[_Waiting]:
        first = self.waiting[0]
        params = first.request.params
        if params.temperature > 0:
            batch = [first]
        else:
            batch = [w for w in self.waiting if w.request.params.temperature == 0
                     and w.request.params.max_tokens == params.max_tokens][:self.batch_size]
        for w in batch:
            self.waiting.remove(w)
        return batch

    async def _run(self, batch: list[_Waiting]) -> None:
        params = batch[0].request.params
        try:
            results = await asyncio.to_thread(self._generate, [w.request for w in batch], params)
        except Exception as exc:  # noqa: BLE001 — out of memory, a shape or processor error
            if len(batch) > 1:  # one request may be the cause, or the batch's size: each alone
                for one in batch:
                    await self._run([one])
                return
            # settled, never raised here: an escaping error would end the worker and leave every
            # waiting caller waiting forever
            _settle(batch[0].answer, error=ModelCallError(
                ErrorClass.BAD_REQUEST, f"generation failed: {type(exc).__name__}: {exc}"))
            return
        for w, result in zip(batch, results):
            _settle(w.answer, result=result)

    def _generate(self, requests: list[ChatRequest], params: Any) -> list[Any]:
        """In the worker thread: render each request (pictures read from disk), then one batch."""
        prompts = []
        for request in requests:
            messages, images = chat_messages(request.messages, self.vision, self.spec.system_prompt)
            prompts.append((self.local.render(messages), images))
        return generate(self.local, prompts, params.max_tokens, params.temperature, params.seed)

    async def aclose(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
        self.local = None


def _settle(future: asyncio.Future, result: Any = None, error: BaseException | None = None) -> None:
    if future.done():  # the caller timed out or was cancelled meanwhile
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
