"""A synthetic meme set of any size for tests and benchmarks: the bundled sample memes repeated, each
copy's text varied (seeded) and numbered, so no two memes ask the models the same thing (a repeated
meme would be served from the call cache, which flatters any schedule that has one)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from memegauge.memes import load_memes
from memegauge.samples import sample_memes_path

_OPENERS = ("", "WHEN ", "ME: ", "NOBODY: ", "POV: ", "THEY SAID ")
_CLOSERS = (" #{n}", " LOL #{n}", " EVERY TIME ({n})", " AGAIN x{n}", " DAY {n}", " (PART {n})")


def write_meme_set(directory: Path, n: int, seed: int = 0) -> Path:
    """Write `memes.jsonl` with n memes into `directory` (images point at the bundled samples)."""
    samples = load_memes(sample_memes_path())
    rng = random.Random(f"{seed}:synthetic")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "memes.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            base = samples[i % len(samples)]
            text = rng.choice(_OPENERS) + base.text + rng.choice(_CLOSERS).format(n=i)
            handle.write(json.dumps({"id": f"{base.id}-{i:04d}", "image": str(base.image), "text": text,
                                     "caption": base.caption, "labels": base.labels,
                                     "source": "memegauge-synthetic"}) + "\n")
    return path
