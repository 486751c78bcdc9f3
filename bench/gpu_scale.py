"""MemeQA's 7B recipe on one GPU: fine-tuning memory and speed, and `hf` evaluation speed, measured
on vision-language models with the shapes of Qwen2-VL-7B-Instruct and LLaVA-1.5-7B (random weights,
built locally from their configs' figures, the repo's character tokenizer; nothing downloaded).

    python bench/gpu_scale.py --data DIR --images DIR --work DIR [--model qwen2-vl-7b] [--small]

Prints one JSON line per measurement:
- `train`: seconds per optimizer step (batch 4, LoRA r 8 on the language model) and peak GPU memory,
  for each micro-batch (1, 2, 4) with gradient checkpointing off and on; `out_of_memory` where a
  setting does not fit;
- `paper_recipe`: `qa finetune`'s `finetune` with no memory settings (the paper's batch 4, r 8, α 8,
  lr 1e-5) for its first 20 steps, the settings it chose, its seconds per step;
- `eval`: questions per second through `qa eval` (engine, store, `hf` backend, batch 16) and
  through `hf_local.generate` directly on the same questions in batches of 16;
- `estimate`: the paper's full run (5,171 train questions x 3 epochs / 4 = 3,879 steps, 15 dev
  evaluations of 1,973 questions) at the measured speeds;
and last `engine_over_direct`, the ratio of the two evaluation speeds.

Each measurement runs in a fresh process, so that its peak memory is its own and no Accelerate
state is shared. Without CUDA the 7B shapes are refused with a message; `--small` runs every step
at tiny shapes of the same architectures (on the CPU when there is no GPU), which checks the
machinery, not the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

# The released models' figures (config.json of Qwen/Qwen2-VL-7B-Instruct and llava-hf/llava-1.5-7b-hf).
SHAPES: dict[str, dict[str, Any]] = {
    "qwen2-vl-7b": {"architecture": "qwen2-vl", "image_size": 3584,  # max_pixels 12,845,056 = 3584²
                    "text": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                                 num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
                                 max_position_embeddings=32768, rope_theta=1_000_000.0,
                                 tie_word_embeddings=False),
                    "vision": dict(depth=32, embed_dim=1280, num_heads=16, mlp_ratio=4, hidden_size=3584)},
    "llava-1.5-7b": {"architecture": "llava", "image_size": 336,
                     "text": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                                  num_attention_heads=32, num_key_value_heads=32, vocab_size=32064,
                                  max_position_embeddings=4096, tie_word_embeddings=False),
                     "vision": dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                                    num_attention_heads=16, image_size=336, patch_size=14)},
}
# The same architectures at tiny shapes (--small): every code path, in seconds on a CPU.
SMALL: dict[str, dict[str, Any]] = {
    "qwen2-vl-7b": {"architecture": "qwen2-vl", "image_size": 224,
                    "text": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2),
                    "vision": dict(depth=2, embed_dim=32, num_heads=2, mlp_ratio=2, hidden_size=64)},
    "llava-1.5-7b": {"architecture": "llava", "image_size": 56,
                     "text": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=4),
                     "vision": dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                    num_attention_heads=2, image_size=56, patch_size=14)},
}
PAPER_TRAIN_QUESTIONS, PAPER_DEV_QUESTIONS, PAPER_EPOCHS, DEV_EVALUATIONS = 5171, 1973, 3, 15


def build(work: Path, name: str, small: bool, device: str) -> Path:
    """The model folder (built once per shape set; a finished build leaves `built.json`)."""
    from memegauge.testing.tiny_models import build_tiny_vlm

    shape = (SMALL if small else SHAPES)[name]
    folder = work / f"{name}{'-small' if small else ''}"
    if (folder / "built.json").is_file() and json.loads((folder / "built.json").read_text()) == shape:
        return folder
    build_tiny_vlm(folder, shape["architecture"], image_size=shape["image_size"], seed=0,
                   shapes={"text": shape["text"], "vision": shape["vision"]},
                   dtype="bfloat16" if device == "cuda" else None, device=device)
    (folder / "built.json").write_text(json.dumps(shape))
    return folder


def in_fresh_process(function: Any, *args: Any) -> Any:
    """`function(*args)` in a new interpreter (spawned: CUDA and Accelerate start clean)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def peak_gib(device: str) -> float | None:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None


def time_training(folder: str, data: str, images: str, micro: int, checkpointing: bool, steps: int,
                  device: str) -> dict[str, Any]:
    """Seconds per step (after one warm-up step) and peak memory of `finetune`'s step at one
    micro-batch and checkpointing setting; `out_of_memory` when it does not fit."""
    import torch
    from accelerate import Accelerator

    from memegauge.memeqa.dataset import load_memes_for, load_questions
    from memegauge.memeqa.finetune import FinetuneConfig, _train_step, examples, with_lora
    from memegauge.models.hf_local import is_out_of_memory, load_local_model

    config = FinetuneConfig(model=folder, data=data, images=images, out="unused", device=device,
                            micro_batch_size=micro, gradient_checkpointing=checkpointing)
    questions = load_questions(config.data, config.version, "train")[:config.batch_size * (steps + 1)]
    batch = examples(questions, load_memes_for(questions, config.images, None), config.version)
    accelerator = Accelerator(cpu=device == "cpu")
    local = load_local_model(folder, device=device, dtype=config.dtype)
    if checkpointing:
        local.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    local.model = with_lora(local.model, config.lora)
    optimizer = torch.optim.AdamW([p for p in local.model.parameters() if p.requires_grad], lr=config.lr)
    local.model.train()
    result: dict[str, Any] = {"phase": "train", "micro_batch_size": micro, "gradient_checkpointing": checkpointing}
    try:
        for step in range(steps + 1):
            if step == 1:
                sync(device)
                started = time.perf_counter()
            _train_step(local, accelerator, optimizer, batch[step * 4:(step + 1) * 4], config, micro)
        sync(device)
    except Exception as exc:  # noqa: BLE001 — only out-of-memory is a result; the rest re-raised
        if not is_out_of_memory(exc):
            raise
        return {**result, "out_of_memory": True, "peak_gib": peak_gib(device)}
    return {**result, "s_per_step": round((time.perf_counter() - started) / steps, 3), "peak_gib": peak_gib(device)}


def paper_recipe(folder: str, data: str, images: str, out: str, steps: int, device: str) -> dict[str, Any]:
    """`finetune` with the paper's recipe and no memory settings, for its first `steps` steps (one
    dev evaluation at the end, timed apart)."""
    from memegauge.memeqa.finetune import FinetuneConfig, finetune

    config = FinetuneConfig(model=folder, data=data, images=images, out=out, epochs=1, eval_every=1.0,
                            train_limit=4 * steps, dev_limit=16, device=device)
    marks: dict[str, float] = {}
    started = time.perf_counter()
    state = finetune(config, on_eval=lambda s: marks.setdefault("eval_done", time.perf_counter()),
                     on_start=lambda s: marks.setdefault("start", time.perf_counter()))
    wall = time.perf_counter() - marks["start"]
    return {"phase": "paper_recipe", "steps": len(state["curve"]), "settings": state["settings"],
            "wall_s": round(wall, 1), "load_s": round(marks["start"] - started, 1),
            "s_per_step_with_one_dev_eval": round(wall / max(1, len(state["curve"])), 3),
            "finite_losses": all(math.isfinite(x) for x in state["curve"]), "peak_gib": peak_gib(device)}


def eval_through_engine(folder: str, data: str, images: str, questions: int, batch: int,
                        store: str) -> dict[str, Any]:
    """`qa eval`'s path (engine, store, `hf` backend) on `questions` seeded dev questions. The engine
    loads the model on its first call, inside the run's wall time: that load is timed and taken
    off, as the direct path loads before its clock starts."""
    from memegauge.models.spec import ModelRegistry, ModelSpec
    from memegauge.engine import Store, core
    from memegauge.memeqa.records import read_info
    from memegauge.memeqa.runs import eval_run
    from memegauge.memeqa.config import EvalConfig

    loads: list[float] = []
    real_create = core.create_backend

    def timed_create(spec: Any) -> Any:
        started = time.perf_counter()
        backend = real_create(spec)
        loads.append(time.perf_counter() - started)
        return backend

    core.create_backend = timed_create
    spec = ModelSpec(name="gpu-scale", backend="hf", model=folder, max_concurrency=2 * batch,
                     extra={"batch_size": batch})
    registry = ModelRegistry({"gpu-scale": spec})
    Path(store).unlink(missing_ok=True)
    db = Store(store)
    name = asyncio.run(eval_run(db, registry, EvalConfig(data=Path(data), images=Path(images), version="none-minus",
                                                         split="dev", model="gpu-scale",
                                                         limit=questions), progress=False))
    info = read_info(db, db.run_row(name)["id"])
    db.close()
    timing = info.last_execution
    wall = timing.wall_s - sum(loads)
    return {"phase": "eval", "path": "qa eval", "questions": questions, "batch_size": batch,
            "wall_s": round(wall, 2), "load_s": round(sum(loads), 2), "questions_per_s": round(questions / wall, 3),
            "backend": timing.backend}


def eval_direct(folder: str, data: str, images: str, questions: int, batch: int) -> dict[str, Any]:
    """The same questions through `hf_local.generate` in batches of `batch`, pictures read and
    processed in the timed loop as the backend does."""
    from memegauge.memeqa.dataset import load_memes_for, load_questions, select_questions
    from memegauge.memeqa.evaluate import MAX_NEW_TOKENS
    from memegauge.memeqa.finetune import examples, prompt_of
    from memegauge.models.hf_local import generate, load_local_model

    chosen = select_questions(load_questions(Path(data), "none-minus", "dev"), limit=questions, seed=0)
    asked = examples(chosen, load_memes_for(chosen, Path(images), None), "none-minus")
    local = load_local_model(folder)  # no warm-up batch: the qa eval path times its first batch too
    sync(local.device)
    started = time.perf_counter()
    for start in range(0, len(asked), batch):
        generate(local, [prompt_of(local, e) for e in asked[start:start + batch]], MAX_NEW_TOKENS)
    sync(local.device)
    wall = time.perf_counter() - started
    return {"phase": "eval", "path": "hf_local.generate", "questions": len(asked), "batch_size": batch,
            "wall_s": round(wall, 2), "questions_per_s": round(len(asked) / wall, 3)}


def estimate(trained: list[dict[str, Any]], questions_per_s: float) -> dict[str, Any]:
    """The paper's full run at the fastest training setting that fitted and `qa eval`'s speed."""
    fitting = [t for t in trained if "s_per_step" in t]
    if not fitting:  # nothing fitted: no estimate to give
        return {"phase": "estimate", "fits": False}
    best = min(fitting, key=lambda t: t["s_per_step"])
    steps = math.ceil(PAPER_TRAIN_QUESTIONS / 4) * PAPER_EPOCHS
    train_h = steps * best["s_per_step"] / 3600
    dev_h = DEV_EVALUATIONS * PAPER_DEV_QUESTIONS / questions_per_s / 3600
    return {"phase": "estimate", "steps": steps, "s_per_step": best["s_per_step"],
            "micro_batch_size": best.get("micro_batch_size"),
            "gradient_checkpointing": best.get("gradient_checkpointing"), "train_h": round(train_h, 2),
            "dev_evaluations": DEV_EVALUATIONS, "dev_questions_per_s": questions_per_s,
            "dev_h": round(dev_h, 2), "total_h": round(train_h + dev_h, 2)}


def show(record: dict[str, Any]) -> dict[str, Any]:
    print(json.dumps(record), flush=True)
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="MemeQA folder (official layout, dev split)")
    parser.add_argument("--images", type=Path, required=True, help="the memes' PNGs + memes.jsonl")
    parser.add_argument("--work", type=Path, required=True, help="models, splits and stores go here")
    parser.add_argument("--model", choices=sorted(SHAPES), default="qwen2-vl-7b")
    parser.add_argument("--small", action="store_true", help="tiny shapes of the same architectures")
    parser.add_argument("--steps", type=int, default=3, help="timed training steps per setting")
    parser.add_argument("--recipe-steps", type=int, default=20)
    parser.add_argument("--questions", type=int, default=128, help="dev questions per evaluation path")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--skip-training", action="store_true", help="evaluation speed only")
    args = parser.parse_args()
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu" and not args.small:
        print("gpu_scale: no CUDA device here. The 7B shapes need one GPU of about 80 GB (H100/A100); "
              "run this on such a machine, or add --small to check every step at tiny shapes on the CPU.",
              file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(__file__).parent))
    from memeqa_finetune_gpu import make_splits

    args.work.mkdir(parents=True, exist_ok=True)
    folder = str(build(args.work, args.model, args.small, device))
    splits = str(make_splits(args.data, "dev", args.work / "data", seed=0))
    show({"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu", "model": args.model,
          "small": args.small, "folder": folder})
    trained = [] if args.skip_training else [
        show(in_fresh_process(time_training, folder, splits, str(args.images), micro, ckpt, args.steps, device))
        for ckpt in (False, True) for micro in (1, 2, 4)]
    if not args.skip_training:
        show(in_fresh_process(paper_recipe, folder, splits, str(args.images), str(args.work / "ft"),
                              args.recipe_steps, device))
    engine = show(in_fresh_process(eval_through_engine, folder, str(args.data), str(args.images),
                                   args.questions, args.batch, str(args.work / "eval.db")))
    direct = show(in_fresh_process(eval_direct, folder, str(args.data), str(args.images), args.questions,
                                   args.batch))
    if trained:
        show(estimate(trained, engine["questions_per_s"]))
    print(f"engine_over_direct {engine['questions_per_s'] / direct['questions_per_s']:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
