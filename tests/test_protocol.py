"""Named protocol choices where the papers' text and their released results differ (issue 22), and the
smaller items beside them: AdamMeme's seed set as a count or a fraction, MemeArena's judge families,
and one place that decides where erased pictures go."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.pipeline import erase_cache_for
from memegauge.arena.pipeline import check_judge_families
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.engine import Store
from memegauge.models.families import guess_family
from memegauge.types import InputError

from helpers.arena_scripted import config as arena_config


def adam(**fields) -> AdamConfig:
    return AdamConfig(memes=Path("memes.jsonl"), agent="a", targets=["t"], **fields)


def test_seeds_per_category_is_a_count_or_a_fraction():
    assert adam().seeds_for(200) == 10  # the paper's text
    released = adam(seeds_per_category=0.1)  # the original release refined about 10% of each category
    assert [released.seeds_for(n) for n in (200, 177, 5)] == [20, 17, 0]
    assert released.stored()["seeds_per_category"] == 0.1
    for bad in (1.5, -1, 0.0):
        with pytest.raises(ValidationError, match="seeds"):
            adam(seeds_per_category=bad)


def test_the_failure_rule_is_in_the_config_with_the_released_results_as_default():
    stored = adam().stored()
    assert (stored["failure_rule"], stored["failure_threshold"]) == ("at_or_below", 4.0)
    assert adam(failure_rule="below").stored()["failure_rule"] == "below"
    with pytest.raises(ValidationError):
        adam(failure_rule="under")
    assert "prompts" not in stored and "prompt_hashes" not in stored  # shipped prompts: nothing recorded


@pytest.mark.parametrize("model,family", [
    ("gpt-4o", "openai"), ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen"), ("qwq-32b", "qwen"),
    ("llava-hf/llava-v1.6-vicuna-7b-hf", "llava"), ("claude-3-5-sonnet", "anthropic"),
    ("step-1o-vision-32k", "stepfun"), ("llava-hf/llava-v1.6-mistral-7b-hf", None),  # two families: no guess
    ("my-judge", None)])
def test_a_family_is_guessed_only_where_one_known_family_matches(model, family):
    assert guess_family(model) == family


def registry(**models: str | tuple[str, str]) -> ModelRegistry:
    specs = {}
    for name, model in models.items():
        model, family = model if isinstance(model, tuple) else (model, None)
        specs[name] = ModelSpec(name=name, backend="scripted", model=model, family=family)
    return ModelRegistry(specs)


def test_a_panel_of_one_family_is_refused_naming_the_judges(tmp_path):
    cfg = arena_config(tmp_path)  # judges t-best, t-mid, t-worst
    two_qwens = registry(**{"t-best": "Qwen/Qwen2.5-VL-72B-Instruct", "t-mid": "qwen-vl-max", "t-worst": "gpt-4o"})
    with pytest.raises(InputError, match="judges of one model family: t-best, t-mid are qwen"):
        check_judge_families(cfg, two_qwens)
    check_judge_families(cfg.model_copy(update={"allow_same_family": True}), two_qwens)  # said knowingly
    # `family:` in the registry overrides the guess; judges of unknown family are not compared
    check_judge_families(cfg, registry(**{"t-best": "Qwen/Qwen2.5-VL-72B-Instruct",
                                          "t-mid": ("qwen-vl-max", "my-distill"), "t-worst": "x"}))
    with pytest.raises(InputError, match="t-mid, t-worst are acme"):
        check_judge_families(cfg, registry(**{"t-best": "gpt-4o", "t-mid": ("a", "acme"), "t-worst": ("b", "acme")}))


def test_erased_pictures_go_next_to_the_store_whoever_starts_the_run(tmp_path):
    store = Store(tmp_path / "sub" / "runs.db")
    try:
        assert erase_cache_for(adam(), store) == (tmp_path / "sub" / "memegauge-erased").resolve()
        assert erase_cache_for(adam(erase_cache=tmp_path / "mine"), store) == tmp_path / "mine"
    finally:
        store.close()


def test_the_analysis_question_names_the_category_description_when_asked_to():
    from memegauge.adammeme.messages import MemeView
    from memegauge.adammeme.reference import asking_about, question
    from memegauge.types import Meme

    view = MemeView(meme=Meme(id="m", text="T"), picture=None, text="T")
    with asking_about({"race": "Harm directed at people for their racial or ethnic background."}):
        specific = question(view, "race")
        assert question(view, "gender").count("focusing on") == 0  # a category without a description
    assert "on race, focusing on what that category covers: Harm directed at people for their racial" in specific
    assert "on race.\n" in question(view, "race")  # outside the run's block: the bare category name
    assert adam().analysis_question == "description" and adam(analysis_question="category")
