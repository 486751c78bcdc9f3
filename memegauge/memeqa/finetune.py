"""`memegauge qa finetune -c CONFIG` (paper §4.1): LoRA on every linear module of a local model's
language model with the paper's hyper-parameters (r=8, α=8, dropout 0.1, lr 1e-5, at most 3 epochs,
batch 4), evaluated on the dev split every 20% of an epoch; the best checkpoint (dev macro accuracy)
is kept.

Training pairs are the requests `qa eval` sends, rendered by the same code as the `hf` backend
(`models/hf_local.py`), with the gold letters as the answer ("B", "ACD", "N"); the loss covers the
answer only. A vision-language model (Qwen2-VL, LLaVA, any `AutoModelForImageTextToText` folder)
gets the meme picture in every example through its own processor and chat template, and its vision
tower and projector stay frozen; a text-only causal LM reads the meme text instead.

Devices: `device: auto` takes the GPU when there is one; `dtype: auto` loads the base in bfloat16
where the GPU has it (the LoRA weights stay float32). Memory: `micro_batch_size` splits each step of
`batch_size` examples into forward passes whose gradients add up (`auto`, the default in one
process: the largest that fits, found by halving at each out-of-memory and redoing the step,
recorded in the run); `gradient_checkpointing` recomputes activations in the backward pass
(default on above 1 B parameters); `max_pixels` / `image_size` bound a picture's vision tokens (as
for the `hf` backend; default the model's own processor). The settings in force are logged and
stored with the run (`settings`). Dev evaluation goes through the `hf` backend's batched path, the
one `qa eval` uses (requests grouped by length, pictures prepared ahead, a batch out of memory
split in halves). Several GPUs: the same command under
`accelerate launch --num_processes N -m memegauge.cli ...` splits every step's examples over the
processes (Accelerate averages the gradients); the main process evaluates and saves.

Output folder: ``best/`` (LoRA adapter of the best dev point; name it as `adapter:` of a
`backend: hf` model), ``last/`` (adapter + optimizer + state at the latest dev point), and
``dev_scores.json`` (every dev point). Resumable: rerun the same command after a kill and it goes on
from ``last/``; the data order is a seeded permutation per epoch and every step reseeds dropout, so
a resumed run trains exactly like an uninterrupted one. Requires the `train` extra.

Config (YAML; relative paths resolve from the file)::

    model: models/base          # a local Hugging Face model folder (nothing is downloaded)
    data: data/memeqa           # official layout
    images: data/semeval        # PNGs + memes.jsonl (texts)
    version: none-minus
    out: runs/ft
    epochs: 3                   # paper: at most 3
    batch_size: 4
    micro_batch_size: null      # e.g. 1: four forward passes per step; null/auto: the largest that fits
    gradient_checkpointing: null  # true/false; null: on above 1 B parameters
    max_pixels: null            # e.g. 401408: at most this many pixels a picture (Qwen2-VL family)
    image_size: null            # e.g. 672: a picture's longest side, pixels (any VLM)
    eval_batch_size: 16         # dev questions generated together
    lr: 1.0e-5
    lora: {r: 8, alpha: 8, dropout: 0.1}
    lora_targets: all-linear    # the paper: all linear modules (vision tower too); or language-model
    eval_every: 0.2             # fraction of an epoch
    train_limit: null           # optional, seeded sample as in `qa eval --limit`
    dev_limit: null
    device: auto
    dtype: auto
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from memegauge.memeqa.dataset import Question, load_memes_for, load_questions, select_questions
from memegauge.memeqa.evaluate import (MAX_NEW_TOKENS, letters_of, presentations, qa_request,
                                      question_record)
from memegauge.memeqa.metrics import summarize
from memegauge.models.hf_local import (LocalModel, PictureSettings, chat_messages, is_out_of_memory,
                                      load_local_model, pad_batch, processor_max_pixels,
                                      release_cached_memory, require_torch)
from memegauge.types import ChatRequest, InputError, Meme, ModelCallError

IGNORE = -100  # label of prompt tokens: no loss
CHECKPOINTING_ABOVE = 1_000_000_000  # parameters: gradient checkpointing is on by default above this
log = logging.getLogger(__name__)


class LoraSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=8, ge=1)
    alpha: int = Field(default=8, ge=1)
    dropout: float = Field(default=0.1, ge=0, lt=1)


class FinetuneConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Path = Field(description="Local Hugging Face model folder.")
    data: Path = Field(description="MemeQA folder (official layout).")
    images: Path = Field(description="Meme images folder (+ memes.jsonl).")
    texts: Path | None = Field(default=None, description="{image, text} JSONL if not in images.")
    version: str = Field(default="none-minus", description="none-minus or none-plus.")
    train_split: str = Field(default="train")
    dev_split: str = Field(default="dev")
    out: Path = Field(description="Output folder (adapter, checkpoints, dev scores).")
    epochs: int = Field(default=3, ge=1, description="Epochs (the paper trains at most 3).")
    batch_size: int = Field(default=4, ge=1, description="Examples per optimizer step (paper: 4).")
    micro_batch_size: Annotated[int, Field(ge=1)] | Literal["auto"] | None = Field(
        default=None, description="Examples per forward pass; gradients of the micro-batches "
        "add up to one step of batch_size (gradient accumulation). `auto`: the largest that fits, "
        "from batch_size down, halved (and the step redone) whenever a step runs out of memory; "
        "recorded in the run. Default: auto in one process, batch_size under several.")
    gradient_checkpointing: bool | None = Field(
        default=None, description="Recompute activations in the backward pass instead of keeping "
        "them: less memory, more compute. Default: on for models above 1 B parameters.")
    max_pixels: int | None = Field(default=None, ge=28, description="VLM: at most this many pixels a "
                                   "picture (dynamic-resolution processors, e.g. Qwen2-VL's). Default: "
                                   "the model's processor.")
    image_size: int | None = Field(default=None, ge=28, description="VLM: a picture's longest side is "
                                   "shrunk to this many pixels before the processor. Default: as is.")
    eval_batch_size: int = Field(default=16, ge=1, description="Dev questions generated together "
                                 "(halved by itself when out of memory).")
    lr: float = Field(default=1e-5, gt=0)
    lora: LoraSettings = Field(default_factory=LoraSettings)
    lora_targets: Literal["all-linear", "language-model"] = Field(
        default="all-linear", description="Where LoRA goes: all-linear (the paper's \"all the linear modules\"; "
        "a VLM's vision tower included, the output head excluded, as PEFT's all-linear does) or "
        "language-model (the language model's linears only).")
    eval_every: float = Field(default=0.2, gt=0, le=1, description="Dev evaluation period (epochs).")
    train_limit: int | None = Field(default=None, ge=1)
    dev_limit: int | None = Field(default=None, ge=1)
    max_length: int = Field(default=1024, ge=16, description="Tokens per example (prompt cut left).")
    seed: int = 0
    device: str = Field(default="auto", description="auto (GPU when there is one), cpu, cuda.")
    dtype: str = Field(default="auto", description="Weights of the base model: auto (bfloat16 on a "
                       "GPU that has it, else float32), float32, bfloat16, float16.")

    @field_validator("model", "data", "images", "texts", "out", mode="after")
    @classmethod
    def _relative_to_config(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        base = (info.context or {}).get("base_dir")
        return (Path(base) / value).resolve() if value and base and not value.is_absolute() else value

    def digest(self) -> str:
        """What decides the training trajectory; a checkpoint of another config is not resumed."""
        fields = self.model_dump(mode="json", exclude={"device", "micro_batch_size", "eval_batch_size",
                                                       "gradient_checkpointing"})
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Example:
    question: Question
    request: ChatRequest  # the request `qa eval` sends for this question (first presentation)
    target: str  # gold letters


def examples(questions: list[Question], memes: dict[str, Meme], version: str) -> list[Example]:
    return [Example(q, qa_request(q, presentations(q)[0], version, "finetune", memes[q.img]),
                    letters_of(q.gold)) for q in questions]


def prompt_of(local: LocalModel, example: Example) -> tuple[str, list[Any]]:
    """(rendered prompt, pictures) exactly as the `hf` backend renders this question in `qa eval`."""
    messages, images = chat_messages(example.request.messages, local.vision,
                                     image_size=local.pictures.image_size)
    return local.render(messages), images


def encode(local: LocalModel, example: Example, max_length: int) -> tuple[dict[str, Any], list[int]]:
    """(one row of model inputs, labels): the prompt (a text prompt cut from the left to fit
    `max_length`; a VLM prompt whole, its vision tokens included) then the answer and EOS; the
    labels mask the prompt (-100) so that the loss covers the answer only."""
    import torch

    prompt, images = prompt_of(local, example)
    row = local.encode_prompt(prompt, images)
    answer = local.tokenizer(example.target, add_special_tokens=False)["input_ids"] + \
        [local.tokenizer.eos_token_id]
    if not local.vision:
        row = {k: v[:, -max(1, max_length - len(answer)):] for k, v in row.items()}
    width = row["input_ids"].shape[1]
    tail = torch.tensor([answer], dtype=row["input_ids"].dtype)
    for key, value in list(row.items()):
        if value.shape == (1, width):  # one value per token: the answer's are 1 (mask) or 0 (type)
            fill = tail if key == "input_ids" else torch.full_like(tail, 1 if key == "attention_mask" else 0)
            row[key] = torch.cat([value, fill.to(value.dtype)], dim=1)
    return row, [IGNORE] * width + answer


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([seed, epoch]).permutation(n)


def eval_steps(steps_per_epoch: int, epochs: int, every: float) -> list[int]:
    """Steps after which the dev split is evaluated: every `every` of an epoch, and the last."""
    period = steps_per_epoch * every
    points = {min(steps_per_epoch * epochs, math.ceil(k * period))
              for k in range(1, int(round(epochs / every)) + 1)}
    return sorted(p for p in points if p > 0)


def dev_scores(local: LocalModel, dev: list[Example], version: str, max_length: int,
               batch_size: int) -> dict[str, Any]:
    """Greedy ≤10-token answers on the dev examples (text prompts cut like the training ones),
    generated through the `hf` backend's batched path (as in `qa eval`), graded and summarised like
    `qa eval`. A question whose generation failed is recorded as failed, never scored."""
    local.model.eval()
    try:
        outcomes = asyncio.run(_answers(local, [e.request for e in dev], batch_size,
                                        max_length - MAX_NEW_TOKENS))
    finally:
        local.model.train()
    records = [question_record(e.question, version, [text], [error], circular=False)
               for e, (text, error) in zip(dev, outcomes, strict=True)]
    summary = summarize(records)
    return {k: summary[k] for k in ("accuracy", "macro", "micro", "parse_failure_rate")}


async def _answers(local: LocalModel, requests: list[ChatRequest], batch_size: int,
                   max_prompt_tokens: int) -> list[tuple[str | None, str | None]]:
    """(answer text, None) or (None, error class) for each request, through an `hf` backend around
    the model being trained."""
    from memegauge.models.spec import ModelSpec
    from memegauge.models.hf import HFBackend

    spec = ModelSpec(name="dev", backend="hf", model="(being fine-tuned)", vision=local.vision,
                     max_concurrency=len(requests) or 1, extra={"batch_size": batch_size})
    backend = HFBackend(spec, local=local, max_prompt_tokens=max_prompt_tokens)

    async def one(request: ChatRequest) -> tuple[str | None, str | None]:
        try:
            return (await backend.complete(request)).text, None
        except ModelCallError as exc:
            return None, exc.error_class.value

    try:
        return list(await asyncio.gather(*(one(r) for r in requests)))
    finally:
        await backend.aclose()


def language_model_linears(model: Any) -> str:
    """A PEFT `target_modules` pattern for every linear layer of the language model: for a VLM the
    vision tower and its projector are left as they are (the paper adapts the language model);
    for a causal LM every linear layer but the output head."""
    import torch

    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    prefix = next((name for name, module in model.named_modules() if module is decoder), "")
    names = sorted({name.rsplit(".", 1)[-1] for name, module in decoder.named_modules()
                    if isinstance(module, torch.nn.Linear)})
    scope = re.escape(prefix + ".") if prefix else ""
    return rf"^{scope}.*\.({'|'.join(map(re.escape, names))})$"


def with_lora(model: Any, lora: LoraSettings, targets: str = "all-linear") -> Any:
    """The model with a fresh LoRA adapter (`lora`'s r, α, dropout) on every linear layer but the
    output head (`all-linear`, PEFT's own rule) or on its language model's linears only."""
    from peft import LoraConfig, get_peft_model

    modules = "all-linear" if targets == "all-linear" else language_model_linears(model)
    return get_peft_model(model, LoraConfig(
        r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
        target_modules=modules, task_type="CAUSAL_LM"))


def _save_atomic(folder: Path, write) -> None:
    """Write into `folder.tmp`, then swap it in; `restore_interrupted` undoes a kill mid-swap."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    write(tmp)
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def restore_interrupted(folder: Path) -> None:
    """A kill between `_save_atomic`'s two renames leaves only `folder.old` (the previous complete
    save): put it back, so a resume continues from it rather than from scratch."""
    old = folder.with_name(folder.name + ".old")
    if not folder.exists() and old.is_dir():
        old.rename(folder)


def finetune(config: FinetuneConfig, on_eval=None, on_start=None) -> dict[str, Any]:
    """Train (or resume) and return the final state: best step, best macro, dev history, the loss
    of every step (`curve`) and the memory settings in force (`settings`, also given to
    `on_start` before the first step)."""
    torch, _ = require_torch()
    from accelerate import Accelerator

    train_q = select_questions(load_questions(config.data, config.version, config.train_split),
                               limit=config.train_limit, seed=config.seed)
    dev_q = select_questions(load_questions(config.data, config.version, config.dev_split),
                             limit=config.dev_limit, seed=config.seed)
    memes = load_memes_for(train_q + dev_q, config.images, config.texts)
    train, dev = examples(train_q, memes, config.version), examples(dev_q, memes, config.version)
    accelerator = Accelerator(cpu=config.device == "cpu")
    if config.micro_batch_size == "auto" and accelerator.num_processes > 1:
        raise InputError("micro_batch_size: auto needs one process (an out-of-memory in one process "
                         "would leave the others waiting for its gradients)", "micro_batch_size",
                         "give a number, e.g. the one a one-GPU run recorded in its settings")
    local = load_local_model(config.model, device=str(accelerator.device), dtype=config.dtype,
                             pictures=PictureSettings(config.max_pixels, config.image_size))
    settings = memory_settings(local, config, accelerator.num_processes)
    if settings["gradient_checkpointing"]:  # before LoRA wraps it; not reentrant: no input grads needed
        local.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    torch.manual_seed(config.seed)  # LoRA's initial weights: the same in every process
    model = with_lora(local.model, config.lora, config.lora_targets)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    state = _resume(config, model, optimizer, accelerator.device)
    state["vision"] = local.vision
    found = state.get("settings") or {}
    if settings["micro_batch_auto"] and found.get("micro_batch_auto"):  # a resumed run keeps the size it found
        settings["micro_batch_size"] = found["micro_batch_size"]
    state["settings"] = settings
    log.info("fine-tuning: %s", describe_settings(settings))
    if on_start and accelerator.is_main_process:
        on_start(settings)
    model, optimizer = accelerator.prepare(model, optimizer)
    local.model = model
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    checkpoints = set(eval_steps(steps_per_epoch, config.epochs, config.eval_every))
    model.train()
    for step in range(state["step"], steps_per_epoch * config.epochs):
        epoch, index = divmod(step, steps_per_epoch)
        rows = epoch_order(len(train), config.seed, epoch)[index * config.batch_size:
                                                           (index + 1) * config.batch_size]
        loss = _step_that_fits(local, accelerator, optimizer, [train[i] for i in rows], config, step,
                               state["settings"])
        state["losses"].append(loss)
        state["curve"].append(loss)
        if step + 1 in checkpoints:
            _checkpoint(local, accelerator, optimizer, state, step + 1, steps_per_epoch, dev, config)
            if on_eval and accelerator.is_main_process:
                on_eval(state)
    return state


def memory_settings(local: LocalModel, config: FinetuneConfig, processes: int = 1) -> dict[str, Any]:
    """The memory settings in force: the config's, with its defaults decided for this model (the
    recorded figures of a run)."""
    parameters = sum(p.numel() for p in local.model.parameters())
    checkpointing = config.gradient_checkpointing
    share = math.ceil(config.batch_size / processes)
    micro = config.micro_batch_size
    return {"parameters": parameters,
            "gradient_checkpointing": parameters > CHECKPOINTING_ABOVE if checkpointing is None else checkpointing,
            "gradient_checkpointing_default": checkpointing is None,
            "micro_batch_size": share if micro in (None, "auto") else min(micro, share),
            # by default the paper's batch runs as one pass where it fits, and fits where any does
            "micro_batch_auto": micro == "auto" or (micro is None and processes == 1),
            "max_pixels": processor_max_pixels(local.processor) if local.vision else None,
            "image_size": config.image_size}


def describe_settings(settings: dict[str, Any]) -> str:
    """One line: what the run trains with, and which of it was decided by default."""
    checkpointing = "on" if settings["gradient_checkpointing"] else "off"
    why = f" (default: {'above' if settings['gradient_checkpointing'] else 'at most'} 1 B parameters)" \
        if settings["gradient_checkpointing_default"] else ""
    micro = f"micro-batch {settings['micro_batch_size']}" \
        f"{' (auto: halved at each out-of-memory)' if settings['micro_batch_auto'] else ''}"
    pictures = f", max_pixels {settings['max_pixels']}" if settings["max_pixels"] else ""
    pictures += f", image_size {settings['image_size']}" if settings["image_size"] else ""
    return (f"{settings['parameters'] / 1e9:.2f} B parameters: gradient checkpointing {checkpointing}{why}, "
            f"{micro}{pictures}")


def _step_that_fits(local: LocalModel, accelerator: Any, optimizer: Any, batch: list[Example],
                    config: FinetuneConfig, step: int, settings: dict[str, Any]) -> float:
    """One optimizer step (dropout reseeded by step, so a resumed or redone step trains alike). Out
    of memory with `micro_batch_size: auto`: the step is redone with half the micro-batch, which is
    kept for the later steps; otherwise (or at micro-batch 1) one message says what to change."""
    import torch

    while True:
        torch.manual_seed(config.seed * 1_000_003 + step)  # dropout: same masks after a resume
        try:
            return _train_step(local, accelerator, optimizer, batch, config, settings["micro_batch_size"])
        except Exception as exc:  # noqa: BLE001 — only out-of-memory is handled, the rest re-raised
            if not is_out_of_memory(exc):
                raise
            failure = f"{type(exc).__name__}: {str(exc)[:200]}"
        # outside the except block, so the failed step's tensors are freed with its traceback
        optimizer.zero_grad(set_to_none=True)
        release_cached_memory()
        size = settings["micro_batch_size"]
        if not settings["micro_batch_auto"] or size == 1:
            raise InputError(f"fine-tuning ran out of memory at micro-batch {size} (step {step + 1}): {failure}",
                             "micro_batch_size", "set micro_batch_size: auto (or a smaller number), "
                             "gradient_checkpointing: true, or a smaller max_pixels / image_size / max_length")
        settings["micro_batch_size"] = size // 2
        log.warning("step %d ran out of memory at micro-batch %d; redone at %d, kept from now on",
                    step + 1, size, size // 2)


def _train_step(local: LocalModel, accelerator: Any, optimizer: Any, batch: list[Example],
                config: FinetuneConfig, size: int) -> float:
    """One optimizer step over `batch`: this process's share of it (every n-th example under
    `accelerate launch` with n processes), in micro-batches of `size` whose gradients add up (each loss
    weighted by its share of the examples); returns the batch's loss averaged over processes."""
    import torch

    mine = batch[accelerator.process_index::accelerator.num_processes]
    chunks = [mine[i:i + size] for i in range(0, len(mine), size)]
    total = 0.0
    for n, chunk in enumerate(chunks):
        encoded = [encode(local, e, config.max_length) for e in chunk]
        inputs = pad_batch(torch, [r for r, _ in encoded], local.pad_id, "right",
                           labels=[y for _, y in encoded])
        inputs = {k: v.to(accelerator.device) for k, v in inputs.items()}
        weight = len(chunk) / max(1, len(mine))
        sync = accelerator.no_sync(local.model) if n < len(chunks) - 1 else contextlib.nullcontext()
        with sync, accelerator.autocast():
            loss = local.model(**inputs).loss * weight
        accelerator.backward(loss)
        total += float(loss.detach())
    optimizer.step()
    optimizer.zero_grad()
    return float(accelerator.reduce(torch.tensor(total, device=accelerator.device), "mean"))


def _resume(config: FinetuneConfig, model: Any, optimizer: Any, device: Any) -> dict[str, Any]:
    """The saved state of an interrupted run in `out/last` (its adapter and optimizer loaded), or a
    fresh state; a checkpoint of another config is refused."""
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    out = config.out
    state = {"digest": config.digest(), "step": 0, "best_step": None, "best_macro": None,
             "history": [], "losses": [], "curve": []}
    last = out / "last"
    for folder in (last, out / "best"):
        restore_interrupted(folder)
    if not (last / "state.json").is_file():
        return state
    saved = json.loads((last / "state.json").read_text())
    if saved["digest"] != state["digest"]:
        raise InputError(f"{out} holds a fine-tuning run with another config", "out",
                         "use a new out folder, or the original config to resume")
    set_peft_model_state_dict(model, load_file(str(last / "adapter" / "adapter_model.safetensors")))
    optimizer.load_state_dict(torch.load(last / "optimizer.pt", map_location=device))
    return {**state, **saved}


def _checkpoint(local: LocalModel, accelerator: Any, optimizer: Any, state: dict[str, Any], step: int,
                steps_per_epoch: int, dev: list[Example], config: FinetuneConfig) -> None:
    """Dev evaluation and saves, by the main process; the others wait for it."""
    if accelerator.is_main_process:
        _evaluate_and_save(local, accelerator, optimizer, state, step, steps_per_epoch, dev, config)
    else:
        state.update(step=step, losses=[])
    accelerator.wait_for_everyone()


def _evaluate_and_save(local: LocalModel, accelerator: Any, optimizer: Any, state: dict[str, Any],
                       step: int, steps_per_epoch: int, dev: list[Example],
                       config: FinetuneConfig) -> None:
    import torch

    model = local.model
    local.model = accelerator.unwrap_model(model)
    try:
        scores = dev_scores(local, dev, config.version, config.max_length, config.eval_batch_size)
    finally:
        local.model = model
    point = {"step": step, "epoch": step / steps_per_epoch,
             "train_loss": float(np.mean(state["losses"])), **scores}
    state.update(step=step, losses=[], history=state["history"] + [point])
    adapter = accelerator.unwrap_model(model)
    if scores["macro"] is not None and (state["best_macro"] is None or scores["macro"] > state["best_macro"]):
        state.update(best_step=step, best_macro=scores["macro"])
        _save_atomic(config.out / "best", lambda d: adapter.save_pretrained(d))
    config.out.mkdir(parents=True, exist_ok=True)
    (config.out / "dev_scores.json").write_text(json.dumps(state["history"], indent=1))

    def write_last(folder: Path) -> None:
        adapter.save_pretrained(folder / "adapter")
        torch.save(optimizer.state_dict(), folder / "optimizer.pt")
        (folder / "state.json").write_text(json.dumps(state))

    _save_atomic(config.out / "last", write_last)
