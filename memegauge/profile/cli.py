"""`memegauge profile MODEL [MODEL2 …]`: one page per model across every stored run that evaluated it (docs/profile.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from memegauge.clikit import console, safe, settings
from memegauge.types import InputError


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_command)


def evaluated_models(store) -> list[str]:  # noqa: ANN001 (a Store)
    """Every model some stored run evaluated (its headline rows name it), in first-run order."""
    from memegauge.report import build_report
    from memegauge.report.headline import headline_rows
    from memegauge.types import MemeGaugeError

    found: dict[str, None] = {}
    for run in store.list_runs():
        try:
            found |= dict.fromkeys(r.model for r in headline_rows(build_report(store, run["name"])))
        except MemeGaugeError:
            continue
    return list(found)


def profile_command(
    ctx: typer.Context,
    models: list[str] | None = typer.Argument(None, help="The models to profile (as their runs name them); with "
                                                          "--site and none named: every model the store evaluated."),
    fmt: str = typer.Option("html", "--format", help="html (one self-contained page), md or json."),
    out_path: Path | None = typer.Option(None, "--out", help="Write here (atomically) instead of stdout."),
    site: Path | None = typer.Option(None, "--site", help="Write a static site here: index.html (a sortable "
                                                          "leaderboard), one page per model, compare.html."),
) -> None:
    """One model's meme understanding on one page (several: side by side, with paired differences), from every
    stored run that evaluated it: headline figures with 95% intervals beside the published ones on the same split,
    strengths and weaknesses with the memes it got wrong, and what it takes to reproduce each figure."""
    from memegauge.files import write_text_atomic
    from memegauge.profile.gather import build_profile
    from memegauge.profile.render import render

    cfg = settings(ctx)
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path),
                         fix="run a method first (memegauge qa eval, adam, arena, eval), or pass --store PATH")
    store = cfg.store()
    names = list(models or [])
    if not names and site is None:
        raise InputError("no model named", where="memegauge profile", fix="name one or more models, as their runs "
                                                                        "name them (memegauge runs), or pass --site DIR")
    names = names or evaluated_models(store)
    if not names:
        raise InputError("the store holds no run that evaluated a model", where=str(cfg.store_path),
                         fix="run a method first")
    registry = cfg.registry() if cfg.models_path is not None else None
    found = build_profile(store, names, registry)
    for page in found.models:
        if not page.runs:
            console.print(f"[yellow]no stored run evaluated {safe(page.model)}[/] (memegauge runs lists the runs; "
                          "the model's name is the one its runs use)", soft_wrap=True)
    if site is not None:
        from memegauge.profile.site import write_site

        files = write_site(found, site)
        console.print(f"{len(files)} pages written to {safe(site)} (open {safe(site / 'index.html')})")
        return
    text = render(found, fmt)
    if out_path:
        write_text_atomic(out_path, text)
        console.print(f"profile written to {safe(out_path)}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
