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
where the GPU has it (the LoRA weights stay float32). `micro_batch_size` splits each step of
`batch_size` examples into forward passes whose gradients add up. Several GPUs: the same command
under `accelerate launch --num_processes N -m memegauge.cli ...` splits every step's examples over
the processes (Accelerate averages the gradients); the main process evaluates and saves.

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
    micro_batch_size: null      # e.g. 1: four forward passes per step (gradient accumulation)
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

import contextlib
import hashlib
import json
import math
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from memegauge.memeqa.dataset import Question, load_memes_for, load_questions, select_questions
from memegauge.memeqa.evaluate import (MAX_NEW_TOKENS, letters_of, presentations, qa_request,
                                      question_record)
from memegauge.memeqa.metrics import summarize
from memegauge.models.hf_local import (LocalModel, chat_messages, generate, load_local_model,
                                      pad_batch, require_torch)
from memegauge.types import ChatRequest, InputError, Meme

IGNORE = -100  # label of prompt tokens: no loss


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
    micro_batch_size: int | None = Field(
        default=None, ge=1, description="Examples per forward pass; gradients of the micro-batches "
        "add up to one step of batch_size (gradient accumulation). Default: batch_size.")
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
        fields = self.model_dump(mode="json", exclude={"device", "micro_batch_size"})
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
    messages, images = chat_messages(example.request.messages, local.vision)
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
    generated in batches, graded and summarised like `qa eval`."""
    local.model.eval()
    records = []
    for start in range(0, len(dev), batch_size):
        chunk = dev[start:start + batch_size]
        answers = generate(local, [prompt_of(local, e) for e in chunk], MAX_NEW_TOKENS,
                           max_prompt_tokens=max_length - MAX_NEW_TOKENS)
        records += [question_record(e.question, version, [a.text], [None], circular=False)
                    for e, a in zip(chunk, answers)]
    local.model.train()
    summary = summarize(records)
    return {k: summary[k] for k in ("accuracy", "macro", "micro", "parse_failure_rate")}


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


def finetune(config: FinetuneConfig, on_eval=None) -> dict[str, Any]:
    """Train (or resume) and return the final state: best step, best macro, dev history, and the
    loss of every step (`curve`)."""
    torch, _ = require_torch()
    from accelerate import Accelerator

    train_q = select_questions(load_questions(config.data, config.version, config.train_split),
                               limit=config.train_limit, seed=config.seed)
    dev_q = select_questions(load_questions(config.data, config.version, config.dev_split),
                             limit=config.dev_limit, seed=config.seed)
    memes = load_memes_for(train_q + dev_q, config.images, config.texts)
    train, dev = examples(train_q, memes, config.version), examples(dev_q, memes, config.version)
    accelerator = Accelerator(cpu=config.device == "cpu")
    local = load_local_model(config.model, device=str(accelerator.device), dtype=config.dtype)
    torch.manual_seed(config.seed)  # LoRA's initial weights: the same in every process
    model = with_lora(local.model, config.lora, config.lora_targets)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    state = _resume(config, model, optimizer, accelerator.device)
    state["vision"] = local.vision
    model, optimizer = accelerator.prepare(model, optimizer)
    local.model = model
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    checkpoints = set(eval_steps(steps_per_epoch, config.epochs, config.eval_every))
    model.train()
    for step in range(state["step"], steps_per_epoch * config.epochs):
        epoch, index = divmod(step, steps_per_epoch)
        rows = epoch_order(len(train), config.seed, epoch)[index * config.batch_size:
                                                           (index + 1) * config.batch_size]
        torch.manual_seed(config.seed * 1_000_003 + step)  # dropout: same masks after a resume
        loss = _train_step(local, accelerator, optimizer, [train[i] for i in rows], config)
        state["losses"].append(loss)
        state["curve"].append(loss)
        if step + 1 in checkpoints:
            _checkpoint(local, accelerator, optimizer, state, step + 1, steps_per_epoch, dev, config)
            if on_eval and accelerator.is_main_process:
                on_eval(state)
    return state


def _train_step(local: LocalModel, accelerator: Any, optimizer: Any, batch: list[Example],
                config: FinetuneConfig) -> float:
    """One optimizer step over `batch`: this process's share of it (every n-th example under
    `accelerate launch` with n processes), in micro-batches whose gradients add up (each loss
    weighted by its share of the examples); returns the batch's loss averaged over processes."""
    import torch

    mine = batch[accelerator.process_index::accelerator.num_processes]
    size = config.micro_batch_size or config.batch_size
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
        scores = dev_scores(local, dev, config.version, config.max_length, config.batch_size)
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
