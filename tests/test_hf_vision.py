"""Vision-language models through the `hf` backend and `qa finetune`, on tiny randomly initialised
Qwen2-VL and LLaVA models built locally (no hub): the picture reaches the vision tower (answers
change with it), batched answers equal one-by-one answers, one epoch of LoRA fine-tuning with the
picture in every example, resume after SIGKILL, and `qa eval` of the adapter named in models.yaml."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("peft")


from memegauge.cli import main  # noqa: E402
from memegauge.config import load_registry  # noqa: E402
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.engine import Store  # noqa: E402
from memegauge.testing.tiny_models import VLM_ARCHITECTURES, build_tiny_vlm  # noqa: E402
from memegauge.models import create_backend  # noqa: E402
from memegauge.report import build_report  # noqa: E402
from memegauge.types import ChatRequest, ImagePart, Message, SamplingParams  # noqa: E402

from helpers.memeqa_data import make_dataset  # noqa: E402
from helpers.training import assert_same_dev_points, kill_at_first_checkpoint_then_resume, noise_picture  # noqa: E402

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI


@pytest.fixture(scope="module", params=VLM_ARCHITECTURES)
def vlm(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(request.param)
    # Weights drawn wider than a trained model's (0.2, not 0.02): an untrained model's answers then
    # move with its inputs instead of repeating one token whatever it is shown.
    folder = build_tiny_vlm(root / "base", request.param, init_range=0.2, seed=3)
    pictures = [noise_picture(root / f"p{i}.png", i) for i in range(4)]
    return request.param, root, folder, pictures


def ask(backend, picture: Path, question: str = "Which option? A, B or C.", max_tokens: int = 6):
    request = ChatRequest(model="m", messages=[Message.user(ImagePart.of(picture, alt_text="alt"),
                                                            question)],
                          params=SamplingParams(temperature=0, max_tokens=max_tokens), stage="t")
    return backend.complete(request)


def test_a_vlm_folder_is_a_vision_model_by_default(vlm):
    _, _, folder, _ = vlm
    assert ModelSpec(name="v", backend="hf", model=str(folder)).vision is True
    assert ModelSpec(name="v", backend="hf", model=str(folder), vision=False).vision is False


def test_answers_change_when_the_picture_changes(vlm):
    """The same question about four different pictures gets more than one answer: the picture goes
    through the processor into the vision tower and moves the output. The alt text is the same in
    all four, so a backend that sent alt text instead would answer the same four times."""
    _, _, folder, pictures = vlm
    backend = create_backend(ModelSpec(name="v", backend="hf", model=str(folder),
                                       extra={"device": "cpu"}))

    async def answers():
        return [await ask(backend, p) for p in pictures]

    results = asyncio.run(answers())
    assert len({r.text for r in results}) > 1, [r.text for r in results]
    assert all(r.usage.prompt_tokens > 10 for r in results)  # the vision tokens are in the prompt
    text_only = create_backend(ModelSpec(name="t", backend="hf", model=str(folder), vision=False,
                                         extra={"device": "cpu"}))
    assert text_only.vision is False


def test_batched_answers_equal_one_by_one_answers(vlm):
    _, _, folder, pictures = vlm
    one = create_backend(ModelSpec(name="v", backend="hf", model=str(folder),
                                   extra={"device": "cpu", "batch_size": 1}))
    batched = create_backend(ModelSpec(name="v", backend="hf", model=str(folder),
                                       extra={"device": "cpu", "batch_size": 4}))
    questions = ["Which option? A, B or C.", "Pick one letter.", "Answer: A or B?", "Go."]

    async def run(backend):
        return await asyncio.gather(*(ask(backend, p, q) for p, q in zip(pictures, questions, strict=True)))

    calls = []
    real_generate = batched._run

    async def counting(batch, rows):
        calls.append(len(batch))
        await real_generate(batch, rows)

    batched._run = counting
    alone = asyncio.run(run(one))
    together = asyncio.run(run(batched))
    assert calls == [4]  # the four waiting requests went through the model as one batch
    assert [r.text for r in together] == [r.text for r in alone]
    assert [r.usage.prompt_tokens for r in together] == [r.usage.prompt_tokens for r in alone]


def _in_vision_tower(module: str) -> bool:
    return any(part in module for part in ("visual.", "vision_tower.", "multi_modal_projector."))


def test_lora_targets_all_linear_adapts_the_vision_tower_and_language_model_does_not(vlm):
    """PEFT's all-linear (every linear layer but the output head) against the language model's only."""
    from memegauge.memeqa.finetune import LoraSettings, with_lora
    from memegauge.models.hf_local import load_local_model

    _, _, folder, _ = vlm
    adapted = {}
    for targets in ("all-linear", "language-model"):
        model = with_lora(load_local_model(folder, device="cpu").model, LoraSettings(), targets)
        adapted[targets] = {name for name, _ in model.named_modules() if name.endswith(".lora_A")}
    every, language = adapted["all-linear"], adapted["language-model"]
    assert language < every and not any(_in_vision_tower(m) for m in language)
    assert {m for m in every - language if not _in_vision_tower(m)} == set()
    assert not any("lm_head" in m for m in every)


def finetune_config(root: Path, folder: Path, data: Path, images: Path, out: str) -> Path:
    config = root / f"{out}.yaml"
    config.write_text(yaml.safe_dump({
        "model": str(folder), "data": str(data), "images": str(images), "out": out, "epochs": 1,
        "dev_limit": 4, "device": "cpu", "micro_batch_size": 2, "lr": 1e-3}))
    return config


@pytest.fixture(scope="module")
def trained(vlm):
    """One epoch of `qa finetune` through the CLI on 33 questions with their pictures."""
    architecture, root, folder, _ = vlm
    data, images = make_dataset(root)
    for i, png in enumerate(sorted(images.glob("*.png"))):
        noise_picture(png, 10 + i)
    for version in ("none-minus", "none-plus"):
        (data / version / "train.json").write_text((data / version / "dev.json").read_text())
    config = finetune_config(root, folder, data, images, "full")
    db = root / "ft.db"
    assert main(["--store", str(db), "qa", "finetune", "-c", str(config), "--run", "ft"]) == 0
    return architecture, root, folder, data, images, db


def test_one_epoch_of_vlm_finetuning(trained):
    _, root, _, _, _, db = trained
    out = root / "full"
    history = json.loads((out / "dev_scores.json").read_text())
    assert [p["step"] for p in history] == [2, 4, 6, 8, 9]  # 33 questions / batch 4 = 9 steps
    assert all(np.isfinite(p["train_loss"]) for p in history)
    adapter = json.loads((out / "best" / "adapter_config.json").read_text())
    assert (adapter["r"], adapter["lora_alpha"], adapter["lora_dropout"]) == (8, 8, 0.1)
    from safetensors import safe_open
    with safe_open(str(out / "best" / "adapter_model.safetensors"), "pt") as weights:
        adapted = {k for k in weights.keys() if "lora_A" in k}
    # the default lora_targets: all-linear (the paper's "all the linear modules"): the vision tower too
    assert any(_in_vision_tower(k) for k in adapted) and not any("lm_head" in k for k in adapted)
    store = Store(db)
    report = build_report(store, "ft")
    store.close()
    assert report["vision"] is True and len(report["losses"]) == 9
    assert len(report["dev"]) == 5
    best = next(p for p in report["dev"] if p["step"] == report["best_step"])
    macro_row = report["paper"]["versions"]["none-minus"][-1]
    assert macro_row["type"] == "macro" and macro_row["run"] == best["macro"]
    assert macro_row["fine-tuned"]["Qwen"] == 0.698  # Table 3, None−


def test_killed_vlm_finetuning_resumes_to_the_same_result(trained):
    _, root, folder, data, images, _ = trained
    config = finetune_config(root, folder, data, images, "killed")
    resumed = kill_at_first_checkpoint_then_resume(root, config, "killed", steps=9)
    assert_same_dev_points(json.loads((root / "full" / "dev_scores.json").read_text()), resumed, 1e-4)


def test_qa_eval_of_the_adapter_named_in_models_yaml(trained, tmp_path):
    """The adapter is evaluated like any model: `adapter:` in models.yaml, pictures sent; its
    answers differ from the base model's (the adapter changed the weights the answers come from)."""
    _, root, folder, data, images, _ = trained
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({
        "base": {"backend": "hf", "model": str(folder), "extra": {"device": "cpu"}},
        "tuned": {"backend": "hf", "model": str(folder), "adapter": str(root / "full" / "best"),
                  "extra": {"device": "cpu"}}}))
    db = tmp_path / "s.db"
    code = main(["--store", str(db), "--models", str(models), "qa", "eval", "--data", str(data),
                 "--images", str(images), "--split", "dev", "--model", "base", "--model", "tuned"])
    assert code in (0, 3)  # 3: a tiny random model's answers mostly unreadable (stored, complete, said so)
    store = Store(db)
    runs = {r["name"]: build_report(store, r["name"]) for r in store.list_runs()}
    calls = store.db.execute("SELECT COUNT(*), SUM(images_sent) FROM calls").fetchone()
    store.close()
    reports = sorted(runs.values(), key=lambda r: r["model"])
    assert [r["model"] for r in reports] == ["base", "tuned"]
    assert all(r["n_scored"] == 33 and r["n_failed_calls"] == 0 for r in reports)
    assert calls[1] == calls[0]  # one picture in every call
    registry = load_registry(models)
    assert registry.get("tuned").identity["adapter"] != "missing"
    assert registry.get("tuned").identity != registry.get("base").identity
    raw = [[d["raw"] for d in r["details"]] for r in reports]
    assert raw[0] != raw[1]


def test_the_adapter_scores_in_qa_eval_what_its_dev_point_scored_in_training(trained, tmp_path):
    """Training's dev evaluation and `qa eval` render, generate and grade one way: the best adapter
    evaluated on the same dev questions (`--limit` draws the sample `dev_limit` drew) gets the macro
    its dev point recorded."""
    _, root, folder, data, images, _ = trained
    models = tmp_path / "models.yaml"
    models.write_text(yaml.safe_dump({"tuned": {
        "backend": "hf", "model": str(folder), "adapter": str(root / "full" / "best"),
        "extra": {"device": "cpu"}}}))
    db = tmp_path / "s.db"
    assert main(["--store", str(db), "--models", str(models), "qa", "eval", "--data", str(data),
                 "--images", str(images), "--split", "dev", "--limit", "4", "--model", "tuned",
                 "--run", "dev4"]) in (0, 3)  # 3: mostly unreadable answers of a tiny model
    store = Store(db)
    report = build_report(store, "dev4")
    store.close()
    history = json.loads((root / "full" / "dev_scores.json").read_text())
    best = max(history, key=lambda p: p["macro"])  # the first of the best, as training keeps it
    assert report["n_scored"] == 4
    assert report["macro"] == pytest.approx(best["macro"])
    assert report["accuracy"] == pytest.approx(best["accuracy"])


def test_a_text_only_folder_declared_to_see_pictures_is_refused(tmp_path):
    from memegauge.testing.tiny_models import build_tiny_model
    from memegauge.types import InputError

    folder = build_tiny_model(tmp_path / "text", hidden=16, layers=1, heads=2)
    assert ModelSpec(name="t", backend="hf", model=str(folder)).vision is False
    with pytest.raises(InputError, match="text-only model"):
        create_backend(ModelSpec(name="t", backend="hf", model=str(folder), vision=True,
                                 extra={"device": "cpu"}))


def test_adapter_is_refused_on_other_backends():
    with pytest.raises(ValueError, match="adapter"):
        ModelSpec(name="x", backend="openai", base_url="http://127.0.0.1:1/v1", adapter="/tmp/a")
    assert ModelRegistry  # imported for the registry tests above


def test_two_processes_under_accelerate_launch_train_like_one(trained, tmp_path):
    """`accelerate launch --num_processes 2` (here on CPU, gloo) runs the same command without code
    changes: each process takes half of every step's examples, the gradients are averaged, and
    the dev points equal a one-process run's; only the main process writes the run to the store."""
    _, root, folder, data, images, _ = trained
    losses = {}
    for name, launcher in (("one", [sys.executable, "-m", "memegauge.cli"]),
                           ("two", [sys.executable, "-m", "accelerate.commands.launch", "--cpu",
                                    "--num_processes", "2", "--num_machines", "1",
                                    "--mixed_precision", "no", "--dynamo_backend", "no",
                                    "-m", "memegauge.cli"])):
        config = tmp_path / f"{name}.yaml"
        config.write_text(yaml.safe_dump({
            "model": str(folder), "data": str(data), "images": str(images), "out": str(tmp_path / name),
            "epochs": 1, "train_limit": 16, "dev_limit": 4, "device": "cpu", "lr": 1e-3,
            "micro_batch_size": 1}))
        db = tmp_path / f"{name}.db"
        done = subprocess.run([*launcher, "--store", str(db), "qa", "finetune", "-c", str(config),
                               "--run", name], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        losses[name] = json.loads((tmp_path / name / "dev_scores.json").read_text())
        store = Store(db)
        assert [r["name"] for r in store.list_runs()] == [name]
        store.close()
    assert [p["step"] for p in losses["two"]] == [p["step"] for p in losses["one"]]
    for a, b in zip(losses["one"], losses["two"], strict=True):
        assert a["train_loss"] == pytest.approx(b["train_loss"], rel=1e-5)
        assert a["macro"] == b["macro"]


def test_a_request_that_breaks_generation_fails_alone(vlm, monkeypatch):
    """One request the model cannot take (here: a processor error on its picture) is that request's
    BAD_REQUEST; the batch it was in is retried one by one and the others are answered."""
    from memegauge.models import hf
    from memegauge.types import ModelCallError

    _, _, folder, pictures = vlm
    backend = create_backend(ModelSpec(name="v", backend="hf", model=str(folder),
                                       extra={"device": "cpu", "batch_size": 4}))
    real = hf.generate_rows

    def breaking(local, rows, *args, **kwargs):  # `hf` encodes, then calls `generate_rows`
        if any("poison" in local.tokenizer.decode(row["input_ids"][0]) for row in rows):
            raise ValueError("image features and image tokens do not match")
        return real(local, rows, *args, **kwargs)

    monkeypatch.setattr(hf, "generate_rows", breaking)

    async def run():
        return await asyncio.gather(ask(backend, pictures[0]), ask(backend, pictures[1], "poison"),
                                    ask(backend, pictures[2]), return_exceptions=True)

    results = asyncio.run(run())
    assert isinstance(results[1], ModelCallError) and "ValueError" in str(results[1])
    assert [type(r).__name__ for r in (results[0], results[2])] == ["ChatResult", "ChatResult"]
