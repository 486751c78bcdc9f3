"""`memegauge profile MODEL [MODEL2 …]`: one page per model across every stored run that evaluated it
(docs/profile.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from memegauge.clikit import console, safe, settings
from memegauge.errors import InputError


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_command)


def profile_command(
    ctx: typer.Context,
    models: list[str] | None = typer.Argument(None, help="The models to profile (as their runs name them); with "
                                                          "--site and none named: every model the store evaluated."),
    fmt: str | None = typer.Option(None, "--format", help="html (one self-contained page), md or json (default: "
                                   "from --out's suffix, else html); without --out: md or json to stdout."),
    out_path: Path | None = typer.Option(None, "--out", help="Write the page here (atomically); without it the "
                                                             "terminal gets a text summary."),
    site: Path | None = typer.Option(None, "--site", help="Write a static site here: index.html (a sortable "
                                                          "leaderboard), one page per model, compare.html."),
    run_missing: bool = typer.Option(False, "--run-missing", help="First run what the models lack: every installed "
                                     "field benchmark, and each method given with --with (docs/profile.md)."),
    with_: list[str] | None = typer.Option(None, "--with", help="METHOD=CONFIG.yaml: a base config of a method "
                                           "to run for the models that lack it; the method fills in the models "
                                           "(docs/profile.md says how each does)."),
    bench_data: Path | None = typer.Option(None, "--bench-data", help="A folder holding one release folder per "
                                           "benchmark name (default: the data catalogue's copies)."),
    dry: bool = typer.Option(False, "--dry-run", help="With --run-missing: print the planned runs, their calls and "
                             "cost bound, and stop (no call, nothing written)."),
    budget: float | None = typer.Option(None, "--budget", min=0.0, metavar="USD", help="Stop the missing runs "
                                        "cleanly once their "
                                        "calls cost this many US dollars (registry prices); rerun to resume."),
    skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Start the missing runs without checking "
                                        "the models first."),
) -> None:
    """One model's meme understanding on one page (several: side by side, with paired differences), from every
    stored run that evaluated it: headline figures with 95% intervals beside the published ones on the same split,
    strengths and weaknesses with the memes it got wrong, and what it takes to reproduce each figure."""
    from memegauge.files import write_text_atomic
    from memegauge.profiles.gather import build_profile
    from memegauge.profiles.render import render

    cfg = settings(ctx)
    names = list(models or [])
    if (with_ or bench_data or dry or budget is not None) and not run_missing:
        raise InputError("--with, --bench-data, --dry-run and --budget plan missing runs", where="memegauge profile",
                         fix="add --run-missing")
    if run_missing:
        if not names:
            raise InputError("--run-missing needs the models named", where="memegauge profile", fix="name them")
        if not _run_missing(cfg, names, with_ or [], bench_data, dry, budget, skip_preflight):
            return  # --dry-run: the plan only
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path),
                         fix="run a method first (memegauge --help lists them), or pass --store PATH")
    store = cfg.store()
    if not names and site is None:
        raise InputError("no model named", where="memegauge profile",
                         fix="name one or more models, as their runs name them (memegauge runs), or pass --site DIR")
    from memegauge.profiles.gather import evaluated_models

    named = bool(names)
    names = names or evaluated_models(store)
    if not names:
        raise InputError("the store holds no run that evaluated a model", where=str(cfg.store_path),
                         fix="run a method first")
    registry = cfg.registry() if cfg.models_path is not None else None
    found = build_profile(store, names, registry, named)  # a named model no stored run evaluated: an InputError
    if site is not None:
        from memegauge.profiles.site import write_site

        files = write_site(found, site)
        console.print(f"{len(files)} pages written to {safe(site)} (open {safe(site / 'index.html')})")
        return
    if out_path is None and fmt is None:  # the terminal gets a readable summary, never a page's markup
        from memegauge.clikit import out
        from memegauge.profiles.render import to_text

        width = out.width if out.is_terminal else None  # a file or pipe gets whole lines
        out.print(safe(to_text(found, width)), highlight=False, soft_wrap=True, end="")
        return
    fmt = fmt or {".md": "md", ".json": "json"}.get(out_path.suffix.lower() if out_path else "", "html")
    if out_path is None and fmt == "html":
        raise InputError("an HTML page is not printed to the terminal", where="--format html",
                         fix="add --out FILE.html (or --site DIR); without --format the terminal gets a summary")
    text = render(found, fmt)
    if out_path:
        write_text_atomic(out_path, text)
        console.print(f"profile written to {safe(out_path)}")
    else:
        sys.stdout.write(safe_text(text))


def safe_text(text: str) -> str:
    """Markdown or JSON for stdout: control sequences (ANSI, OSC) removed, ending in a newline."""
    from memegauge.clikit import _CONTROL

    text = _CONTROL.sub("", text)
    return text if text.endswith("\n") else text + "\n"


def _run_missing(cfg, names: list[str], with_: list[str], bench_data: Path | None, dry: bool,  # noqa: ANN001
                 budget: float | None, skip_preflight: bool) -> bool:
    """Plan the missing runs, print the plan; unless `dry`, make them. False when only the plan was asked for."""
    import asyncio

    from memegauge.clikit import out, use_budget
    from memegauge.profiles.gather import stored_runs
    from memegauge.profiles.plan import execute, mark_stored, plan

    store = cfg.store() if cfg.store_path.exists() else None
    registry = cfg.registry()
    found = stored_runs(store, names) if store is not None else {}
    runs, notes = plan(found, names, with_, registry, bench_data)
    mark_stored(runs, store)
    (out if dry else console).print(plan_table(runs, registry, store))  # the page alone on stdout
    for note in notes:
        console.print(f"  {safe(note)}", soft_wrap=True, highlight=False)
    if dry:
        console.print("dry run: nothing was sent and nothing written; drop --dry-run to make these runs")
        return False
    use_budget(budget)
    asyncio.run(execute(runs, cfg.store, registry, cfg.progress, preflight=not skip_preflight))
    return True


def plan_table(runs: list, registry, store):  # noqa: ANN001, ANN201 (a rich Table)
    """One line per planned run: method, run name, models, state, planned calls (with their bound), of which
    already in the store's cache, and the cost bound; then the totals."""
    from rich.table import Table

    from memegauge.engine.estimate import estimate

    table = Table(title=f"profile plan: {len(runs)} run(s)")
    for column in ("method", "run", "models", "state", "calls", "cached", "cost $"):
        table.add_column(column)
    calls = cached = 0
    cost: float | None = 0.0
    for run in runs:
        rows = estimate(run.calls, registry, store, run.name) if run.calls else []
        n, hit = sum(r.calls for r in rows), sum(r.cached for r in rows)
        bound = "exact" if all(r.bound == "exact" for r in rows) else "at most"
        money = None if any(r.cost is None for r in rows) else sum(r.cost for r in rows)
        calls, cached = calls + n, cached + hit
        cost = None if cost is None or money is None else cost + money
        table.add_row(safe(run.method), safe(run.name), safe(", ".join(run.models)), safe(run.state),
                      f"{n} ({bound})" if rows else "–", str(hit),
                      "price unknown" if money is None else f"≤ {money:.4f}")
    table.add_row("total", "", "", "", str(calls), str(cached), "price unknown" if cost is None else f"≤ {cost:.4f}")
    return table
