"""MemeLens: measure how well multimodal LLMs understand memes (AdamMeme, MemeArena, MemeQA)."""

__version__ = "0.1.0"
