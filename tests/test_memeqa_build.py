"""MemeQA construction: QO pairs, cloze spans, generator parsing, AF, trivial filter, None+, split,
`qa build` end to end (read back by `qa eval`), and a round trip through the shared dev split."""

from __future__ import annotations

import asyncio
import collections
import json
from pathlib import Path

import pytest
import yaml

from helpers.memeqa_build import registry
from helpers.memeqa_data import write_annotations
from memegauge.cli import main
from memegauge.engine import Store
from memegauge.memeqa.construct import (Annotation, Target, cloze_items, content_spans,
                                       load_annotations, multi_questions, single_questions)
from memegauge.memeqa.dataset import (NONE_OF_THE_ABOVE, QUESTION_TYPES, SENTIMENT, Question,
                                     load_questions)
from memegauge.memeqa.generator import parse_items
from memegauge.memeqa.noneplus import derive_none_plus
from memegauge.memeqa.runs import eval_run
from memegauge.memeqa.config import EvalConfig
from memegauge.memeqa.split import assign_memes
from memegauge.report import build_report
from memegauge.types import InputError

SHARED_QA = Path(__file__).resolve().parents[2] / "shared" / "data" / "memeqa"
SHARED_IMAGES = Path(__file__).resolve().parents[2] / "shared" / "data" / "semeval2021-task6"

try:
    import spacy  # noqa: F401

    from memegauge.memeqa.construct import spacy_tagger

    TAGGER = spacy_tagger()
except (ImportError, InputError):
    TAGGER = None
needs_tagger = pytest.mark.skipif(TAGGER is None, reason="spaCy + an English model not installed")

# ---- construct ---------------------------------------------------------------------------------------


def test_content_spans_join_noun_runs_and_skip_meme():
    text = "The meme mocks Joe Biden quickly"
    tagged = [(0, 3, "DET"), (4, 8, "NOUN"), (9, 14, "VERB"), (15, 18, "PROPN"),
              (19, 24, "PROPN"), (25, 32, "ADV")]
    assert [text[s:e] for s, e in content_spans(tagged, text)] == ["mocks", "Joe Biden", "quickly"]


def test_multi_and_single_questions_follow_the_rules(tmp_path):
    annotations = load_annotations(write_annotations(tmp_path / "a", n=6))
    multi = {q.id: q for q in multi_questions(annotations, seed=0)}
    visual = multi["viz_id/meme01"]
    assert sorted(o for o, f in zip(visual.options, visual.answer_key, strict=True) if f) == \
        ["A drawing of dogs number 1", "Red text 1"]
    assert all("number 1" not in o for o, f in zip(visual.options, visual.answer_key, strict=True) if not f)
    assert "bk_id/meme00" not in multi  # no background facts: no Background ID question
    assert all(1 <= len(q.gold) <= 4 for q in multi.values())
    singles = {q.id: q for q in single_questions(annotations, seed=0)}
    sentiment = singles["cond_sent_id/meme01/dogs 1"]
    assert sentiment.options == ["Positive", "Neutral", "Negative"] and sentiment.gold == (0,)
    action = singles["cond_act_id/meme01/dogs 1"]
    assert action.options[action.answer_key] == "praises" and len(set(action.options)) == 4
    assert multi_questions(annotations, seed=0) == multi_questions(list(annotations), seed=0)


def test_more_than_four_answers_are_sampled(tmp_path):
    many = Annotation(meme="x", image="x.png", visual_cues=[f"cue {i}" for i in range(6)],
                      targets=[Target(name="t", sentiment="neutral", action="asserts")],
                      intent="The meme asserts t")
    other = many.model_copy(update={"meme": "y", "image": "y.png", "visual_cues": ["other"]})
    visual = next(q for q in multi_questions([many, other], seed=3) if q.id == "viz_id/x")
    assert visual.answer_key == [1, 1, 1, 1]


def test_annotation_errors_name_line_and_meme(tmp_path):
    path = write_annotations(tmp_path / "a", n=3)
    lines = path.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["targets"][0]["sentiment"] = "angry"
    path.write_text("\n".join([lines[0], json.dumps(bad), lines[2]]))
    with pytest.raises(InputError) as err:
        load_annotations(path)
    assert ":2" in str(err.value) and "meme01" in str(err.value) and "sentiment" in str(err.value)


@needs_tagger
def test_cloze_items_mask_content_words(tmp_path):
    annotations = load_annotations(write_annotations(tmp_path / "a", n=2))
    clozes = [c for c in cloze_items(annotations, TAGGER) if c.meme == "meme00"]
    answers = {c.answer for c in clozes if c.qtype == "Intent Completion"}
    assert {"criticizes", "cats", "loud"} <= answers and "meme" not in answers
    assert all(c.masked.count("____") == 1 for c in clozes)


def test_generator_answer_parsing():
    assert parse_items("hot, cold , warm, cool", 3, True, ["cool"]) == ["hot", "cold", "warm"]
    assert parse_items("- One.\n2) Two\n\n* Three", 2, False, []) == ["One", "Two"]
    assert not parse_items("only one", 3, True, [])


# ---- None+ and split ---------------------------------------------------------------------------------


def _questions(n: int, keys=([1, 0, 0, 0], [0, 1, 1, 0])) -> list[Question]:
    out = []
    for i in range(n):
        out.append(Question(id=f"intent_comp/m{i}/x", img=f"m{i}.png", question="q",
                            options=["a", "b", "c", "d"], general_type="single",
                            specific_type="Intent Completion", answer_key=i % 4))
        out.append(Question(id=f"tar_id/m{i}", img=f"m{i}.png", question="q",
                            options=["a", "b", "c", "d"], general_type="multi",
                            specific_type="Target Identification",
                            answer_key=keys[i % len(keys)]))
        out.append(Question(id=f"cond_sent_id/m{i}/t", img=f"m{i}.png", question="q",
                            options=["Positive", "Neutral", "Negative"], general_type="single",
                            specific_type=SENTIMENT, answer_key=1))
    return out


def test_none_plus_rules():
    minus = _questions(40)
    plus = derive_none_plus(minus, seed=5)
    assert [q.id for q in plus] == [q.id for q in minus]
    replaced_correct = 0
    for m, p in zip(minus, plus, strict=True):
        if m.specific_type == SENTIMENT:
            assert p == m
            continue
        assert p.options[3] == NONE_OF_THE_ABOVE and len(p.options) == 4
        removed = [o for o in m.options if o not in p.options[:3]]
        assert len(removed) == 1 and [o for o in m.options if o != removed[0]] == p.options[:3]
        lost_gold = m.options.index(removed[0]) in m.gold
        replaced_correct += lost_gold
        remaining = [p.options[i] for i in p.gold if i < 3]
        assert (3 in p.gold) == (not remaining)
    assert replaced_correct == 20  # 25% of the 80 non-sentiment questions
    assert derive_none_plus(list(reversed(minus)), seed=5) == list(reversed(plus))


def test_none_plus_forced_cases():
    minus = [q for q in _questions(8, keys=([1, 1, 1, 1], [0, 0, 0, 0])) if q.multi]
    for m, p in zip(minus, derive_none_plus(minus, seed=0), strict=True):
        if m.gold:  # no wrong option to lose: a correct one goes, the others stay correct
            assert p.gold == (0, 1, 2)
        else:  # nothing correct: "None of the above" is the answer
            assert p.gold == (3,)


def test_split_is_by_meme_and_seeded():
    memes = [f"m{i}.png" for i in range(30)]
    assignment = assign_memes(memes, seed=1)
    assert collections.Counter(assignment.values()) == {"train": 18, "dev": 6, "test": 6}
    assert assignment == assign_memes(list(reversed(memes)), seed=1)
    assert assignment != assign_memes(memes, seed=2)


# ---- qa build end to end ----------------------------------------------------------------------------


@pytest.mark.slow
@needs_tagger
def test_qa_build_then_eval_reads_it_back(tmp_path, monkeypatch):
    registry_path = tmp_path / "models.yaml"
    registry()  # registers the scripts
    registry_path.write_text(yaml.safe_dump({n: {"backend": "scripted", "model": n,
                                                 "vision": n == "disc"}
                                             for n in ("gen", "disc", "blind")}))
    annotations = write_annotations(tmp_path / "memes", n=30)
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"annotations": "memes/annotations.jsonl", "out": "built",
                                      "generator": "gen", "discriminator": "disc",
                                      "trivial_model": "blind", "af_max_rounds": 3, "seed": 4,
                                      "run": "b1"}))
    db = str(tmp_path / "s.db")
    argv = ["--store", db, "--models", str(registry_path), "qa", "build", "-c", str(config)]
    assert main(argv) == 0
    built = tmp_path / "built"
    splits = {}
    for version in ("none-minus", "none-plus"):
        for split in ("train", "dev", "test"):
            splits[version, split] = load_questions(built, version, split)
    assert [q.id for q in splits["none-minus", "dev"]] == [q.id for q in splits["none-plus", "dev"]]
    memes_by_split = {s: {q.img for q in splits["none-minus", s]} for s in ("train", "dev", "test")}
    assert not memes_by_split["train"] & memes_by_split["dev"]
    assert not memes_by_split["dev"] & memes_by_split["test"]
    every = [q for s in ("train", "dev", "test") for q in splits["none-minus", s]]
    assert {q.specific_type for q in every} == {t.name for t in QUESTION_TYPES}
    assert all(q.question.count("____") == 1 for q in every if "Completion" in q.specific_type)
    store = Store(tmp_path / "s.db")
    report = build_report(store, "b1")
    assert report["task"] == "build" and report["af_rounds"][0]["accuracy"] > 0
    assert report["trivial"]["dropped"] > 0
    made = store.run_summary("b1")["calls_made"]
    assert main(argv) == 0  # rerun: everything from the cache, same output
    assert store.run_summary("b1")["last_execution_new_calls"] == 0 and made > 0
    assert [q.id for q in load_questions(built, "none-minus", "dev")] == \
        [q.id for q in splits["none-minus", "dev"]]
    name = asyncio.run(eval_run(store, registry(), EvalConfig(data=built, images=annotations.parent,
                                                              texts=annotations, version="none-plus", split="dev",
                                                              model="disc")))
    assert build_report(store, name)["n_scored"] == len(splits["none-plus", "dev"])
    store.close()


# ---- round trip through the shared dev split ----------------------------------------------------


def annotations_from_questions(questions: list[Question], texts: dict[str, str]) -> list[dict]:
    """Recover each meme's aspects from its questions' correct options."""
    by_meme: dict[str, dict] = {}
    for q in questions:
        a = by_meme.setdefault(q.img, {"meme": Path(q.img).stem, "image": q.img,
                                       "text": texts.get(q.img, ""), "visual_cues": [],
                                       "background": [], "derivations": [], "targets": {},
                                       "intent": None})
        correct = [q.options[i] for i in q.gold]
        field = {"Visual Identification": "visual_cues", "Background Identification": "background",
                 "Derivation Identification": "derivations"}.get(q.specific_type)
        if field:
            a[field] = correct
        elif q.specific_type == "Intent Identification":
            a["intent"] = correct[0]
        elif q.specific_type == SENTIMENT:
            a["targets"].setdefault(q.id.split("/", 2)[2], {})["sentiment"] = correct[0].lower()
        elif q.specific_type == "Conditional Action Identification":
            a["targets"].setdefault(q.id.split("/", 2)[2], {})["action"] = correct[0]
    out = []
    for a in by_meme.values():
        targets = [{"name": n, **t} for n, t in a["targets"].items()
                   if {"sentiment", "action"} <= set(t) and t["action"]]
        if a["intent"] and targets:
            out.append({**a, "targets": targets})
    return out


@needs_tagger
@pytest.mark.skipif(not (SHARED_QA / "none-minus" / "dev.json").is_file(), reason="no shared data")
def test_round_trip_from_shared_dev_questions(tmp_path):
    from memegauge.memeqa.dataset import load_meme_texts

    questions = load_questions(SHARED_QA, "none-minus", "dev")
    texts = load_meme_texts(SHARED_IMAGES / "memes.jsonl")
    recovered = annotations_from_questions(questions, texts)[:12]
    folder = tmp_path / "memes"
    folder.mkdir()
    with open(folder / "annotations.jsonl", "w") as handle:
        for a in recovered:
            (folder / a["image"]).symlink_to(SHARED_IMAGES / "images" / a["image"])
            handle.write(json.dumps(a) + "\n")
    config = tmp_path / "build.yaml"
    config.write_text(yaml.safe_dump({"annotations": "memes/annotations.jsonl", "out": "built",
                                      "generator": "gen", "discriminator": "disc",
                                      "trivial_model": "blind", "af_max_rounds": 1,
                                      "trivial_filter": False, "run": "rt"}))
    registry_path = tmp_path / "models.yaml"
    registry()
    registry_path.write_text(yaml.safe_dump({n: {"backend": "scripted", "model": n}
                                             for n in ("gen", "disc", "blind")}))
    assert main(["--store", str(tmp_path / "s.db"), "--models", str(registry_path), "qa", "build",
                 "-c", str(config)]) == 0
    rebuilt = [q for s in ("train", "dev", "test")
               for q in load_questions(tmp_path / "built", "none-minus", s)]
    original = {(q.specific_type, q.img, q.question): q for q in questions}  # ids vary ("_v2")
    checked = 0
    for q in rebuilt:
        if q.specific_type in ("Intent Identification", SENTIMENT):
            before = original[q.specific_type, q.img, q.question]
            checked += 1
            assert {q.options[i] for i in q.gold} == {before.options[i] for i in before.gold}
    assert checked >= 24 and {q.img for q in rebuilt} == {a["image"] for a in recovered}
