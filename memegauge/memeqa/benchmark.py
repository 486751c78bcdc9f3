"""MemeQA as a benchmark of `memegauge eval` and of the `memes` suite (`memegauge.benchmarks.kit.entries`).

Its runs are the runs `qa eval` makes (method ``memeqa``, an `EvalConfig`, the same default run name), so one
store holds one kind of MemeQA evaluation whichever command made it. A split is ``VERSION/SPLIT``
(``none-minus/dev``, ``none-plus/test``); a bare ``dev``/``train``/``test`` is None− (eval's ``--split test`` in a
suite asks MemeQA's None− test split). Its leaderboard rows are the macro and micro accuracy and each question
type's; beside them, on the test split, the paper's Tables 2 (zero-shot) and 3 (fine-tuned), its human and random
columns, all marked published.
"""

from __future__ import annotations

from typing import Any

from memegauge.benchmarks.kit.entries import EvalEntry, EvalOptions, Published

VERSIONS = ("none-minus", "none-plus")
SPLITS = ("train", "dev", "test")
DEFAULT = "none-minus/dev"  # `qa eval`'s defaults
PAPER_N = ("MemeQA's paper gives no test count per figure: 9,031 questions per version, split 60:20:20 by meme "
           "(so about 1,806 test questions)")


def parse_split(split: str | None) -> tuple[str, str] | None:
    """``none-plus/test`` → (none-plus, test); ``test`` → (none-minus, test); ``none-plus`` → (none-plus, dev);
    None → the default; another name → None (not MemeQA's)."""
    given = split or DEFAULT
    version, _, part = given.partition("/") if "/" in given else (
        (given, "", "dev") if given in VERSIONS else ("none-minus", "", given))
    return (version, part) if version in VERSIONS and part in SPLITS else None


def _config(options: EvalOptions) -> Any:
    from memegauge.config import method_config  # lazy: pydantic models when eval runs
    from memegauge.memeqa.config import EvalConfig
    from memegauge.types import InputError

    parsed = parse_split(options.split)
    if parsed is None:
        if options.only:
            raise InputError(f"memeqa has no split {options.split!r}", "--split",
                             f"use one of: {', '.join(_splits())} (or train, dev, test: None−)")
        parsed = parse_split(None)
    version, split = parsed
    where = ({"data": "memeqa"} if options.data is None else  # the installed data set, by name
             {"data": str(options.data), "images": str(options.data / "images")})
    return method_config({**where, **options.sets, "model": options.model, "version": version, "split": split,
                          "limit": options.limit, "seed": options.seed}, EvalConfig)


def _splits() -> tuple[str, ...]:
    return tuple(f"{v}/{s}" for v in VERSIONS for s in SPLITS)


def _split_of(stored: dict[str, Any]) -> str:
    """An eval run's split (``none-minus/dev``); '' for a build, fine-tuning or scoring run (not eval's)."""
    if "version" not in stored or "split" not in stored or "predictions" in stored or "model" not in stored:
        return ""
    return f"{stored['version']}/{stored['split']}"


UNREADABLE_GROUP = "overall (all questions)"


def _task_of(group: str) -> str:
    return {"overall (macro)": "macro", "overall (micro)": "micro", UNREADABLE_GROUP: "all questions"}.get(group, group)


def _unreadable_rows(report: dict[str, Any]) -> list[Any]:
    """The share of scored answers that could not be read (they count as wrong), with its 95% interval (Wilson,
    clustered by meme picture) and n, as `qa eval` shows it: the leaderboard's row `all questions · unreadable`."""
    from memegauge.report.headline import row

    found = (report.get("intervals") or {}).get("parse_failure_rate")
    if not found or found.get("value") is None:
        return []
    run = report["run"]
    model = str(report.get("model") or (run.get("config") or {}).get("model"))
    return [row(run, model, UNREADABLE_GROUP, "unreadable", found, "rate", higher_is_better=False)]


def published(split: str, task: str, metric: str) -> list[Published]:
    """The paper's figures (test split, accuracy) for a question type or ``macro``: Table 2 (zero-shot) and Table
    3 (fine-tuned) per model, then human and random."""
    from memegauge.memeqa.paper import SETTINGS, TABLE_OF, paper_figures

    parsed = parse_split(split)
    figures = paper_figures()
    if parsed is None or metric != "accuracy" or parsed[1] != figures.split:
        return []
    version = parsed[0]
    found = []
    for setting in SETTINGS:
        for model, types in figures.models_by_setting[setting][version].items():
            if types.get(task) is not None:
                found.append(Published(system=f"{figures.models.get(model, model).split(' (')[0]} ({setting})",
                                       value=round(types[task] / 100, 4), n_note=PAPER_N,
                                       source=f"{figures.source.split(',')[0]}, {TABLE_OF[setting]}"))
    for system, column in (("human", figures.human[version]), ("random", figures.random)):
        if column.get(task) is not None:
            found.append(Published(system=system, value=round(column[task] / 100, 4), n_note=PAPER_N,
                                   source=f"{figures.source.split(',')[0]}, Tables 2–3 ({system} column)"))
    return found


def _plan(cfg: Any, inputs: Any) -> list[Any]:
    from memegauge.memeqa.plan import plan_eval

    questions, memes = inputs
    return plan_eval(questions, memes, model=cfg.model, version=cfg.version, circular=cfg.circular, requests=True)


def _method() -> Any:
    from memegauge.memeqa.method import METHOD

    return METHOD


def _keys() -> set[str]:
    from memegauge.memeqa.config import EvalConfig

    return set(EvalConfig.model_fields)


ENTRY = EvalEntry(name="memeqa", title="MemeQA (Nguyen et al.)", data="memeqa", suites=("memes",),
                  splits=_splits(), split=DEFAULT,
                  tasks="11 question types, multiple choice (letters); macro and micro accuracy; Tables 2–3 beside "
                        "(test split)",
                  method=_method, config=_config, keys=_keys, run_name=lambda cfg, inputs: cfg.default_name(),
                  plan=_plan, split_of=_split_of, task_of=_task_of,
                  published=published, more_rows=_unreadable_rows,
                  unreadable=lambda report: report.get("format_warning"))
