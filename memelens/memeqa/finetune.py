"""`memelens qa finetune -c CONFIG` (paper §4.1): LoRA on every linear module of a local causal LM
with the paper's hyper-parameters (r=8, α=8, dropout 0.1, lr 1e-5, at most 3 epochs, batch 4),
evaluated on the dev split every 20% of an epoch; the best checkpoint (dev macro accuracy) is kept.

Training pairs are the evaluation prompts (the meme as text, as a text-only model gets it in
`qa eval`) with the gold letters as the answer ("B", "ACD", "N"); the loss covers the answer only.

Output folder: ``best/`` (LoRA adapter of the best dev point; load it with `backend: hf`,
`extra.adapter`), ``last/`` (adapter + optimizer + state at the latest dev point), and
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
    lr: 1.0e-5
    lora: {r: 8, alpha: 8, dropout: 0.1}
    eval_every: 0.2             # fraction of an epoch
    train_limit: null           # optional, seeded sample as in `qa eval --limit`
    dev_limit: null
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from memelens.memeqa.dataset import Question, load_memes_for, load_questions, select_questions
from memelens.memeqa.evaluate import (MAX_NEW_TOKENS, letters_of, presentations, qa_prompt,
                                      question_record)
from memelens.memeqa.metrics import summarize
from memelens.models.hf import generate_text, load_model, render_chat, require_torch
from memelens.types import InputError, Meme

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
    batch_size: int = Field(default=4, ge=1)
    lr: float = Field(default=1e-5, gt=0)
    lora: LoraSettings = Field(default_factory=LoraSettings)
    eval_every: float = Field(default=0.2, gt=0, le=1, description="Dev evaluation period (epochs).")
    train_limit: int | None = Field(default=None, ge=1)
    dev_limit: int | None = Field(default=None, ge=1)
    max_length: int = Field(default=1024, ge=16, description="Tokens per example (prompt cut left).")
    seed: int = 0
    device: str = "auto"
    dtype: str | None = None

    @field_validator("model", "data", "images", "texts", "out", mode="after")
    @classmethod
    def _relative_to_config(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        base = (info.context or {}).get("base_dir")
        return (Path(base) / value).resolve() if value and base and not value.is_absolute() else value

    def digest(self) -> str:
        """What decides the training trajectory; a checkpoint of another config is not resumed."""
        fields = self.model_dump(mode="json", exclude={"device"})
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Example:
    question: Question
    prompt: str  # the user turn, as a text-only model receives it in `qa eval`
    target: str  # gold letters


def examples(questions: list[Question], memes: dict[str, Meme], version: str) -> list[Example]:
    out = []
    for q in questions:
        shown = presentations(q)[0]
        text = memes[q.img].as_text() + "\n" + qa_prompt(q, shown.options, version)
        out.append(Example(q, text, letters_of(q.gold)))
    return out


def encode(tokenizer: Any, example: Example, max_length: int) -> tuple[list[int], list[int]]:
    """(input ids, labels): the rendered prompt (cut from the left) then the answer and EOS."""
    prompt = tokenizer(render_chat(tokenizer, [{"role": "user", "content": example.prompt}]),
                       add_special_tokens=False)["input_ids"]
    answer = tokenizer(example.target, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    prompt = prompt[-max(1, max_length - len(answer)):]
    return prompt + answer, [IGNORE] * len(prompt) + answer


def batch_tensors(torch: Any, encoded: list[tuple[list[int], list[int]]], pad_id: int) -> dict[str, Any]:
    width = max(len(ids) for ids, _ in encoded)
    ids = [x + [pad_id] * (width - len(x)) for x, _ in encoded]
    labels = [y + [IGNORE] * (width - len(y)) for _, y in encoded]
    mask = [[1] * len(x) + [0] * (width - len(x)) for x, _ in encoded]
    return {"input_ids": torch.tensor(ids), "labels": torch.tensor(labels),
            "attention_mask": torch.tensor(mask)}


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    return np.random.default_rng([seed, epoch]).permutation(n)


def eval_steps(steps_per_epoch: int, epochs: int, every: float) -> list[int]:
    """Steps after which the dev split is evaluated: every `every` of an epoch, and the last."""
    period = steps_per_epoch * every
    points = {min(steps_per_epoch * epochs, math.ceil(k * period))
              for k in range(1, int(round(epochs / every)) + 1)}
    return sorted(p for p in points if p > 0)


def dev_scores(model: Any, tokenizer: Any, device: str, dev: list[Example], version: str,
               max_length: int) -> dict[str, Any]:
    """Greedy ≤10-token answers on the dev examples (prompts cut like the training ones), graded
    and summarised like `qa eval`."""
    model.eval()
    records = []
    for example in dev:
        prompt = render_chat(tokenizer, [{"role": "user", "content": example.prompt}])
        text, _, _ = generate_text(model, tokenizer, device, prompt, max_new_tokens=MAX_NEW_TOKENS,
                                   max_prompt_tokens=max_length - MAX_NEW_TOKENS)
        records.append(question_record(example.question, version, [text], [None], circular=False))
    model.train()
    summary = summarize(records)
    return {k: summary[k] for k in ("accuracy", "macro", "micro", "parse_failure_rate")}


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
    """Train (or resume) and return the final state: best step, best macro, dev history."""
    torch, _ = require_torch()
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from safetensors.torch import load_file

    train_q = select_questions(load_questions(config.data, config.version, config.train_split),
                               limit=config.train_limit, seed=config.seed)
    dev_q = select_questions(load_questions(config.data, config.version, config.dev_split),
                             limit=config.dev_limit, seed=config.seed)
    memes = load_memes_for(train_q + dev_q, config.images, config.texts)
    train, dev = examples(train_q, memes, config.version), examples(dev_q, memes, config.version)
    base, tokenizer, device = load_model(config.model, device=config.device, dtype=config.dtype)
    torch.manual_seed(config.seed)  # LoRA's initial weights
    model = get_peft_model(base, LoraConfig(r=config.lora.r, lora_alpha=config.lora.alpha,
                                            lora_dropout=config.lora.dropout,
                                            target_modules="all-linear", task_type="CAUSAL_LM"))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    out = config.out
    state = {"digest": config.digest(), "step": 0, "best_step": None, "best_macro": None,
             "history": [], "losses": []}
    last = out / "last"
    for folder in (last, out / "best"):
        restore_interrupted(folder)
    if (last / "state.json").is_file():
        saved = json.loads((last / "state.json").read_text())
        if saved["digest"] != state["digest"]:
            raise InputError(f"{out} holds a fine-tuning run with another config", "out",
                             "use a new out folder, or the original config to resume")
        state = saved
        set_peft_model_state_dict(model, load_file(str(last / "adapter" / "adapter_model.safetensors")))
        optimizer.load_state_dict(torch.load(last / "optimizer.pt", map_location=device))
    encoded = [encode(tokenizer, e, config.max_length) for e in train]
    steps_per_epoch = math.ceil(len(encoded) / config.batch_size)
    total = steps_per_epoch * config.epochs
    checkpoints = set(eval_steps(steps_per_epoch, config.epochs, config.eval_every))
    model.train()
    for step in range(state["step"], total):
        epoch, index = divmod(step, steps_per_epoch)
        order = epoch_order(len(encoded), config.seed, epoch)
        rows = order[index * config.batch_size:(index + 1) * config.batch_size]
        torch.manual_seed(config.seed * 1_000_003 + step)  # dropout: same masks after a resume
        batch = {k: v.to(device) for k, v in
                 batch_tensors(torch, [encoded[i] for i in rows], tokenizer.pad_token_id).items()}
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        state["losses"].append(float(loss.detach()))
        if step + 1 in checkpoints:
            _checkpoint(model, optimizer, state, step + 1, steps_per_epoch, tokenizer, device, dev,
                        config, torch)
            if on_eval:
                on_eval(state)
    return state


def _checkpoint(model, optimizer, state, step, steps_per_epoch, tokenizer, device, dev, config,
                torch) -> None:
    scores = dev_scores(model, tokenizer, device, dev, config.version, config.max_length)
    losses = state["losses"]
    point = {"step": step, "epoch": step / steps_per_epoch, "train_loss": float(np.mean(losses)),
             **scores}
    state.update(step=step, losses=[], history=state["history"] + [point])
    if scores["macro"] is not None and (state["best_macro"] is None or scores["macro"] > state["best_macro"]):
        state.update(best_step=step, best_macro=scores["macro"])
        _save_atomic(config.out / "best", lambda d: model.save_pretrained(d))
    config.out.mkdir(parents=True, exist_ok=True)
    (config.out / "dev_scores.json").write_text(json.dumps(state["history"], indent=1))

    def write_last(folder: Path) -> None:
        model.save_pretrained(folder / "adapter")
        torch.save(optimizer.state_dict(), folder / "optimizer.pt")
        (folder / "state.json").write_text(json.dumps(state))

    _save_atomic(config.out / "last", write_last)
