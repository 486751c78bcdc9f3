"""`memegauge qa ...`: evaluate, score, compare, build and fine-tune (thin: options → Python API)."""

from __future__ import annotations

import os
import json
from pathlib import Path

import typer
from memegauge.clikit import config_option, run_option  # the run options, defined once
from rich.table import Table

from memegauge.clikit import BUDGET, DRY_RUN, MAX_FAILURE_RATE, SEED, SET, SKIP_PREFLIGHT, safe
from memegauge.files import shell_command
from memegauge.errors import InputError, MemeGaugeError

qa_app = typer.Typer(no_args_is_help=True, help="MemeQA: holistic multiple-choice meme understanding.")

TYPES_HELP = "Question types (names or codes like tar_id, comma-separated or repeated); default all 11."


def register(app: typer.Typer) -> None:
    app.add_typer(qa_app, name="qa")


def _settings(ctx: typer.Context):
    from memegauge.clikit import settings

    return settings(ctx)


@qa_app.command("eval")
def eval_command(
    ctx: typer.Context,
    config: Path | None = config_option("Eval", help="Eval config YAML (the keys of EvalConfig); options given "
                                                      "here override it."),
    data: Path | None = typer.Option(None, "--data", help="Folder with none-minus/ and none-plus/ splits, or "
                                        "an installed data set's name (memeqa: its pictures and texts too)."),
    images: Path | None = typer.Option(None, "--images", help="Folder of the meme PNGs (+ memes.jsonl)."),
    version: str | None = typer.Option(None, "--version", help="none-minus (default) or none-plus."),
    split: str | None = typer.Option(None, "--split", help="train, dev (default) or test."),
    model: list[str] | None = typer.Option(None, "--model", help="Registry name of the model; repeat it "
                                              "(or give a,b) to evaluate several and compare them in one table."),
    texts: Path | None = typer.Option(None, "--texts", help="{image, text} JSONL (default: "
                                         "IMAGES/memes.jsonl)."),
    run: str | None = run_option("Run name (default from the options); with several models, the prefix of "
                                 "RUN-<model>."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="At most N questions, sampled by "
                                        "type and meme (seeded)."),
    types: list[str] | None = typer.Option(None, "--types", help=TYPES_HELP),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the --limit sample (default 0)."),
    circular: bool | None = typer.Option(None, "--circular/--no-circular", help="Ask every rotation of "
                                            "the options; correct only if all are."),
    sets: list[str] | None = SET,
    max_failure_rate: float = MAX_FAILURE_RATE,
    skip_preflight: bool = SKIP_PREFLIGHT,
    dry: bool = DRY_RUN,
    budget: float | None = BUDGET,
) -> None:
    """Evaluate one or more models on one split of MemeQA (paper prompts, greedy, ≤10 new tokens)."""
    from memegauge.clikit import finish_all, overrides, use_budget
    from memegauge.config import load_config, method_config
    from memegauge.memeqa.config import EvalConfig
    from memegauge.memeqa.method import METHOD
    from memegauge.run_path import run_checked

    cfg = _settings(ctx)
    data, images, texts = _named_data(data, images, texts, "memegauge qa eval --data")
    # Paths given here are the shell's (from the working directory), not the config file's.
    given = overrides(sets, data=_absolute(data), images=_absolute(images), version=version, split=split,
                      texts=_absolute(texts), limit=limit, types=types, seed=seed, circular=circular)
    if config is None:
        for key, option in (("data", "--data"), ("images", "--images")):
            if key not in given:
                raise InputError(f"no {option} given", "memegauge qa eval", f"pass {option}, or -c CONFIG")
        if not model and "model" not in given:
            raise InputError("no --model given", "memegauge qa eval", "pass --model NAME (repeat it for several)")
    models = _several(model, "--model") if model else [None]
    configs = [load_config(config, EvalConfig, {**given, **({"model": m} if m else {})}) if config else
               method_config({**given, **({"model": m} if m else {})}, EvalConfig) for m in models]
    if dry:  # the plan only: no model call, no preflight, no store written
        _dry_eval(cfg, configs, [METHOD.check(c, cfg.registry()).inputs for c in configs], run)
        return
    use_budget(budget)
    # The one run path (`memegauge.run_path.run_checked`, as `memegauge.run` takes it): every config's local
    # files first (a bad one is refused without a network round trip), then every model checked before the
    # first question is asked (each model's problems in one message), then each evaluation in turn.
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    results = asyncio.run(run_checked(METHOD, [(c, _run_name(run, c.model, len(configs))) for c in configs],
                                      store=cfg.store, registry=cfg.registry(), progress=cfg.progress,
                                      preflight=not skip_preflight))
    names = [result.name for result in results]
    reports = _print_summary(cfg, names[0]) if len(names) == 1 else _print_comparison(cfg, names)
    finish_all(cfg.store(), names, max_failure_rate)
    refuse_unreadable(reports)


class UnreadableAnswers(MemeGaugeError):
    """Runs stored and reported whose answers mostly could not be read (`metrics.format_warning`): their
    figures measure the output format, so the command does not end as a success (exit 3)."""

    exit_code = 3
    label = "unreadable"


def refuse_unreadable(reports: dict[str, dict]) -> None:
    """Exit 3 (after the run's own lines) when any run of `reports` ({run name: its report, as the summary
    printed it: built once, not again here}) has a format warning."""
    found = [name for name, report in reports.items() if report.get("format_warning")]
    if found:
        raise UnreadableAnswers(f"most answers of {', '.join(map(repr, found))} could not be read: the figures "
                                "measure the output format, not the model (see the warning above; exit 3)")


def _named_data(data: Path | None, images: Path | None, texts: Path | None,
                where: str) -> tuple[Path | None, Path | None, Path | None]:
    """`--data NAME` of an installed data set (docs/data.md): its questions, and its pictures and meme
    texts unless --images / --texts say otherwise."""
    from memegauge.data import data_paths, is_data_name

    if data is None or not is_data_name(data):
        return data, images, texts
    named = data_paths(str(data), where)
    return named["data"], images or named.get("images"), texts or named.get("texts")


def _dry_eval(cfg, configs, inputs, run: str | None) -> None:
    """`qa eval --dry-run`: each model's planned calls (one estimate per run)."""
    from memegauge.clikit import dry_run
    from memegauge.memeqa.plan import plan_eval
    for c, (questions, memes) in zip(configs, inputs, strict=True):
        name = _run_name(run, c.model, len(configs)) or c.default_name()
        dry_run(cfg, name, plan_eval(questions, memes, model=c.model, version=c.version, circular=c.circular,
                                  requests=True))


@qa_app.command("score")
def score_command(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", help="Folder with none-minus/ and none-plus/ splits, or an "
                              "installed data set's name (memeqa)."),
    version: str = typer.Option("none-minus", "--version", help="none-minus (default) or none-plus."),
    split: str = typer.Option("dev", "--split", help="train, dev (default) or test."),
    predictions: list[Path] = typer.Option(..., "--predictions", help='JSONL of {"id", "prediction"}; '
                                           "repeat it to score several files and compare them."),
    run: str | None = run_option("Run name."),
    limit: int | None = typer.Option(None, "--limit", help="Score the same sample as eval "
                                        "--limit N."),
    types: list[str] | None = typer.Option(None, "--types", help=TYPES_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit sample."),
) -> None:
    """Score answers produced elsewhere (raw text per question id); each file stored as a run."""
    from memegauge.memeqa.config import ScoreConfig
    from memegauge.memeqa.method import SCORE
    from memegauge.run_path import run_checked

    cfg = _settings(ctx)
    data = _named_data(data, None, None, "memegauge qa score --data")[0]
    configs = [ScoreConfig(data=data, version=version, split=split, predictions=path, limit=limit, types=types,
                           seed=seed) for path in predictions]
    # the one run path: every file checked before any run is written (no model is called)
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    results = asyncio.run(run_checked(SCORE, [(c, _run_name(run, c.predictions.stem, len(configs)))
                                              for c in configs], store=cfg.store, registry=cfg.registry(),
                                      preflight=False))
    names = [r.name for r in results]
    refuse_unreadable(_print_summary(cfg, names[0]) if len(names) == 1 else _print_comparison(cfg, names))


@qa_app.command("compare")
def compare_command(
    ctx: typer.Context,
    run_minus: str = typer.Argument(..., help="The model's None− run."),
    run_plus: str = typer.Argument(..., help="The same model's None+ run."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Paper Table 4: accuracy by (correct / wrong option replaced) × (single / multi)."""
    from memegauge.clikit import out
    from memegauge.memeqa.errors import CELLS, table4
    from memegauge.memeqa.runs import load_run_records

    store = _settings(ctx).store()
    info_minus, minus = load_run_records(store, run_minus)
    info_plus, plus = load_run_records(store, run_plus)
    for name, info, want in ((run_minus, info_minus, "none-minus"), (run_plus, info_plus, "none-plus")):
        if info.version != want:
            raise InputError(f"run {name!r} is a {info.version} run", "RUN_MINUS RUN_PLUS",
                             "give the None− run first, then the None+ run")
    result = table4(minus, plus)
    if as_json:
        out.print_json(json.dumps(result))
        return
    table = Table(title=f"None+ error analysis ({result['paired_questions']} paired questions)")
    table.add_column("")
    for kind, general in CELLS:
        label = "Correct" if kind == "correct_replaced" else "Incorrect"
        table.add_column(f"{label}\nreplaced\n{'Single' if general == 'single' else 'Multiple'}",
                         justify="right")
    cells = [result["cells"][f"{k}.{g}"] for k, g in CELLS]
    for label, key in (("None− acc.", "none_minus"), ("None+ acc.", "none_plus"),
                       ("Difference", "difference")):
        table.add_row(label, *[_with_ci(c["intervals"][key]) for c in cells])
    table.add_row("n", *[str(c["n"]) for c in cells])
    out.print(table)
    out.print("Each figure: % [95% interval]; accuracies Wilson, clustered by meme picture; the difference "
              "Newcombe's paired interval (docs/reports.md).")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _with_ci(fig) -> str:
    """A rate with its 95% interval, "37.5 [13.7, 69.4]" (in %), or why it has none ("-" when there is
    no value)."""
    from memegauge.report.intervals import shown

    return "-" if not fig or fig.get("value") is None else shown(fig, percent=True).replace("%", "", 1)


def _absolute(path: Path | None) -> str | None:
    return None if path is None else str(path.resolve())


def _several(values: list[str], option: str) -> list[str]:
    """Repeated and comma-separated values, in order, each once."""
    names = list(dict.fromkeys(v.strip() for value in values for v in value.split(",") if v.strip()))
    if not names:
        raise InputError(f"{option} is empty", option, f"give {option} NAME (repeat it for several)")
    return names


def _run_name(run: str | None, model: str, models: int) -> str | None:
    if run is None or models == 1:
        return run
    return f"{run}-{model}"


def _print_comparison(cfg, names: list[str]) -> dict[str, dict]:
    """One table, a column per run: accuracy by type, macro, micro, parse failures (each "% [95%
    interval]", as the one-model table), n per type and failed calls; returns {run name: its report}."""
    from memegauge.clikit import console, out
    from memegauge.report import build_report

    reports = [build_report(cfg.store(), name) for name in names]
    first = reports[0]
    table = Table(title=f"MemeQA {first['version']} {first['split']}: {len(names)} models, accuracy % "
                        "[95% CI] (n)")
    table.add_column("type")
    for report in reports:
        table.add_column(report["model"], justify="right")
    table.add_column("random", justify="right")
    for qtype in first["accuracy"]:
        table.add_row(qtype, *[_with_n(_found(r, "accuracy", qtype), r["n"].get(qtype)) for r in reports],
                      _pct(first["random_baseline"]["by_type"][qtype]))
    table.add_row("macro", *[_with_n(_found(r, "macro")) for r in reports], _pct(first["random_baseline"]["macro"]))
    table.add_row("micro", *[_with_n(_found(r, "micro")) for r in reports], _pct(first["random_baseline"]["micro"]))
    table.add_row("scored", *[str(r["n_scored"]) for r in reports], "")
    table.add_row("parse failures %", *[_with_n(_found(r, "parse_failure_rate")) for r in reports], "")
    table.add_row("failed calls", *[str(r["n_failed_calls"]) for r in reports], "")
    unreadable = [(name, r) for name, r in zip(names, reports, strict=True) if r.get("format_warning")]
    if unreadable:
        table.caption = ("[red]figures of " + ", ".join(r["model"] for _, r in unreadable) + " measure the output "
                         "format, not the model: most answers could not be read[/]")
    out.print(table)
    for name, r in unreadable:
        console.print("[red]warning:[/] " + safe(f"{name}: {r['format_warning']}"), highlight=False)
    console.print("runs: " + ", ".join(names) + "; `memegauge report RUN` for details")
    return dict(zip(names, reports, strict=True))


def _found(report: dict, name: str, qtype: str | None = None):
    """A figure of the report's `intervals` section (a type's accuracy when `qtype` is given)."""
    found = (report.get("intervals") or {}).get(name) or {}
    return found.get(qtype) if qtype is not None else found


def _with_n(fig, n: int | None = None) -> str:
    """A rate with its interval and the questions behind it: "50.0 [15.0, 85.0] (n=4)"."""
    count = (fig or {}).get("n", n)
    text = _with_ci(fig)
    return text if text == "-" or "n=" in text else f"{text} (n={count})"


def _calls_made(new: int, questions: int) -> str:
    """How this execution got its answers: sent now, replayed from the store, or both."""
    if new == 0:
        return "every answer replayed from the store"
    return f"{new} new model calls" + (", the rest replayed from the store" if new < questions else "")


def _print_summary(cfg, name: str) -> dict[str, dict]:
    from memegauge.clikit import console, notes, out
    from memegauge.report import build_report

    from memegauge.report.intervals import shown

    report = build_report(cfg.store(), name)
    found = report.get("intervals") or {}

    def ci(fig) -> str:  # the 95% interval beside the accuracy: 4–5 questions of a type give a wide one
        text = shown(fig, percent=True)
        return text[text.find(" ") + 1:] if " " in text else "–"

    table = Table(title=f"{name}: {report['model']} on {report['version']} {report['split']}")
    for column in ("type", "n", "accuracy", "95% CI", "random"):
        table.add_column(column, justify="right" if column != "type" else "left")
    for qtype, acc in report["accuracy"].items():
        table.add_row(qtype, str(report["n"][qtype]), _pct(acc), ci(found.get("accuracy", {}).get(qtype)),
                      _pct(report["random_baseline"]["by_type"][qtype]))
    table.add_row("macro", str(report["n_scored"]), _pct(report["macro"]), ci(found.get("macro")),
                  _pct(report["random_baseline"]["macro"]))
    table.add_row("micro", str(report["n_scored"]), _pct(report["micro"]), ci(found.get("micro")),
                  _pct(report["random_baseline"]["micro"]))
    if report.get("format_warning"):
        table.caption = "[red]figures measure the output format, not the model: most answers could not be read[/]"
    out.print(table)
    if report.get("format_warning"):
        console.print("[red]warning:[/] " + safe(f"{name}: {report['format_warning']}"), highlight=False)
    failures = found.get("parse_failure_rate")
    failures = (shown(failures, percent=True) + ("" if "n=" in shown(failures, percent=True) else
                                                 f" (n={failures.get('n')})")) if failures else \
        f"{_pct(report['parse_failure_rate'])}%"
    notes.print(safe(f"parse failures {failures}, failed calls "
                     f"{report['n_failed_calls']}; `{shell_command('memegauge', 'report', name)}` for details"))
    if report["missing"]["n"]:
        ids = report["missing"]["ids"]
        shown = ", ".join(ids[:5]) + (f", … ({len(ids) - 5} more)" if len(ids) > 5 else "")
        every = shell_command("memegauge", "report", name, "--format", "json")
        console.print(safe(f"{len(ids)} of {len(ids) + report['n_questions']} questions have no prediction and "
                           f"are not scored: {shown} (all in `{every}`)"))
    if report.get("timing"):
        timing = report["timing"]
        notes.print(f"{timing['wall_s']:.1f} s wall, {timing['s_per_question']:.2f} s per "
                    f"question ({_calls_made(timing['new_calls'], report['n_questions'])})")
        auto = {m: v for m, v in (timing.get("concurrency") or {}).items() if isinstance(v, str)}
        if auto:  # `max_concurrency: auto`: the pace it found
            notes.print("calls in flight at the end (max_concurrency auto): "
                        + ", ".join(f"{m} {v.removeprefix('auto:')}" for m, v in auto.items()))
        backend = timing.get("backend") or {}
        if backend.get("hf.batches_split"):  # the run was slower than its batch size promised
            notes.print(f"{backend['hf.batches_split']} batch(es) ran out of memory and were split in "
                        f"halves ({backend['hf.batched_requests']} requests in {backend['hf.batches']} "
                        "batches); a smaller extra.batch_size or max_pixels avoids the retries")
    return {name: report}


@qa_app.command("build")
def build_command(ctx: typer.Context,
                  config: Path = config_option("Build", required=True, help="Build config YAML."),
                  run: str | None = run_option("Run name (sets the config's `run`)."),
                  seed: int | None = SEED,
                  sets: list[str] | None = SET,
                  max_failure_rate: float = MAX_FAILURE_RATE,
                  skip_preflight: bool = SKIP_PREFLIGHT,
                  dry: bool = DRY_RUN,
                  budget: float | None = BUDGET,
                  ) -> None:
    """Construct MemeQA from annotations: QO pairs → AF → trivial filter → None+ → split."""
    from memegauge.clikit import dry_run, finish, notes, overrides, use_budget
    from memegauge.config import load_config
    from memegauge.memeqa.build import BuildConfig, annotation_memes
    from memegauge.memeqa.method import BUILD
    from memegauge.run_path import run_checked
    from memegauge.memeqa.construct import load_annotations
    from memegauge.memeqa.records import BuildInfo
    from memegauge.records import read_record

    cfg = _settings(ctx)
    build = load_config(config, BuildConfig, overrides(sets, run=run, seed=seed))
    annotations = load_annotations(build.annotations)
    annotation_memes(annotations, build.annotations.parent)  # bad input: before any call
    if dry:
        from memegauge.memeqa.construct import spacy_tagger
        from memegauge.memeqa.plan import plan_build

        dry_run(cfg, build.run or f"memeqa-build-{build.annotations.stem}",
                plan_build(build, annotations, spacy_tagger()))
        return
    use_budget(budget)
    # the one run path (`memegauge.run_path.run_checked`): inputs checked, the three models preflighted,
    # then the store opened and the build run
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    [done] = asyncio.run(run_checked(BUILD, [(build, build.run)], store=cfg.store, registry=cfg.registry(),
                                     progress=cfg.progress, preflight=not skip_preflight))
    name = done.name
    info = read_record(cfg.store(), cfg.store().run_row(name)["id"], BuildInfo)
    for round_ in info.af_rounds:
        notes.print(f"AF round {round_.round}: discriminator accuracy "
                      f"{100 * round_.accuracy:.1f}% on {round_.questions} questions")
    notes.print(f"written to {build.out}: " + ", ".join(f"{k} {v}" for k, v in info.written.items()))
    notes.print(safe(f"run {name!r}; `{shell_command('memegauge', 'report', name)}` shows every stage's counts"))
    finish(cfg.store(), name, max_failure_rate)


@qa_app.command("finetune")
def finetune_command(ctx: typer.Context,
                     config: Path = config_option("Fine-tuning", required=True, help="Fine-tuning YAML."),
                     run: str | None = run_option("Run name."),
                     seed: int | None = SEED,
                     sets: list[str] | None = SET) -> None:
    """LoRA fine-tuning with dev evaluation every 20% of an epoch (extra `train`); resumable."""
    from memegauge.clikit import console, notes, overrides
    from memegauge.config import load_config
    from memegauge.memeqa.finetune import FinetuneConfig, describe_settings, finetune
    from memegauge.memeqa.method import FINETUNE
    from memegauge.run_path import run_checked

    cfg = _settings(ctx)
    settings = load_config(config, FinetuneConfig, overrides(sets, seed=seed))
    if int(os.environ.get("RANK", "0")) > 0:
        # a helper process of `accelerate launch`: it trains its share; the main process (rank 0)
        # evaluates, saves and is the only one that writes the run to the store
        finetune(settings)
        return

    def progress(state: dict) -> None:
        point = state["history"][-1]
        notes.print(f"step {point['step']} (epoch {point['epoch']:.2f}): train loss "
                      f"{point['train_loss']:.4f}, dev macro {_pct(point['macro'])}")

    # the one run path, as every run: the store opened after the checks, the run's outcome stored
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    [done] = asyncio.run(run_checked(FINETUNE, [(settings, run)], store=cfg.store, registry=cfg.registry(),
                                     preflight=False, on_eval=progress,
                                     on_start=lambda s: notes.print(f"fine-tuning: {describe_settings(s)}")))
    name = done.name
    console.print(f"best adapter in {settings.out / 'best'}; dev scores in "
                  f"{settings.out / 'dev_scores.json'}; run {name!r}")
