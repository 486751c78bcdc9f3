"""A kit benchmark as `eval` sees it (`memegauge.benchmarks.kit.entries.EvalEntry`): its splits and tasks from its
YAML, its config from eval's options, and the published figures of its YAML (`published_figures`, the one function
that reads them)."""

from __future__ import annotations

from typing import Any

from memegauge.benchmarks.kit.entries import EvalEntry, EvalOptions, Published
from memegauge.benchmarks.kit.spec import Benchmark


def published_figures(spec: Benchmark, split: str, task: str, metric: str) -> list[Published]:
    """The figures `spec`'s YAML publishes for this split, task and metric, with the paper's n where it gives one
    (a figure without `n` shows "n not stated")."""
    return [Published(system=p.system, value=p.value, source=p.source, n=getattr(p, "n", None),
                      n_note=str(getattr(p, "n_note", "") or ""))
            for p in spec.published if p.task == task and p.split == split and p.metric == metric]


def task_of(group: str) -> str:
    """A headline group as a leaderboard row's task: ``overall (hateful)`` → ``hateful``; a group value
    (``hateful: lang=en``) stays as it is."""
    return group[len("overall ("):-1] if group.startswith("overall (") and group.endswith(")") else group


def entry(spec: Benchmark) -> EvalEntry:
    from memegauge.benchmarks.kit.run import BenchmarkConfig, plan, run_name  # lazy: when eval runs
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
                     keys=lambda: set(BenchmarkConfig.model_fields) - {"benchmark"},
                     run_name=lambda cfg, inputs: run_name(spec, cfg, inputs.split),
                     plan=lambda cfg, inputs: plan(spec, cfg, inputs),
                     logprobs=lambda: any("auroc" in t.metrics for t in spec.tasks.values()),
                     split_of=lambda stored: str(stored.get("split") or spec.split), task_of=task_of,
                     published=lambda split, task, metric: published_figures(spec, split, task, metric))
