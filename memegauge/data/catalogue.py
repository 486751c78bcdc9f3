"""The data catalogue: one `Entry` descriptor per data set, registered by name.

Entries are declared like methods (`memegauge.methods`): a data set is one folder under
``memegauge/data/sets/`` (or any other package) holding ``entry.py`` with its descriptor and
``manifest.json`` with every pinned file's sha256, declared as an entry point of the group
``memegauge.data``:

    [project.entry-points."memegauge.data"]
    memeqa = "memegauge.data.sets.memeqa.entry:ENTRY"

No shared file names a data set. The entry point is named after its data set and loaded when that name is
first asked for (`memegauge.registry`); two entries with one name are refused (`DuplicateEntry`); a declared
entry that fails to import, or is no `Entry`, fails loudly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from memegauge.registry import DuplicatePlugin, Registry
from memegauge.errors import InputError

ENTRY_POINT_GROUP = "memegauge.data"
GITHUB = "https://github.com"


@dataclass(frozen=True)
class GitHubSource:
    """A GitHub repository at one commit, fetched as `https://github.com/OWNER/REPO/archive/COMMIT.tar.gz`.

    id        The source's folder inside the installed copy.
    repo      ``OWNER/REPO``.
    commit    The pinned commit (40 hex digits).
    licence   The licence of this source's files (SPDX id or a short phrase).
    what      One line: what this source holds.
    include   Path prefixes (inside the repository) that are kept; empty keeps everything. The archive's
              top folder is stripped, so the kept files sit in the repository's own layout.
    """

    id: str
    repo: str
    commit: str
    licence: str
    what: str
    include: tuple[str, ...] = ()

    kind = "github"
    fetched = True  # MemeGauge downloads it (`memegauge data get`)

    def checked_by(self, manifest: dict[str, dict[str, list[Any]]]) -> str:
        """How an installed copy of this source is checked (`data list`)."""
        return f"sha256 manifest ({len(manifest.get(self.id, {}))} files)"

    def url(self, mirror: str | None = None) -> str:
        """The archive's URL; `mirror` replaces GitHub's scheme and host, keeping the path."""
        return f"{(mirror or GITHUB).rstrip('/')}/{self.repo}/archive/{self.commit}.tar.gz"

    def where(self) -> str:
        return f"github.com/{self.repo}@{self.commit[:12]}"


@dataclass(frozen=True)
class HubSource:
    """A Hugging Face dataset repository at one revision, fetched through `huggingface_hub`.

    id        The source's folder inside the installed copy.
    repo_id   ``OWNER/NAME`` on the Hub.
    revision  The pinned revision (a commit hash where one could be confirmed; see `pinned`).
    licence   The licence the dataset card declares.
    what      One line: what this source holds.
    allow     Glob patterns of the files fetched (`snapshot_download`'s allow_patterns); empty: all.
    pinned    False when `revision` is a branch because no commit could be confirmed when the entry was
              written: the installed copy records the commit the Hub answered, and `data verify` checks
              the files against that commit's sha256 (LFS) and git blob ids (other files).
    """

    id: str
    repo_id: str
    revision: str
    licence: str
    what: str
    allow: tuple[str, ...] = ()
    pinned: bool = True

    kind = "hub"
    fetched = True  # MemeGauge downloads it (`memegauge data get`)

    def checked_by(self, manifest: dict[str, dict[str, list[Any]]]) -> str:
        """How an installed copy of this source is checked (`data list`)."""
        return "the Hub's sha256 / git blob id" + ("" if self.pinned else " (revision not pinned)")

    def where(self) -> str:
        return f"huggingface.co/datasets/{self.repo_id}@{self.revision[:12]}"


@dataclass(frozen=True)
class UserCopy:
    """Files the user brings (`memegauge data import NAME PATH`): a gated or non-redistributable release.

    id        The source's folder inside the installed copy.
    request   Where and how to request the release (a URL and the steps).
    licence   The release's licence or terms of use.
    what      One line: what the release holds.
    expect    Paths (relative to the release's own top folder) that must exist in the copy.
    known     Public sha256 of known release archives, by a name for the release; an imported archive
              that matches one is reported as that release.
    """

    id: str
    request: str
    licence: str
    what: str
    expect: tuple[str, ...] = ()
    known: dict[str, str] = field(default_factory=dict)

    kind = "user"
    fetched = False  # the user brings it (`memegauge data import`)

    def checked_by(self, manifest: dict[str, dict[str, list[Any]]]) -> str:
        """How an installed copy of this source is checked (`data list`)."""
        return "known release sha256; " * bool(self.known) + "sha256 recorded at import"

    def where(self) -> str:
        return "your copy (`data list --details` says where to request it)"


Source = GitHubSource | HubSource | UserCopy


@dataclass(frozen=True)
class Entry:
    """One data set of the catalogue.

    name      The name users type (`memegauge data get NAME`, `--data NAME`, `memes: NAME:SPLIT`).
    title     What it is, in one line.
    size      Its download size, as people read it ("71 MB").
    licence   The licence(s) of the whole, with any conflict stated.
    citation  The BibTeX to cite; printed before the first download and stored with the copy.
    sources   Its sources; each is installed in the folder named by its id.
    folder    The entry's folder (its ``manifest.json``).
    notes     What could not be confirmed when the entry was written, and other caveats.
    convert   `convert(root)`: writes the layouts MemeGauge reads under ``root/converted`` from the
              installed sources; None when the sources are read as they are.
    splits    `splits(root) -> {split: Path}`: a meme set file per split (`memes: NAME:SPLIT`); None:
              the entry offers no meme set.
    needs     Other entries this one reads at use time (e.g. goat-bench's pictures from fhm).
    paths     `paths(root) -> {option: Path}`: what a command's path options read when given the entry's
              name (`qa eval --data memeqa`: ``data``, ``images``, ``texts``); None: the name is not
              accepted there.
    rows      `rows(root, split) -> [ReleaseRow]`: the release's rows as released, typed (`memegauge.data.
              memesets.ReleaseRow`); the one reader of the release, consumed by `convert` and by the
              benchmark kit alike. None: the entry has no row reader.
    """

    name: str
    title: str
    size: str
    licence: str
    citation: str
    sources: tuple[Source, ...]
    folder: Path
    notes: str = ""
    convert: Callable[[Path], None] | None = None
    splits: Callable[[Path], dict[str, Path]] | None = None
    needs: tuple[str, ...] = ()
    paths: Callable[[Path], dict[str, Path]] | None = None
    rows: Callable[[Path, str], list[Any]] | None = None

    def manifest(self) -> dict[str, dict[str, list[Any]]]:
        """``{source id: {path: [size, sha256]}}`` of every GitHub source (empty when none)."""
        path = self.folder / "manifest.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    def source(self, source_id: str) -> Source:
        return next(s for s in self.sources if s.id == source_id)


class DuplicateEntry(DuplicatePlugin):
    """Two catalogue entries declare one name."""


ENTRIES: Registry[Entry] = Registry("data set", ENTRY_POINT_GROUP, Entry, duplicate=DuplicateEntry)


def entries() -> dict[str, Entry]:
    """Every registered entry by name, sorted (entry points of ``memegauge.data``, each loaded once)."""
    return ENTRIES.all()


def register(entry: Entry, into: dict[str, Entry]) -> dict[str, Entry]:
    """`into` with `entry` added; a second entry of one name is refused (`DuplicateEntry`)."""
    if entry.name in into:
        raise DuplicateEntry(f"two data sets are named {entry.name!r}")
    return {**into, entry.name: entry}


def entry(name: str) -> Entry:
    """The entry called `name` (its entry point alone loaded); an unknown name is one `InputError` listing the
    known ones."""
    found = ENTRIES.get(name) or entries().get(name)  # entries(): also what tests register in its place
    if found is None:
        raise InputError(f"no data set named {name!r}", "memegauge data",
                         f"use one of: {', '.join(entries())} (`memegauge data list`)")
    return found
