"""A local Hugging Face model as MemeGauge uses it: loading (text-only causal LM or image-text-to-text
VLM, optional LoRA adapter), turning a chat request into the model's inputs (the picture through
the model's own processor and chat template), and batched generation.

One code path serves the `hf` backend (`models/hf.py`) and MemeQA fine-tuning (`memeqa/finetune.py`),
so a fine-tuned model is trained on exactly the inputs it is later evaluated on.

Which kind a folder holds is read from its `config.json`: a `vision_config` makes it a VLM, loaded
with `AutoModelForImageTextToText` + `AutoProcessor`; anything else is a causal LM with its
tokenizer, and pictures reach it as their alt text (meme text + caption).

torch/transformers are imported inside the functions (the `train` extra), never at import time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memegauge.extras import install_hint
from memegauge.types import ImagePart, InputError, Message


def require_torch() -> tuple[Any, Any]:
    """(torch, transformers), or an InputError saying how to install them."""
    try:
        import torch
        import transformers
    except ImportError:
        raise InputError("the hf backend and fine-tuning need the `train` extra", "backend: hf",
                         f"{install_hint('train')} (install the torch build for your machine first)") from None
    return torch, transformers


def folder_config(path: str | Path) -> dict[str, Any] | None:
    """The folder's config.json, or None when there is none (not a model folder)."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return None
    try:
        return json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_vision_folder(path: str | Path) -> bool:
    """Whether a model folder holds a vision-language model (its config has a vision tower)."""
    config = folder_config(path) or {}
    return "vision_config" in config


def pick_device(torch: Any, wanted: str = "auto") -> str:
    if wanted != "auto":
        return wanted
    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(torch: Any, wanted: str | None, device: str) -> Any:
    """`auto`: bfloat16 on a GPU that has it, else float32; None keeps the checkpoint's float32."""
    if wanted in (None, "auto"):
        if wanted == "auto" and device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    if not isinstance(getattr(torch, wanted, None), torch.dtype):
        raise InputError(f"unknown dtype {wanted!r}", "extra.dtype",
                         "use auto, float32, bfloat16 or float16")
    return getattr(torch, wanted)


@dataclass(frozen=True)
class PictureSettings:
    """How large a picture reaches a VLM's processor; None keeps the model's own processor setting.

    max_pixels  at most this many pixels per picture, for processors with dynamic resolution
                (Qwen2-VL and its family): the processor resizes, so the vision tokens shrink.
    image_size  the picture's longest side is shrunk to this many pixels before the processor
                (any VLM; a fixed-resolution processor such as LLaVA's then upscales it again).
    """

    max_pixels: int | None = None
    image_size: int | None = None

    @property
    def processor_options(self) -> dict[str, Any]:
        return {"max_pixels": self.max_pixels} if self.max_pixels else {}


def picture_settings(max_pixels: Any, image_size: Any, where: str) -> PictureSettings:
    """Validated `max_pixels` / `image_size` settings (positive integers, or absent)."""
    for name, value in (("max_pixels", max_pixels), ("image_size", image_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 28):
            raise InputError(f"{name} must be a whole number of pixels, at least 28 (got {value!r})", where,
                             f"e.g. {name}: {'802816' if name == 'max_pixels' else '896'}, or leave it out "
                             "to keep the model's own processor setting")
    return PictureSettings(max_pixels, image_size)


@dataclass
class LocalModel:
    """A loaded model and what turns requests into its inputs."""

    model: Any
    tokenizer: Any
    processor: Any | None  # the VLM's processor (image processor + tokenizer + chat template)
    device: str
    pictures: PictureSettings = PictureSettings()

    @property
    def vision(self) -> bool:
        return self.processor is not None

    @property
    def pad_id(self) -> int:
        tok = self.tokenizer
        return tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    def render(self, messages: list[dict[str, Any]]) -> str:
        """The prompt text of a conversation, through the model's chat template when it has one."""
        owner = self.processor if self.vision else self.tokenizer
        if getattr(owner, "chat_template", None):
            return owner.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return "\n".join(_plain(m["content"]) for m in messages) + " "

    def encode_prompt(self, prompt: str, images: list[Any]) -> dict[str, Any]:
        """Input tensors of one rendered prompt (batch of one); a VLM's picture goes through its
        processor, which also expands the image placeholder to the vision tokens."""
        if self.vision:
            return dict(self.processor(text=[prompt], images=images or None, return_tensors="pt"))
        return dict(self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False))


def _plain(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content)


def chat_messages(messages: list[Message], vision: bool, system_prompt: str | None = None,
                  image_size: int | None = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """(chat-template messages, pictures in order) for a request. A VLM gets `{"type": "image"}`
    where each picture goes (its longest side shrunk to `image_size` pixels when given); a
    text-only model gets the picture's alt text instead."""
    out: list[dict[str, Any]] = []
    images: list[Any] = []
    if system_prompt:
        out.append({"role": "system", "content": [{"type": "text", "text": system_prompt}]
                    if vision else system_prompt})
    for message in messages:
        if not vision:
            out.append({"role": message.role, "content": "\n".join(
                p.alt_text if isinstance(p, ImagePart) else p.text for p in message.content)})
            continue
        parts = []
        for part in message.content:
            if isinstance(part, ImagePart):
                parts.append({"type": "image"})
                images.append(open_image(part.path, image_size))
            else:
                parts.append({"type": "text", "text": part.text})
        out.append({"role": message.role, "content": parts})
    return out, images


def open_image(path: Path, image_size: int | None = None) -> Any:
    """The picture in RGB, its longest side at most `image_size` pixels (aspect kept) when given."""
    from PIL import Image

    with Image.open(path) as image:
        picture = image.convert("RGB")
    if image_size and max(picture.size) > image_size:
        picture.thumbnail((image_size, image_size), Image.Resampling.BICUBIC)
    return picture


def processor_max_pixels(processor: Any) -> int | None:
    """The most pixels a dynamic-resolution processor lets a picture keep; None for a fixed one."""
    image_processor = getattr(processor, "image_processor", None)
    size = getattr(image_processor, "size", None) or {}
    value = getattr(image_processor, "max_pixels", None) or (size.get("longest_edge") if hasattr(size, "get") else None)
    return int(value) if value else None


def load_local_model(path: str | Path, adapter: str | Path | None = None, device: str = "auto",
                     dtype: str | None = "auto", processor_options: dict[str, Any] | None = None,
                     pictures: PictureSettings = PictureSettings()) -> LocalModel:
    """A model from local folders only (nothing is downloaded), on `device`, in eval mode; a VLM's
    pictures reach its processor as `pictures` says."""
    torch, transformers = require_torch()
    path = Path(path)
    if folder_config(path) is None:
        raise InputError(f"no Hugging Face model folder at {path} (config.json missing or unreadable)",
                         "model", "give a local model folder; nothing is downloaded")
    device = pick_device(torch, device)
    kwargs = {"dtype": pick_dtype(torch, dtype, device), "local_files_only": True}
    processor = None
    if is_vision_folder(path):
        processor = load_processor(path, **{**(processor_options or {}), **pictures.processor_options})
        _check_max_pixels(processor, pictures.max_pixels, path)
        if not getattr(processor, "chat_template", None):  # nothing would say where the picture goes
            raise InputError(f"the vision-language model at {path} has no chat template",
                             "model", "use the model's instruct/chat release, whose processor has one")
        tokenizer = processor.tokenizer
        model = transformers.AutoModelForImageTextToText.from_pretrained(path, **kwargs)
    else:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(path, **kwargs)
    tokenizer.padding_side = "left"  # generation appends on the right of every row
    if adapter:
        model = attach_adapter(model, adapter)
    model.to(device).eval()
    return LocalModel(model, tokenizer, processor, device, pictures)


def _check_max_pixels(processor: Any, wanted: int | None, path: Path) -> None:
    """A `max_pixels` that the processor did not take would change nothing while the run's config
    says it did."""
    if wanted and processor_max_pixels(processor) != wanted:
        raise InputError(f"the processor of {path} has no max_pixels setting (fixed resolution)",
                         "max_pixels", "use image_size (the longest side, any model) instead")


def attach_adapter(model: Any, adapter: str | Path) -> Any:
    from peft import PeftModel

    if not (Path(adapter) / "adapter_config.json").is_file():
        raise InputError(f"no LoRA adapter folder at {adapter} (adapter_config.json missing)",
                         "adapter", "point it at a `qa finetune` output's best/ folder")
    return PeftModel.from_pretrained(model, str(adapter))


def load_processor(path: Path, **options: Any) -> Any:
    """The folder's processor. Without torchvision, transformers cannot build the video half of a
    processor that handles video too (Qwen2-VL's); MemeGauge sends pictures only, so the processor
    is then built for images alone (its image processor falls back to the PIL implementation)."""
    _, transformers = require_torch()
    try:
        return transformers.AutoProcessor.from_pretrained(path, local_files_only=True, **options)
    except (ImportError, AttributeError, OSError) as exc:
        if "video" not in str(exc).lower() and "torchvision" not in str(exc).lower():
            raise
    config = json.loads((path / "processor_config.json").read_text(encoding="utf-8"))
    cls = getattr(transformers, config["processor_class"])
    return images_only(cls).from_pretrained(path, local_files_only=True, **options)


def images_only(cls: type) -> type:
    """A subclass of a processor class whose constructor has no video processor."""
    def __init__(self: Any, image_processor: Any = None, tokenizer: Any = None,
                 chat_template: Any = None, **kwargs: Any) -> None:
        cls.__init__(self, image_processor=image_processor, tokenizer=tokenizer,
                     video_processor=None, chat_template=chat_template, **kwargs)

    return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": __name__})


def pad_batch(torch: Any, rows: list[dict[str, Any]], pad_id: int, side: str,
              labels: list[list[int]] | None = None) -> dict[str, Any]:
    """One batch from single-row inputs: per-token tensors padded (`side`), per-picture tensors
    (pixel values, grid sizes) concatenated in row order; `labels` padded with -100."""
    width = max(int(r["input_ids"].shape[1]) for r in rows)
    batch: dict[str, Any] = {}
    for key in rows[0]:
        values = [r[key] for r in rows if key in r]
        if all(r[key].shape == r["input_ids"].shape for r in rows if key in r):  # one per token
            fill = pad_id if key == "input_ids" else 0
            batch[key] = torch.stack([_pad(torch, v[0], width, fill, side) for v in values])
        else:
            batch[key] = torch.cat(values, dim=0)
    if labels is not None:
        batch["labels"] = torch.stack([_pad(torch, torch.tensor(y), width, -100, side) for y in labels])
    return batch


def _pad(torch: Any, row: Any, width: int, fill: int, side: str) -> Any:
    extra = torch.full((width - row.shape[0],), fill, dtype=row.dtype)
    return torch.cat([extra, row] if side == "left" else [row, extra])


@dataclass
class Generated:
    text: str
    prompt_tokens: int
    completion_tokens: int  # up to and including the end-of-sequence token
    stopped: bool  # ended by end-of-sequence (else cut at max_new_tokens)
    logprobs: dict[str, float] = field(default_factory=dict)  # the first token's top 5, when asked for


def generate(local: LocalModel, prompts: list[tuple[str, list[Any]]], max_new_tokens: int,
             temperature: float = 0.0, seed: int | None = None,
             max_prompt_tokens: int | None = None) -> list[Generated]:
    """The answer to each (rendered prompt, pictures), generated as one left-padded batch. A text
    prompt longer than `max_prompt_tokens` keeps its end (the question and options); a VLM prompt
    is never cut (its vision tokens must stay whole)."""
    return generate_rows(local, encode_prompts(local, prompts, max_prompt_tokens), max_new_tokens,
                         temperature, seed)


def encode_prompts(local: LocalModel, prompts: list[tuple[str, list[Any]]],
                   max_prompt_tokens: int | None = None) -> list[dict[str, Any]]:
    """One row of input tensors per (rendered prompt, pictures): the CPU half of `generate`
    (pictures through the processor), which the `hf` backend runs while the model generates."""
    rows = []
    for prompt, images in prompts:
        row = local.encode_prompt(prompt, images)
        if max_prompt_tokens and not local.vision:
            row = {k: v[:, -max_prompt_tokens:] for k, v in row.items()}
        rows.append(row)
    return rows


def generate_rows(local: LocalModel, rows: list[dict[str, Any]], max_new_tokens: int,
                  temperature: float = 0.0, seed: int | None = None, logprobs: bool = False) -> list[Generated]:
    """The answers to rows of `encode_prompts`, generated as one left-padded batch; with `logprobs`, each
    answer's first token's top 5 alternatives and their log-probabilities (the first step's scores only)."""
    import torch

    batch = pad_batch(torch, rows, local.pad_id, "left")
    batch = {k: v.to(local.device) for k, v in batch.items()}
    sampling: dict[str, Any] = {"do_sample": False}
    if temperature > 0:
        if seed is not None:
            torch.manual_seed(seed)
        sampling = {"do_sample": True, "temperature": temperature}
    with torch.no_grad():
        output = local.model.generate(**batch, max_new_tokens=max_new_tokens, pad_token_id=local.pad_id,
                                      output_scores=logprobs, return_dict_in_generate=logprobs, **sampling)
    sequences = output.sequences if logprobs else output
    firsts = _first_token_logprobs(local, torch, output.scores[0]) if logprobs else [{} for _ in rows]
    width = batch["input_ids"].shape[1]
    return [_generated(local, row, out[width:].tolist(), first)
            for row, out, first in zip(rows, sequences, firsts, strict=True)]


def _first_token_logprobs(local: LocalModel, torch: Any, scores: Any, top: int = 5) -> list[dict[str, float]]:
    """{decoded token: log-probability} of each row's `top` most likely first tokens."""
    values, ids = torch.log_softmax(scores.float(), dim=-1).topk(top, dim=-1)
    return [{local.tokenizer.decode([int(i)]): float(v) for v, i in zip(vs, row_ids, strict=True)}
            for vs, row_ids in zip(values.tolist(), ids.tolist(), strict=True)]


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether a failure is the device running out of memory: torch's OutOfMemoryError (CUDA, and
    any accelerator since torch 2.5), Python's MemoryError, or the RuntimeError of the CPU and MPS
    allocators, which have no class of their own and are known only by their message."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("can't allocate memory" in text or "out of memory" in text)


def release_cached_memory() -> None:
    """Hand the CUDA allocator's cached blocks back after an out-of-memory, so a smaller batch fits."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _generated(local: LocalModel, row: dict[str, Any], new: list[int],
               logprobs: dict[str, float] | None = None) -> Generated:
    """A row's new tokens up to its end: the first end-of-sequence, or the padding that follows it."""
    ends = {local.tokenizer.eos_token_id, local.pad_id} - {None}
    cut = next((i for i, token in enumerate(new) if token in ends), None)
    kept = new if cut is None else new[:cut + 1]
    text = local.tokenizer.decode(kept, skip_special_tokens=True).strip()
    return Generated(text, int(row["input_ids"].shape[1]), len(kept), cut is not None, logprobs or {})
