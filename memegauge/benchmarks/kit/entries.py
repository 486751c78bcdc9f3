"""What `memegauge eval` can run: every benchmark folder of the kit, and every benchmark another part of MemeGauge
(or another package) declares as an entry point of the group "memegauge.eval" (MemeQA: its runs stay runs of its
own method, the same kind `qa eval` makes).

    [project.entry-points."memegauge.eval"]
    memeqa = "memegauge.memeqa.benchmark:ENTRY"     # an `EvalEntry`

Each is one `EvalEntry`: its name, data set, suites, splits, a line for `--list`, the method that runs it, how a
config is made from eval's options, the split a stored run was on, and the papers' figures beside ours
(`Published`). No shared code names a benchmark; two entries with one name are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from pydantic import ConfigDict, Field

from memegauge.registry import DuplicatePlugin, Registry
from memegauge.report.published import PublishedValue

ENTRY_POINT_GROUP = "memegauge.eval"


class Published(PublishedValue):
    """A published figure (`PublishedValue`, the one record of one) as an entry's `published(split, task, metric)`
    hands it to the leaderboard (never mixed with ours). Its split and metric are the ones asked for, so an entry
    may leave them unsaid."""

    model_config = ConfigDict(frozen=True)

    metric: str = Field(default="", description="As `PublishedValue.metric`; empty: the metric asked for.")
    split: str = Field(default="", description="As `PublishedValue.split`; empty: the split asked for.")
    n_note: str = Field(default="", description="What the paper says of its n when it gives no exact count.")


@dataclass(frozen=True)
class EvalOptions:
    """eval's options, as every entry reads them to make its config."""

    model: str
    split: str | None  # None: the entry's default split
    limit: int | None
    seed: int
    data: Path | None  # the release's folder (None: the data catalogue's copy)
    sets: dict[str, Any] = field(default_factory=dict)  # -o KEY=VALUE and -c's keys this entry's config has
    only: bool = False  # the one benchmark named: a split it lacks is refused (in a suite it takes its default)


@dataclass(frozen=True)
class EvalEntry:
    """One benchmark `eval` runs."""

    name: str
    title: str
    data: str | None  # its name in the data catalogue (None: only --data)
    suites: tuple[str, ...]
    splits: tuple[str, ...]
    split: str  # the default split
    tasks: str  # one line for `eval --list`: its tasks and what they ask
    method: Callable[[], Any]  # () -> the `memegauge.methods.Method` whose run path runs it
    config: Callable[[EvalOptions], Any]  # eval's options -> the method's config (validated)
    keys: Callable[[], set[str]]  # the config keys -o and -c may set for this benchmark
    run_name: Callable[[Any, Any], str]  # (config, checked inputs) -> the run's default name (readable)
    plan: Callable[[Any, Any], list[Any]]  # (config, checked inputs) -> `--dry-run`'s PlannedCalls
    split_of: Callable[[dict[str, Any]], str]  # a stored run's config -> the split it ran on
    task_of: Callable[[str], str]  # a headline row's group -> the task (row) of the leaderboard
    published: Callable[[str, str, str], list[Published]]  # (split, task, metric) -> the papers' figures
    logprobs: Callable[[], bool] = lambda: False  # whether a run asks for log-probabilities (preflight probes)
    more_rows: Callable[[dict[str, Any]], list[Any]] = lambda report: []  # leaderboard rows beside the method's
    # headline rows (`memegauge.report.headline.Headline`; MemeQA's unreadable share)
    unreadable: Callable[[dict[str, Any]], str | None] = lambda report: None  # a built report -> the warning when
    # most of its answers could not be read (its figures then measure the output format: `eval` exits 3), or None


class DuplicateBenchmark(DuplicatePlugin):
    """Two benchmarks claim one name."""


# The declared entries (besides the kit's folders), loaded by the one registry: type-checked, named after their
# entry point, duplicates refused.
EVAL_ENTRIES: Registry[EvalEntry] = Registry("eval benchmark", ENTRY_POINT_GROUP, EvalEntry,
                                             duplicate=DuplicateBenchmark)


def _kit_entry(spec: Any) -> EvalEntry:
    return entry(spec)


# ---- a kit benchmark as eval sees it: its YAML's splits and tasks, its config from eval's options, and its
# published figures (`published_figures`, the one function that reads them) ----------------------------------

def published_figures(spec: Any, split: str, task: str, metric: str) -> list[Published]:
    """The figures `spec`'s YAML publishes for this split, task and metric, with the paper's n where it gives one
    (a figure without `n` shows "n not stated")."""
    return [Published(**p.model_dump(exclude={"task"}))
            for p in spec.published if p.task == task and p.split == split and p.metric == metric]


def task_of(group: str) -> str:
    """A headline group as a leaderboard row's task: ``overall (hateful)`` → ``hateful``; a group value
    (``hateful: lang=en``) stays as it is."""
    return group[len("overall ("):-1] if group.startswith("overall (") and group.endswith(")") else group


def entry(spec: Any) -> EvalEntry:
    """The `EvalEntry` of a kit benchmark (`memegauge.benchmarks.kit.spec.Benchmark`)."""
    def run() -> Any:  # the kit's run module (it imports the engine) only when a run is made, not to list
        from memegauge.benchmarks.kit import run as kit_run

        return kit_run

    def method() -> Any:
        from memegauge.methods import method as named  # lazy: the registry when eval runs

        return named(spec.name)

    def config(options: EvalOptions) -> Any:
        split = options.split if options.split in spec.splits or options.only else None
        return method().config({**options.sets, "model": options.model, "split": split, "limit": options.limit,
                                "seed": options.seed, "data": options.data})

    tasks = "; ".join(f"{name} ({t.answer}{', AUROC' if 'auroc' in t.metrics else ''})"
                      for name, t in spec.tasks.items())
    return EvalEntry(name=spec.name, title=spec.title, data=spec.data, suites=tuple(spec.suites),
                     splits=tuple(spec.splits), split=spec.split, tasks=tasks, method=method, config=config,
                     keys=lambda: set(run().BenchmarkConfig.model_fields) - {"benchmark"},
                     run_name=lambda cfg, inputs: run().run_name(spec, cfg, inputs.split),
                     plan=lambda cfg, inputs: run().plan(spec, cfg, inputs),
                     logprobs=lambda: any("auroc" in t.metrics for t in spec.tasks.values()),
                     split_of=lambda stored: str(stored.get("split") or spec.split), task_of=task_of,
                     unreadable=lambda report: report.get("format_warning"),
                     published=lambda split, task, metric: published_figures(spec, split, task, metric))


def eval_entries() -> list[EvalEntry]:
    """Every benchmark `eval` can run, in name order: the kit's folders and the declared entries."""
    from memegauge.benchmarks.kit.family import benchmarks

    found: dict[str, EvalEntry] = {spec.name: _kit_entry(spec) for spec in benchmarks()}
    for name, entry in EVAL_ENTRIES.all().items():
        if name in found:
            raise DuplicateBenchmark(f"benchmark {name!r} is declared twice (a kit folder and "
                                     f"{EVAL_ENTRIES.source(name)}); rename one of them")
        found[name] = entry
    return [found[name] for name in sorted(found)]


def entry_of_method(method: str, config: dict[str, Any]) -> EvalEntry | None:
    """The entry whose runs are stored as `method` with this config (a MemeQA eval run, not a build), or None."""
    for entry in eval_entries():
        if entry.method().name == method and entry.split_of(config):
            return entry
    return None


def benchmarks_of_runs(runs: list[tuple[str, dict[str, Any]]]) -> list[str | None]:
    """For each stored run (method, config): the benchmark `eval` made it for (a kit benchmark's, a MemeQA eval
    run), or None (another method, a MemeQA build): the runs `compare` puts in one suite leaderboard."""
    entries = [(entry, entry.method().name) for entry in eval_entries()]
    return [next((entry.name for entry, name in entries if name == method and entry.split_of(config)), None)
            for method, config in runs]


def evaluated_by() -> dict[str, list[str]]:
    """Data set -> the benchmarks `memegauge eval` reads it for (`memegauge data list`, through the registry's
    providers: `memegauge.registry.EVALUATED_BY`)."""
    found: dict[str, list[str]] = {}
    for entry in eval_entries():
        if entry.data:
            found.setdefault(entry.data, []).append(entry.name)
    return found
