"""`memegauge data list|get|import|path|verify|remove` (docs/data.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from memegauge.errors import printable

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


def _short_status(status: str) -> str:
    """`_status` in a few words for `data list` (the whole of it: `data info NAME`)."""
    return status.split(":")[0].split(" (")[0] if not status.startswith("yes, checked") else "yes, checked"


def _evaluated_by() -> dict[str, list[str]]:
    """Data set → the benchmarks `memegauge eval` reads it for (`eval --list` says the same)."""
    from memegauge.registry import EVALUATED_BY, provided

    evaluated_by = provided(EVALUATED_BY)  # the benchmark kit's, by entry point: data imports no benchmark
    return evaluated_by() if evaluated_by is not None else {}


def install_lines(name: str) -> list[str]:
    """The commands that install data set `name`, one pasteable command per line (a copy you must request: its
    `data import` line, with where to request it as a shell comment): `memegauge.data.store.get_lines`."""
    from memegauge.data.store import get_lines

    return get_lines(name)


@data_app.command("list")
def list_command(details: bool = typer.Option(False, "--details", help="Also each entry's notes and citation "
                                                                        "(as `data info NAME` gives one).")) -> None:
    """Every data set, one line each: name, installed, the benchmarks eval reads it for, size, what it is."""
    from memegauge.clikit import out, safe
    from memegauge.data.catalogue import entries
    from memegauge.data.store import data_dir

    found = entries()
    evals = _evaluated_by()
    rows = [{"name": name, "installed": _short_status(_status(name)),
             "benchmark": ("eval " + ", ".join(evals[name])) if name in evals else "–",
             "size": described.size.split(" (")[0].split(" + ")[0], "what": described.title}
            for name, described in found.items()]
    kept, dropped = _list_columns(rows, out.width if out.is_terminal else None)
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in kept}
    out.print(safe(f"data sets, installed in {data_dir()}"), highlight=False, soft_wrap=True)
    for row in [{c: c for c in LIST_COLUMNS}, *rows]:
        text = "  ".join(row[c].ljust(widths[c]) for c in kept) + "  "
        what = row["what"] if not out.is_terminal else _cut_at_word(row["what"], out.width - len(text))
        out.print(safe(text + what), highlight=False, soft_wrap=True)
    if dropped:  # the description goes last: other columns are left out first
        out.print(f"left out at {out.width} columns: {', '.join(dropped)} (`data list | cat` has them)",
                  highlight=False)
    out.print("`memegauge data info NAME`: sources, licence, checks, notes, citation", highlight=False)
    if details:
        for name in found:
            out.print("")
            _info(out, name, evals)


LIST_COLUMNS = ("name", "installed", "benchmark", "size", "what")
LIST_DROPPED_FIRST = ("size", "benchmark", "installed")
"""`data list` on a narrow terminal leaves these out, first ones first, until the description (`what`) has
`WHAT_AT_LEAST` columns; the name is never cut."""
WHAT_AT_LEAST = 40


def _list_columns(rows: list[dict[str, str]], width: int | None) -> tuple[list[str], list[str]]:
    """(the columns before `what` that `data list` shows at `width` (None: not a terminal, all), those left out)."""
    kept = list(LIST_COLUMNS[:-1])
    longest = max(len(r["what"]) for r in rows) if rows else 0
    dropped = []
    for column in LIST_DROPPED_FIRST:
        used = sum(max(len(c), *(len(r[c]) for r in rows)) + 2 for c in kept)
        if width is None or width - used >= min(WHAT_AT_LEAST, longest):
            break
        kept.remove(column)
        dropped.append(column)
    return kept, dropped


def _cut_at_word(text: str, width: int) -> str:
    """`text` in `width` columns: whole, or cut at the end of a word with "…" (mid-word only when its first word is
    longer than `width`)."""
    if len(text) <= width:
        return text
    head = text[:max(width - 1, 0)]
    if text[len(head)] != " " and " " in head:  # the cut falls inside a word: end at the word before it
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:(–-") + "…"


@data_app.command("info")
def info_command(name: str = typer.Argument(..., help="Data set name (`memegauge data list` names them).")) -> None:
    """One data set in full: what, size, licence, sources, how each is checked, installed, notes, citation."""
    from memegauge.clikit import out

    _info(out, name, _evaluated_by())


def _info(out, name: str, evals: dict[str, list[str]]) -> None:
    from memegauge.clikit import safe
    from memegauge.data.catalogue import entry

    described = entry(name)
    manifest = described.manifest()
    facts = [("what", described.title), ("size", described.size), ("licence", described.licence),
             ("installed", _status(name)),
             ("benchmark", ("memegauge eval " + " / ".join(evals[name])) if name in evals else "– (a meme set: "
                           f"`--memes {name}:SPLIT` of adam and arena)")]
    out.print(f"[bold]{safe(name)}[/]", highlight=False)
    for key, value in facts:
        out.print(safe(f"  {key}: {value}"), highlight=False, soft_wrap=True)
    for source in described.sources:
        out.print(safe(f"  source {source.id}: {source.where()}; checked by {source.checked_by(manifest)}"),
                  highlight=False, soft_wrap=True)
        if not source.fetched:
            out.print(safe(f"    request it: {source.request}"), highlight=False, soft_wrap=True)
            out.print(safe(f"    then: memegauge data import {name} PATH"), highlight=False, soft_wrap=True)
    out.print(safe(f"  notes: {described.notes or 'no caveats'}"), highlight=False, soft_wrap=True)
    out.print(safe(described.citation), highlight=False, soft_wrap=True)


@data_app.command("get")
def get_command(ctx: typer.Context, names: list[str] = typer.Argument(..., help="Data set names."),
                mirror: str | None = MIRROR, offline: bool = OFFLINE) -> None:
    """Fetch, check and install data sets (an installed, checked copy is never fetched again)."""
    from memegauge.clikit import console, out, safe
    from memegauge.data.catalogue import entry
    from memegauge.data.install import get
    from memegauge.data.store import command_block, entry_dir, missing_sources, read_state, reinstall_lines

    quiet = _quiet(ctx)
    gated, damaged = [], []
    for name in names:
        outcome = get(name, mirror=mirror, offline=offline, quiet=quiet,
                      say=lambda text: console.print(safe(text), highlight=False, soft_wrap=True))
        where = entry_dir(name)
        if outcome.already and read_state(name).get("verify_failed"):
            damaged.append(f"{name}: installed in {safe(printable(where))} (0 requests), but its last `memegauge data "
                           f"verify` found bad files; replace it:{command_block(reinstall_lines(name))}")
        elif outcome.already:
            out.print(f"{name}: already installed in {safe(printable(where))} (0 requests); not re-hashed: "
                      f"`memegauge data verify {name}` does", soft_wrap=True)
        elif outcome.installed:
            out.print(f"{name}: installed {', '.join(outcome.installed)} in {safe(printable(where))} — "
                      f"{outcome.requests} "
                      f"requests, {outcome.received / 1e6:.1f} MB received, {outcome.seconds:.1f} s", soft_wrap=True)
        gated += [("your copy", line) for line in outcome.gated]
        gated += [("also needed", f"{name} reads {need} at use time, which is not installed; install it with:\n"
                                  + "\n".join(f"    {line}" for line in install_lines(need)))
                  for need in entry(name).needs if missing_sources(need)]
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
    from memegauge.data.store import command_block, read_state, reinstall_lines

    failed = False
    for name in names:
        problems = verify(name)
        files = sum(len(r["files"]) for r in read_state(name)["sources"].values())
        if problems:
            failed = True
            for line in problems:
                console.print(f"[red]{safe(line)}[/]", highlight=False, soft_wrap=True)
            console.print(f"{name}: {len(problems)} of {files} files differ from what was installed\n  fix: replace "
                          f"it:{safe(command_block(reinstall_lines(name)))}", highlight=False, soft_wrap=True)
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
