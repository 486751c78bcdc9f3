"""`backend: hf` — a local Hugging Face transformers causal LM (a model folder or checkpoint), with an
optional LoRA adapter (e.g. from `memelens qa finetune`). Text-only: images reach it as alt text.

Registry YAML::

    qwen-ft:
      backend: hf
      model: /models/Qwen2.5-1.5B-Instruct        # a local folder; nothing is downloaded
      extra: {adapter: runs/ft/best, device: auto, dtype: bfloat16}

torch and transformers (the `train` extra) are imported when the backend is built, never before,
so a machine without them runs every other backend. Generation runs in a worker thread, one request
at a time per backend (a GPU serves one batch better than interleaved ones); temperature 0 is greedy,
T > 0 samples with the request's seed. Output is not constrained: answers are parsed as usual.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memelens.extras import install_hint
from memelens.types import (ChatRequest, ChatResult, ErrorClass, ImagePart, InputError,
                            ModelCallError, Usage)

if TYPE_CHECKING:
    from memelens.config import ModelSpec


def require_torch() -> tuple[Any, Any]:
    """(torch, transformers), or an InputError saying how to install them."""
    try:
        import torch
        import transformers
    except ImportError:
        raise InputError("the hf backend and fine-tuning need the `train` extra", "backend: hf",
                         f"{install_hint('train')} (install the torch build for your machine first)") from None
    return torch, transformers


def render_chat(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    """The model's chat template when it has one, else the turns as plain text (tiny test models)."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return "\n".join(m["content"] for m in messages) + " "


def pick_device(torch: Any, wanted: str = "auto") -> str:
    if wanted != "auto":
        return wanted
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_model(path: str | Path, adapter: str | Path | None = None, device: str = "auto",
               dtype: str | None = None) -> tuple[Any, Any, str]:
    """(model, tokenizer, device) from local folders only."""
    torch, transformers = require_torch()
    path = Path(path)
    if not (path / "config.json").is_file():
        raise InputError(f"no Hugging Face model folder at {path} (config.json missing)",
                         "model", "give a local model folder; nothing is downloaded")
    device = pick_device(torch, device)
    kwargs = {"torch_dtype": getattr(torch, dtype)} if dtype else {}
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **kwargs)
    if adapter:
        from peft import PeftModel

        if not Path(adapter).is_dir():
            raise InputError(f"no LoRA adapter folder at {adapter}", "extra.adapter",
                             "point it at a `qa finetune` output's best/ folder")
        model = PeftModel.from_pretrained(model, str(adapter))
    model.to(device).eval()
    return model, tokenizer, device


def generate_text(model: Any, tokenizer: Any, device: str, prompt: str, max_new_tokens: int,
                  temperature: float = 0.0, seed: int | None = None,
                  max_prompt_tokens: int | None = None) -> tuple[str, int, int]:
    """(answer text, prompt tokens, completion tokens) for one rendered prompt; a prompt longer
    than `max_prompt_tokens` keeps its end (the question and options)."""
    import torch

    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    if max_prompt_tokens:
        inputs = {k: v[:, -max_prompt_tokens:] for k, v in inputs.items()}
    inputs = {k: v.to(device) for k, v in inputs.items()}
    sampling: dict[str, Any] = {"do_sample": False}
    if temperature > 0:
        if seed is not None:
            torch.manual_seed(seed)
        sampling = {"do_sample": True, "temperature": temperature}
    with torch.no_grad():
        output = model.generate(**inputs, max_new_tokens=max_new_tokens,
                                pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                                **sampling)
    new = output[0, inputs["input_ids"].shape[1]:]
    return tokenizer.decode(new, skip_special_tokens=True).strip(), int(inputs["input_ids"].shape[1]), int(len(new))


class HFBackend:
    """`backend: hf` models of the registry."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.vision = False
        extra = spec.extra
        self.model, self.tokenizer, self.device = load_model(
            spec.model, extra.get("adapter"), extra.get("device", "auto"), extra.get("dtype"))
        self.lock = asyncio.Lock()

    async def complete(self, request: ChatRequest) -> ChatResult:
        messages = [{"role": m.role, "content": "\n".join(
            p.alt_text if isinstance(p, ImagePart) else p.text for p in m.content)}
            for m in request.messages]
        if self.spec.system_prompt:
            messages.insert(0, {"role": "system", "content": self.spec.system_prompt})
        prompt = render_chat(self.tokenizer, messages)
        started = time.monotonic()
        async with self.lock:
            try:
                text, n_in, n_out = await asyncio.to_thread(
                    generate_text, self.model, self.tokenizer, self.device, prompt,
                    request.params.max_tokens, request.params.temperature, request.params.seed)
            except RuntimeError as exc:  # CUDA out of memory, shape errors: this request only
                raise ModelCallError(ErrorClass.BAD_REQUEST, f"generation failed: {exc}") from None
        return ChatResult(text=text, usage=Usage(prompt_tokens=n_in, completion_tokens=n_out),
                          finish_reason="length" if n_out >= request.params.max_tokens else "stop",
                          served_model=str(self.spec.model), latency_s=time.monotonic() - started)

    async def aclose(self) -> None:
        self.model = None
