"""`memegauge` command line (typer). Thin on purpose: parse options, load config, call the Python API.

Exit codes: 0 success, 2 bad input or config, 1 failure, 4 `eval --suite` skipped benchmarks without data,
130 Ctrl-C, 143 SIGTERM.
"""

from __future__ import annotations

import json
import os
import sys
from gettext import gettext as _
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from memegauge._version import __version__

# Start-up (bench/startup.py): this module imports typer only; `memegauge.clikit` (rich's console) when a command
# runs or an error is printed. Every command's module is imported when that command is dispatched (`LazyGroup`;
# `--help` lists each from its descriptor), the engine (and aiohttp) when a command uses it, so `memegauge
# --version` imports no method, no benchmark, no engine and no pydantic, and `--help` no command's module
# (tests/test_structure.py).

_CLIKIT = ("SKIP_PREFLIGHT", "Settings", "console", "finish", "notes", "out", "safe", "settings")
"""What this module has always offered of `memegauge.clikit` (the API), imported from there on first use."""


def __getattr__(name: str) -> Any:
    if name in _CLIKIT:
        import memegauge.clikit

        return getattr(memegauge.clikit, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

COMMAND_GROUP = "memegauge.commands"
"""Entry points of the top-level commands, each named after its command, naming its `memegauge.registry.Command`:
its one-line help (what `--help` lists) and its `register(app)`, the function that adds it (with any others of its
module) to a Typer app, imported when the command is dispatched (pyproject.toml lists MemeGauge's own)."""


def _commands() -> Any:
    from memegauge.registry import Command, Registry  # lazy: the registry when a command is looked up

    global _COMMANDS
    if _COMMANDS is None:
        _COMMANDS = Registry("command", COMMAND_GROUP, Command, own="memegauge.")  # another package's `eval`:
        # skipped with a warning, MemeGauge's kept
    return _COMMANDS


_COMMANDS: Any = None


_CORE = "the name of MemeGauge's own command"


class LazyGroup(TyperGroup):
    """The `memegauge` group: its own commands (below), then each command declared as an entry point of
    `COMMAND_GROUP` (a `memegauge.registry.Command`), its module imported only when it is dispatched: `--help`
    lists its descriptor's one-line help."""

    def list_commands(self, ctx: Any) -> list[str]:
        declared = _commands().names()
        for name in declared:
            if name in self.commands:
                _commands().refuse(name, _CORE)
        return [*self.commands, *(n for n in declared if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands:
            _commands().refuse(cmd_name, _CORE)  # another package's `runs`: named, not silently ignored
        else:
            declared = _commands().get(cmd_name)
            if declared is not None:
                self._add_from(declared, declared.load())
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """`--help`'s list of commands, laid out as click's own, a declared command's line from its descriptor
        (its module is not imported; tests/test_cli_help.py checks that each line is the command's own). Each
        line is the command's whole one-line help, wrapped to the terminal's width: click's own listing cuts it
        with "..." at 45 characters, whatever the width, and a cut sentence says less than the command does."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name) or self._listed(name)
            if command is not None and not command.hidden:
                rows.append((name, command))
        if rows:
            with formatter.section(_("Commands")):
                formatter.write_dl([(name, _one_line(command)) for name, command in rows])

    def _listed(self, name: str) -> Any:
        """A command of the declared command's one-line help alone (listed whole, see `format_commands`), its module not
        imported; None for a descriptor that cannot be loaded, named on stderr so that the others are listed."""
        from memegauge.errors import MemeGaugeError  # light: a plain exception

        try:
            declared = _commands().get(name)
        except MemeGaugeError as exc:
            from memegauge.clikit import console, safe  # lazy: rich's console when there is something to print

            console.print(f"[yellow]warning:[/] {safe(exc)}", highlight=False, soft_wrap=True)
            return None
        return TyperCommand(name=name, help=declared.summary) if declared is not None else None

    def _add_from(self, declared: Any, register: Any) -> None:
        """The command `declared` names, from those `register(app)` adds to a Typer app."""
        from memegauge.registry import PluginError  # lazy: as `_commands`

        staging = typer.Typer()
        register(staging)
        group = typer.main.get_group(staging)
        if declared.name not in group.commands:
            raise PluginError(f"command {declared.name!r} ({_commands().source(declared.name)}, group "
                              f"{COMMAND_GROUP!r}) is not among the commands {declared.register} adds "
                              f"({', '.join(group.commands) or 'none'})")
        self.commands.setdefault(declared.name, group.commands[declared.name])


def _one_line(command: Any) -> str:
    """A command's one-line help: its `short_help`, else the first paragraph of its help (before click's `\\f`),
    its lines joined, as a descriptor's summary is (tests/test_cli_help.py)."""
    if command.short_help:
        return " ".join(command.short_help.split())
    return " ".join((command.help or "").split("\f", 1)[0].strip().split("\n\n", 1)[0].split())


# rich_markup_mode=None: the top-level help (and its usage errors) in click's plain layout. Typer's rich layout
# imports rich's markdown, traceback and pretty-printer and draws every panel: `memegauge --help` took 4.3× the
# typer+rich floor with it, 3.0× without (bench/startup.py, side by side). A command's own help keeps rich's.
app = typer.Typer(cls=LazyGroup, rich_markup_mode=None, add_completion=False, no_args_is_help=True,
                  pretty_exceptions_enable=False, help="Measure how well multimodal LLMs understand memes.")


def command_group() -> LazyGroup:
    """The `memegauge` command group with every command loaded (what `--help` lists; tests walk it)."""
    group = typer.main.get_command(app)
    for name in group.list_commands(None):
        group.get_command(None, name)
    return group


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"memegauge {__version__}")
        raise typer.Exit()


DEFAULT_GRACE_S = 10.0  # = memegauge.engine.interrupt.DEFAULT_GRACE_S (tests/test_structure.py)
DEFAULT_PROGRESS_EVERY_S = 10.0  # = memegauge.engine.progress.DEFAULT_EVERY_S (tests/test_structure.py)


def _engine_settings(grace: float, progress_every: float) -> None:
    """The engine's process-wide settings: set when given, reset when the engine is already loaded (a second
    `main()` in one process); an engine not yet imported starts from its defaults, so nothing is imported for a
    command that never runs a model (start-up: the engine imports aiohttp)."""
    loaded = "memegauge.engine" in sys.modules
    if loaded:
        from memegauge.engine import set_budget  # the engine is loaded already

        set_budget(None)  # a method command's --budget sets it for its own runs
    if loaded or grace != DEFAULT_GRACE_S:
        from memegauge.engine.interrupt import set_grace  # lazy: only when there is something to set

        set_grace(grace)
    if loaded or progress_every != DEFAULT_PROGRESS_EVERY_S:
        from memegauge.engine.progress import set_progress_every  # lazy: as set_grace

        set_progress_every(progress_every)


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
    grace: float = typer.Option(DEFAULT_GRACE_S, "--grace", min=0.0, help="On the first Ctrl-C, wait up to this "
                                "many seconds for the answers in flight and store them (a second "
                                "Ctrl-C leaves at once)."),
    progress_every: float = typer.Option(DEFAULT_PROGRESS_EVERY_S, "--progress-every", min=0.1,
                                         help="When stderr is not a terminal (nohup, SLURM, a pipe): a plain "
                                         "progress line every this many seconds."),
    max_meme_text: int | None = typer.Option(None, "--max-meme-text", min=1, help="The most characters a "
                                             "meme's text may have (default 20000, or $MEMEGAUGE_MAX_MEME_TEXT); "
                                             "a longer one is refused where it is read."),
    allow_unchecked: bool = typer.Option(False, "--allow-unchecked", help="Read installed data sets whose last "
                                         "`data verify` found bad files (refused otherwise; also "
                                         "$MEMEGAUGE_ALLOW_UNCHECKED=1)."),
    version: bool = typer.Option(False, "--version", help="Print the version and exit.",
                                 is_eager=True, callback=lambda value: _print_version(value)),
) -> None:
    from memegauge.clikit import Settings, notes  # lazy: rich's console once a command runs
    from memegauge.locations import ENV_STORE, registry_path  # no pydantic: a command that needs no model
    from memegauge.files import set_max_meme_text, set_text_encoding
    from memegauge.logs import configure

    configure(verbose, quiet)
    notes.quiet = quiet
    set_text_encoding(encoding)
    set_max_meme_text(max_meme_text)
    _engine_settings(grace, progress_every)
    if allow_unchecked:
        from memegauge.data.store import set_allow_unchecked

        set_allow_unchecked(True)
    store_path = store or Path(os.environ.get(ENV_STORE) or "memegauge.db")
    models = registry_path(models)  # here: a command that needs no model never reads it
    ctx.obj = Settings(store_path=store_path, models_path=models, verbose=verbose, quiet=quiet)


@app.command("runs")
def runs_command(ctx: typer.Context,
                 as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List runs in the store with status, calls, tokens and cost."""

    from memegauge.clikit import out, settings
    from memegauge.errors import InputError

    cfg = settings(ctx)
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path),
                         fix="run a method first, or pass --store PATH")
    store = cfg.store()
    rows = store.list_runs()
    if as_json:
        out.print_json(json.dumps(rows, default=str))
        return
    from memegauge.report.formats import runs_table
    from memegauge.report.header import run_header

    table, dropped = runs_table([run_header(store, r["name"]) for r in rows], out.width, f"runs in {cfg.store_path}")
    out.print(table)
    if dropped:  # a run's name is never cut: other columns go first
        out.print(f"left out at {out.width} columns: {', '.join(dropped)}", highlight=False)
        out.print("`memegauge runs --json` has every column", highlight=False)


WEIGHTS_BACKENDS = ("embedded", "hf")  # models whose check loads weights here: `models --check` asks them only by name


@app.command("models")
def models_command(ctx: typer.Context,
                   check: bool = typer.Option(False, "--check", help="Send one tiny request each."),
                   only: list[str] | None = typer.Argument(None, help="Models to list/check.")
                   ) -> None:
    """List configured models; --check sends one tiny request to each (exit 1 when a model you named,
    as an argument or in your registry file, fails; a built-in whose extra is missing says so)."""
    import asyncio

    from rich.table import Table

    from memegauge.clikit import out, safe, settings
    from memegauge.engine.preflight import check_listed, free_problems, user_named

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
        local = [] if only else [n for n in names if registry.get(n).backend in WEIGHTS_BACKENDS]
        unready = asyncio.run(free_problems(registry, local))  # free checks only (its extra, its weights' files)
        for name in (n for n in local if n not in unready):  # never loaded unless named: seconds and a gigabyte
            out.print(f"{safe(name)}: not checked (a local model: `memegauge models --check {safe(name)}` loads its "
                      "weights and asks it)", soft_wrap=True, highlight=False)
        results = [unready[n] for n in local if n in unready]
        results += asyncio.run(check_listed(registry, [n for n in names if n not in local]))
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
        named = set(only or user_named(registry)) - set(local)
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
    from memegauge.clikit import console, settings
    from memegauge.errors import InputError
    from memegauge.files import write_text_atomic
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
    from memegauge.clikit import console, safe, settings
    from memegauge.errors import InputError
    from memegauge.export import export
    from memegauge.files import terminal_text

    cfg = settings(ctx)
    if not cfg.store_path.exists():
        raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
    rows, text = export(cfg.store(), run, table, fmt, out_path)
    if text is None:
        console.print(f"{rows} rows written to {safe(out_path)}")
    else:  # on a terminal a meme's escape sequences are shown, not run; a pipe or file gets the bytes as stored
        sys.stdout.write(terminal_text(text) if sys.stdout.isatty() else text)


INTERRUPTED = ("interrupted: the run is marked `interrupted`; every answer received so far is stored. "
               "Rerun the same command to continue where it stopped.")
TERMINATED = "terminated (SIGTERM), treated as Ctrl-C: " + INTERRUPTED.removeprefix("interrupted: ")
NO_RUN = ("interrupted before the run started (during the checks or while reading the data): no run "
          "was opened, so there is nothing to resume. Rerun the same command to start it.")


def _interrupted() -> int:
    """The message and exit status of a Ctrl-C (130) or a SIGTERM (143, what schedulers expect)."""
    from memegauge.clikit import console
    from memegauge.signals import run_opened, terminated

    said = (TERMINATED if terminated() else INTERRUPTED) if run_opened() else NO_RUN
    console.print(("terminated (SIGTERM): " if terminated() and not run_opened() else "") + said)
    return 143 if terminated() else 130


def main(argv: list[str] | None = None) -> int:
    """Entry point: maps MemeGauge errors to exit codes and one clear message."""
    from memegauge.signals import sigterm_as_ctrl_c

    with sigterm_as_ctrl_c():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        app(args=argv, prog_name="memegauge")
    except SystemExit as exc:  # typer's own exits: --help, usage errors (2), typer.Exit
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == 130:  # typer turns Ctrl-C into a silent exit 130
            return _interrupted()
        return _stopped_by_sigterm() if code == 0 else code
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as exc:
        from memegauge.clikit import console, safe  # lazy: rich's console when there is an error to print
        from memegauge.errors import InputError, MemeGaugeError

        if isinstance(exc, InputError):
            console.print(f"[red]error:[/] {safe(exc)}", highlight=False, soft_wrap=True)
            return 2
        if isinstance(exc, MemeGaugeError):  # `label`: e.g. "stopped" for a clean, resumable stop (--budget)
            label = getattr(exc, "label", "failed")
            colour = "red" if label == "failed" else "yellow"
            console.print(f"[{colour}]{label}:[/] {safe(exc)}", highlight=False, soft_wrap=True)
            return exc.exit_code  # 1; 3: a run whose answers mostly could not be read (memeqa/cli.py)
        raise
    return _stopped_by_sigterm()


def _stopped_by_sigterm() -> int:
    """0, or 143 for a command that stopped cleanly on SIGTERM (`rate`, `view`: their server shuts down
    as on Ctrl-C), so a scheduler or script sees that it was terminated."""
    from memegauge.signals import terminated

    if not terminated():
        return 0
    from memegauge.clikit import console

    console.print("terminated (SIGTERM)")
    return 143


if __name__ == "__main__":
    sys.exit(main())
