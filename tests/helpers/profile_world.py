"""A store for the profile tests (tests/test_profile*.py): two models measured every way against the test server in
its realistic style — MemeQA (both versions, on a `test` split, so the paper's figures apply), AdamMeme (both as
targets), an arena (both plus a reference target) and three field benchmarks (FHM, MAMI, HarMeme, each in its
release's own layout) — with an XSS probe in a meme text, a MemeQA option (which realistic replies quote back)
and a benchmark text."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from memegauge.cli import main
from memegauge.testing.synthetic_memes import write_meme_set
from helpers.memeqa_data import qa_dataset

MODELS = ("qwen-x", "gpt-x")
REFERENCE = "llava-x"
XSS = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = '<script>window.__xss=2</script>'
BENCHMARKS = ("fhm", "mami", "harmeme")


@dataclass
class ProfileWorld:
    root: Path
    store: Path
    models: Path

    def cli(self, *args: str) -> int:
        return main(["--store", str(self.store), "--models", str(self.models), "--quiet", *args])


def _poison_first(path: Path, field: str, value: str) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0][field] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_inputs(root: Path, base_url: str) -> dict[str, Path | str]:
    """The inputs of every method (configs, a MemeQA data set with a `test` split, three benchmark releases under
    `root/bench/<name>`) and a model registry; nothing is run. Returns the paths and each benchmark's split."""
    from test_benchmarks import fhm, harmeme, mami  # the releases' own layouts, as the kit's tests write them

    memes = write_meme_set(root / "memes", 9, seed=5)
    _poison_first(memes, "text", f"meme text {XSS} {XSS_SCRIPT}")
    models = root / "models.yaml"
    models.write_text("".join(f"{m}: {{backend: openai, model: {m}, base_url: {base_url}, max_concurrency: 8, "
                              f"backoff_s: 0.01, backoff_max_s: 0.05}}\n" for m in ("agent", *MODELS, REFERENCE)))
    (root / "adam.yaml").write_text(f"memes: {memes}\nagent: agent\ntargets: [{', '.join(MODELS)}]\nerase: false\n"
                                    "seeds_per_category: 2\nmax_steps: 2\nwarn_below: 0\n")
    contestants = ", ".join((*MODELS, REFERENCE))
    (root / "arena.yaml").write_text(f"memes: {memes}\nlimit: 3\nagent: agent\ntargets: [{contestants}]\n"
                                     f"judges: [{REFERENCE}, gpt-x]\nbootstrap_rounds: 50\nboth_orders: true\n")
    data, images = qa_dataset(root / "qa", memes=("m1", "m2", "m3"))
    for version in ("none-minus", "none-plus"):
        items = json.loads((data / version / "dev.json").read_text())
        items[0]["options"][0] = f"alpha {XSS}"
        (data / version / "test.json").write_text(json.dumps(items))
    bench = root / "bench"
    fhm(bench / "fhm", 10)
    _poison_first(bench / "fhm" / "dev_seen.jsonl", "text", f"fhm text {XSS}")
    # FHM's published figures are on test_seen: the fixture's items serve as that split too, so they apply
    (bench / "fhm" / "test_seen.jsonl").write_text((bench / "fhm" / "dev_seen.jsonl").read_text())
    splits = {"fhm": "test_seen", "mami": mami(bench / "mami", 10), "harmeme": harmeme(bench / "harmeme", 9)}
    (root / "qa.yaml").write_text(f"data: {data}\nimages: {images}\nsplit: test\nversion: none-minus\n"
                                  f"model: {MODELS[0]}\n")
    return {"models": models, "qa_data": data, "qa_images": images, "bench": bench, **splits}


def build(root: Path, base_url: str) -> ProfileWorld:
    """Write the inputs and run every method for both models into `root/store.db` (through the CLI)."""
    found = write_inputs(root, base_url)
    data, images = found["qa_data"], found["qa_images"]
    w = ProfileWorld(root, root / "store.db", found["models"])
    assert w.cli("adam", "-c", str(root / "adam.yaml"), "--run", "adam") == 0
    assert w.cli("arena", "-c", str(root / "arena.yaml"), "--run", "arena") == 0
    for model in MODELS:
        for version in ("none-minus", "none-plus"):
            assert w.cli("qa", "eval", "--data", str(data), "--images", str(images), "--version", version,
                         "--split", "test", "--model", model, "--run", f"qa-{version}-{model}") == 0
        for name in BENCHMARKS:
            assert w.cli("eval", name, "--model", model, "--split", str(found[name]), "--data",
                         str(found["bench"] / name)) == 0
    return w


def copy(world: ProfileWorld, root: Path) -> ProfileWorld:
    """A copy of the world's store (and inputs) a test may add runs to."""
    shutil.copytree(world.root, root, dirs_exist_ok=True)
    return ProfileWorld(root, root / "store.db", root / "models.yaml")
