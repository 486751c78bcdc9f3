"""`memegauge toyscore -c CONFIG [--run NAME]`: build the config, run it on the one run path, print."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("toyscore")(toyscore_command)


def toyscore_command(ctx: typer.Context,
                     config: Path = typer.Option(..., "-c", "--config", help="Toyscore config YAML."),
                     run: str | None = typer.Option(None, "--run", help="Run name.")) -> None:
    """Ask one model whether each meme is funny."""
    from memegauge.clikit import finish, out, settings
    from memegauge.run_path import run_checked
    from toyscore.method import METHOD
    from toyscore.run import config as load

    s = settings(ctx)
    [result] = asyncio.run(run_checked(METHOD, [(load(config), run)], store=s.store, registry=s.registry(),
                                       progress=s.progress))
    out.print(f"{result.name}: {result.calls} calls, {result.failed_calls} failed", highlight=False)
    finish(s.store(), result.name, 0.0)
