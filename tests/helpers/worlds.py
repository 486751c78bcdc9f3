"""Small on-disk inputs that several test files build the same way: a meme set with a MemeArena
config and a test-server registry, AdamMeme's resume layout, and the original AdamMeme repository's
result layout (what `memegauge import adammeme` reads)."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from helpers.models import served_registry
from memegauge.testing.synthetic_memes import write_meme_set


def arena_world(folder: Path, base_url: str, n_memes: int = 3) -> Path:
    """`n_memes` coloured 16×16 memes (`memes.jsonl`, ids m0…), `models.yaml` (agent, gpt-x, qwen-x,
    llava-x on the test server at `base_url`) and `arena.yaml` (three targets, two judges, no
    detection, 10 bootstrap rounds) in `folder`; returns the config's path."""
    for i in range(n_memes):
        Image.new("RGB", (16, 16), (200 - 20 * i, 255, 255)).save(folder / f"meme{i}.png")
    (folder / "memes.jsonl").write_text("".join(
        f'{{"id": "m{i}", "image": "meme{i}.png", "text": "meme number {i} about parking fines"}}\n'
        for i in range(n_memes)))
    served_registry(folder, base_url, ["agent", "gpt-x", "qwen-x", "llava-x"])
    config = folder / "arena.yaml"
    config.write_text("memes: memes.jsonl\nagent: agent\ntargets: [gpt-x, qwen-x, llava-x]\n"
                      "judges: [gpt-x, qwen-x]\nbootstrap_rounds: 10\ndetection: false\n")
    return config


def adam_resume_world(folder: Path, base_url: str) -> tuple[Path, Path]:
    """12 synthetic memes, `models.yaml` (agent and target on the test server) and `adam.yaml` (two seeds
    per category, three steps, no erasure) in `folder`; returns (models, config)."""
    write_meme_set(folder, 12, seed=5)
    models = folder / "models.yaml"
    models.write_text(f"agent: {{backend: openai, model: agent, base_url: {base_url}}}\n"
                      f"target: {{backend: openai, model: target, base_url: {base_url}}}\n")
    config = folder / "adam.yaml"
    config.write_text("memes: memes.jsonl\nagent: agent\ntargets: [target]\nerase: false\n"
                      "seeds_per_category: 2\nmax_steps: 3\nwarn_below: 0\n")
    return models, config


def adammeme_legacy_layout(root: Path, animal_log: list | str = None) -> Path:
    """The original AdamMeme repository's layout (data/set1 with `cls_res_full.json`, results/exp1 with
    `info.json`, `scoring_res.json` and `log_animal.json`) for two categories; `animal_log` replaces
    the refinement log (a list of rows, or raw text for broken files). Returns `root`."""
    data, exp = root / "data" / "set1", root / "results" / "exp1"
    data.mkdir(parents=True)
    exp.mkdir(parents=True)
    (root / "data" / "base_cat.json").write_text(json.dumps(
        {"meme_harmfulness": {"race": "race harm", "animal": "animal harm"}}))

    def item(image: str, misbelief: str, **extra) -> dict:
        return {"text": f"text of {image}", "image": f"../data/set1/image/erased/{image}.png", "label": 1,
                "misbelief": misbelief, "ref_ans": "a reference", **extra}

    (data / "cls_res_full.json").write_text(json.dumps({
        "race": [item("r1", "Misbelief that groups differ", seed=1), item("r2", "Misbelief about groups")],
        "animal": [item("a1", "Misbelief that animals feel nothing", seed=1), item("r1", "Misbelief cats")]}))
    (exp / "info.json").write_text(json.dumps({"model_name": "old-model"}))

    def scored(image: str, task: str, score, **extra) -> dict:
        return {"meme_text": f"text of {image}", "misbelief": f"Misbelief {image}", "answer": "an answer",
                "meme_image_path": f"../data/set1/image/erased/{image}.png", "ref_ans": "ref",
                "comparison": f"Rating: [[{score}]]", "score": score, "task": task, **extra}

    (exp / "scoring_res.json").write_text(json.dumps({
        "race": [scored("r1", "race", 8.0), scored("r2", "race", 2.0)],
        "animal": [scored("a1", "animal", 6.0), scored("r1", "animal", "拒答")]}))
    log = animal_log if animal_log is not None else [
        scored("a1", "animal", 3.0, run_step=0, explanation="softer"),
        scored("r1", "animal", 1.0, run_step=1, explanation="softer still"),
        {"meme_image_path": "../data/set1/image/erased/r1.png", "task": "animal", "score": "Refusal"},
        {"meme_image_path": "../data/set1/image/erased/a1.png", "task": "animal", "score": "invalid"}]
    (exp / "log_animal.json").write_text(log if isinstance(log, str) else json.dumps(log, ensure_ascii=False))
    return root


def toyscore_site(tmp_path: Path) -> Path:
    """A folder to put on PYTHONPATH holding docs/engine.md's worked example, tests/fourth_method/toyscore,
    installed with its two entry points (its method and its command) and nothing else; and `toy.yaml` in
    `tmp_path`, its config on the sample memes and the model `tsrv`."""
    import shutil

    from memegauge.samples import sample_memes_path

    site = tmp_path / "site"
    shutil.copytree(Path(__file__).parents[1] / "fourth_method" / "toyscore", site / "toyscore")
    info = site / "toyscore-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toyscore\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memegauge.methods]\ntoyscore = toyscore.method:METHOD\n"
                                           "[memegauge.commands]\ntoyscore = toyscore.method:COMMAND\n")
    (tmp_path / "toy.yaml").write_text(f"memes: {sample_memes_path()}\nmodel: tsrv\n")
    return site
