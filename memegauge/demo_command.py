"""`memegauge demo`: the command (a `memegauge.commands` entry point, imported when it is dispatched or listed);
the demo itself is `memegauge.demo`."""

from __future__ import annotations

from pathlib import Path

import typer

from memegauge.clikit import SKIP_PREFLIGHT, settings


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)


def demo_command(ctx: typer.Context,
                 out_dir: Path = typer.Option(Path("demo-out"), "--out", help="Output folder."),
                 model: str = typer.Option("embedded", "--model", help="Model for every role."),
                 memes: Path | None = typer.Option(None, "--memes",
                                                      help="Your meme set instead of the samples."),
                 skip_preflight: bool = SKIP_PREFLIGHT,
                 ) -> None:
    """Run MemeGauge on the bundled sample memes with the embedded offline model."""
    from memegauge.demo import run_demo

    cfg = settings(ctx)
    run_demo(cfg.store(), cfg.registry(), out_dir, model, memes, progress=cfg.progress,
             skip_preflight=skip_preflight)
