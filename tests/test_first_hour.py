"""The first hour, smoothed (issue 34, part D): what a new user meets first, each with its fix.

* one meme-set reader for every method: a meme set whose `image` names are relative to a separate
  pictures folder (the SemEval-2021 Task 6 layout `qa eval --images` takes) loads with `images:` in the
  config or `--images DIR` for `adam` and `arena` too, and is refused with that fix without it;
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memegauge.memes import load_memes
from memegauge.types import InputError
from helpers.runs import world


def _semeval_layout(memes_jsonl: Path, corpus: Path) -> Path:
    """The SemEval layout of a meme set: `corpus/memes.jsonl` naming pictures kept in `corpus/images/`."""
    (corpus / "images").mkdir(parents=True)
    rows = [json.loads(line) for line in memes_jsonl.read_text().splitlines() if line.strip()]
    for i, row in enumerate(rows):
        name = f"{i:03d}_image.png"
        shutil.copyfile(row["image"], corpus / "images" / name)
        row["image"] = name
    (corpus / "memes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return corpus / "memes.jsonl"


# --------------------------------------------------------------------------------------------------
# One meme-set reader, the same --images for every method
# --------------------------------------------------------------------------------------------------


def test_a_separate_pictures_folder_loads_by_its_folder_or_the_corpus_folder(tmp_path):
    w = world(tmp_path, "http://127.0.0.1:9/v1")
    memes = _semeval_layout(tmp_path / "memes" / "memes.jsonl", tmp_path / "corpus")
    with pytest.raises(InputError) as info:
        load_memes(memes)
    assert "images:" in info.value.fix and "--images" in info.value.fix
    by_folder = load_memes(memes, images=tmp_path / "corpus" / "images")
    by_corpus = load_memes(memes, images=tmp_path / "corpus")
    assert [m.image for m in by_folder] == [m.image for m in by_corpus]
    assert by_folder[0].image == tmp_path / "corpus" / "images" / "000_image.png"
    assert len(by_folder) == 12 and w.adam.exists()
    with pytest.raises(InputError, match="pictures folder not found"):
        load_memes(memes, images=tmp_path / "nowhere")


@pytest.mark.parametrize("method", ["adam", "arena"])
def test_adam_and_arena_take_images_as_qa_eval_does(tmp_path, capsys, method):
    w = world(tmp_path, "http://127.0.0.1:9/v1")
    _semeval_layout(tmp_path / "memes" / "memes.jsonl", tmp_path / "corpus")
    config = w.adam if method == "adam" else w.arena
    config.write_text(config.read_text().replace(f"memes: {tmp_path / 'memes' / 'memes.jsonl'}",
                                                 "memes: corpus/memes.jsonl"))
    capsys.readouterr()
    assert w.cli(method, "-c", str(config), "--dry-run") == 2
    assert "--images" in capsys.readouterr().err
    # the option, from the shell's working directory (a relative path), or the config key, from the file's
    assert w.cli(method, "-c", str(config), "--images", str(tmp_path / "corpus"), "--dry-run") == 0
    assert "planned calls" in capsys.readouterr().out
    config.write_text(config.read_text() + "images: corpus/images\n")
    assert w.cli(method, "-c", str(config), "--dry-run") == 0
    assert not w.store.exists()


# --------------------------------------------------------------------------------------------------
# setup.sh installs what the README's examples use
# --------------------------------------------------------------------------------------------------


def _requirement_names(lines: list[str]) -> set[str]:
    import re

    return {re.split(r"[<>=!~ \[;]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")
            for line in lines if line.strip() and not line.lstrip().startswith("#")}


def test_setup_sh_pins_every_extra_of_all_so_the_readme_python_example_runs():
    """README: setup.sh installs the core and every extra of `all` — its Python example calls
    `to_pandas`, which without pandas stops with `pip install 'memegauge[pandas]'`."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted: list[str] = list(project["dependencies"])
    for ref in extras["all"]:
        for extra in ref.split("[", 1)[1].rstrip("]").split(","):
            wanted += extras[extra.strip()]
    pinned = _requirement_names((root / "requirements.lock").read_text().splitlines()
                                + (root / "requirements-model.txt").read_text().splitlines())
    assert "setup.sh" in (root / "README.md").read_text() and "requirements.lock" in \
        (root / "scripts" / "setup.sh").read_text()
    assert sorted(_requirement_names(wanted) - pinned) == []
    assert "pandas" in pinned and "pyarrow" in pinned
