"""`memegauge` command line (typer). Thin on purpose: parse options, load config, call the Python API.

Exit codes: 0 success, 2 bad input or config, 1 failure, 4 `eval --suite` skipped benchmarks without data,
130 Ctrl-C, 143 SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import typer
from rich.table import Table

from memegauge._version import __version__
from memegauge.clikit import SKIP_PREFLIGHT, Settings, console, finish, notes, out, safe, settings  # noqa: F401 (the API)
from memegauge.config import ENV_STORE, registry_path
from memegauge.files import write_text_atomic
from memegauge.types import InputError, MemeGaugeError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Measure how well multimodal LLMs understand memes.")
def _print_version(value: bool) -> None:
    if value:
        out.print(f"memegauge {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    store: Path | None = typer.Option(None, "--store", help="Run store (default ./memegauge.db "
                                         "or $MEMEGAUGE_STORE)."),
    models: Path | None = typer.Option(None, "--models", help="Model registry YAML."),
    verbose: int = typer.Option(0, "-v", "--verbose", count=True,
                                help="-v: each execution and every failed attempt as it happens; -vv: every call."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bars; errors only."),
    encoding: str = typer.Option("utf-8", "--encoding", help="Encoding of the text files you give "
                                 "(meme sets, texts, predictions, votes, configs); UTF-8 files may "
                                 "start with a BOM."),
    grace: float = typer.Option(10.0, "--grace", min=0.0, help="On the first Ctrl-C, wait up to this "
                                "many seconds for the answers in flight and store them (a second "
                                "Ctrl-C leaves at once)."),
    progress_every: float = typer.Option(10.0, "--progress-every", min=0.1, help="When stderr is not a "
                                         "terminal (nohup, SLURM, a pipe): a plain progress line every this "
                                         "many seconds."),
    max_meme_text: int | None = typer.Option(None, "--max-meme-text", min=1, help="The most characters a "
                                             "meme's text may have (default 20000, or $MEMEGAUGE_MAX_MEME_TEXT); "
                                             "a longer one is refused where it is read."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 is_eager=True, callback=lambda value: _print_version(value)),
) -> None:
    from memegauge.engine import set_budget
    from memegauge.engine.interrupt import set_grace
    from memegauge.engine.progress import set_progress_every
    from memegauge.files import set_max_meme_text, set_text_encoding
    from memegauge.logs import configure

    configure(verbose, quiet)
    notes.quiet = quiet
    set_text_encoding(encoding)
    set_max_meme_text(max_meme_text)
    set_grace(grace)
    set_progress_every(progress_every)
    set_budget(None)  # a method command's --budget sets it for its own runs
    store_path = store or Path(os.environ.get(ENV_STORE) or "memegauge.db")
    models = registry_path(models)  # here: a command that needs no model never reads it
    ctx.obj = Settings(store_path=store_path, models_path=models, verbose=verbose, quiet=quiet)


@app.command("runs")
def runs_command(ctx: typer.Context,
                 as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List runs in the store with status, calls, tokens and cost."""
    cfg = settings(ctx)
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path),
                         fix="run a method first, or pass --store PATH")
    store = cfg.store()
    rows = store.list_runs()
    if as_json:
        out.print_json(json.dumps(rows, default=str))
        return
    from memegauge.report.header import run_header

    table = Table(title=f"runs in {cfg.store_path}")
    for column in ("name", "method", "status", "calls", "made", "cached", "last rerun new",
                   "failed", "tokens", "cost $"):
        table.add_column(column)
    for h in (run_header(store, r["name"]) for r in rows):
        table.add_row(h.name, h.method, h.status, str(h.calls), str(h.calls_made), str(h.cached_calls),
                      str(h.last_execution_new_calls), str(h.failed_calls), str(h.tokens), f"{h.cost:.4f}")
    out.print(table)


@app.command("models")
def models_command(ctx: typer.Context,
                   check: bool = typer.Option(False, "--check", help="Send one tiny request each."),
                   only: list[str] | None = typer.Argument(None, help="Models to list/check.")
                   ) -> None:
    """List configured models; --check sends one tiny request to each (exit 1 when a model you named,
    as an argument or in your registry file, fails; a built-in whose extra is missing says so)."""
    from memegauge.engine.preflight import check_listed, user_named

    registry = settings(ctx).registry()
    names = only or registry.names()
    specs = [registry.get(n) for n in names]
    table = Table(title=f"models ({registry.source})")
    for column in ("name", "backend", "model", "base_url", "vision", "conc.", "rpm", "key env"):
        table.add_column(column)
    for s in specs:
        key_state = f"{s.api_key_env} ({'set' if os.environ.get(s.api_key_env) else 'unset'})" \
            if s.api_key_env else "-"
        table.add_row(s.name, s.backend, s.model, ", ".join(s.base_url) or "-", str(s.vision),
                      str(s.max_concurrency), str(s.rpm or "-"), key_state)
    out.print(table)
    if check:
        results = asyncio.run(check_listed(registry, names))
        for r in results:
            if r.get("installed") is False:
                out.print(f"{safe(r['model'])}: [yellow]not installed[/] {safe(r['detail'])}", soft_wrap=True)
                continue
            mark = "[green]ok[/]" if r["ok"] else f"[red]{safe(r['error_class'])}[/]"
            out.print(f"{safe(r['model'])}: {mark} {r['latency_s']:.2f}s image: {r['image']} "
                      f"{safe(r['detail'])}", soft_wrap=True)
            if r["image"] == "no":
                out.print(f"  {safe(r['model'])} refuses images: add `vision: false` to its registry "
                          "entry (it then reads meme text and caption), or serve a vision model")
        named = set(only or user_named(registry))
        if any(r["model"] in named and not (r["ok"] and r["image"] != "no") for r in results):
            raise typer.Exit(1)


@app.command("report")
def report_command(
    ctx: typer.Context, run: str = typer.Argument(..., help="Run name."),
    fmt: str = typer.Option("json", "--format", help="json, csv, md or html."),
    out_path: Path | None = typer.Option(None, "--out", help="Write here instead of stdout."),
    plots_dir: Path | None = typer.Option(None, "--plots", help="Also write every plot of the HTML "
                                             "report here as PNG, SVG and PDF."),
) -> None:
    """Report a run from the store (csv/md: its leaderboard with 95% intervals; json: everything)."""
    from memegauge.report.formats import render_report

    cfg = settings(ctx)
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
    text = render_report(cfg.store(), run, fmt)
    if plots_dir:
        from memegauge.report.plotfiles import write_plots

        console.print(f"{len(write_plots(cfg.store(), run, plots_dir))} plot files written to {plots_dir}")
    if out_path:
        write_text_atomic(out_path, text)
        console.print(f"report written to {out_path}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


@app.command("export")
def export_command(
    ctx: typer.Context, run: str = typer.Argument(..., help="Run name."),
    table: str = typer.Option(..., "--table", help="One of the run's method's tables (an unknown name lists "
                              "them; docs/runs.md), or leaderboard: its headline figures."),
    fmt: str = typer.Option("csv", "--format", help="csv, jsonl or parquet (parquet needs --out)."),
    out_path: Path | None = typer.Option(None, "--out", help="Write here (atomically) instead of stdout."),
) -> None:
    """Export one table of a run, one row per item (docs/runs.md: "Exports")."""
    from memegauge.export import export

    cfg = settings(ctx)
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
    rows, text = export(cfg.store(), run, table, fmt, out_path)
    if text is None:
        console.print(f"{rows} rows written to {safe(out_path)}")
    else:
        sys.stdout.write(text)


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


def _register_commands() -> None:
    """The report commands, then each registered method's (see `memegauge.methods`)."""
    from memegauge.methods import methods
    from memegauge.data.cli import register as register_data_commands
    from memegauge.report.cli import register as register_report_commands
    from memegauge.benchmarks.kit.cli import register as register_eval  # `memegauge eval`: the benchmark kit

    if getattr(app, "_methods_registered", False):
        return
    app._methods_registered = True  # type: ignore[attr-defined]
    register_report_commands(app)
    register_data_commands(app)
    register_eval(app)
    __import__("memegauge.profile.cli", fromlist=["register"]).register(app)  # `memegauge profile` (issue 45)
    for method in methods():
        if method.commands:
            method.commands(app)


INTERRUPTED = ("interrupted: the run is marked `interrupted`; every answer received so far is stored. "
               "Rerun the same command to continue where it stopped.")
TERMINATED = "terminated (SIGTERM), treated as Ctrl-C: " + INTERRUPTED.removeprefix("interrupted: ")


def _interrupted() -> int:
    """The message and exit status of a Ctrl-C (130) or a SIGTERM (143, what schedulers expect)."""
    from memegauge.engine.interrupt import terminated

    console.print(TERMINATED if terminated() else INTERRUPTED)
    return 143 if terminated() else 130


def main(argv: list[str] | None = None) -> int:
    """Entry point: maps MemeGauge errors to exit codes and one clear message."""
    from memegauge.engine.interrupt import sigterm_as_ctrl_c

    with sigterm_as_ctrl_c():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        _register_commands()
        app(args=argv, prog_name="memegauge")
    except SystemExit as exc:  # typer's own exits: --help, usage errors (2), typer.Exit
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == 130:  # typer turns Ctrl-C into a silent exit 130
            return _interrupted()
        return _stopped_by_sigterm() if code == 0 else code
    except InputError as exc:
        console.print(f"[red]error:[/] {safe(exc)}", highlight=False, soft_wrap=True)
        return 2
    except MemeGaugeError as exc:  # `label`: e.g. "stopped" for a clean, resumable stop (--budget)
        label = getattr(exc, "label", "failed")
        colour = "red" if label == "failed" else "yellow"
        console.print(f"[{colour}]{label}:[/] {safe(exc)}", highlight=False, soft_wrap=True)
        return exc.exit_code  # 1; 3: a run whose answers mostly could not be read (memeqa/cli.py)
    except KeyboardInterrupt:
        return _interrupted()
    return _stopped_by_sigterm()


def _stopped_by_sigterm() -> int:
    """0, or 143 for a command that stopped cleanly on SIGTERM (`rate`, `view`: their server shuts down
    as on Ctrl-C), so a scheduler or script sees that it was terminated."""
    from memegauge.engine.interrupt import terminated

    if not terminated():
        return 0
    console.print("terminated (SIGTERM)")
    return 143


if __name__ == "__main__":
    sys.exit(main())
