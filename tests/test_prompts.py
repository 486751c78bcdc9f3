"""Bring your own wording (`prompts: DIR` in a method config): role-by-role replacement of the shipped
templates, variable sets checked (a bad template is refused, listing both sets), the prompts' hashes in
the run's config, and the report saying "custom prompts". Runs go to the local test server."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from helpers.worlds import adam_resume_world
from memegauge.adammeme.taxonomy import SEED_CATEGORIES
from memegauge.cli import main
from memegauge.prompts import check_prompt_dir, render_prompt, shipped_templates, template_variables, using_prompts
from memegauge.testing.server import start_server
from memegauge.types import InputError


PACKAGE = Path(__file__).parents[1] / "memegauge"
WORDING = "Say, in the bespoke wording of issue 22, what harm this meme does"


def custom_question(folder: Path, body: str | None = None) -> Path:
    """A prompts folder replacing one role (the analysis question) with new wording."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "adammeme_question.j2").write_text(
        body if body is not None else f"{WORDING} about {{{{ task }}}} ({{{{ description }}}}).\n"
                                      "meme_text: {{ text }}\n")
    return folder


def test_the_custom_file_wins_and_the_other_roles_keep_the_shipped_wording(tmp_path):
    folder = custom_question(tmp_path / "p")
    hashes = check_prompt_dir(folder, "adammeme_")
    assert list(hashes) == ["adammeme_question"] and len(hashes["adammeme_question"]) == 64
    shipped_scorer = render_prompt("adammeme_scorer", meme_text="t", question="q", ref_answer="r", answer="a")
    with using_prompts(folder):
        assert render_prompt("adammeme_question", task="race", text="T",
                             description="d").startswith(WORDING + " about race (d).")
        assert render_prompt("adammeme_scorer", meme_text="t", question="q", ref_answer="r",
                             answer="a") == shipped_scorer
    assert "bespoke" not in render_prompt("adammeme_question", task="race", text="T", description="")


def test_shipped_templates_are_listed_per_method():
    names = shipped_templates("adammeme_")
    assert "adammeme_question" in names and all(n.startswith("adammeme_") for n in names)
    shipped = (PACKAGE / "adammeme" / "prompts" / "adammeme_question.j2").read_text()
    assert template_variables(shipped) == {"task", "text", "description"}


@pytest.mark.parametrize("body,listed", [
    ("About {{ task }} only.", "missing: description, text; unknown: –"),
    ("{{ task }} {{ text }} {{ description }} {{ mood }}", "missing: –; unknown: mood"),
])
def test_a_template_with_other_variables_is_refused_listing_both_sets(tmp_path, body, listed):
    folder = custom_question(tmp_path / "p", body)
    with pytest.raises(InputError) as caught:
        check_prompt_dir(folder, "adammeme_")
    message = str(caught.value)
    assert "the shipped template uses {description, task, text}" in message and listed in message


def test_a_file_that_replaces_nothing_or_bad_syntax_is_refused(tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "adammeme_questions.j2").write_text("{{ task }} {{ text }} {{ description }}")
    with pytest.raises(InputError, match="(?s)replaces no template of this method.*adammeme_question.j2"):
        check_prompt_dir(folder, "adammeme_")
    (folder / "adammeme_questions.j2").unlink()
    (folder / "arena_judge.j2").write_text("{{ task }}")  # another method's role
    with pytest.raises(InputError, match="replaces no template"):
        check_prompt_dir(folder, "adammeme_")
    (folder / "arena_judge.j2").unlink()
    (folder / "adammeme_question.j2").write_text("{% if task %}{{ text }}")
    with pytest.raises(InputError, match="template syntax error"):
        check_prompt_dir(folder, "adammeme_")


@pytest.fixture(scope="module")
def server():
    with start_server(latency_ms=0, seed=3) as srv:
        yield srv


def adam_setup(tmp_path: Path, server, prompts: str) -> tuple[Path, Path]:
    """The resume test's meme set, registry and config (test server), with `prompts: DIR` added."""
    models, config = adam_resume_world(tmp_path, server.base_url)
    config.write_text(config.read_text() + f"prompts: {prompts}\n")
    return models, config


def sent_texts(store: Path, stage: str) -> list[str]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT request_json FROM calls WHERE stage = ?", (stage,)).fetchall()
    return [json.dumps(json.loads(r[0])["messages"]) for r in rows]


def test_a_custom_prompts_run_sends_the_new_wording_and_says_so(tmp_path, server, capsys):
    custom_question(tmp_path / "my-prompts")
    models, config = adam_setup(tmp_path, server, "my-prompts")  # relative to the config file
    store = tmp_path / "s.db"
    base = ["--store", str(store), "--models", str(models), "--quiet"]
    assert main([*base, "adam", "-c", str(config), "--run", "custom"]) == 0
    assert "custom (custom prompts)" in capsys.readouterr().out
    for stage in ("adammeme.reference.candidate", "adammeme.scoring.target", "adammeme.scoring.scorer"):
        texts = sent_texts(store, stage)
        assert texts and all(WORDING in t for t in texts), stage
        # the default analysis question names the category's description from the taxonomy
        assert all(any(d[:40] in t for d in SEED_CATEGORIES.values()) for t in texts), stage
    assert not any(WORDING in t for t in sent_texts(store, "adammeme.mining.miner"))  # other roles: shipped
    assert main([*base, "report", "custom", "--format", "json"]) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    digest = check_prompt_dir(tmp_path / "my-prompts", "adammeme_")["adammeme_question"]
    assert run["prompts"] == {"folder": str(tmp_path / "my-prompts"), "hashes": {"adammeme_question": digest}}
    assert run["config"]["prompt_hashes"] == {"adammeme_question": digest}
    out = tmp_path / "custom.html"
    assert main([*base, "report", "custom", "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert "adammeme (custom prompts)" in page and digest[:12] in page
    # a changed template is a different config: the run is not resumed with other wording
    (tmp_path / "my-prompts" / "adammeme_question.j2").write_text(
        f"{WORDING}! {{{{ task }}}} {{{{ text }}}} {{{{ description }}}}")
    assert main([*base, "adam", "-c", str(config), "--run", "custom"]) == 2


def test_a_bad_template_is_refused_before_anything_is_written(tmp_path, server, capsys):
    custom_question(tmp_path / "bad", "Rate {{ meme }} for {{ task }}.")
    models, config = adam_setup(tmp_path, server, "bad")
    store = tmp_path / "s.db"
    assert main(["--store", str(store), "--models", str(models), "--quiet", "adam", "-c", str(config)]) == 2
    err = capsys.readouterr().err
    assert "uses the variables {meme, task}" in err and "{description, task, text}" in err
    assert "missing: description, text" in err and "unknown: meme" in err
    assert not store.exists()


def test_an_arena_config_takes_its_own_roles_only(tmp_path):
    from memegauge.arena.config import ArenaConfig
    from memegauge.config import load_config

    folder = tmp_path / "p"
    folder.mkdir()
    shipped = (PACKAGE / "arena" / "prompts" / "arena_task.j2").read_text()
    (folder / "arena_task.j2").write_text(shipped + "\nBe brief.\n")
    (tmp_path / "memes.jsonl").write_text("")
    config = tmp_path / "arena.yaml"
    config.write_text("memes: memes.jsonl\nagent: a\ntargets: [a, b]\njudges: [a]\nprompts: p\n")
    stored = load_config(config, ArenaConfig).stored()
    assert stored["prompts"] == str(folder) and list(stored["prompt_hashes"]) == ["arena_task"]
    custom_question(folder)  # an AdamMeme role in an arena folder
    with pytest.raises(InputError, match="replaces no template of this method"):
        load_config(config, ArenaConfig)
