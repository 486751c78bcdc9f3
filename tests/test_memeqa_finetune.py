"""MemeQA LoRA fine-tuning on a tiny locally built model (CPU): one epoch through the CLI, dev
points every 20% of an epoch, best adapter kept, and a SIGKILLed run resumed to the same result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("peft")

from memegauge.cli import main  # noqa: E402
from memegauge.engine import Store  # noqa: E402
from memegauge.memeqa.finetune import _save_atomic, eval_steps, restore_interrupted  # noqa: E402
from memegauge.testing.tiny_models import build_tiny_model  # noqa: E402
from memegauge.report import build_report  # noqa: E402

from helpers.memeqa_data import make_dataset  # noqa: E402
from helpers.training import assert_same_dev_points, kill_at_first_checkpoint_then_resume  # noqa: E402

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("ft")
    base = build_tiny_model(root / "base", hidden=32, layers=1, heads=2, seed=1)
    data, images = make_dataset(root)
    for version in ("none-minus", "none-plus"):
        (data / version / "train.json").write_text((data / version / "dev.json").read_text())
    return root, base, data, images


def write_config(root: Path, base: Path, data: Path, images: Path, out: str) -> Path:
    config = root / f"{out}.yaml"
    config.write_text(yaml.safe_dump({"model": str(base), "data": str(data), "images": str(images),
                                      "out": out, "epochs": 1, "dev_limit": 3, "max_length": 96,
                                      "device": "cpu"}))
    return config


def test_eval_points_every_fifth_of_an_epoch():
    assert eval_steps(10, 1, 0.2) == [2, 4, 6, 8, 10]
    assert eval_steps(9, 2, 0.2) == [2, 4, 6, 8, 9, 11, 13, 15, 17, 18]


def test_kill_between_the_renames_of_a_save_keeps_the_previous_checkpoint(tmp_path):
    last = tmp_path / "last"
    _save_atomic(last, lambda d: (d / "state.json").write_text('{"step": 2}'))
    _save_atomic(last, lambda d: (d / "state.json").write_text('{"step": 4}'))
    assert json.loads((last / "state.json").read_text()) == {"step": 4}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]
    last.rename(tmp_path / "last.old")  # killed after `last` → `last.old`, before `.tmp` → `last`
    restore_interrupted(last)
    assert json.loads((last / "state.json").read_text()) == {"step": 4}
    restore_interrupted(last)  # nothing to do now
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]


def test_one_epoch_writes_adapter_and_dev_scores(setup):
    root, base, data, images = setup
    config = write_config(root, base, data, images, "full")
    db = str(root / "s.db")
    assert main(["--store", db, "qa", "finetune", "-c", str(config), "--run", "ft"]) == 0
    out = root / "full"
    history = json.loads((out / "dev_scores.json").read_text())
    assert [p["step"] for p in history] == [2, 4, 6, 8, 9]  # 33 questions / batch 4 = 9 steps
    assert history[-1]["epoch"] == 1.0 and all(p["macro"] is not None for p in history)
    assert (out / "best" / "adapter_model.safetensors").is_file()
    adapter = json.loads((out / "best" / "adapter_config.json").read_text())
    assert (adapter["r"], adapter["lora_alpha"], adapter["lora_dropout"]) == (8, 8, 0.1)
    store = Store(db)
    report = build_report(store, "ft")
    store.close()
    assert report["task"] == "finetune" and len(report["dev"]) == 5


def test_killed_run_resumes_to_the_same_result(setup):
    root, base, data, images = setup
    if not (root / "full" / "dev_scores.json").is_file():
        pytest.skip("needs the uninterrupted run of the test above")
    config = write_config(root, base, data, images, "killed")
    resumed = kill_at_first_checkpoint_then_resume(root, config, "killed", steps=9)
    assert_same_dev_points(json.loads((root / "full" / "dev_scores.json").read_text()), resumed, 1e-5)


def test_hf_backend_answers_with_the_trained_adapter(setup, tmp_path):
    import asyncio

    from memegauge.models.spec import ModelRegistry, ModelSpec
    from memegauge.memeqa.runs import eval_run
    from memegauge.memeqa.config import EvalConfig

    root, base, data, images = setup
    adapter = root / "full" / "best"
    if not adapter.is_dir():
        pytest.skip("needs the fine-tuning run above")
    spec = ModelSpec(name="tiny-ft", backend="hf", model=str(base),
                     extra={"adapter": str(adapter), "device": "cpu"})
    store = Store(tmp_path / "s.db")
    name = asyncio.run(eval_run(store, ModelRegistry({"tiny-ft": spec}), EvalConfig(data=data, images=images,
                                                                                    version="none-minus", split="dev",
                                                                                    model="tiny-ft",
                                                                                    types=["cond_sent_id"])))
    report = build_report(store, name)
    store.close()
    assert report["n_scored"] == 3 and report["n_failed_calls"] == 0
    assert all(d["raw"] is not None for d in report["details"])
