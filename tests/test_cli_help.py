"""`memegauge --help` lists every command from its descriptor (`memegauge.registry.Command`) without importing the
command's module; the lines are the commands' own (a descriptor can never drift from the help of its command), and
a command another package declares is listed the same way, imported when dispatched, its faults its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memegauge.cli import _commands, command_group

_RUN = """
import sys
from memegauge.cli import main
code = main(sys.argv[1:])
print("CODE", code)
print("MODULES", " ".join(sorted(m for m in sys.modules if m.startswith(("memegauge", "plugcmd")))))
"""


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    """(exit status, the modules imported, stdout + stderr) of `memegauge ARGS` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _RUN, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("CODE ", "MODULES ")))
    text = "\n".join(line for line in done.stdout.splitlines() if not line.startswith(("CODE ", "MODULES ")))
    return int(lines["CODE"]), set(lines["MODULES"].split()), text + done.stderr


def _first_paragraph(text: str) -> str:
    return " ".join(text.split("\n\n")[0].split())


def test_each_descriptor_says_the_first_paragraph_of_its_commands_own_help():
    group = command_group()  # every command loaded: its own help, as `memegauge NAME --help` shows it
    declared = _commands().all()
    assert len(declared) >= 12
    for name, descriptor in declared.items():
        assert descriptor.summary == _first_paragraph(group.commands[name].help or ""), name


@pytest.mark.parametrize("columns", ["80", "60"])
def test_help_lists_what_it_listed_with_every_command_loaded(columns, monkeypatch):
    """The lazy listing (a fresh process: no command loaded) is the one click writes from the loaded commands,
    line for line, at a wide terminal and at a narrow one (where the lines wrap)."""
    code, _, lazy = _cli("--help", env={"COLUMNS": columns})
    assert code == 0 and "Commands:" in lazy
    monkeypatch.setenv("COLUMNS", columns)
    group = command_group()  # every command loaded: click lists each from the command itself
    assert all(name in group.commands for name in _commands().names())
    with group.make_context("memegauge", [], resilient_parsing=True) as ctx:
        loaded = group.get_help(ctx)
    assert lazy.strip() == loaded.strip()


@pytest.mark.parametrize("columns", [80, 60])
def test_help_lists_each_commands_whole_one_line_help_wrapped_to_the_terminal(columns):
    """Each command's whole descriptor summary (= its own help's first paragraph, the test above), never cut with
    "..." (click's listing cuts at 45 characters whatever the width); a long one wraps under its command."""
    code, _, output = _cli("--help", env={"COLUMNS": str(columns)})
    listing = output.split("Commands:", 1)[1]
    assert code == 0 and "..." not in listing
    assert max(len(line) for line in listing.splitlines()) <= columns
    entries: dict[str, str] = {}
    for line in listing.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            entries[name] = text.strip()
        elif line.strip():
            entries[name] += " " + line.strip()
    for name, descriptor in _commands().all().items():
        assert entries[name] == descriptor.summary, name
    assert any(len(summary) > columns for summary in entries.values())  # a long line is there to wrap


def _plugin(tmp_path: Path, descriptors: str, cli: str) -> dict[str, str]:
    """$PYTHONPATH of an installed package `plugcmd` declaring commands `hello`, `wrong` and `broken`."""
    site = tmp_path / "site"
    (site / "plugcmd").mkdir(parents=True)
    (site / "plugcmd" / "__init__.py").write_text(descriptors)
    (site / "plugcmd" / "cli.py").write_text(cli)
    info = site / "plugcmd-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugcmd\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[memegauge.commands]\nhello = plugcmd:HELLO\nwrong = plugcmd:WRONG\n"
                                           "broken = plugcmd:BROKEN\n")
    return {"PYTHONPATH": str(site)}


DESCRIPTORS = """
from memegauge.registry import Command

HELLO = Command(name="hello", summary="Say hello from a plug-in.", register="plugcmd.cli:register")
WRONG = Command(name="wrong", summary="Added under another name.", register="plugcmd.cli:register")
BROKEN = "not a command"
"""

CLI = """
import typer


def register(app: typer.Typer) -> None:
    @app.command("hello")
    def hello() -> None:
        \"\"\"Say hello from a plug-in.\"\"\"
        print("hello ran")
"""


def test_a_command_another_package_declares_is_listed_from_its_descriptor_and_imported_when_run(tmp_path):
    env = _plugin(tmp_path, DESCRIPTORS, CLI)
    code, modules, output = _cli("--help", env=env)
    assert code == 0 and "  hello    Say hello from a plug-in." in output
    assert "plugcmd.cli" not in modules and "eval" in output  # listed from the descriptor; the others still listed
    assert "warning: entry point plugcmd:BROKEN of plugcmd is not a command (Command): it is str" in output
    code, modules, output = _cli("hello", env=env)
    assert code == 0 and "hello ran" in output and "plugcmd.cli" in modules
    code, _, output = _cli("wrong", env=env)
    assert code == 1 and "command 'wrong'" in output and "is not among the commands plugcmd.cli:register adds " \
                                                          "(hello)" in output
    code, _, output = _cli("broken", env=env)
    assert code == 1 and "is not a command (Command)" in output


def test_a_command_whose_module_fails_to_import_fails_when_dispatched_only(tmp_path):
    env = _plugin(tmp_path, DESCRIPTORS, "raise ImportError('no such thing 44')\n")
    code, _, output = _cli("--help", env=env)
    assert code == 0 and "  hello    Say hello from a plug-in." in output
    code, _, output = _cli("hello", env=env)
    assert code == 1 and "command 'hello' (plugcmd.cli:register) failed to load: ImportError: no such thing 44" \
        in output
    code, _, output = _cli("data", "list", env={**env, "MEMEGAUGE_DATA_DIR": str(tmp_path / "data")})
    assert code == 0  # another command is untouched
