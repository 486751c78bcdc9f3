"""Fine-tuning that fits and says how (issue 24): `micro_batch_size: auto` halves the micro-batch when a
step runs out of memory and trains exactly as the size it settles on; gradient checkpointing on
demand (default above 1 B parameters) trains alike; `max_pixels` reaches the processor and is
recorded; dev evaluation goes through the `hf` backend's batched path. On a tiny Qwen2-VL (CPU)
whose training forward pass is made to run out of memory above a micro-batch size."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from memegauge.cli import main  # noqa: E402
from memegauge.engine import Store  # noqa: E402
from memegauge.memeqa.finetune import FinetuneConfig, describe_settings, finetune, memory_settings  # noqa: E402
from memegauge.testing.tiny_models import build_tiny_vlm  # noqa: E402
from memegauge.models.hf import HFBackend  # noqa: E402
from memegauge.report import build_report  # noqa: E402

from helpers.memeqa_data import make_dataset  # noqa: E402
from helpers.training import noise_picture  # noqa: E402

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("ftmem")
    folder = build_tiny_vlm(root / "base", "qwen2-vl", seed=2, image_size=112)
    data, images = make_dataset(root)
    for i, png in enumerate(sorted(images.glob("*.png"))):
        noise_picture(png, 30 + i, size=(150, 120))
    for version in ("none-minus", "none-plus"):
        (data / version / "train.json").write_text((data / version / "dev.json").read_text())
    return root, folder, data, images


def config(world, out: str, **more) -> FinetuneConfig:
    root, folder, data, images = world
    return FinetuneConfig(**{"model": folder, "data": data, "images": images, "out": root / out, "epochs": 1,
                             "train_limit": 12, "dev_limit": 4, "device": "cpu", "lr": 1e-3, **more})


def training_memory_limit(monkeypatch, rows: int) -> list[int]:
    """The model's forward pass runs out of memory in training above `rows` examples; returns the
    sizes of the training passes it was given."""
    import transformers

    cls = transformers.Qwen2VLForConditionalGeneration
    real, sizes = cls.forward, []

    @functools.wraps(real)  # generate reads the forward's signature
    def forward(model, *args, **kwargs):
        if model.training and kwargs.get("labels") is not None:
            sizes.append(int(kwargs["input_ids"].shape[0]))
            if sizes[-1] > rows:
                raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate 9.00 GiB ({sizes[-1]} rows)")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(cls, "forward", forward)
    return sizes


@pytest.mark.parametrize("setting", ["auto", None])  # None: the default, auto in one process
def test_auto_micro_batch_halves_until_it_fits_and_trains_as_that_size(world, monkeypatch, setting):
    fixed = finetune(config(world, "fixed", micro_batch_size=1))
    sizes = training_memory_limit(monkeypatch, 1)
    auto = finetune(config(world, f"auto-{setting}", micro_batch_size=setting))
    assert sizes[:3] == [4, 2, 1]  # the first step tried 4, then 2, then fitted at 1
    assert set(sizes[3:]) == {1}  # and the later steps kept 1
    assert auto["settings"]["micro_batch_size"] == 1 and auto["settings"]["micro_batch_auto"]
    np.testing.assert_allclose(auto["curve"], fixed["curve"], rtol=1e-5)  # the redone step trains alike
    assert [p["macro"] for p in auto["history"]] == [p["macro"] for p in fixed["history"]]


def test_out_of_memory_without_auto_is_one_message_naming_the_settings(world, monkeypatch, tmp_path, capsys):
    root, folder, data, images = world
    training_memory_limit(monkeypatch, 1)
    path = tmp_path / "ft.yaml"
    path.write_text(yaml.safe_dump({"model": str(folder), "data": str(data), "images": str(images),
                                    "out": str(tmp_path / "out"), "epochs": 1, "train_limit": 8,
                                    "dev_limit": 2, "device": "cpu", "micro_batch_size": 4}))
    assert main(["--store", str(tmp_path / "s.db"), "qa", "finetune", "-c", str(path)]) == 2
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())  # the terminal's line breaks aside
    assert "ran out of memory at micro-batch 4" in said and "micro_batch_size: auto" in said
    assert "gradient_checkpointing: true" in said


def test_gradient_checkpointing_trains_alike_and_is_recorded(world, tmp_path, capsys):
    """On: the same losses as off (activations recomputed, dropout masks replayed); the setting and
    the picture bound are stored with the run and printed as the run starts."""
    root, folder, data, images = world
    off = finetune(config(world, "ckpt-off", gradient_checkpointing=False))
    path = tmp_path / "ft.yaml"
    path.write_text(yaml.safe_dump({"model": str(folder), "data": str(data), "images": str(images),
                                    "out": str(tmp_path / "on"), "epochs": 1, "train_limit": 12,
                                    "dev_limit": 4, "device": "cpu", "lr": 1e-3,
                                    "gradient_checkpointing": True}))
    db = tmp_path / "s.db"
    assert main(["--store", str(db), "qa", "finetune", "-c", str(path), "--run", "ft"]) == 0
    captured = capsys.readouterr()
    assert "gradient checkpointing on" in " ".join((captured.out + captured.err).split())
    store = Store(db)
    report = build_report(store, "ft")
    store.close()
    assert report["settings"]["gradient_checkpointing"] is True
    assert report["settings"]["max_pixels"] == 112 * 112  # the model's own processor setting
    np.testing.assert_allclose(report["losses"], off["curve"], rtol=1e-4)
    assert off["settings"]["gradient_checkpointing"] is False


def test_checkpointing_is_on_by_default_above_a_billion_parameters():
    def local(parameters: int):
        weights = [torch.empty(parameters, device="meta")]
        return SimpleNamespace(model=SimpleNamespace(parameters=lambda: iter(weights)), vision=False,
                               processor=None)

    base = FinetuneConfig(model="m", data="d", images="i", out="o")
    big, small = memory_settings(local(1_200_000_000), base), memory_settings(local(40_000_000), base)
    assert big["gradient_checkpointing"] and not small["gradient_checkpointing"]
    assert "on (default: above 1 B parameters)" in describe_settings(big)
    forced = memory_settings(local(1_200_000_000), base.model_copy(update={"gradient_checkpointing": False}))
    assert not forced["gradient_checkpointing"] and "default" not in describe_settings(forced)
    assert big["micro_batch_size"] == 4 and big["micro_batch_auto"]  # by default, in one process
    assert not memory_settings(local(10), base, processes=2)["micro_batch_auto"]
    assert not memory_settings(local(10), base.model_copy(update={"micro_batch_size": 2}))["micro_batch_auto"]


def test_max_pixels_reaches_the_processor_and_is_part_of_the_trajectory(world):
    small = finetune(config(world, "pixels", max_pixels=28 * 28 * 4, train_limit=4))
    assert small["settings"]["max_pixels"] == 28 * 28 * 4
    digest = config(world, "x").digest()
    assert config(world, "x", max_pixels=28 * 28 * 4).digest() != digest  # other inputs: not resumed
    assert config(world, "x", micro_batch_size="auto", gradient_checkpointing=True,
                  eval_batch_size=2).digest() == digest  # how it fits: the same trajectory


def test_dev_evaluation_goes_through_the_backends_batched_path(world, monkeypatch):
    batches = []
    real_run = HFBackend._run

    async def recording(self, batch, rows):
        batches.append(len(batch))
        await real_run(self, batch, rows)

    monkeypatch.setattr(HFBackend, "_run", recording)
    state = finetune(config(world, "deveval", train_limit=4, dev_limit=6, eval_batch_size=4))
    points = len(state["history"])
    assert points >= 1 and sorted(batches) == sorted([4, 2] * points)
