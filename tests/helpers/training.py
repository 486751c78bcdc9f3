"""Helpers of the fine-tuning and local-model tests (they need torch only where they call it): noise
pictures that a vision tower sees as different, and a `qa finetune` killed at its first checkpoint
then resumed, with the check that its dev points equal an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from memegauge.cli import main


def noise_picture(path: Path, seed: int, size=(120, 90)) -> Path:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path)
    return path


def kill_at_first_checkpoint_then_resume(root: Path, config: Path, out: str, steps: int) -> list[dict]:
    """Start `qa finetune` in a child process, SIGKILL it once a checkpoint is on disk, rerun the
    same command to the end in-process, and return the dev points it wrote."""
    state = root / out / "last" / "state.json"
    process = subprocess.Popen([sys.executable, "-m", "memegauge.cli", "--store",
                                str(root / f"{out}.db"), "qa", "finetune", "-c", str(config)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 300
    while not state.is_file() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert state.is_file(), "no checkpoint was written before the kill"
    assert json.loads(state.read_text())["step"] < steps
    assert main(["--store", str(root / f"{out}.db"), "qa", "finetune", "-c", str(config)]) == 0
    return json.loads((root / out / "dev_scores.json").read_text())


def assert_same_dev_points(full: list[dict], resumed: list[dict], rel: float) -> None:
    assert [p["step"] for p in resumed] == [p["step"] for p in full]
    for a, b in zip(full, resumed, strict=True):
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=rel)
        assert a["macro"] == b["macro"]
