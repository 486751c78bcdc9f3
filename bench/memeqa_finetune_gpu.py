"""MemeQA LoRA fine-tuning on a GPU with a locally built model (no hub access needed).

Builds an untrained model — a Llama-architecture causal LM (character tokenizer, ~25M parameters by
default), or with `--vlm qwen2-vl|llava` a vision-language model of that architecture that sees the
meme pictures — turns one MemeQA split into training data (its memes split 80/20 into train/dev, so
no meme is in both), runs `memeqa.finetune` with the paper's hyper-parameters, and prints every dev
point. Then it times a few training steps on the GPU and on the CPU side by side and prints the ratio.

    python bench/memeqa_finetune_gpu.py --data DIR --images DIR --out DIR [--vlm qwen2-vl] [--epochs 1]

An untrained model learns the answer format, not memes: the figures show the machinery at GPU
scale (throughput, checkpoints, dev evaluation), not meme understanding.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gpu_scale import in_fresh_process  # noqa: E402

from memegauge.memeqa.dataset import VERSIONS, load_questions, write_split
from memegauge.memeqa.finetune import FinetuneConfig, _train_step, examples, finetune
from memegauge.memeqa.split import assign_memes
from memegauge.testing.tiny_models import VLM_ARCHITECTURES, build_tiny_model, build_tiny_vlm


def make_splits(data: Path, split: str, out: Path, seed: int) -> Path:
    """train/dev from one split's memes (80/20), both versions, official layout."""
    for version in VERSIONS:
        questions = load_questions(data, version, split)
        assignment = assign_memes([q.img for q in questions], seed, (0.8, 0.2, 0.0))
        for name in ("train", "dev"):
            write_split([q for q in questions if assignment[q.img] == name], out, version, name)
    return out


def time_steps(config: FinetuneConfig, device: str, steps: int) -> float:
    """Seconds per training step (after one warm-up step) on `device`, through the same step
    function as `finetune` (pictures and all for a VLM). Run in a fresh process (`in_fresh_process`):
    Accelerate keeps one state per process, so a CPU Accelerator after the GPU run's crashed with
    "AcceleratorState has already been initialized"."""
    import torch
    from accelerate import Accelerator

    from memegauge.memeqa.dataset import load_memes_for
    from memegauge.memeqa.finetune import with_lora
    from memegauge.models.hf_local import load_local_model

    questions = load_questions(config.data, config.version, "train")[:config.batch_size * (steps + 1)]
    memes = load_memes_for(questions, config.images, config.texts)
    batch = examples(questions, memes, config.version)
    accelerator = Accelerator(cpu=device == "cpu")
    local = load_local_model(config.model, device=device, dtype=config.dtype)
    local.model = with_lora(local.model, config.lora)
    optimizer = torch.optim.AdamW([p for p in local.model.parameters() if p.requires_grad], lr=config.lr)
    local.model.train()
    started = None
    for step in range(steps + 1):
        if step == 1:
            if device == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        _train_step(local, accelerator, optimizer,
                    batch[step * config.batch_size:(step + 1) * config.batch_size], config,
                    config.micro_batch_size if isinstance(config.micro_batch_size, int) else config.batch_size)
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
    parser.add_argument("--vlm", choices=VLM_ARCHITECTURES, default=None,
                        help="a vision-language model of this architecture (pictures in every example)")
    parser.add_argument("--image-size", type=int, default=448, help="VLM: longest picture side, pixels")
    args = parser.parse_args()
    import torch
    from safetensors import safe_open

    heads = max(1, args.hidden // 64)
    if args.vlm:
        base = build_tiny_vlm(args.out / f"base-{args.vlm}", args.vlm, hidden=args.hidden,
                              layers=args.layers, heads=heads, vision_hidden=args.hidden,
                              image_size=args.image_size)
    else:
        base = build_tiny_model(args.out / "base", hidden=args.hidden, layers=args.layers, heads=heads)
    with safe_open(str(base / "model.safetensors"), "pt") as weights:
        params = sum(_numel(weights.get_slice(k).get_shape()) for k in weights.keys())
    data = make_splits(args.data, args.split, args.out / "data", seed=0)
    config = FinetuneConfig(model=base, data=data, images=args.images, version=args.version,
                            out=args.out / f"ft-lr{args.lr:g}", epochs=args.epochs, lr=args.lr,
                            dev_limit=args.dev_limit, max_length=1024)
    print(json.dumps({"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
                      "model": args.vlm or "llama (text only)", "parameters": params, "lr": args.lr,
                      "epochs": args.epochs}))
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
        gpu = in_fresh_process(time_steps, config, "cuda", args.timing_steps)
        cpu = in_fresh_process(time_steps, config, "cpu", args.timing_steps)
        print(json.dumps({"s_per_step_cuda": round(gpu, 4), "s_per_step_cpu": round(cpu, 4),
                          "cpu_over_cuda": round(cpu / gpu, 1)}))


def _numel(shape: list[int]) -> int:
    total = 1
    for n in shape:
        total *= n
    return total


if __name__ == "__main__":
    main()
