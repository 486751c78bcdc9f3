"""A benchmark's YAML, typed: what `benchmark.yaml` may say (docs/benchmarks.md lists it with an example).

Every field is checked when the folder is loaded (`load_spec`): an unknown key, a task whose answer kind lacks
its labels, a prompt that is not valid Jinja, a default split that is not listed — each is one `InputError`
naming the file and the fix, so a broken benchmark folder fails when it is registered, not mid-run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from jinja2 import StrictUndefined, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memegauge.files import parse_yaml
from memegauge.report.published import PublishedValue
from memegauge.errors import InputError

AnswerKind = str
"""An answer kind's registered name (`answers.ANSWER_KINDS`: yes_no, label, letter, labels, and any a benchmark's
module registers with `answers.register_answer`)."""
Metric = str
"""A metric's registered name (`metrics.METRICS`: accuracy, macro_f1, per_class, auroc, type_weighted_f1, and any a
benchmark's module registers with `metrics.register_metric`)."""
BUILTIN_KINDS = ("yes_no", "label", "letter", "labels")
SPEC_FILE = "benchmark.yaml"
HOOKS_FILE = "hooks.py"

PROMPTS = ImmutableSandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=False, trim_blocks=True,
                                       lstrip_blocks=True, autoescape=False)
"""Prompts are Jinja templates rendered with StrictUndefined (a variable the item lacks is an error) in Jinja's
immutable sandbox: a benchmark folder is someone else's file, and its template may not reach Python's internals
(`{{ ''.__class__ }}`), call unsafe methods or change the values it is given."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Reader(_Strict):
    """How the generic reader finds an item's fields in a split file (a module's `items` hook replaces it)."""

    format: Literal["jsonl", "json", "csv", "tsv"] = Field(default="jsonl", description="The split files' format.")
    id: str = Field(default="id", description="The field holding the item's id.")
    image: str | None = Field(default="image", description="The field holding the picture's path, relative to "
                                                            "the source folder (None: text only).")
    image_dir: str = Field(default="", description="A folder the image paths are relative to, inside the source.")
    text: str | None = Field(default="text", description="The field holding the meme's text (None: none).")
    options: str | None = Field(default=None, description="The field holding a letter task's options (a list).")
    rows: Literal["catalogue"] | None = Field(default=None, description="`catalogue`: the rows are read by the "
                                              "data catalogue entry's own reader (`Entry.rows`), the one the "
                                              "meme-set conversion reads too; the fields above are then unused.")


class Task(_Strict):
    """One question asked of every item: its answer kind, its gold field and its prompt."""

    answer: AnswerKind = Field(description="yes_no, label (one of `labels`), letter (one option's letter), "
                                           "labels (every one of `labels` that applies, or none).")
    gold: str = Field(description="The item field holding the gold answer (a hook may fill it instead).")
    values: dict[str, str | list[str]] = Field(default_factory=dict, description="Raw gold value → answer "
                                               "(e.g. FHM's 1 → yes); a raw value not listed is refused.")
    labels: list[str] = Field(default_factory=list, description="The answer's classes (label, labels); yes_no "
                                                                "has yes and no.")
    labels_from: str | None = Field(default=None, description="A row field holding each row's own classes (a "
                                    "list read from the data, e.g. a MemeLens config's label set): the item is "
                                    "asked with those, and scored against them; `labels:` stays empty.")
    positive: str | None = Field(default=None, description="The positive class of a yes_no task: AUROC scores "
                                                           "P(positive) from the model's yes/no log-probabilities.")
    prompt: str = Field(description="The Jinja template of the question (variables: text, labels, options, "
                                    "and the item's `extra` fields).")
    prompt_source: str = Field(description="Where the wording comes from: the paper's section, or 'plain "
                                           "instruction' where the benchmark publishes none.")
    metrics: list[Metric] = Field(default_factory=lambda: ["accuracy", "macro_f1", "per_class"],
                                  description="The figures the report shows.")
    groups: list[str] = Field(default_factory=list, description="Item fields whose values split the figures "
                                                                "(e.g. a language or a source data set).")
    splits: list[str] | None = Field(default=None, description="The splits that carry this task (None: all).")
    max_tokens: int = Field(default=16, ge=1, description="The answer's token bound.")

    @model_validator(mode="after")
    def _labels_fit_the_kind(self) -> Task:
        if self.answer in ("label", "labels") and len(self.labels) < 2 and not self.labels_from:
            raise ValueError(f"a {self.answer} task needs `labels:` (at least two)")
        if self.answer == "yes_no" and self.labels not in ([], ["yes", "no"]):
            raise ValueError("a yes_no task's labels are yes and no; leave `labels:` out")
        if self.positive is not None and self.positive not in self.classes:
            raise ValueError(f"positive {self.positive!r} is not one of {self.classes}")
        if "auroc" in self.metrics and (self.answer != "yes_no" or self.positive is None):
            raise ValueError("auroc needs a yes_no task with `positive:` (the model's P(yes) is its score)")
        return self

    @property
    def classes(self) -> list[str]:
        return ["yes", "no"] if self.answer == "yes_no" else list(self.labels)


class Published(PublishedValue, _Strict):
    """A figure the papers publish (`PublishedValue`), for one of the benchmark's tasks, set beside ours in the
    report (never mixed with them)."""

    task: str = Field(description="The task it is about.")


class Benchmark(_Strict):
    """One benchmark folder's `benchmark.yaml`."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$", description="The method name its runs carry.")
    title: str = Field(description="A human name.")
    version: str = Field(pattern=r"^[0-9A-Za-z.\-]+$", description="The benchmark's version, stored with each "
                         "of its runs (bump it when its reading, prompts or scoring change).")
    paper: str = Field(description="The paper that defines it (authors, title, venue, year).")
    data: str = Field(description="Its name in the data catalogue (`memegauge data`).")
    source: str | None = Field(default=None, description="The source id inside the catalogue entry "
                                                         "(default: `data`).")
    licence: str = Field(default="", description="Its data's terms, as the release states them.")
    suites: list[str] = Field(default_factory=lambda: ["memes"], description="The suites it is part of.")
    splits: dict[str, str] = Field(description="Split name → its file, relative to the source folder.")
    split: str = Field(description="The split run when none is asked for.")
    read: Reader = Field(default_factory=Reader, description="The generic reader's field names.")
    tasks: dict[str, Task] = Field(description="The questions asked, by name.")
    published: list[Published] = Field(default_factory=list, description="The papers' figures.")

    @model_validator(mode="after")
    def _consistent(self) -> Benchmark:
        if self.split not in self.splits:
            raise ValueError(f"split {self.split!r} is not one of splits: {sorted(self.splits)}")
        for task_name, task in self.tasks.items():
            for split in task.splits or []:
                if split not in self.splits:
                    raise ValueError(f"task {task_name!r} names split {split!r}, which `splits:` lacks")
        return self

    @property
    def source_id(self) -> str:
        return self.source or self.data

    def tasks_of(self, split: str) -> dict[str, Task]:
        return {n: t for n, t in self.tasks.items() if t.splits is None or split in t.splits}


def load_spec(folder: Path) -> Benchmark:
    """The folder's `benchmark.yaml`, checked (its prompts parsed too); one `InputError` if anything is wrong."""
    path = folder / SPEC_FILE
    try:
        # a benchmark's YAML is packaged with its code (hooks.py, an entry point): libyaml reads it
        raw: Any = parse_yaml(path.read_text(encoding="utf-8"), str(path), packaged=True)
    except (OSError, yaml.YAMLError, RecursionError) as exc:
        raise InputError(f"cannot read the benchmark file: {exc}", str(path),
                         "give the folder a valid benchmark.yaml (docs/benchmarks.md)") from None
    try:
        spec = Benchmark.model_validate(raw)
    except ValidationError as exc:
        from memegauge.config import validation_error  # lazy: the model specs only for a bad file

        raise validation_error(exc, str(path)) from None
    for name, task in spec.tasks.items():
        try:
            PROMPTS.parse(task.prompt)
        except TemplateSyntaxError as exc:
            raise InputError(f"task {name!r}: its prompt is not a valid Jinja template: {exc}", str(path),
                             "fix the template (variables in {{ }}, blocks in {% %})") from None
    return spec
