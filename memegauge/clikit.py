"""What every `memegauge` command shares: the consoles, the global settings, terminal-safe text and the
closing lines of a method command. Method packages import these from here, not from `memegauge.cli`,
which registers the methods' commands: so no import cycle runs through the command line."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from memegauge.models.spec import ModelRegistry


PIPE_WIDTH = 4096
"""Columns of stdout when it is not a terminal: a table piped to a file, `less` or `grep` keeps its
full rows (rich's default there is 80 columns, which cut the `runs` table's names to "meme…")."""


def stdout_console() -> Console:
    """The console for results on stdout: the terminal's width, or `PIPE_WIDTH` under a pipe."""
    return Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)


def stderr_console() -> Console:
    """The console for status lines on stderr: the terminal's width, or `PIPE_WIDTH` when stderr is a file (a
    run's closing line, which holds a command, is never wrapped mid-command there)."""
    return Console(stderr=True, width=None if sys.stderr.isatty() else PIPE_WIDTH)


console = stderr_console()
notes = stderr_console()
"""Status lines on stderr (wall time, call counts): silenced by `--quiet`, which leaves the errors and
each command's final line (`console`)."""
out = stdout_console()


@dataclass
class Settings:
    """Global options shared by every command."""

    store_path: Path
    models_path: Path | None
    verbose: int = 0
    quiet: bool = False
    _registry: ModelRegistry | None = field(default=None, repr=False)

    def registry(self) -> ModelRegistry:
        if self._registry is None:
            from memegauge.config import load_registry  # lazy: pydantic and the backends when a model is read

            self._registry = load_registry(self.models_path)
        return self._registry

    def store(self):
        import memegauge.methods  # noqa: F401 - hands the store the methods' migration steps before it opens
        from memegauge.engine import Store

        return Store(self.store_path)

    @property
    def progress(self) -> bool | None:
        return False if self.quiet else None


def settings(ctx: typer.Context) -> Settings:
    return ctx.find_root().obj


# ---- the options every method command shares ---------------------------------------------------

LIMIT = typer.Option(None, "--limit", min=1, help="Use at most N items (memes, or questions for MemeQA); "
                     "sets the config's `limit`.")
SEED = typer.Option(None, "--seed", help="Seed of every random draw; sets the config's `seed`.")
SET = typer.Option(None, "-o", "--set", metavar="KEY=VALUE",
                   help="Set any config key, repeatable; nested keys with dots (-o max_tokens.judging=900).")

MAX_FAILURE_RATE = typer.Option(0.0, "--max-failure-rate", min=0.0, max=1.0, metavar="SHARE",
                                help="Accept the run as done when at most this share (0–1) of its calls still "
                                     "failed after retries (default 0: none).")
RUN_HELP = ("Run name (default: made from the options); with several runs (models, benchmarks), the prefix of each "
            "run's name.")


def run_option(help: str = RUN_HELP) -> Any:
    """`--run NAME`, the one definition every run command uses (`help`: the command's own words for its default)."""
    return typer.Option(None, "--run", metavar="NAME", help=help)


RUN = run_option()


def config_option(what: str, required: bool = False, help: str | None = None) -> Any:
    """`-c/--config PATH`: the command's config YAML (`what` says whose keys; `help`: the command's own words);
    options given override it."""
    return typer.Option(... if required else None, "-c", "--config", metavar="PATH",
                        help=help or f"{what} config YAML; options given here override its keys.")


IMAGES = typer.Option(None, "--images", help="Folder the meme set's relative `image` names resolve from "
                     "(or the corpus folder holding it as images/), when the pictures are not beside the "
                     "meme-set file; sets the config's `images`.")


def shell_path(path: Path | None) -> str | None:
    """A path given on the command line, absolute: it is the shell's (from the working directory), not
    relative to the config file as the config's own paths are."""
    return None if path is None else str(Path(path).expanduser().resolve())


SKIP_PREFLIGHT = typer.Option(False, "--skip-preflight", help="Start without checking the models first "
                              "(extras, keys, endpoints, pictures): for offline replays from the store.")

DRY_RUN = typer.Option(False, "--dry-run", help="Make no model call (no preflight either): print the planned "
                       "calls per stage and model, their estimated tokens and cost, and how many the store "
                       "already has.")
BUDGET = typer.Option(None, "--budget", min=0.0, metavar="USD", help="Stop the run cleanly (resumable, "
                      "status `stopped`) once the calls it makes cost this much (registry prices).")


def use_budget(usd: float | None) -> None:
    """The command's `--budget` for the runs it opens (`memegauge.engine.set_budget`)."""
    from memegauge.engine import set_budget

    set_budget(usd)


def dry_run(cfg: Settings, name: str, plans: list) -> None:
    """`--dry-run`: the estimate of run `name`'s planned calls (`memegauge.engine.estimate`), printed.
    Reads the store when there is one (cached calls, measured token means); creates none."""
    from memegauge.engine.estimate import DRY_RUN_NOTE, estimate, estimate_tables

    store = cfg.store() if cfg.store_path.exists() else None
    for table in estimate_tables(estimate(plans, cfg.registry(), store, name), name, safe):
        out.print(table)
    console.print(DRY_RUN_NOTE)


def preflight(cfg: Settings, names: list[str], pictures: list[str] | tuple[str, ...] = (),
              skip: bool = False) -> None:
    """Check every model the command will use before its first call (`memegauge.engine.preflight`);
    one message per model that cannot work, exit 2. The picture probes are cached in the store."""
    if skip:
        return
    from memegauge.engine.preflight import preflight as check

    check(cfg.registry(), names, pictures, open_store=cfg.store)


def overrides(sets: list[str] | None, **options: Any) -> dict[str, Any]:
    """The config values the command line sets: its named options that were given, then `-o KEY=VALUE`
    (later wins), so they are validated with the file and stored with the run's config."""
    from memegauge.config import parse_overrides

    given = {key: value for key, value in options.items() if value is not None}
    return {**given, **parse_overrides(sets or [])}




_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # noqa: E501 (one regular expression, read whole)


def safe(text: object) -> str:
    """Text from a model, a file or an error, fit for the terminal: control sequences (ANSI colours,
    cursor moves, OSC titles) removed, rich markup escaped."""
    return escape(_CONTROL.sub("", str(text)))


COMMAND_WORDS = ("memegauge ", "mkdir ", "pip ")
"""How a line of a fix that is a command to paste begins (after its indentation)."""


def print_commands(console: Console, text: str, lead: str = "") -> None:
    """`text` line by line: prose wraps at the terminal's width; a command line (indented `memegauge …`) never does:
    its shell comment (`CMD  # why`) goes on lines of its own before it, each one a comment (`# …`), then the
    command whole (overflowing a narrow terminal rather than broken), so the block pastes as it reads. `lead`: rich
    markup before the first line (`[yellow]skipped:[/] `)."""
    import textwrap

    for i, line in enumerate(text.splitlines() or [""]):
        body = line.lstrip()
        indent = line[:len(line) - len(body)]
        if not body.startswith(COMMAND_WORDS):
            console.print((lead if i == 0 else "") + safe(line), highlight=False)
            continue
        command, _, comment = body.partition("  # ")
        width = max(20, console.width - len(indent) - 2)
        for part in textwrap.wrap(comment, width, break_long_words=False, break_on_hyphens=False):
            console.print(safe(f"{indent}# {part}"), highlight=False, soft_wrap=True)
        console.print(safe(indent + command.rstrip()), highlight=False, soft_wrap=True)


def finish_all(store, names: list[str], max_failure_rate: float) -> None:
    """`finish` for several runs of one command: every run's line, then exit 1 if any is incomplete."""
    from memegauge.engine import RunIncomplete

    if len(names) == 1:
        finish(store, names[0], max_failure_rate)
        return
    incomplete = []
    for name in names:
        try:
            finish(store, name, max_failure_rate)
        except RunIncomplete as exc:
            console.print(f"[red]{safe(str(exc))}[/]")
            incomplete.append(name)
    if incomplete:
        raise RunIncomplete(f"runs {', '.join(incomplete)} are incomplete; rerun the same command to retry "
                            "their failed calls")


def finish(store, name: str, max_failure_rate: float) -> None:
    """The last lines of a method command: done (or what was accepted), else RunIncomplete (exit 1)."""
    from memegauge.engine import ensure_complete

    accepted = ensure_complete(store, name, max_failure_rate)
    if accepted:
        console.print(f"[yellow]note:[/] {safe(accepted)}")
    from memegauge.files import shell_command  # lazy: `memegauge --version` imports no pydantic

    console.print(safe(f"run {name!r} done; `{shell_command('memegauge', 'report', name)}` shows it"),
                  soft_wrap=True)  # never wrapped inside its command
