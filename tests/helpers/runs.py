"""Real method runs for the report, CLI and API tests: each method's own pipeline, through the
`memegauge` CLI, against the local OpenAI-compatible test server (deterministic answers, no faults).
Small sizes.

`world(tmp, base_url, meme_text=...)` writes memes, a model registry, the AdamMeme and MemeArena
configs and a tiny MemeQA data set (both versions); `run_all` runs the three methods into one store.
The session fixture `method_runs` (tests/conftest.py) holds one such run of each method for the tests
that only read runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from helpers.memeqa_data import qa_dataset
from memegauge.testing.synthetic_memes import write_meme_set
from memegauge.cli import main

TARGETS = ("gpt-x", "qwen-x", "llava-x")
JUDGES = ("gpt-x", "qwen-x")
QA_MODEL = "qwen-x"


@dataclass
class World:
    root: Path
    store: Path
    models: Path
    adam: Path
    arena: Path
    qa_data: Path
    qa_images: Path

    def cli(self, *args: str) -> int:
        return main(["--store", str(self.store), "--models", str(self.models), "--quiet", *args])


def world(root: Path, base_url: str, meme_text: str | None = None) -> World:
    memes = write_meme_set(root / "memes", 12, seed=5)
    if meme_text is not None:  # the first meme of every method carries this text (the XSS probe)
        rows = [json.loads(line) for line in memes.read_text().splitlines()]
        rows[0]["text"] = meme_text
        memes.write_text("".join(json.dumps(r) + "\n" for r in rows))
    models = root / "models.yaml"
    models.write_text("".join(f"{m}: {{backend: openai, model: {m}, base_url: {base_url}, max_concurrency: 8, "
                              f"backoff_s: 0.01, backoff_max_s: 0.05}}\n" for m in ("agent", *TARGETS)))
    adam = root / "adam.yaml"
    adam.write_text(f"memes: {memes}\nagent: agent\ntargets: [gpt-x, llava-x]\nerase: false\n"
                    "seeds_per_category: 2\nmax_steps: 3\nwarn_below: 0\n")
    arena = root / "arena.yaml"
    arena.write_text(f"memes: {memes}\nlimit: 3\nagent: agent\ntargets: [{', '.join(TARGETS)}]\n"
                     f"judges: [{', '.join(JUDGES)}]\nbootstrap_rounds: 50\nboth_orders: true\n")
    qa_data, qa_images = qa_dataset(root / "qa")
    return World(root, root / "store.db", models, adam, arena, qa_data, qa_images)


def run_all(w: World) -> dict[str, str]:
    """Run AdamMeme, MemeArena and MemeQA (both versions) into the world's store; method → run name."""
    assert w.cli("adam", "-c", str(w.adam), "--run", "adam") == 0
    assert w.cli("arena", "-c", str(w.arena), "--run", "arena") == 0
    for version in ("none-minus", "none-plus"):
        assert w.cli("qa", "eval", "--data", str(w.qa_data), "--images", str(w.qa_images), "--version", version,
                     "--split", "dev", "--model", QA_MODEL, "--run", f"qa-{version}") == 0
    return {"adammeme": "adam", "arena": "arena", "memeqa": "qa-none-minus", "memeqa+": "qa-none-plus"}
