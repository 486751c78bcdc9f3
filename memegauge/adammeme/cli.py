"""AdamMeme commands: `memegauge adam`, `memegauge erase`, `memegauge import adammeme|adammeme-human`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import get_args

import typer
from memegauge.clikit import config_option, run_option  # the run options, defined once

from memegauge.adammeme.failure_rule import FailureRuleName
from memegauge.clikit import BUDGET, DRY_RUN, IMAGES, LIMIT, MAX_FAILURE_RATE, SEED, SET, SKIP_PREFLIGHT
from memegauge.errors import InputError

FailureRuleOption = Enum("FailureRuleOption", {name: name for name in get_args(FailureRuleName)}, type=str)

import_app = typer.Typer(help="Import results made elsewhere into the run store.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("adam")(adam_command)
    app.command("erase")(erase_command)
    app.add_typer(import_app, name="import")


def adam_command(
    ctx: typer.Context,
    config: Path = config_option("AdamMeme", required=True, help="AdamMeme config YAML."),
    run: str | None = run_option("Run name (default: adam-<targets>-<memes>-<hash>)."),
    limit: int | None = LIMIT,
    seed: int | None = SEED,
    images: Path | None = IMAGES,
    sets: list[str] | None = SET,
    repeat: int | None = typer.Option(None, "--repeat", min=1, help="Repeats (sets the config's `repeats`)."),
    no_erase: bool = typer.Option(False, "--no-erase", help="Score on the original pictures (erase: false)."),
    max_failure_rate: float = MAX_FAILURE_RATE,
    skip_preflight: bool = SKIP_PREFLIGHT,
    dry: bool = DRY_RUN,
    budget: float | None = BUDGET,
) -> None:
    """Run AdamMeme: mine, score and refine memes for one or more target models."""
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.method import METHOD
    from memegauge.clikit import finish, overrides, settings, shell_path, use_budget
    from memegauge.config import load_config
    from memegauge.run_path import run_checked

    cfg = load_config(config, AdamConfig, overrides(sets, limit=limit, seed=seed, repeats=repeat,
                                                    images=shell_path(images),
                                                    erase=False if no_erase else None))
    s = settings(ctx)
    if dry:  # the plan only: no model call, no preflight, no store written
        from memegauge.adammeme.plan import plan_calls, stored_samples
        from memegauge.clikit import dry_run
        name = run or cfg.default_name()
        memes = METHOD.check(cfg, s.registry()).inputs
        dry_run(s, name, plan_calls(cfg, memes, stored_samples(s.store_path, name)))
        return
    use_budget(budget)
    # the one run path (as `memegauge.run`): inputs checked, models preflighted, then the store opened
    [result] = asyncio.run(run_checked(METHOD, [(cfg, run)], store=s.store, registry=s.registry(),
                                       progress=s.progress, preflight=not skip_preflight))
    print_results(s.store(), result.name)
    finish(s.store(), result.name, max_failure_rate)


def print_results(store, name: str) -> None:
    """The run's results table: per target, the average score and failure rate with refinement and on
    the original memes only (paper Table 2), the refinement steps, and the failed calls."""
    from rich.table import Table

    from memegauge.clikit import out
    from memegauge.report import build_report
    from memegauge.report.intervals import shown

    report = build_report(store, name)
    table = Table(title=f"AdamMeme — {name}{' (custom prompts)' if report['run']['prompts'] else ''} "
                        f"(score 1–10; failure: {report['failure']['describe']})")
    for column in ("target", "n", "avg score (95% CI)", "failure rate (95% CI)", "original n", "original avg",
                   "original FR",
                   "steps (improved)", "failed"):
        table.add_column(column, justify="left" if column == "target" else "right")
    for target, figures in report["targets"].items():
        found = figures.get("intervals") or {}  # each figure with its 95% interval (docs/reports.md)
        now, was = found.get("overall", {}), found.get("original_only", {})
        table.add_row(target, str(figures["overall"]["n"]), shown(now.get("avg_score")),
                      shown(now.get("failure_rate"), percent=True), str(figures["original_only"]["n"]),
                      shown(was.get("avg_score")), shown(was.get("failure_rate"), percent=True),
                      f"{figures['steps']['total']} ({figures['steps']['improved']})",
                      str(figures["overall"]["failed"]))
    out.print(table)
    out.print(_category_table(report))


def _category_table(report: dict):
    """Per target and category: n and average score on H, and FR under both failure rules (the run's
    own marked), so a run reads against figures made with either (the paper's text or its release)."""
    from rich.table import Table

    threshold, own = report["failure"]["threshold"], report["failure"]["rule"]
    label = {"below": f"FR < {threshold:g}", "at_or_below": f"FR ≤ {threshold:g}"}
    table = Table(title="by category (history H: originals and scored steps)")
    for column in ("target", "category", "n", "avg score",
                   *(label[r] + (" (run)" if r == own else "") for r in label), "failed"):
        table.add_column(column, justify="left" if column in ("target", "category") else "right")
    from memegauge.report.intervals import shown

    for target, figures in report["targets"].items():
        for category, f in figures["categories"].items():
            found = ((figures.get("intervals") or {}).get("categories") or {}).get(category)  # the run's rule
            rates = [shown(found["failure_rate"], percent=True) if r == own and found else
                     _pct(figures["by_rule"][r]["categories"][category]) for r in label]
            table.add_row(target, category, str(f["n"]), shown(found["avg_score"]) if found else _num(f["avg_score"]),
                          *rates, str(f["failed"]))
    return table


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def erase_command(
    in_dir: Path = typer.Argument(..., help="Folder of meme images."),
    out_dir: Path = typer.Argument(..., help="Where the text-erased images go (same names, .png)."),
) -> None:
    """Erase the text of every image in IN_DIR (OCR + inpainting) into OUT_DIR; resumable."""
    from rich.progress import track

    from memegauge.clikit import console
    from memegauge.images.erase import iter_erase_dir, list_images

    if not in_dir.is_dir():
        raise InputError("not a folder", str(in_dir), "give a folder of .png/.jpg/.webp images")
    total = len(list_images(in_dir))
    done = skipped = boxes = 0
    for result in track(iter_erase_dir(in_dir, out_dir), total=total, description="erasing",
                        console=console):
        done += 1
        skipped += result.skipped
        boxes += result.boxes_found or 0
    console.print(f"{done} images → {out_dir} ({skipped} already up to date, {boxes} text boxes erased)")


@import_app.command("adammeme")
def import_adammeme_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., help="The original code's folder (holds data/ and results/), or "
                                     "an installed data set's name (adammeme-release: docs/data.md)."),
    run: str | None = run_option("Run name (default: adammeme-<experiment>)."),
    experiment: str | None = typer.Option(None, "--experiment", help="results/<exp> to import."),
    failure_rule: FailureRuleOption = typer.Option(
        "at_or_below", "--failure-rule", help="at_or_below: a score of 4 fails too (what the released "
        "results use; reproduces the published Table 1); below: the paper's text. The report gives both."),
) -> None:
    """Import the original AdamMeme code's data/ and results/ layout as a run."""
    from memegauge.adammeme.legacy import import_legacy
    from memegauge.clikit import console, safe, settings
    from memegauge.data import data_paths, is_data_name
    from memegauge.files import shell_command

    if is_data_name(directory):
        directory = data_paths(str(directory), "memegauge import adammeme")["data"]
    name = import_legacy(directory, settings(ctx).store, run, experiment, failure_rule.value)
    console.print(safe(f"imported into run {name!r}; `{shell_command('memegauge', 'report', name)}` shows it"))
    print_results(settings(ctx).store(), name)


@import_app.command("adammeme-human")
def import_human_command(
    ctx: typer.Context,
    run: str = typer.Argument(..., help="An AdamMeme run."),
    scores: Path | None = typer.Option(None, "--scores", help="CSV: sample_id,score"),
    labels: list[Path] | None = typer.Option(
        None, "--labels", help="CSV: meme_id,categories (a|b); repeat it, one file per annotator, for "
        "the agreement between annotators (Table 8)."),
) -> None:
    """Attach human scores / category labels to a run; its report then shows agreement (Tables 3, 8)."""
    from memegauge.adammeme.agreement import read_human_labels, read_human_scores
    from memegauge.adammeme.records import AnnotatorLabel, HumanScore
    from memegauge.clikit import console, settings
    from memegauge.records import write_records

    if scores is None and not labels:
        raise InputError("nothing to import", "memegauge import adammeme-human", "give --scores and/or --labels")
    store = settings(ctx).store()
    row = store.run_row(run)
    if row["method"] != "adammeme":
        raise InputError(f"run {run!r} is a {row['method']} run", run, "give an AdamMeme run")
    human_scores = read_human_scores(scores) if scores else {}
    per_annotator = [read_human_labels(path) for path in labels or []]  # every file checked before writing
    write_records(store, row["id"], [HumanScore(sample=k, score=v) for k, v in human_scores.items()])
    write_records(store, row["id"], [AnnotatorLabel(annotator=str(i), meme=k, categories=v)
                                     for i, found in enumerate(per_annotator, start=1) for k, v in found.items()])
    console.print(f"{len(human_scores)} human scores and {sum(map(len, per_annotator))} label sets of "
                  f"{len(per_annotator)} annotator(s) attached to {run!r}")
