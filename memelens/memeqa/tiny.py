"""A tiny causal LM built locally (no hub): a character-level tokenizer and a randomly initialised
Llama-architecture model, saved as an ordinary Hugging Face folder. It lets fine-tuning and the hf
backend be exercised end to end on CPU in tests, and on a GPU at a few tens of millions of
parameters, without downloading anything. Its answers mean nothing until it is trained.
"""

from __future__ import annotations

from pathlib import Path

from memelens.models.hf import require_torch

SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
CHARACTERS = [chr(i) for i in range(32, 127)] + ["\n", "’", "‘", "“", "”", "—", "–", "…", "é"]


def build_tiny_model(out_dir: Path | str, *, hidden: int = 64, layers: int = 2, heads: int = 4,
                     intermediate: int | None = None, max_positions: int = 4096,
                     seed: int = 0) -> Path:
    """Write a tokenizer + untrained Llama model to `out_dir` and return it."""
    torch, transformers = require_torch()
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    out = Path(out_dir)
    vocab = {token: i for i, token in enumerate(SPECIALS + CHARACTERS)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
        eos_token="</s>")
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
