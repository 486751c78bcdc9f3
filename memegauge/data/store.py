"""Where installed copies live and what they record.

``data_dir()/NAME/memegauge-data.json`` is written last, atomically, after a source's files are
checked and moved into place: a folder without it (or without a source in it) is not installed, so
nothing half-installed is ever read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memegauge.files import write_text_atomic
from memegauge.errors import InputError

ENV_DATA_DIR = "MEMEGAUGE_DATA_DIR"
STATE_FILE = "memegauge-data.json"


def data_dir() -> Path:
    """``$MEMEGAUGE_DATA_DIR``, else the platform's user data folder (``platformdirs.user_data_dir``)."""
    given = os.environ.get(ENV_DATA_DIR)
    if given:
        return Path(given).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_data_dir("memegauge")) / "data"


def entry_dir(name: str) -> Path:
    return data_dir() / name


def read_state(name: str) -> dict[str, Any]:
    """The installed copy's record: ``{"entry", "sources": {id: {...}}, "converted": bool}``; empty when
    nothing of it is installed."""
    path = entry_dir(name) / STATE_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"the record of the installed copy cannot be read ({exc})", str(path),
                         f"remove it with `memegauge data remove {name}` and get it again") from exc


def write_state(name: str, state: dict[str, Any]) -> None:
    write_text_atomic(entry_dir(name) / STATE_FILE, json.dumps(state, indent=1, sort_keys=True) + "\n")


def missing_sources(name: str) -> list[str]:
    """The ids of `name`'s sources that are not installed (all of them when nothing is)."""
    from memegauge.data.catalogue import entry  # the catalogue imports every entry: only when asked

    installed = read_state(name).get("sources", {})
    return [s.id for s in entry(name).sources if s.id not in installed]


def get_lines(name: str, *, fresh: bool = False) -> list[str]:
    """The commands that install `name` (or its missing user copy), one pasteable command per line; a copy you
    must request is its `data import` line, with where to request it as a shell comment. `fresh`: every source, as
    after a remove."""
    from memegauge.data.catalogue import entry  # the catalogue imports every entry: only when asked

    absent = set(_sources(name)) if fresh else set(missing_sources(name))
    missing = [s for s in entry(name).sources if s.id in absent]
    user = [s for s in missing if not s.fetched]
    lines = [f"memegauge data get {name}"] if len(user) < len(missing) else []
    lines += [f"memegauge data import {name} PATH  # PATH: your copy; {' '.join(str(user[0].request).split())}"
              ] if user else []
    return lines


def reinstall_lines(name: str) -> list[str]:
    """The commands that replace a damaged installed copy of `name`, one per line: remove it, then get (or import)
    it again."""
    return [f"memegauge data remove {name}", *get_lines(name, fresh=True)]


def command_block(lines: list[str]) -> str:
    """Commands under a fix's words, one pasteable command per line, indented: "\n    memegauge data get x"."""
    return "".join(f"\n    {line}" for line in lines)


ENV_ALLOW_UNCHECKED = "MEMEGAUGE_ALLOW_UNCHECKED"


def set_allow_unchecked(allowed: bool) -> None:
    """`memegauge --allow-unchecked`: copies whose last `data verify` failed may be read (this process and
    the ones it starts)."""
    if allowed:
        os.environ[ENV_ALLOW_UNCHECKED] = "1"


def allow_unchecked() -> bool:
    return os.environ.get(ENV_ALLOW_UNCHECKED, "").strip().lower() in {"1", "true", "yes", "on"}


def installed_dir(name: str) -> Path:
    """The folder of the installed, checked copy of catalogue entry `name`.

    Raises `InputError` naming the command that installs it when any of its sources is missing, and the
    one that replaces it when its last `data verify` found bad files (NOT checked), unless
    `--allow-unchecked` (``$MEMEGAUGE_ALLOW_UNCHECKED=1``) says to read it anyway.
    """
    missing = missing_sources(name)
    if missing:
        raise InputError(f"data set {name!r} is not installed" + (
            f" (missing: {', '.join(missing)})" if len(missing) < len(_sources(name)) else ""),
            str(entry_dir(name)), "install it:" + command_block(get_lines(name)))
    failed = read_state(name).get("verify_failed")
    if failed and not allow_unchecked():
        raise InputError(f"data set {name!r} is NOT checked: its last `memegauge data verify` ({failed.get('at')}) "
                         f"found {failed.get('problems')} bad files", str(entry_dir(name)),
                         "replace it:" + command_block(reinstall_lines(name)) + "\n  or read it as it is (figures "
                         "from a damaged copy are not the release's): give the global option --allow-unchecked "
                         "before the command")
    return entry_dir(name)


def _sources(name: str) -> list[str]:
    from memegauge.data.catalogue import entry  # the catalogue imports every entry: only when asked

    return [s.id for s in entry(name).sources]


def is_data_name(text: str | Path) -> bool:
    """Whether `text` names a catalogue entry (and no such file or folder exists here)."""
    from memegauge.data.catalogue import entries  # the catalogue imports every entry: only when asked

    value = str(text)
    return value.split(":", 1)[0] in entries() and not Path(value).exists()


def resolve_data(name: str, part: str) -> Path:
    """The path of `part` (a key of the entry's `splits`, or ``"root"``) of installed entry `name`."""
    from memegauge.data.catalogue import entry  # the catalogue imports every entry: only when asked

    root = installed_dir(name)
    if part == "root":
        return root
    described = entry(name)
    parts = described.splits(root) if described.splits else {}
    if part not in parts:
        raise InputError(f"data set {name!r} has no split {part!r}", f"{name}:{part}",
                         f"use one of: {', '.join(f'{name}:{p}' for p in parts) or '(none: it has no meme set)'}")
    return parts[part]


def data_paths(name: str, where: str) -> dict[str, Path]:
    """The paths installed entry `name` offers a command's options (`Entry.paths`), e.g. `qa eval --data`."""
    from memegauge.data.catalogue import entry  # the catalogue imports every entry: only when asked

    described = entry(name)
    if described.paths is None:
        raise InputError(f"data set {name!r} cannot be given here", where, "give the folder's path instead")
    return described.paths(installed_dir(name))
