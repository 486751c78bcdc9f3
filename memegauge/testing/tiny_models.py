"""Tiny models built locally (no hub): a character-level tokenizer and a randomly initialised
Llama-architecture causal LM, or a vision-language model of a real architecture (Qwen2-VL, LLaVA)
with its own image processor and chat template, saved as an ordinary Hugging Face folder. They let
fine-tuning and the hf backend be exercised end to end on CPU in tests, and on a GPU at a few tens
of millions of parameters, without downloading anything. Their answers mean nothing until trained.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.models.hf_local import require_torch

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
CHARACTERS = [chr(i) for i in range(32, 127)] + ["\n", "’", "‘", "“", "”", "—", "–", "…", "é"]


def character_tokenizer(transformers: Any, extra_special: list[str] = ()) -> Any:
    """One token per character, plus `extra_special` tokens kept whole (image placeholders)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab = {token: i for i, token in enumerate(SPECIALS + CHARACTERS)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
        eos_token="</s>")
    if extra_special:
        tokenizer.add_special_tokens({"additional_special_tokens": list(extra_special)})
    return tokenizer


def build_tiny_model(out_dir: Path | str, *, hidden: int = 64, layers: int = 2, heads: int = 4,
                     intermediate: int | None = None, max_positions: int = 4096,
                     seed: int = 0) -> Path:
    """Write a tokenizer + untrained Llama model to `out_dir` and return it."""
    torch, transformers = require_torch()
    out = Path(out_dir)
    tokenizer = character_tokenizer(transformers)
    vocab = tokenizer.get_vocab()
    config = transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=hidden, intermediate_size=intermediate or 4 * hidden,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
        max_position_embeddings=max_positions, pad_token_id=vocab["<pad>"],
        bos_token_id=vocab["<s>"], eos_token_id=vocab["</s>"], tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(config)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return out


# Chat templates in each family's own layout, for content given as a list of {"type": "image"} /
# {"type": "text"} parts (what `hf_local.chat_messages` sends) or as a plain string.
QWEN2_VL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
LLAVA_TEMPLATE = (
    "{% for m in messages %}{{ m['role'].upper() }}: "
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}")
VLM_ARCHITECTURES = ("qwen2-vl", "llava")


def build_tiny_vlm(out_dir: Path | str, architecture: str = "qwen2-vl", *, hidden: int = 32,
                   layers: int = 1, heads: int = 2, vision_hidden: int = 32, image_size: int = 56,
                   init_range: float = 0.02, seed: int = 0, shapes: dict[str, dict[str, Any]] | None = None,
                   dtype: str | None = None, device: str = "cpu") -> Path:
    """Write an untrained vision-language model of `architecture` (qwen2-vl or llava), with its
    processor (image processor, character tokenizer with the family's image tokens, chat
    template), to `out_dir`; `image_size` bounds the picture's side in pixels (vision tokens).
    `shapes` ({"text": {...}, "vision": {...}}) overrides config fields, e.g. a released 7B
    model's (bench/gpu_scale.py); `dtype` / `device` are where its weights are drawn."""
    torch, transformers = require_torch()
    if architecture not in VLM_ARCHITECTURES:
        raise ValueError(f"architecture must be one of {VLM_ARCHITECTURES}")
    out = Path(out_dir)
    build = _tiny_qwen2_vl if architecture == "qwen2-vl" else _tiny_llava
    torch.manual_seed(seed)
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype) if dtype else default_dtype)
    try:
        with torch.device(device):
            model, processor = build(transformers, hidden, layers, heads, vision_hidden, image_size,
                                     shapes or {})
    finally:
        torch.set_default_dtype(default_dtype)
    if init_range != 0.02:  # larger weights: the picture moves the untrained model's answers more
        with torch.no_grad():
            for parameter in model.parameters():
                if parameter.dim() > 1:
                    parameter.normal_(0.0, init_range)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def _text_config(tokenizer: Any, hidden: int, layers: int, heads: int, **more: Any) -> dict[str, Any]:
    return dict(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
                bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                tie_word_embeddings=True, **more)


def _tiny_qwen2_vl(transformers: Any, hidden: int, layers: int, heads: int, vision_hidden: int,
                   image_size: int, shapes: dict[str, dict[str, Any]]) -> tuple[Any, Any]:
    from memegauge.models.hf_local import images_only

    tokenizer = character_tokenizer(transformers, ["<|im_start|>", "<|im_end|>", "<|vision_start|>",
                                                   "<|image_pad|>", "<|vision_end|>", "<|video_pad|>"])
    ids = tokenizer.convert_tokens_to_ids
    text = {**_text_config(tokenizer, hidden, layers, heads), **shapes.get("text", {})}
    head_dim = text["hidden_size"] // text["num_attention_heads"]
    text["rope_scaling"] = {"type": "mrope",
                            "mrope_section": [head_dim // 8, head_dim * 3 // 16, head_dim * 3 // 16]}
    config = transformers.Qwen2VLConfig(
        text_config=text,
        vision_config={**dict(depth=layers, embed_dim=vision_hidden, hidden_size=text["hidden_size"],
                              num_heads=heads, mlp_ratio=2, patch_size=14, spatial_merge_size=2,
                              temporal_patch_size=2), **shapes.get("vision", {})},
        image_token_id=ids("<|image_pad|>"), video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"), vision_end_token_id=ids("<|vision_end|>"),
        tie_word_embeddings=text["tie_word_embeddings"])
    # The PIL image processor needs no torchvision; min/max pixels keep a picture to a few tokens.
    image_processor = transformers.Qwen2VLImageProcessorPil(
        min_pixels=28 * 28, max_pixels=image_size * image_size, patch_size=14, merge_size=2,
        temporal_patch_size=2)
    processor = images_only(transformers.Qwen2VLProcessor)(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=QWEN2_VL_TEMPLATE)
    return transformers.Qwen2VLForConditionalGeneration(config), processor


def _tiny_llava(transformers: Any, hidden: int, layers: int, heads: int, vision_hidden: int,
                image_size: int, shapes: dict[str, dict[str, Any]]) -> tuple[Any, Any]:
    tokenizer = character_tokenizer(transformers, ["<image>"])
    config = transformers.LlavaConfig(
        vision_config=transformers.CLIPVisionConfig(**{
            **dict(hidden_size=vision_hidden, intermediate_size=2 * vision_hidden, num_hidden_layers=layers + 1,
                   num_attention_heads=heads, image_size=image_size, patch_size=14), **shapes.get("vision", {})}),
        text_config=transformers.LlamaConfig(**{**_text_config(tokenizer, hidden, layers, heads),
                                                **shapes.get("text", {})}),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        tie_word_embeddings=shapes.get("text", {}).get("tie_word_embeddings", True))
    image_processor = transformers.CLIPImageProcessor(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size})
    processor = transformers.LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=14,
        vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=LLAVA_TEMPLATE)
    return transformers.LlavaForConditionalGeneration(config), processor
