"""The guides (issue 13): every config key is in its guide's table, every complete config they show is
valid as written, and nothing refers to a file that does not ship."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from memegauge.adammeme.config import AdamConfig
from memegauge.arena.config import ArenaConfig
from memegauge.config import registry_from_mapping
from memegauge.models.spec import ModelSpec
from memegauge.memeqa.build import BuildConfig
from memegauge.memeqa.config import EvalConfig
from memegauge.memeqa.finetune import FinetuneConfig

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDES = {"adammeme.md": [AdamConfig], "arena.md": [ArenaConfig],
          "memeqa.md": [EvalConfig, BuildConfig, FinetuneConfig], "models.md": [ModelSpec]}
CONFIG_FILES = {"adam.yaml": AdamConfig, "arena.yaml": ArenaConfig, "eval.yaml": EvalConfig,
                "build.yaml": BuildConfig, "finetune.yaml": FinetuneConfig}


@pytest.mark.parametrize("guide", sorted(GUIDES))
def test_every_config_key_is_in_its_guide(guide):
    text = (DOCS / guide).read_text(encoding="utf-8")
    for model in GUIDES[guide]:
        missing = [k for k in model.model_fields if k != "name" and f"`{k}`" not in text]
        assert missing == [], f"{guide} does not document {model.__name__} keys {missing}"


def _shown_files() -> list[tuple[str, str, dict]]:
    """Every ```yaml block that starts `# file: NAME` in a guide, as (guide, NAME, data)."""
    shown = []
    for guide in sorted(DOCS.glob("*.md")):
        for block in re.findall(r"```yaml\n(.*?)```", guide.read_text(encoding="utf-8"), re.S):
            first = block.splitlines()[0]
            if first.startswith("# file:"):
                shown.append((guide.name, first.split()[2], yaml.safe_load(block)))
    return shown


def test_the_complete_configs_the_guides_show_are_valid_as_written():
    shown = _shown_files()
    assert {name for _, name, _ in shown} >= {*CONFIG_FILES, "models.yaml"}
    for guide, name, data in shown:
        if name == "models.yaml":
            registry_from_mapping(data, f"{guide}: {name}")
        else:
            CONFIG_FILES[name].model_validate(data)


def test_the_docs_refer_only_to_files_that_ship():
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        assert "DESIGN" not in text, f"{page.name} cites DESIGN, which does not ship"
        for target in re.findall(r"\]\(([^)#:]+\.md)", text):
            assert (page.parent / target).is_file(), f"{page.name} links to {target}, which does not exist"
