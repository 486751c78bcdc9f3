"""Tiny MemeQA data sets in the official layout (`data/<version>/dev.json`, `images/<meme>.png`,
`images/memes.jsonl`): every question type for every meme, both versions (None− and None+).

`make_dataset` is the one most tests use (option texts carry the meme and an index; None+ drops a
correct option for the second meme, a wrong one otherwise); `qa_dataset` is the report runs' (None+
always turns option 3 into "None of the above"). The two keep their own answer keys because tests'
figures are computed from them; they share the writer.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from memegauge.memeqa.dataset import NONE_OF_THE_ABOVE, QUESTION_TYPES

OPTIONS = ["alpha", "beta", "gamma", "delta"]


def _question(qtype, meme: str, index: int, key) -> dict:
    options = ["Positive", "Neutral", "Negative"] if qtype.n_options == 3 else \
        [f"{o} {meme} {index}" for o in OPTIONS]
    return {"id": f"{qtype.code}/{meme}/{index}", "img": f"{meme}.png",
            "question": f"{qtype.name} question about {meme}?", "options": options,
            "general_type": qtype.general, "specific_type": qtype.name, "answer_key": key}


def _plus(item: dict, replace_correct: bool) -> dict:
    """None+ of a None− item: drop one option (a correct one or a wrong one), NOTA at index 3."""
    if item["specific_type"] == "Conditional Sentiment Identification":
        return dict(item)
    flags = item["answer_key"] if isinstance(item["answer_key"], list) else \
        [int(i == item["answer_key"]) for i in range(4)]
    drop = next(i for i in range(4) if bool(flags[i]) == replace_correct)
    kept = [i for i in range(4) if i != drop]
    options = [item["options"][i] for i in kept] + [NONE_OF_THE_ABOVE]
    new = [flags[i] for i in kept]
    new.append(int(not any(new)))
    key = new if item["general_type"] == "multi" else new.index(1)
    return {**item, "options": options, "answer_key": key}


def write_layout(root: Path, memes: tuple[str, ...], minus: list[dict], plus: list[dict]) -> tuple[Path, Path]:
    """Both versions' dev splits under `root/data`, a white 8×8 picture and a text per meme under
    `root/images`; returns (data, images)."""
    data = root / "data"
    for version, items in (("none-minus", minus), ("none-plus", plus)):
        (data / version).mkdir(parents=True)
        (data / version / "dev.json").write_text(json.dumps(items))
    images = root / "images"
    images.mkdir()
    with open(images / "memes.jsonl", "w") as handle:
        for meme in memes:
            Image.new("RGB", (8, 8), "white").save(images / f"{meme}.png")
            handle.write(json.dumps({"image": f"{meme}.png", "text": f"text of {meme}"}) + "\n")
    return data, images


def make_dataset(root: Path, memes=("m1", "m2", "m3")) -> tuple[Path, Path]:
    """A tiny official layout: every type for every meme, both versions, images and texts."""
    minus, plus = [], []
    for m_index, meme in enumerate(memes):
        for qtype in QUESTION_TYPES:
            key = m_index % qtype.n_options if qtype.general == "single" else \
                [1, 0, 0, 0] if m_index == 0 else [0, 1, 1, 0]
            item = _question(qtype, meme, 0, key)
            minus.append(item)
            plus.append(_plus(item, replace_correct=m_index == 1))
    return write_layout(root, tuple(memes), minus, plus)


def qa_dataset(root: Path, memes: tuple[str, ...] = ("m1", "m2")) -> tuple[Path, Path]:
    """Every question type for every meme in the official layout, None− and None+ (NOTA at index 3)."""
    minus, plus = [], []
    for m_index, meme in enumerate(memes):
        for qtype in QUESTION_TYPES:
            sentiment = qtype.n_options == 3
            options = ["Positive", "Neutral", "Negative"] if sentiment else [f"{w} {meme}" for w in
                                                                              ("alpha", "beta", "gamma", "delta")]
            key = m_index % qtype.n_options if qtype.general == "single" else [1, 0, 1, 0]
            item = {"id": f"{qtype.code}/{meme}", "img": f"{meme}.png", "question": f"{qtype.name} about {meme}?",
                    "options": options, "general_type": qtype.general, "specific_type": qtype.name,
                    "answer_key": key}
            minus.append(item)
            if sentiment:
                plus.append(item)
                continue
            flags = key if isinstance(key, list) else [int(i == key) for i in range(4)]
            kept = [0, 1, 2]  # option 3 (wrong in every item here) becomes "None of the above"
            new = [flags[i] for i in kept] + [0]
            plus.append({**item, "options": [options[i] for i in kept] + [NONE_OF_THE_ABOVE],
                         "answer_key": new if qtype.general == "multi" else new.index(1)})
    return write_layout(root, memes, minus, plus)


SUBJECTS = ["cats", "dogs", "mondays", "coffee", "plants", "cars", "phones", "teachers", "chefs",
            "pilots"]


def annotation(i: int) -> dict:
    """A `qa build` annotation of meme i: subject, cues, background, targets and intent vary with i."""
    subject = SUBJECTS[i % len(SUBJECTS)]
    return {
        "meme": f"meme{i:02d}", "image": f"meme{i:02d}.png", "text": f"WHEN {subject.upper()} {i}",
        "caption": f"A drawing of {subject} number {i}.",
        "visual_cues": [f"A drawing of {subject} number {i}"] + ([f"Red text {i}"] if i % 2 else []),
        "background": [f"Many people know fact {i} about {subject}"] if i % 3 else [],
        "derivations": [f"The author dislikes {subject} {i}"],
        "targets": [{"name": f"{subject} {i}", "sentiment": ["negative", "positive", "neutral"][i % 3],
                     "action": ["criticizes", "praises", "mocks"][i % 3]}],
        "intent": f"The meme {['criticizes', 'praises', 'mocks'][i % 3]} {subject} for being loud",
    }


def write_annotations(folder: Path, n: int = 30) -> Path:
    """`qa build` input: `n` annotated memes (annotations.jsonl and a picture each) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "annotations.jsonl"
    with open(path, "w") as handle:
        for i in range(n):
            Image.new("RGB", (8, 8), (i * 8, 0, 0)).save(folder / f"meme{i:02d}.png")
            handle.write(json.dumps(annotation(i)) + "\n")
    return path
