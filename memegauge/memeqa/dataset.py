"""MemeQA data: the official layout, the SemEval-2021 Task 6 memes, validation and selection.

Official layout: ``DIR/{none-minus,none-plus}/{train,dev,test}.json``, each a JSON list of
``{id, img, question, options, general_type: single|multi, specific_type, answer_key}``. A single key
is the index of the correct option; a multi key is one 0/1 flag per option (all zeros: none is
correct, answered "N" in None−). None+ puts "None of the above" at index 3 of every question except
Sentiment ID, which keeps its three fixed options.

Known quirks that are tolerated on purpose: empty-string options (a generator wrote nothing; the
question is still answerable) and a real option reading "none of the above" in None− (it is an
ordinary option there). Everything else that is wrong raises one `InputError` naming the item id.

Meme images and texts: a folder with the PNGs named by ``img`` and a ``memes.jsonl`` of
``{image, text}`` lines (or another such file given as ``texts``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from memegauge.files import check_meme_text, find_file, jsonl_rows, parse_json, read_user_text, write_text_atomic
from memegauge.images.check import verify_picture
from memegauge.memes import picture_folder
from memegauge.types import InputError, Meme

VERSIONS = ("none-minus", "none-plus")
NONE_OF_THE_ABOVE = "None of the above"
NONE_INDEX = 3  # where None+ puts "None of the above"


@dataclass(frozen=True)
class QuestionType:
    """One of the 11 MemeQA question types (paper Table 1)."""

    name: str  # the `specific_type` string of the official files
    code: str  # the id prefix of the official files
    general: Literal["single", "multi"]
    n_options: int


QUESTION_TYPES: tuple[QuestionType, ...] = (
    QuestionType("Visual Identification", "viz_id", "multi", 4),
    QuestionType("Background Identification", "bk_id", "multi", 4),
    QuestionType("Derivation Identification", "deriv_id", "multi", 4),
    QuestionType("Target Identification", "tar_id", "multi", 4),
    QuestionType("Target-Sentiment Identification", "tar_sent_id", "multi", 4),
    QuestionType("Target-Action Identification", "tar_act_id", "multi", 4),
    QuestionType("Conditional Sentiment Identification", "cond_sent_id", "single", 3),
    QuestionType("Conditional Action Identification", "cond_act_id", "single", 4),
    QuestionType("Intent Identification", "intent_id", "single", 4),
    QuestionType("Derivation Completion", "deriv_comp", "single", 4),
    QuestionType("Intent Completion", "intent_comp", "single", 4),
)
TYPES_BY_NAME = {t.name: t for t in QUESTION_TYPES}
SENTIMENT = "Conditional Sentiment Identification"
SENTIMENT_OPTIONS = ("Positive", "Neutral", "Negative")


class Question(BaseModel):
    """One MemeQA item, exactly as the official files hold it."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Unique id, e.g. 'tar_id/153_image_batch_2'.")
    img: str = Field(description="File name of the SemEval-2021 Task 6 meme image.")
    question: str = Field(description="The question text.")
    options: list[str] = Field(description="3 (Sentiment ID) or 4 options.")
    general_type: Literal["single", "multi"] = Field(description="One answer, or select all.")
    specific_type: str = Field(description="One of the 11 type names (QUESTION_TYPES).")
    answer_key: int | list[int] = Field(description="Option index, or one 0/1 flag per option.")

    @property
    def gold(self) -> tuple[int, ...]:
        """The correct option indexes, sorted (empty: none is correct)."""
        if isinstance(self.answer_key, int):
            return (self.answer_key,)
        return tuple(i for i, flag in enumerate(self.answer_key) if flag)

    @property
    def multi(self) -> bool:
        return self.general_type == "multi"

    @property
    def meme_id(self) -> str:
        return Path(self.img).stem

    def with_gold(self, options: list[str], gold: Iterable[int]) -> Question:
        """The same question with other options and correct indexes, keyed like the original."""
        gold = set(gold)
        key: int | list[int] = ([int(i in gold) for i in range(len(options))] if self.multi
                                else next(iter(gold)))
        return self.model_copy(update={"options": options, "answer_key": key})


def split_path(data_dir: Path, version: str, split: str) -> Path:
    return Path(data_dir) / version / f"{split}.json"


def load_questions(data_dir: Path | str, version: str, split: str) -> list[Question]:
    """Read and validate one split of one version; raises `InputError` naming the bad item."""
    if version not in VERSIONS:
        raise InputError(f"unknown version {version!r}", "--version", f"use one of {VERSIONS}")
    path = split_path(Path(data_dir), version, split)
    if not path.is_file():
        raise InputError(f"no {version} {split} split here: {path} not found", str(data_dir),
                         f"give the folder holding {version}/{split}.json (the official layout)")
    raw = parse_json(read_user_text(path), str(path), "restore the official file")
    if not isinstance(raw, list):
        raise InputError("expected a JSON list of questions", str(path), "restore the official file")
    questions, seen = [], set()
    for position, item in enumerate(raw):
        question = validate_item(item, version, f"{path} item {position}")
        if question.id in seen:
            raise InputError(f"duplicate question id {question.id!r}", str(path),
                             "give every question a unique id")
        seen.add(question.id)
        questions.append(question)
    if not questions:
        raise InputError("the split holds no questions", str(path), "restore the official file")
    return questions


_KEYS = ("id", "img", "question", "options", "general_type", "specific_type", "answer_key")


def validate_item(item: Any, version: str, where: str) -> Question:
    """One raw item → `Question`, or an `InputError` saying what, which id, and how to fix it."""
    if not isinstance(item, dict):
        raise InputError("a question must be a JSON object", where, "restore the official file")
    item_id = item.get("id")
    where = f"{where} (id {item_id!r})" if item_id is not None else where
    missing = [k for k in _KEYS if k not in item]
    if missing:
        raise InputError(f"missing keys: {', '.join(missing)}", where, f"give every item {_KEYS}")
    for key in ("id", "img", "question"):
        if not isinstance(item[key], str) or not item[key].strip():
            raise InputError(f"{key!r} must be a non-empty string", where, f"fix {key!r}")
    options = item["options"]
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise InputError("'options' must be a list of strings", where, "fix 'options'")
    qtype = TYPES_BY_NAME.get(item["specific_type"])
    if qtype is None:
        raise InputError(f"unknown specific_type {item['specific_type']!r}", where,
                         f"use one of: {', '.join(TYPES_BY_NAME)}")
    if item["general_type"] != qtype.general:
        raise InputError(f"general_type {item['general_type']!r} does not fit {qtype.name} "
                         f"(expected {qtype.general!r})", where, "fix 'general_type'")
    if len(options) != qtype.n_options:
        raise InputError(f"{len(options)} options; {qtype.name} has {qtype.n_options}", where,
                         f"give exactly {qtype.n_options} options")
    _check_key(item["answer_key"], qtype, len(options), where)
    if version == "none-plus" and qtype.name != SENTIMENT and options[NONE_INDEX] != NONE_OF_THE_ABOVE:
        raise InputError(f"None+ question without {NONE_OF_THE_ABOVE!r} at index {NONE_INDEX}", where,
                         "is this a None− file? pass --version none-minus")
    return Question(**{k: item[k] for k in _KEYS})


def _check_key(key: Any, qtype: QuestionType, n_options: int, where: str) -> None:
    if qtype.general == "single":
        if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < n_options:
            raise InputError(f"single-answer key must be an option index 0..{n_options - 1}, "
                             f"not {key!r}", where, "fix 'answer_key'")
        return
    if (not isinstance(key, list) or len(key) != n_options
            or not all(v in (0, 1) and not isinstance(v, bool) for v in key)):
        raise InputError(f"multi-answer key must be {n_options} flags of 0/1, not {key!r}", where,
                         "fix 'answer_key', e.g. [0, 1, 1, 0]")


# --------------------------------------------------------------------------------------------------
# Memes
# --------------------------------------------------------------------------------------------------


def load_meme_texts(path: Path) -> dict[str, str]:
    """``{image: text}`` from a JSONL file of ``{"image", "text"}`` lines (SemEval-2021 Task 6)."""
    if not path.is_file():
        raise InputError("meme texts not found", str(path),
                         "put memes.jsonl ({image, text} per line) in the images folder, "
                         "or pass --texts FILE")
    texts: dict[str, str] = {}
    for where, row in jsonl_rows(path, "write one {image, text} object per line"):
        if not isinstance(row, dict) or not isinstance(row.get("image"), str) \
                or not isinstance(row.get("text", ""), str):
            raise InputError('expected {"image": str, "text": str}', where,
                             "write one {image, text} object per line")
        texts[Path(row["image"]).name] = check_meme_text(row.get("text", ""), where)
    return texts


def load_memes_for(questions: list[Question], images_dir: Path | str,
                   texts_path: Path | str | None = None) -> dict[str, Meme]:
    """``{img: Meme}`` for every image the questions use; each image must exist and have a text."""
    images_dir = Path(images_dir)
    if not images_dir.is_dir():
        raise InputError("images folder not found", str(images_dir),
                         "give the folder holding the SemEval-2021 Task 6 PNGs")
    texts = load_meme_texts(Path(texts_path) if texts_path else _default_texts(images_dir))
    images_dir = picture_folder(images_dir)  # the corpus folder itself: PNGs in images/, texts beside
    memes: dict[str, Meme] = {}
    for question in questions:
        if question.img in memes:
            continue
        image, found = find_file(images_dir, question.img)
        where = f"question {question.id!r}"
        if not found:
            raise InputError(f"image {question.img!r} not found in {images_dir}", where,
                             "add the image, or point --images at the folder that has it")
        if question.img not in texts:
            raise InputError(f"no text for image {question.img!r}", where,
                             "add an {image, text} line for it to the texts file")
        verify_picture(image, where)
        memes[question.img] = Meme(id=question.meme_id, image=image,
                                   text=texts[question.img].strip(),
                                   source="semeval2021-task6")
    return memes


def _default_texts(images_dir: Path) -> Path:
    """memes.jsonl in the images folder, else beside it (the corpus layout: images/ + memes.jsonl)."""
    inside = images_dir / "memes.jsonl"
    return inside if inside.is_file() or not (images_dir.parent / "memes.jsonl").is_file() \
        else images_dir.parent / "memes.jsonl"


# --------------------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------------------


def resolve_types(names: Iterable[str] | None) -> list[str]:
    """Type names from full names or id codes (any case); all 11 when none are given."""
    if not names:
        return [t.name for t in QUESTION_TYPES]
    lookup = {t.name.lower(): t.name for t in QUESTION_TYPES}
    lookup |= {t.code: t.name for t in QUESTION_TYPES}
    chosen = []
    for raw in names:
        for name in (n.strip() for n in raw.split(",")):
            if name and name.lower() not in lookup:
                raise InputError(f"unknown question type {name!r}", "--types",
                                 "use type names or codes: "
                                 + ", ".join(f"{t.code} ({t.name})" for t in QUESTION_TYPES))
            if name and lookup[name.lower()] not in chosen:
                chosen.append(lookup[name.lower()])
    return chosen


def _rank(seed: int, *parts: str) -> str:
    return hashlib.sha256(":".join((str(seed), *parts)).encode()).hexdigest()


def select_questions(questions: list[Question], *, types: Iterable[str] | None = None,
                     limit: int | None = None, seed: int = 0) -> list[Question]:
    """Keep the chosen types, then at most `limit` questions, sampled by meme and type.

    Every type gets an equal share of the limit (what a type cannot fill goes to the others), so a
    small limit still covers all 11 types; within a type, questions are taken meme by meme in a
    seeded order of memes, so the sample concentrates on few memes and the same memes (and ids) are
    drawn from None− and None+. The order is a hash of (seed, meme, id): independent of file order.
    """
    wanted = set(resolve_types(types))
    kept = [q for q in questions if q.specific_type in wanted]
    if limit is None or limit >= len(kept):
        return kept
    if limit < 1:
        raise InputError(f"--limit must be at least 1, not {limit}", "--limit", "pass a positive N")
    by_type: dict[str, list[Question]] = {}
    for q in sorted(kept, key=lambda q: (_rank(seed, q.img), _rank(seed, q.id))):
        by_type.setdefault(q.specific_type, []).append(q)
    quotas = _quotas({t: len(qs) for t, qs in by_type.items()}, limit)
    chosen = {q.id for t, qs in by_type.items() for q in qs[:quotas[t]]}
    return [q for q in kept if q.id in chosen]


def _quotas(sizes: dict[str, int], limit: int) -> dict[str, int]:
    """Equal shares of `limit`, capped by each type's size, leftovers shared again."""
    quotas = {t: 0 for t in sizes}
    left = limit
    while left > 0:
        open_types = sorted(t for t in sizes if quotas[t] < sizes[t])
        if not open_types:
            break
        share = max(1, left // len(open_types))
        for t in open_types:
            take = min(share, sizes[t] - quotas[t], left)
            quotas[t] += take
            left -= take
            if left == 0:
                break
    return quotas


def write_split(questions: list[Question], data_dir: Path, version: str, split: str) -> Path:
    """Write questions in the official layout, atomically (a reader never sees half a file)."""
    return write_text_atomic(split_path(data_dir, version, split),
                             json.dumps([q.model_dump() for q in questions], indent=1, ensure_ascii=False))
