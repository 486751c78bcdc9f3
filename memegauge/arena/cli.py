"""`memegauge arena -c CONFIG [--run NAME]` and `memegauge arena rank BATTLES.jsonl`.

Options given here override the config file's values (and so become part of the stored config).
`--extend RUN` adds the config's new targets to the finished arena RUN: the new run keeps RUN's config
with the newcomers appended to `added_targets`, so only their answers and battles are new work (every
earlier call replays from the cache).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from memegauge.clikit import config_option, run_option  # the run options, defined once
from rich.table import Table

from memegauge.clikit import BUDGET, DRY_RUN, IMAGES, LIMIT, MAX_FAILURE_RATE, SEED, SET, SKIP_PREFLIGHT
from memegauge.errors import InputError


def register(app: typer.Typer) -> None:
    arena_app = typer.Typer(invoke_without_command=True, no_args_is_help=False,
                            help="MemeArena: context-aware pairwise evaluation (run, or `rank`).")
    arena_app.callback()(arena_command)
    arena_app.command("rank")(rank_command)
    app.add_typer(arena_app, name="arena")


def arena_command(
    ctx: typer.Context,
    config_path: Path | None = config_option("Arena", help="Arena config YAML."),
    run: str | None = run_option("Run name (default: arena-<targets>-<memes>-<hash>)."),
    limit: int | None = LIMIT,
    seed: int | None = SEED,
    images: Path | None = IMAGES,
    sets: list[str] | None = SET,
    setting: list[str] | None = typer.Option(
        None, "--setting", help="Reference setting, repeatable: fused, self, human, none."),
    both_orders: bool | None = typer.Option(
        None, "--both-orders/--one-order", help="Judge each pair in both orders (flip rate)."),
    self_judging: bool | None = typer.Option(
        None, "--self-judging/--no-self-judging", help="May a judge judge its own answer."),
    extend: str | None = typer.Option(None, "--extend", help="Add the config's new targets to RUN."),
    max_failure_rate: float = MAX_FAILURE_RATE,
    battles_out: Path | None = typer.Option(
        None, "--battles-out", help="Also write the joint battles (JSONL, Chatbot Arena format)."),
    skip_preflight: bool = SKIP_PREFLIGHT,
    dry: bool = DRY_RUN,
    budget: float | None = BUDGET,
) -> None:
    """Run (or resume) a MemeArena evaluation."""
    if ctx.invoked_subcommand is not None:
        return
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.method import METHOD
    from memegauge.arena.pipeline import extend_config
    from memegauge.clikit import finish, notes, overrides, settings, shell_path, use_budget
    from memegauge.config import load_config
    from memegauge.run_path import run_checked

    if config_path is None:
        raise InputError("no config given", "memegauge arena", "pass -c CONFIG (an arena YAML file)")
    cfg = settings(ctx)
    config = load_config(config_path, ArenaConfig,
                         overrides(sets, limit=limit, seed=seed, images=shell_path(images),
                                   settings=setting or None, both_orders=both_orders,
                                   self_judging=self_judging))
    if extend:
        if not cfg.store_path.exists():
            raise InputError("no store here yet", str(cfg.store_path), "pass the --store of the run to extend")
        row = cfg.store().run_row(extend)
        if row["method"] != "arena":
            raise InputError(f"run {extend!r} is a {row['method']} run, not a MemeArena run", "--extend",
                             "name a run made by `memegauge arena`")
        config = extend_config(config, json.loads(row["config_json"]), extend)
    name = run or (f"{extend}+{'+'.join(config.added_targets)}" if extend else None)
    if dry:  # the plan only: no model call, no preflight, no store written
        from memegauge.arena.pipeline import repeat_runs
        from memegauge.arena.plan import plan_calls
        from memegauge.clikit import dry_run
        name = name or config.default_name()
        memes = METHOD.check(config, cfg.registry()).inputs.memes
        dry_run(cfg, name, [plan for _, seed in repeat_runs(config, name)
                            for plan in plan_calls(config.model_copy(update={"seed": seed}), memes)])
        return
    use_budget(budget)
    # the one run path (as `memegauge.run`): inputs checked, models preflighted, then the store opened
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    [result] = asyncio.run(run_checked(METHOD, [(config, name)], store=cfg.store, registry=cfg.registry(),
                                       progress=cfg.progress, preflight=not skip_preflight))
    name, outcome, store = result.name, result.details, cfg.store()
    summary = store.run_summary(name)
    notes.print(f"run {name!r}: {summary['calls']} calls ({outcome.calls_made} made now, "
                f"{summary['failed_calls']} failed); {outcome.judged}/{outcome.battles} battles judged")
    _print_ranking(store, name, battles_out)
    finish(store, name, max_failure_rate)


def _print_ranking(store, name: str, battles_out: Path | None) -> None:
    from memegauge.arena.judging import ALL_DIMENSIONS, battle_records
    from memegauge.arena.records import BattleRecord
    from memegauge.records import read_checked
    from memegauge.clikit import out
    from memegauge.files import write_text_atomic
    from memegauge.report import build_report
    from memegauge.report.intervals import shown

    report = build_report(store, name)
    table = Table(title=f"MemeArena ranking ({report['setting']} guideline) — {name}")
    for column in ("#", "model", "BT", "BT 95% CI", "Elo", "win rate (95% CI)", "score", "battles"):
        table.add_column(column)
    for i, row in enumerate(report["ranking"], start=1):
        ci = row["bt_ci"]
        win = row.get("win_rate_ci95")  # a report made before intervals has none
        table.add_row(str(i), row["model"], f"{row['bt']:.1f}",
                      f"{ci[0]:.0f}–{ci[1]:.0f}" if ci else (row.get("bt_note") or "-"), f"{row['elo']:.1f}",
                      shown(win, percent=True) if win else f"{row['win_rate']:.2f}", f"{row['score']:.2f}",
                      str(row["battles"]))
    out.print(table)
    if battles_out:
        battles = [b for b in read_checked(store, store.run_row(name)["id"], BattleRecord)
                   if b["setting"] == report["setting"]]
        lines = [json.dumps(r) for d in ALL_DIMENSIONS for r in battle_records(battles, d)]
        write_text_atomic(battles_out, "\n".join(lines) + "\n")


def rank_command(
    battles: Path = typer.Argument(..., help="Battles file: JSONL or a JSON array of "
                                             "{model_a, model_b, winner[, judge, dimension]}."),
    fmt: str = typer.Option("json", "--format", help="json or md."),
    rounds: int = typer.Option(1000, "--rounds", min=0, help="Bootstrap rounds for the BT CI."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    k: float = typer.Option(4.0, "--k", help="Online Elo K factor."),
) -> None:
    """Rank battles from a file: Elo, Bradley–Terry with bootstrap CI, win rate, per dimension."""
    from memegauge.arena.battle_file import rank_battle_file

    text = rank_battle_file(battles, fmt=fmt, bootstrap_rounds=rounds, seed=seed, k=k)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
