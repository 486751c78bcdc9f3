"""The `hf` backend at the speed of batched generation (issue 24): a batch that runs out of memory is
split in halves and the size that fits is remembered, every split counted in the `qa eval` report;
the waiting requests are grouped by length; pictures are prepared while the model generates. On a
tiny Qwen2-VL built locally, whose `generate` is made to run out of memory above a batch size."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
import yaml

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from memegauge.cli import main  # noqa: E402
from memegauge.models.spec import ModelSpec  # noqa: E402
from memegauge.engine import Store  # noqa: E402
from memegauge.testing.tiny_models import build_tiny_vlm  # noqa: E402
from memegauge.models import create_backend  # noqa: E402
from memegauge.models.hf_local import is_out_of_memory  # noqa: E402
from memegauge.report import build_report  # noqa: E402
from memegauge.types import ChatRequest, ImagePart, InputError, Message, ModelCallError, SamplingParams  # noqa: E402

from helpers.memeqa_data import make_dataset  # noqa: E402
from helpers.training import noise_picture  # noqa: E402

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("hfbatch")
    folder = build_tiny_vlm(root / "base", "qwen2-vl", init_range=0.2, seed=3)
    data, images = make_dataset(root, memes=("m1", "m2", "m3", "m4"))
    for i, png in enumerate(sorted(images.glob("*.png"))):
        noise_picture(png, 20 + i, size=(60 + 40 * i, 50 + 20 * i))  # pictures of four sizes
    return root, folder, data, images


class MemoryLimit:
    """Makes the model's `generate` raise torch's OutOfMemoryError for batches above `limit` rows,
    and records the size of every batch it was given and the thread it ran in."""

    def __init__(self, limit: int) -> None:
        self.limit, self.sizes, self.failed, self.threads = limit, [], [], set()

    def install(self, monkeypatch, model_class) -> None:
        real = model_class.generate

        def generate(model, *args, **kwargs):
            rows = int(kwargs["input_ids"].shape[0])
            self.sizes.append(rows)
            self.threads.add(threading.current_thread().name)
            if rows > self.limit:
                self.failed.append(rows)
                raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate 2.00 GiB ({rows} rows)")
            return real(model, *args, **kwargs)

        monkeypatch.setattr(model_class, "generate", generate)


def registry(root: Path, folder: Path) -> Path:
    path = root / "models.yaml"
    path.write_text(yaml.safe_dump({
        "one": {"backend": "hf", "model": str(folder), "extra": {"device": "cpu", "batch_size": 1}},
        "many": {"backend": "hf", "model": str(folder), "max_concurrency": 16,
                 "extra": {"device": "cpu", "batch_size": 8}}}))
    return path


def answers(db: Path, run: str) -> tuple[dict[str, str], dict]:
    store = Store(db)
    report = build_report(store, run)
    store.close()
    return {d["id"]: d["raw"] for d in report["details"]}, report


def test_a_batch_out_of_memory_is_split_in_halves_and_the_run_completes(world, monkeypatch, capfd):
    """`qa eval` with batches of 8 on a model that runs out of memory above 2 rows: every question is
    answered, each split is counted in the report and logged once, later batches stay at the size
    that fitted, and the answers equal those of a one-by-one run."""
    import transformers

    root, folder, data, images = world
    models = registry(root, folder)
    common = ["--models", str(models), "qa", "eval", "--data", str(data), "--images", str(images)]
    # two stores: the second run must ask the model, not replay the first run's answers
    assert main(["--store", str(root / "one.db"), *common, "--model", "one", "--run", "one"]) in (0, 3)  # 3: tiny model
    alone, _ = answers(root / "one.db", "one")
    limit = MemoryLimit(2)
    limit.install(monkeypatch, transformers.Qwen2VLForConditionalGeneration)
    capfd.readouterr()
    assert main(["--store", str(root / "many.db"), *common, "--model", "many", "--run", "many"]) in (0, 3)
    logged = capfd.readouterr().err
    together, report = answers(root / "many.db", "many")
    assert len(together) == 44 and report["n_scored"] == 44
    assert together == alone
    splits = report["timing"]["backend"]["hf.batches_split"]
    assert splits == len(limit.failed) >= 1  # one split per batch that ran out of memory
    assert max(limit.failed) <= 8 and sorted(limit.failed, reverse=True) == limit.failed  # halving
    after = limit.sizes[limit.sizes.index(limit.failed[-1]) + 1:]
    assert after and max(after) <= 2 and sum(s > 1 for s in after) > 0  # remembered, still batched
    assert logged.count("ran out of memory (") == splits  # each split logged once
    assert f"{splits} batch(es) ran out of memory and were split" in " ".join(logged.split())  # and summed up


def ask(backend, picture: Path, question: str, max_tokens: int = 4):
    request = ChatRequest(model="m", messages=[Message.user(ImagePart.of(picture, alt_text="alt"), question)],
                          params=SamplingParams(temperature=0, max_tokens=max_tokens), stage="t")
    return backend.complete(request)


def test_a_single_request_out_of_memory_is_a_retryable_server_error(world, monkeypatch):
    import transformers

    root, folder, _, images = world
    MemoryLimit(0).install(monkeypatch, transformers.Qwen2VLForConditionalGeneration)
    backend = create_backend(ModelSpec(name="v", backend="hf", model=str(folder), extra={"device": "cpu"}))
    with pytest.raises(ModelCallError) as info:
        asyncio.run(ask(backend, images / "m1.png", "Which?"))
    assert info.value.error_class.value == "server" and info.value.error_class.retryable
    assert "OutOfMemoryError" in str(info.value)


def test_waiting_requests_batch_with_those_nearest_the_oldest_in_length(world, monkeypatch):
    """Eight requests, two lengths interleaved, batches of four: each batch holds one length (the
    oldest request and the three nearest it), and the pictures were prepared in their own thread."""
    import transformers

    root, folder, _, images = world
    limit = MemoryLimit(99)
    limit.install(monkeypatch, transformers.Qwen2VLForConditionalGeneration)
    backend = create_backend(ModelSpec(name="v", backend="hf", model=str(folder),
                                       extra={"device": "cpu", "batch_size": 4}))
    batches = []
    real_run = backend._run

    async def recording(batch, rows):
        batches.append([w.request.messages[0].content[1].text for w in batch])
        await real_run(batch, rows)

    backend._run = recording
    short, long = "Which?", "Which option fits this picture best, A, B, C or D? " * 4

    async def run():
        return await asyncio.gather(*(ask(backend, images / "m1.png", short if i % 2 else long)
                                      for i in range(8)))

    results = asyncio.run(run())
    assert len(results) == 8 and limit.sizes == [4, 4]
    assert [set(b) for b in batches] == [{long}, {short}]
    prepared = {t for t in threading.enumerate() if t.name.startswith("hf-prepare")}
    assert prepared and not limit.threads & {t.name for t in prepared}  # prepared apart from generation


def test_out_of_memory_is_told_from_other_failures():
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory"))
    assert is_out_of_memory(MemoryError())
    assert is_out_of_memory(RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: "
                                         "can't allocate memory: you tried to allocate 1099511627776 bytes"))
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    assert not is_out_of_memory(ValueError("out of memory"))  # only the allocators' own errors


def test_max_pixels_and_image_size_reach_the_processor(world, tmp_path):
    root, folder, _, images = world
    spec = ModelSpec(name="v", backend="hf", model=str(folder),
                     extra={"device": "cpu", "max_pixels": 28 * 28 * 2})
    backend = create_backend(spec)
    big = noise_picture(tmp_path / "big.png", 1, size=(200, 160))
    fewer = asyncio.run(ask(backend, big, "Which?")).usage.prompt_tokens
    default = create_backend(ModelSpec(name="v", backend="hf", model=str(folder), extra={"device": "cpu"}))
    more = asyncio.run(ask(default, big, "Which?")).usage.prompt_tokens
    assert fewer < more  # fewer vision tokens for the same picture
    shrunk = create_backend(ModelSpec(name="v", backend="hf", model=str(folder),
                                      extra={"device": "cpu", "image_size": 40}))
    assert asyncio.run(ask(shrunk, big, "Which?")).usage.prompt_tokens < more
    with pytest.raises(InputError, match="max_pixels must be a whole number"):
        create_backend(ModelSpec(name="v", backend="hf", model=str(folder), extra={"max_pixels": "big"}))
    llava = build_tiny_vlm(tmp_path / "llava", "llava")
    with pytest.raises(InputError, match="no max_pixels setting"):
        create_backend(ModelSpec(name="l", backend="hf", model=str(llava),
                                 extra={"device": "cpu", "max_pixels": 4096}))


def test_the_first_tokens_log_probabilities_are_the_models_own_when_asked_for(world):
    """`OutputSpec(logprobs=True)`: the answer carries its first token's top 5 alternatives, equal to the
    log-softmax of the model's own next-token logits after the prompt; unasked, none."""
    import torch

    from memegauge.types import OutputSpec

    _, folder, _, images = world
    backend = create_backend(ModelSpec(name="v", backend="hf", model=str(folder), extra={"device": "cpu"}))
    request = ChatRequest(model="m", messages=[Message.user(ImagePart.of(images / "m1.png", alt_text="alt"),
                                                            "Is it hateful? Answer yes or no.")],
                          params=SamplingParams(temperature=0, max_tokens=3), output=OutputSpec(logprobs=True))
    result = asyncio.run(backend.complete(request))
    [row] = backend._prepare([request])
    with torch.no_grad():
        logits = backend.local.model(**{k: v.to(backend.local.device) for k, v in row.items()}).logits[0, -1]
    values, ids = torch.log_softmax(logits.float(), dim=-1).topk(5)
    expected = {backend.local.tokenizer.decode([int(i)]): float(v) for v, i in zip(values, ids, strict=True)}
    assert list(result.logprobs) == list(expected)
    assert list(result.logprobs.values()) == pytest.approx(list(expected.values()), rel=1e-4, abs=1e-5)
    plain = request.model_copy(update={"output": OutputSpec()})
    assert asyncio.run(backend.complete(plain)).logprobs == {}
