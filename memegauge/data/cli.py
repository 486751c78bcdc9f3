"""`memegauge data list|get|import|path|verify|remove` (docs/data.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from memegauge.types import printable

data_app = typer.Typer(no_args_is_help=True, help="Benchmark data: fetch, import, check and cite the data sets "
                       "(docs/data.md).")

MIRROR = typer.Option(None, "--mirror", metavar="BASE", help="Replace the scheme and host of every GitHub URL with "
                      "BASE, keeping the path (also $MEMEGAUGE_DATA_MIRROR).")
OFFLINE = typer.Option(False, "--offline", help="Never touch the network (also HF_HUB_OFFLINE=1): report an "
                       "installed copy, refuse a missing one.")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")


def _quiet(ctx: typer.Context) -> bool:
    from memegauge.clikit import settings

    cfg = settings(ctx)
    return bool(cfg and cfg.quiet)


def _checked_by(source, manifest: dict) -> str:
    if source.kind == "github":
        return f"sha256 manifest ({len(manifest.get(source.id, {}))} files)"
    if source.kind == "hub":
        return "the Hub's sha256 / git blob id" + ("" if source.pinned else " (revision not pinned)")
    return "known release sha256; " * bool(source.known) + "sha256 recorded at import"


def _status(name: str) -> str:
    from memegauge.data.store import missing_sources, read_state

    state = read_state(name)
    if not state:
        return "no"
    missing = missing_sources(name)
    if missing:
        return f"partly (missing {', '.join(missing)})"
    if state.get("verify_failed"):
        return f"yes, NOT checked: `data verify` found {state['verify_failed']['problems']} bad files " \
               f"({state['verify_failed']['at']})"
    return f"yes, checked {state['checked']}" if state.get("checked") else "yes, checked at install"


@data_app.command("list")
def list_command(details: bool = typer.Option(False, "--details", help="Also each entry's notes and citation.")
                 ) -> None:
    """Every data set: what it is, size, licence, sources, how it is checked, installed or not."""
    from memegauge.clikit import out, safe
    from memegauge.data.catalogue import entries
    from memegauge.data.store import data_dir

    table = Table(title=f"data sets (installed in {data_dir()})")
    for column in ("name", "what", "size", "licence", "source", "checked by", "installed"):
        table.add_column(column, overflow="fold")
    for name, described in entries().items():
        manifest = described.manifest()
        table.add_row(name, safe(described.title), described.size, safe(described.licence),
                      "\n".join(f"{s.id}: {safe(s.where())}" for s in described.sources),
                      "\n".join(f"{s.id}: {_checked_by(s, manifest)}" for s in described.sources), _status(name))
    out.print(table)
    if details:
        for name, described in entries().items():
            out.print(f"\n[bold]{name}[/]: {safe(described.notes) or 'no caveats'}", soft_wrap=True)
            for source in described.sources:
                if source.kind == "user":
                    out.print(f"{source.id}: request it: {safe(source.request)}; then `memegauge data import "
                              f"{name} PATH`", soft_wrap=True, highlight=False)
            out.print(safe(described.citation), soft_wrap=True, highlight=False)


@data_app.command("get")
def get_command(ctx: typer.Context, names: list[str] = typer.Argument(..., help="Data set names."),
                mirror: str | None = MIRROR, offline: bool = OFFLINE) -> None:
    """Fetch, check and install data sets (an installed, checked copy is never fetched again)."""
    from memegauge.clikit import console, out, safe
    from memegauge.data.catalogue import entry
    from memegauge.data.install import get
    from memegauge.data.store import entry_dir, get_line, missing_sources, read_state, reinstall_line

    quiet = _quiet(ctx)
    gated, damaged = [], []
    for name in names:
        outcome = get(name, mirror=mirror, offline=offline, quiet=quiet,
                      say=lambda text: console.print(safe(text), highlight=False, soft_wrap=True))
        where = entry_dir(name)
        if outcome.already and read_state(name).get("verify_failed"):
            damaged.append(f"{name}: installed in {safe(printable(where))} (0 requests), but its last `memegauge data "
                           f"verify` found bad files; fix: {reinstall_line(name)}")
        elif outcome.already:
            out.print(f"{name}: already installed in {safe(printable(where))} (0 requests); not re-hashed: "
                      f"`memegauge data verify {name}` does", soft_wrap=True)
        elif outcome.installed:
            out.print(f"{name}: installed {', '.join(outcome.installed)} in {safe(printable(where))} — "
                      f"{outcome.requests} "
                      f"requests, {outcome.received / 1e6:.1f} MB received, {outcome.seconds:.1f} s", soft_wrap=True)
        gated += [("your copy", line) for line in outcome.gated]
        gated += [("also needed", f"{name} reads {need} at use time, which is not installed: run "
                                  f"`{get_line(need)}`") for need in entry(name).needs if missing_sources(need)]
    for label, line in gated:
        console.print(f"[yellow]{label}:[/] {safe(line)}", highlight=False, soft_wrap=True)
    for line in damaged:
        console.print(f"[red]damaged:[/] {safe(line)}", highlight=False, soft_wrap=True)
    if gated:
        raise typer.Exit(2)
    if damaged:
        raise typer.Exit(1)


@data_app.command("import")
def import_command(name: str = typer.Argument(..., help="Data set name."),
                   path: Path = typer.Argument(..., help="Your copy: the unpacked folder or the release archive.")
                   ) -> None:
    """Install your own copy of a data set that cannot be downloaded (a folder or the release archive)."""
    from memegauge.clikit import console, out, safe
    from memegauge.data.install import import_copy
    from memegauge.data.store import entry_dir

    outcome = import_copy(name, path, say=lambda text: console.print(safe(text), highlight=False, soft_wrap=True))
    out.print(f"{name}: imported {', '.join(outcome.installed)} from {safe(printable(path))} into "
              f"{safe(printable(entry_dir(name)))} "
              f"({outcome.seconds:.1f} s)", soft_wrap=True)
    for line in outcome.gated:
        console.print(f"[yellow]still missing:[/] {safe(line)}", highlight=False, soft_wrap=True)


@data_app.command("path")
def path_command(name: str = typer.Argument(..., help="Data set name.")) -> None:
    """Print the folder of an installed data set."""
    from memegauge.clikit import out
    from memegauge.data.store import installed_dir

    out.print(printable(installed_dir(name)), soft_wrap=True, highlight=False, markup=False)


@data_app.command("verify")
def verify_command(names: list[str] = typer.Argument(..., help="Data set names.")) -> None:
    """Re-hash every installed file against the manifest or the install record (exit 1 on a difference)."""
    from memegauge.clikit import console, out, safe
    from memegauge.data.install import verify
    from memegauge.data.store import read_state, reinstall_line

    failed = False
    for name in names:
        problems = verify(name)
        files = sum(len(r["files"]) for r in read_state(name)["sources"].values())
        if problems:
            failed = True
            for line in problems:
                console.print(f"[red]{safe(line)}[/]", highlight=False, soft_wrap=True)
            console.print(f"{name}: {len(problems)} of {files} files differ from what was installed\n  fix: "
                          f"{safe(reinstall_line(name))}", highlight=False, soft_wrap=True)
        else:
            out.print(f"{name}: {files} files match", soft_wrap=True)
    if failed:
        raise typer.Exit(1)


@data_app.command("remove")
def remove_command(name: str = typer.Argument(..., help="Data set name.")) -> None:
    """Delete an installed data set."""
    from memegauge.clikit import out
    from memegauge.data.install import remove

    out.print(f"{name}: removed" if remove(name) else f"{name}: not installed")
