"""A benchmark run: its config, its input check and the run itself (`Method.config`, `check`, `run`).

Each (task, item) is one call: the task's prompt (the benchmark's wording, rendered with StrictUndefined) and
the kit's answer-format line (`ANSWER_FORMATS`), with the meme's picture. A yes/no task whose metrics include
AUROC asks for the first token's log-probabilities; P(positive) is read from the yes and no tokens when the
backend returns both, and is otherwise absent (the report says so; it is never made from the hard answer).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from jinja2.exceptions import SecurityError
from pydantic import Field

from memegauge.benchmarks.kit.answers import answer_kind, read_answer
from memegauge.benchmarks.kit.items import Item, Split, data_folder, read_split
from memegauge.benchmarks.kit.metrics import KIT_METRICS, metric
from memegauge.benchmarks.kit.records import BenchAnswer
from memegauge.benchmarks.kit.spec import PROMPTS, Benchmark, Task
from memegauge.config import MethodConfig, method_config
from memegauge.models.spec import ModelRegistry
from memegauge.engine import Store, open_run
from memegauge.files import canonical_json
from memegauge.methods import Checked, RunResult
from memegauge.types import ChatRequest, ImagePart, InputError, Message, OutputSpec, SamplingParams, file_sha256

ANSWER_FORMATS = {
    "yes_no": "Answer format: yes or no.",
    "label": "Answer format: one of: {labels}.",
    "letter": "Answer format: the letter of one option.",
    "labels": "Answer format: every label that applies, separated by commas, from: {labels}; or none.",
}
"""The last line of every prompt: how the answer is read (`answers.read_answer`); the same for every benchmark."""


class BenchmarkConfig(MethodConfig):
    """One benchmark run: which benchmark, model, split and items."""

    benchmark: str = Field(description="The benchmark's name (its folder's `name:`).")
    model: str = Field(description="The registry name of the model evaluated.")
    split: str | None = Field(default=None, description="The split (None: the benchmark's default split).")
    data: Path | None = Field(default=None, description="The release's folder (None: the data catalogue's copy).")
    limit: int | None = Field(default=None, ge=1, description="Only the first N items of the split.")
    seed: int = Field(default=0, description="Seeds the bootstrap intervals (the calls are greedy).")
    tasks: list[str] | None = Field(default=None, description="Only these tasks (None: every task of the split).")
    max_tokens: int | None = Field(default=None, ge=1, description="Every task's answer bound (None: each task's "
                                   "own, 16 unless its YAML says): raise it for a model that reasons before it "
                                   "answers (`eval -o max_tokens=512`).")

    def roles(self) -> dict[str, list[str]]:
        return {"targets": [self.model]}


@dataclass(frozen=True)
class Inputs:
    """What `check` read: the benchmark, its split and its items."""

    spec: Benchmark
    split: str
    tasks: dict[str, Task]
    items: list[Item]
    read: Split | None = None  # the split as read: its rows, and per task what was left out and why


def config(spec: Benchmark, source: Path | str | dict[str, Any]) -> BenchmarkConfig:
    """The run's config; the benchmark is the method's own (a config naming another is refused)."""
    if isinstance(source, dict):
        source = {"benchmark": spec.name, **source}
    found = method_config(source, BenchmarkConfig)
    if found.benchmark != spec.name:
        raise InputError(f"the config names benchmark {found.benchmark!r}, not {spec.name!r}", "benchmark",
                         f"run it with `memegauge eval {found.benchmark}`")
    return found


def check(spec: Benchmark, hooks: ModuleType | None, cfg: BenchmarkConfig, registry: ModelRegistry) -> Checked:
    registry.get(cfg.model)
    split = cfg.split or spec.split
    if split not in spec.splits:
        raise InputError(f"{spec.name} has no split {split!r}", "--split", f"use one of: {', '.join(spec.splits)}")
    tasks = spec.tasks_of(split)
    unknown = sorted(set(cfg.tasks or []) - set(tasks))
    if unknown:
        raise InputError(f"{spec.name} ({split}) has no task {', '.join(unknown)}", "tasks",
                         f"use some of: {', '.join(tasks)}")
    tasks = {n: t for n, t in tasks.items() if cfg.tasks is None or n in cfg.tasks}
    for task in tasks.values():  # kinds and metrics a benchmark's module registers are known once it is loaded
        answer_kind(task.answer)
        [metric(m) for m in task.metrics if m not in KIT_METRICS]
    read = read_split(spec, data_folder(spec, cfg.data), split, hooks, tasks, cfg.limit)
    items = read.items
    pictures = [cfg.model] if any(i.image for i in items) else []
    return Checked(inputs=Inputs(spec, split, tasks, items, read), models=[cfg.model], pictures=pictures)


def prompt(task: Task, item: Item, name: str = "") -> str:
    """The exact text asked: the task's template rendered for the item, then the answer-format line."""
    options = "\n".join(f"({chr(ord('A') + i)}) {o}" for i, o in enumerate(item.options))
    classes = item.classes.get(name) if task.labels_from else None
    labels = ", ".join(classes or task.classes)
    try:
        body = PROMPTS.from_string(task.prompt).render(**{**item.extra, "text": item.text, "options": options,
                                                          "labels": labels}).strip()
    except SecurityError as exc:  # the sandbox refused what the template tried (a benchmark folder is input)
        raise InputError(f"a task's prompt tried what a template may not ({exc})", f"item {item.id}",
                         "the benchmark's YAML is unsafe: use its prompt variables only (docs/benchmarks.md)") from None
    return f"{body}\n{ANSWER_FORMATS.get(task.answer, '').format(labels=labels)}".rstrip()


def stored(spec: Benchmark, cfg: BenchmarkConfig, inputs: Inputs) -> dict[str, Any]:
    """The config as stored (and hashed), with the split run and each task's template and wording's source."""
    return {**cfg.stored(), "split": inputs.split,
            "benchmark_prompts": {name: {"template": t.prompt, "answer_format": ANSWER_FORMATS.get(t.answer, ""),
                               "source": t.prompt_source} for name, t in inputs.tasks.items()},
            **({"benchmark_rows": {name: {"rows": inputs.read.rows_of.get(name, inputs.read.rows),
                                          "asked": inputs.read.asked(name),
                                          "groups": inputs.read.group_rows.get(name, {}),
                                          "left_out": inputs.read.left_out.get(name, {})}
                                   for name in inputs.tasks}} if inputs.read is not None else {})}


async def run(spec: Benchmark, hooks: ModuleType | None, cfg: BenchmarkConfig, *, store: Store,
              registry: ModelRegistry, name: str | None = None, progress: bool | None = None,
              checked: Checked | None = None) -> RunResult:
    inputs: Inputs = (checked or check(spec, hooks, cfg, registry)).inputs
    config_dict = stored(spec, cfg, inputs)
    name = name or run_name(spec, cfg, inputs.split)
    _refuse_another_version(store, spec, name)
    asked = _asked(inputs)
    requests = [_request(spec, cfg, task_name, task, item, text) for task_name, task, item, text in asked]
    async with open_run(store, registry, name=name, method=spec.name, config=config_dict, seed=cfg.seed,
                        progress=progress) as (opened, engine):
        outcomes = await engine.chat_many(requests)
        opened.put_many([_record(task_name, task, item, text, outcome)
                         for (task_name, task, item, text), outcome in zip(asked, outcomes, strict=True)])
        opened.put_many(_pictures(inputs.items))  # the report's item browser shows each meme as asked
    return RunResult.of(store, name)


def _refuse_another_version(store: Store, spec: Benchmark, name: str) -> None:
    """A run named `name` made by another version of this benchmark (its YAML's `version:`, stored with the run as
    its method's version) is not resumed under this one: its answers were read and scored by the other, and the run
    would say "done" still carrying the old version. Refused as a run of another config is (`Store.open_run`)."""
    try:
        row = store.run_row(name)
    except InputError:
        return  # no such run yet: a new one
    made_by = row.get("method_version")
    if row["method"] != spec.name or made_by is None or made_by == spec.version:
        return  # another method: `open_run` refuses it; no version stored yet: its first execution did not finish
    raise InputError(f"run {name!r} was made by version {made_by} of benchmark {spec.name}, and this is version "
                     f"{spec.version} (its benchmark.yaml's `version:`); its answers would mix two versions",
                     where=str(store.path),
                     fix=f"choose another --run NAME for version {spec.version} (`memegauge compare` then names "
                         f"the version difference), or go back to version {made_by} to resume it")


_NAME_KEYS = {"benchmark", "model", "split", "limit", "seed"}  # what a default run name shows in words


def run_name(spec: Benchmark, cfg: BenchmarkConfig, split: str) -> str:
    """``<benchmark>-<model>-<split>[-n<limit>][-s<seed>]``, readable (a `--limit 10` run is ``…-n10``); six hex
    digits of the other settings are added only when one differs from its default (``-o max_tokens=512``, a
    `--data` folder rather than the catalogue's copy), so two configs never share a run by accident."""
    parts = [spec.name, cfg.model, split.replace("/", "_")]
    parts += [f"n{cfg.limit}"] if cfg.limit else []
    parts += [f"s{cfg.seed}"] if cfg.seed else []
    other = {k: v for k, v in cfg.model_dump(mode="json", exclude_defaults=True).items() if k not in _NAME_KEYS}
    if other:
        parts.append(hashlib.sha256(canonical_json(other).encode()).hexdigest()[:6])
    return "-".join(_UNSAFE.sub("_", p).strip("_") or "x" for p in parts)


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def _asked(inputs: Inputs) -> list[tuple[str, Task, Item, str]]:
    return [(task_name, task, item, prompt(task, item, task_name)) for task_name, task in inputs.tasks.items()
            for item in inputs.items if item.gold.get(task_name) is not None]


def plan(spec: Benchmark, cfg: BenchmarkConfig, inputs: Inputs) -> list[Any]:
    """`eval --dry-run`: one stage per task, its requests known before the run (cached ones are priced $0)."""
    from memegauge.engine.estimate import PlannedCalls  # lazy: only for a dry run

    out = []
    for task_name, task in inputs.tasks.items():
        mine = [a for a in _asked(inputs) if a[0] == task_name]
        if mine:
            requests = tuple(_request(spec, cfg, n, t, i, text) for n, t, i, text in mine)
            out.append(PlannedCalls(stage=f"{spec.name}.{task_name}", model=cfg.model, calls=len(mine),
                                    max_tokens=cfg.max_tokens or task.max_tokens, requests=requests,
                                    prompt_words=sum(len(a[3].split()) for a in mine) / len(mine),
                                    images=int(any(a[2].image for a in mine)), note="one per item"))
    return out


def _pictures(items: list[Item]) -> list[Any]:
    """A thumbnail record (`MemeImage`, keyed by item id) of each item's picture, for the run page's item browser."""
    from memegauge.images.thumbnail import MemeImage, thumbnail_data_url

    out = []
    for item in items:
        url = thumbnail_data_url(item.image) if item.image else None
        if url:
            out.append(MemeImage(meme=item.id, sha256=file_sha256(item.image), thumbnail=url))
    return out


def _request(spec: Benchmark, cfg: BenchmarkConfig, task_name: str, task: Task, item: Item,
             text: str) -> ChatRequest:
    parts: list[Any] = [ImagePart.of(item.image, alt_text=f'Meme text: "{item.text}"')] if item.image else []
    return ChatRequest(model=cfg.model, messages=[Message.user(*parts, text)],
                       params=SamplingParams(temperature=0, max_tokens=cfg.max_tokens or task.max_tokens),
                       output=OutputSpec(logprobs="auroc" in task.metrics), stage=f"{spec.name}.{task_name}")


def _record(task_name: str, task: Task, item: Item, text: str, outcome: Any) -> BenchAnswer:
    answer = outcome.text if outcome.ok else ""
    classes = item.classes.get(task_name, [])
    read = read_answer(task, answer, len(item.options), classes) if outcome.ok else None
    p = p_positive(outcome.record.logprobs, task.positive) if outcome.ok and task.positive else None
    return BenchAnswer(task=task_name, item=item.id, gold=item.gold[task_name], ok=outcome.ok, answer=answer,
                       read=read, readable=outcome.ok and read is not None, p_positive=p, groups=item.groups,
                       options=len(item.options), error=outcome.record.error if not outcome.ok else "", prompt=text,
                       classes=classes)


def p_positive(logprobs: dict[str, float], positive: str) -> float | None:
    """P(positive) of a yes/no answer from the first token's alternatives: exp(yes) / (exp(yes) + exp(no)),
    summing the spellings of each ("Yes", " yes", "YES"); None unless both words are among them.

    A log-probability that is not a finite number at most 0 (``inf``, ``nan``, ``1e308``: a broken server's,
    or one stored before such values were dropped at the backend) is left out, so P is computed from the rest
    or is None, and never overflows."""
    found: dict[str, list[float]] = {"yes": [], "no": []}
    for token, logprob in logprobs.items():
        word = token.strip().lower()
        if word in found and isinstance(logprob, (int, float)) and math.isfinite(logprob) and logprob <= 1e-4:
            found[word].append(min(0.0, float(logprob)))
    if not (found["yes"] and found["no"]):
        return None
    top = max(found["yes"] + found["no"])  # shifted by the largest: exp never overflows nor all underflows
    mass = {word: sum(math.exp(v - top) for v in values) for word, values in found.items()}
    return mass[positive] / (mass["yes"] + mass["no"])
