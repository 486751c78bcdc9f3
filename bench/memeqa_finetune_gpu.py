"""MemeQA LoRA fine-tuning on a GPU with a locally built model (no hub access needed).

Builds an untrained Llama-architecture model (character tokenizer, ~25M parameters by default),
turns one MemeQA split into training data (its memes split 80/20 into train/dev, so no meme is in
both), runs `memeqa.finetune` with the paper's hyper-parameters, and prints every dev point. Then it
times a few training steps on the GPU and on the CPU side by side and prints the ratio.

    python bench/memeqa_finetune_gpu.py --data DIR --images DIR --out DIR [--epochs 1] [--lr 1e-5]

An untrained model learns the answer format, not memes: the figures show the machinery at GPU
scale (throughput, checkpoints, dev evaluation), not meme understanding.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from memelens.memeqa.dataset import VERSIONS, load_questions, write_split
from memelens.memeqa.finetune import (FinetuneConfig, batch_tensors, encode, examples, finetune)
from memelens.memeqa.split import assign_memes
from memelens.memeqa.tiny import build_tiny_model


def make_splits(data: Path, split: str, out: Path, seed: int) -> Path:
    """train/dev from one split's memes (80/20), both versions, official layout."""
    for version in VERSIONS:
        questions = load_questions(data, version, split)
        assignment = assign_memes([q.img for q in questions], seed, (0.8, 0.2, 0.0))
        for name in ("train", "dev"):
            write_split([q for q in questions if assignment[q.img] == name], out, version, name)
    return out


def time_steps(config: FinetuneConfig, device: str, steps: int) -> float:
    """Seconds per training step (after one warm-up step) on `device`."""
    import torch
    from peft import LoraConfig, get_peft_model

    from memelens.memeqa.dataset import load_memes_for
    from memelens.models.hf import load_model

    questions = load_questions(config.data, config.version, "train")[:config.batch_size * (steps + 1)]
    memes = load_memes_for(questions, config.images, config.texts)
    base, tokenizer, device = load_model(config.model, device=device)
    model = get_peft_model(base, LoraConfig(r=8, lora_alpha=8, lora_dropout=0.1,
                                            target_modules="all-linear", task_type="CAUSAL_LM"))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    encoded = [encode(tokenizer, e, config.max_length) for e in examples(questions, memes, config.version)]
    model.train()
    started = None
    for step in range(steps + 1):
        if step == 1:
            if device == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        rows = encoded[step * config.batch_size:(step + 1) * config.batch_size]
        batch = {k: v.to(device) for k, v in batch_tensors(torch, rows, tokenizer.pad_token_id).items()}
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--images", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", default="dev", help="the split turned into train/dev data")
    parser.add_argument("--version", default="none-minus")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--dev-limit", type=int, default=110)
    parser.add_argument("--timing-steps", type=int, default=5)
    args = parser.parse_args()
    import torch

    base = build_tiny_model(args.out / "base", hidden=args.hidden, layers=args.layers,
                            heads=max(1, args.hidden // 64))
    from transformers import AutoModelForCausalLM

    params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(base).parameters())
    data = make_splits(args.data, args.split, args.out / "data", seed=0)
    config = FinetuneConfig(model=base, data=data, images=args.images, version=args.version,
                            out=args.out / f"ft-lr{args.lr:g}", epochs=args.epochs, lr=args.lr,
                            dev_limit=args.dev_limit, max_length=1024)
    print(json.dumps({"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
                      "parameters": params, "lr": args.lr, "epochs": args.epochs}))
    started = time.perf_counter()

    def show(state: dict) -> None:
        point = state["history"][-1]
        print(json.dumps({"step": point["step"], "epoch": round(point["epoch"], 2),
                          "train_loss": round(point["train_loss"], 4), "dev_macro": point["macro"],
                          "dev_micro": point["micro"], "parse_failure_rate": point["parse_failure_rate"],
                          "elapsed_s": round(time.perf_counter() - started, 1)}), flush=True)

    state = finetune(config, show)
    print(json.dumps({"best_step": state["best_step"], "best_macro": state["best_macro"],
                      "wall_s": round(time.perf_counter() - started, 1)}))
    if torch.cuda.is_available() and args.timing_steps > 0:
        gpu = time_steps(config, "cuda", args.timing_steps)
        cpu = time_steps(config, "cpu", args.timing_steps)
        print(json.dumps({"s_per_step_cuda": round(gpu, 4), "s_per_step_cpu": round(cpu, 4),
                          "cpu_over_cuda": round(cpu / gpu, 1)}))


if __name__ == "__main__":
    main()
