"""Toyscore: a minimal fourth method, one folder (docs/engine.md, "Adding a method"). It asks one model,
for each meme, whether the meme is funny, and reports the share it found funny."""
