"""`memegauge qa build -c CONFIG`: annotations → QO pairs → adversarial filtering → trivial filter →
None+ → meme-level split, written in the official layout so `qa eval` reads it back.

Config (YAML; relative paths resolve from the config file)::

    annotations: annotations.jsonl   # docs/memeqa.md; images are relative to this file
    out: built/                      # gets none-minus/{train,dev,test}.json and none-plus/...
    generator: embedded              # writes cloze antonyms and AF distractors (App. E prompts)
    discriminator: embedded          # answers during AF (with the meme)
    trivial_model: embedded          # answers without the meme; what it gets right is dropped
    af_max_rounds: 3                 # discriminator passes
    trivial_filter: true
    seed: 0
    split: [0.6, 0.2, 0.2]
    run: my-build                    # optional run name

Model calls are cached in the store, so a killed build resumes where it stopped.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from memegauge.files import check_meme_text, find_file
from memegauge.models.spec import ModelRegistry
from memegauge.engine import Store, open_run
from memegauge.memeqa.construct import (MULTI_ANSWERS, Annotation, cloze_items, load_annotations,
                                       meme_context, multi_questions, single_questions, spacy_tagger,
                                       Tagger)
from memegauge.memeqa.dataset import VERSIONS, Question, write_split
from memegauge.memeqa.filtering import adversarial_filter, trivial_filter
from memegauge.memeqa.generator import generate
from memegauge.memeqa.noneplus import derive_none_plus
from memegauge.memeqa.records import BuildInfo
from memegauge.memeqa.split import assign_memes, split_questions
from memegauge.types import InputError, Meme


class BuildConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotations: Path = Field(description="Annotations JSONL (docs/memeqa.md).")
    out: Path = Field(description="Output folder (official layout).")
    generator: str = Field(default="embedded", description="Distractor generator model.")
    discriminator: str = Field(default="embedded", description="AF discriminator model.")
    trivial_model: str = Field(default="embedded", description="Text-only filter model.")
    af_max_rounds: int = Field(default=3, ge=1, le=20, description="Discriminator passes at most.")
    trivial_filter: bool = Field(default=True, description="Drop questions answerable blind.")
    seed: int = Field(default=0, description="Seed of every random choice.")
    split: tuple[float, float, float] = Field(default=(0.6, 0.2, 0.2), description="train/dev/test.")
    run: str | None = Field(default=None, description="Run name (default memeqa-build-<file>).")

    @field_validator("annotations", "out", mode="after")
    @classmethod
    def _relative_to_config(cls, value: Path, info: ValidationInfo) -> Path:
        base = (info.context or {}).get("base_dir")
        return (Path(base) / value).resolve() if base and not value.is_absolute() else value

    @field_validator("split", mode="after")
    @classmethod
    def _positive(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        if min(value) < 0 or sum(value) <= 0:
            raise ValueError("ratios must be non-negative and not all zero")
        return value


def annotation_memes(annotations: list[Annotation], base_dir: Path) -> dict[str, Meme]:
    """img → Meme (image resolved against the annotations file's folder; must exist)."""
    memes = {}
    for a in annotations:
        image, found = find_file(base_dir, a.image)
        if not found:
            raise InputError(f"image {a.image!r} of meme {a.meme!r} not found", str(base_dir),
                             "put the image beside the annotations file or fix 'image'")
        where = f"annotations in {base_dir} (meme {a.meme!r})"
        memes[a.image] = Meme(id=a.meme, image=image, text=check_meme_text(a.text, where),
                              caption=check_meme_text(a.caption, where, "meme caption"))
    return memes


def answer_pools(annotations: list[Annotation]):
    """For AF resampling: other memes' answers of the question's type."""
    def pool(question: Question) -> list[str]:
        if question.specific_type == "Conditional Action Identification":
            return [t.action for a in annotations if a.image != question.img for t in a.targets]
        if question.specific_type == "Intent Identification":
            return [a.intent for a in annotations if a.image != question.img]
        answers = MULTI_ANSWERS[question.specific_type]
        return [x for a in annotations if a.image != question.img for x in answers(a)]
    return pool


async def construct_questions(annotations: list[Annotation], tagger: Tagger, *, generator: str,
                              engine, seed: int) -> list[Question]:
    """Preliminary QO pairs; cloze distractors from the generator (clozes it fails on are dropped)."""
    clozes = cloze_items(annotations, tagger)
    contexts = {a.image: meme_context(a) for a in annotations}
    drafts = [c.question(["", "", ""], seed) for c in clozes]
    generated = await generate(drafts, contexts, {}, model=generator, engine=engine,
                               round_index=0, stage="memeqa.construct.cloze")
    cloze_questions = [c.question(generated[d.id], seed) for c, d in zip(clozes, drafts, strict=True)
                       if generated[d.id]]
    return multi_questions(annotations, seed) + single_questions(annotations, seed) + cloze_questions


def _type_counts(questions: list[Question]) -> dict[str, int]:
    return dict(sorted(Counter(q.specific_type for q in questions).items()))


async def run_build(store: Store, registry: ModelRegistry, config: BuildConfig,
                    tagger: Tagger | None = None, progress: bool | None = None) -> str:
    """Run the whole construction; returns the run name. Writes the output only at the end."""
    for model in (config.generator, config.discriminator, config.trivial_model):
        registry.get(model)
    annotations = load_annotations(config.annotations)
    memes = annotation_memes(annotations, config.annotations.parent)
    tagger = tagger or spacy_tagger()
    name = config.run or f"memeqa-build-{config.annotations.stem}"
    settings = config.model_dump(mode="json", exclude={"run"})
    async with open_run(store, registry, name=name, method="memeqa", config=settings,
                        seed=config.seed, progress=progress) as (run, engine):
        drafted = await construct_questions(annotations, tagger, generator=config.generator,
                                            engine=engine, seed=config.seed)
        contexts = {a.image: meme_context(a) for a in annotations}
        hardened, rounds = await adversarial_filter(drafted, memes, contexts, answer_pools(annotations),
                                                    discriminator=config.discriminator,
                                                    generator=config.generator, engine=engine,
                                                    seed=config.seed, max_rounds=config.af_max_rounds)
        run.put_many(rounds)
        trivial = None
        minus = hardened
        if config.trivial_filter:
            minus, trivial = await trivial_filter(hardened, model=config.trivial_model, engine=engine)
            run.put(trivial)
        versions = {"none-minus": minus, "none-plus": derive_none_plus(minus, config.seed)}
        assignment = assign_memes([a.image for a in annotations], config.seed, config.split)
        written = _write(versions, assignment, config.out)
        run.put(BuildInfo(task="build", annotations=str(config.annotations), out=str(config.out),
                          memes=len(annotations), drafted=_type_counts(drafted),
                          after_trivial_filter=_type_counts(minus), af_rounds=rounds, trivial=trivial,
                          written=written))
    return name


def _write(versions: dict[str, list[Question]], assignment: dict[str, str],
           out: Path) -> dict[str, Any]:
    written = {}
    for version in VERSIONS:
        for split, items in split_questions(versions[version], assignment).items():
            write_split(items, out, version, split)
            written[f"{version}/{split}"] = len(items)
    return written
