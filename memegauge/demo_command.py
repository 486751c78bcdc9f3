"""`memegauge demo`: the command's descriptor (`DEMO`, the `memegauge.commands` entry point: what `--help` lists) and
the command, built by `register` when it is dispatched; the demo itself is `memegauge.demo`."""

from typing import Any

from memegauge.registry import Command

DEMO = Command(
    name="demo", register="memegauge.demo_command:register",
    summary="Run MemeGauge on the bundled sample memes with the embedded offline model.")


def register(app: Any) -> None:
    """Add `demo` to the Typer app (typer and rich's console imported now: listing the command needs neither; the
    module has no `from __future__ import annotations`, so the command's annotations are these objects)."""
    from pathlib import Path

    import typer

    from memegauge.clikit import SKIP_PREFLIGHT, settings

    @app.command("demo")
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
