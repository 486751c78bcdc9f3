"""bench/gpu_scale.py (issue 24): its models have the released 7B models' shapes, and without CUDA it
stops with one message instead of building 15 GB of weights on a CPU. (Its timings are printed by the
bench, never asserted here.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers.bench import BENCH, load_bench  # noqa: E402
from memegauge.testing import tiny_models as tiny  # noqa: E402

SHAPES = load_bench("gpu_scale").SHAPES

# Parameters of the released checkpoints (Qwen/Qwen2-VL-7B-Instruct, llava-hf/llava-1.5-7b-hf).
RELEASED = {"qwen2-vl-7b": 8_291_375_616, "llava-1.5-7b": 7_063_427_072}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_bench_models_have_the_released_models_parameter_counts(name):
    shape = SHAPES[name]
    build = tiny._tiny_qwen2_vl if shape["architecture"] == "qwen2-vl" else tiny._tiny_llava
    with torch.device("meta"):  # shapes only: no memory, no time
        model, _ = build(transformers, 32, 1, 2, 32, shape["image_size"],
                         {"text": shape["text"], "vision": shape["vision"]})
    assert sum(p.numel() for p in model.parameters()) == RELEASED[name]


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="the message is for machines without CUDA")
def test_without_cuda_the_bench_says_so_and_builds_nothing(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH / "gpu_scale.py"), "--data", str(tmp_path),
                           "--images", str(tmp_path), "--work", str(tmp_path / "work")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "no CUDA device" in done.stderr and "--small" in done.stderr
    assert not (tmp_path / "work").exists()
