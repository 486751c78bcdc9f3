"""Fetching, importing, checking and removing installed copies (`memegauge data get|import|verify|remove`).

Every source is installed the same way: its files are written into a staging folder under
``DATA_DIR/.staging/`` while their sha256 is computed, checked (against the manifest for GitHub
sources, the Hub's own hashes for Hugging Face sources, the expected paths for a user's copy), then the
folder is moved into place and the copy's record (`memegauge-data.json`) is written last. A failed
check removes the staging folder and installs nothing.

Nothing is trusted before it is checked, and nothing is written beyond what was expected: an archive
member is cut at its manifest size and refused at the first byte over it (or at `unpacked_bound` for
what no manifest lists), streamed through its sha256 as it is written; a user's folder is planned whole
(links resolved inside it, refused when they leave it, loops and a data folder inside it found, the
required files found) before a byte is copied; a read-only data folder or a full disk is one message.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import posixpath
import shutil
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from memegauge.data.errors import ChecksumError
from memegauge.data.catalogue import Entry, GitHubSource, HubSource, Source, UserCopy, entry
from memegauge.data.store import command_block, data_dir, entry_dir, get_lines, read_state, write_state
from memegauge.files import printable, sha256_file, write_text_atomic
from memegauge.errors import InputError

ENV_MIRROR = "MEMEGAUGE_DATA_MIRROR"
ENV_MAX_UNPACKED = "MEMEGAUGE_DATA_MAX_UNPACKED"
UNPACK_FACTOR = 10
"""What no manifest lists may unpack to at most this × the entry's stated size (`Entry.size`) …"""
MIN_UNPACK_BOUND = 1 << 30
"""… and at least this many bytes (1 GiB); ``$MEMEGAUGE_DATA_MAX_UNPACKED`` (bytes) replaces the bound."""
Say = Callable[[str], None]


def unpacked_bound(described: Entry) -> int:
    """The most bytes a source of `described` without a manifest may write (see `UNPACK_FACTOR`)."""
    given = os.environ.get(ENV_MAX_UNPACKED, "").strip()
    if given:
        if not given.isdigit():
            raise InputError(f"${ENV_MAX_UNPACKED} is not a number of bytes: {printable(given)!r}", ENV_MAX_UNPACKED,
                             "give a whole number of bytes, e.g. 20000000000")
        return int(given)
    return max(MIN_UNPACK_BOUND, UNPACK_FACTOR * stated_bytes(described.size))


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def stated_bytes(size: str) -> int:
    """The bytes of a size as people write it ("71 MB", "3.9 GB (the release zip)"); 0 when none is read."""
    found = re.match(r"\s*~?([\d.,]+)\s*([KMGT]?i?B)?\b", size, re.IGNORECASE)
    if not found:
        return 0
    try:
        return int(float(found.group(1).replace(",", "")) * _UNITS[(found.group(2) or "").upper()])
    except (ValueError, KeyError):
        return 0


class Budget:
    """The bytes an unpacking may still write (`unpacked_bound`): over it, refused at the first byte."""

    def __init__(self, total: int, where: str) -> None:
        self.total, self.left, self.where = total, total, where

    def take(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise ChecksumError(f"{self.where}: unpacks to more than {self.total} bytes (the bound for a set "
                                f"without a manifest); stopped there, nothing was installed. A real copy this "
                                f"large: set ${ENV_MAX_UNPACKED} to its size in bytes")


def writable(where: Path):
    """A read-only data folder, a full disk or a quota reached, as one message (no OSError traceback)."""
    from contextlib import contextmanager

    @contextmanager
    def guard():
        try:
            yield
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise InputError(f"the disk is full ({exc.strerror}); nothing was installed or changed", str(where),
                                 f"free space on the disk holding {where}, or set ${'MEMEGAUGE_DATA_DIR'} to a "
                                 "folder on another disk") from None
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise InputError(f"the data folder cannot be written ({exc.strerror}: "
                                 f"{printable(exc.filename or where)}); nothing was changed", str(where),
                                 "make the folder writable, or set $MEMEGAUGE_DATA_DIR to a folder you can "
                                 "write") from None
            raise
    return guard()


@dataclass
class Outcome:
    """What `get` or `import_copy` did for one entry.

    name       The entry.
    installed  Source ids installed by this call.
    already    True when every source was installed before (nothing fetched).
    gated      One line per source the user must bring (`data import`).
    requests   HTTP requests sent to GitHub or its mirror (the Hub's are not counted).
    received   Bytes received.
    seconds    Wall time.
    """

    name: str
    installed: list[str] = field(default_factory=list)
    already: bool = False
    gated: list[str] = field(default_factory=list)
    requests: int = 0
    received: int = 0
    seconds: float = 0.0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def offline_wanted(offline: bool) -> bool:
    """`--offline`, or ``HF_HUB_OFFLINE`` set to a true value."""
    return offline or os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def about_text(described: Entry) -> str:
    """Licence, sources and citation of an entry: printed before its first download, stored as ABOUT.txt."""
    lines = [f"{described.name}: {described.title}", f"licence: {described.licence}", "sources:"]
    lines += [f"  {s.id}: {s.where()} — {s.licence}" for s in described.sources]
    return "\n".join(lines + ["cite:", described.citation, ""])


# --------------------------------------------------------------------------------------------------
# get
# --------------------------------------------------------------------------------------------------


def locked(name: str):
    """One process at a time installs, imports or removes data set `name` (a second waits): two `get`s
    would otherwise share a staging folder and a partial download."""
    from filelock import FileLock  # huggingface_hub's own dependency; only needed when something is written

    data_dir().mkdir(parents=True, exist_ok=True)
    return FileLock(str(data_dir() / f".{name}.lock"))


def get(name: str, *, mirror: str | None = None, offline: bool = False, quiet: bool = False,
        say: Say = print) -> Outcome:
    """Install every source of `name` that is not installed yet (see the module docstring)."""
    entry(name)  # an unknown name is refused before anything is written
    with writable(data_dir()), locked(name):
        return _get(name, mirror=mirror, offline=offline, quiet=quiet, say=say)


def _get(name: str, *, mirror: str | None, offline: bool, quiet: bool, say: Say) -> Outcome:
    described = entry(name)
    started = time.monotonic()
    outcome = Outcome(name)
    state = read_state(name)
    missing = [s for s in described.sources if s.id not in state.get("sources", {})]
    fetchable = [s for s in missing if s.fetched]
    outcome.gated = [gated_message(name, s) for s in missing if isinstance(s, UserCopy)]
    outcome.already = not missing
    if fetchable and offline_wanted(offline):
        raise InputError(f"data set {name!r} is not installed and the network is off (--offline or "
                         "HF_HUB_OFFLINE)", str(entry_dir(name)),
                         f"run `memegauge data get {name}` without --offline (HF_HUB_OFFLINE unset), "
                         f"or bring a copy with `memegauge data import {name} PATH`")
    if fetchable and not state:
        say(about_text(described))
    mirror = mirror or os.environ.get(ENV_MIRROR) or None
    for source in fetchable:
        record = _get_github(described, source, mirror, quiet, outcome) if isinstance(source, GitHubSource) \
            else _get_hub(described, source, quiet)
        _installed(described, source, record)
        outcome.installed.append(source.id)
    outcome.seconds = time.monotonic() - started
    return outcome


def gated_message(name: str, source: UserCopy) -> str:
    # what to do first (it is the user's own copy: where to request it, the import line), the licence after
    return (f"{name} ({source.what}) is your own copy to bring: MemeGauge cannot download it. "
            f"Request it: {source.request}. Then run: memegauge data import {name} PATH. "
            f"Licence: {source.licence}")


def _staging(name: str, source_id: str) -> Path:
    """A fresh staging folder on the same file system as the data folder (so the final move is atomic)."""
    path = data_dir() / ".staging" / f"{name}-{source_id}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _get_github(described: Entry, source: GitHubSource, mirror: str | None, quiet: bool,
                outcome: Outcome) -> dict[str, Any]:
    import httpx

    from memegauge._version import __version__  # the User-Agent names the version
    from memegauge.data.download import MAX_REDIRECTS, DownloadError, cached, download, remember

    url = source.url(mirror)
    expected = described.manifest().get(source.id, {})
    label = f"{described.name}/{source.id}"
    # one cached archive per URL: a mirror's archive is never taken for GitHub's, nor a killed run's for another's
    tag = hashlib.sha256(url.encode()).hexdigest()[:12]
    archive = data_dir() / ".downloads" / f"{source.repo.replace('/', '+')}-{source.commit}-{tag}.tar.gz"
    if not cached(archive, url):
        with httpx.Client(follow_redirects=True, max_redirects=MAX_REDIRECTS,
                          timeout=httpx.Timeout(30.0, read=120.0),
                          headers={"User-Agent": f"memegauge/{__version__}"}) as client:
            try:
                fetched = download(url, archive, client=client, label=label, quiet=quiet,
                                   max_bytes=_download_cap(source, expected))
            except DownloadError as exc:
                raise DownloadError(f"{described.name}: {exc}") from exc
        remember(archive, url)
        outcome.requests += fetched.requests
        outcome.received += fetched.received
    staging = _staging(described.name, source.id)
    try:
        _room_for(staging, sum(size for size, _ in expected.values()), label)
        files = _extract_tar(archive, staging, source.include, expected, Budget(unpacked_bound(described), label),
                             label)
        _check_manifest(described, source, files, url)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _forget(archive)  # a corrupt or wrong archive is fetched afresh next time
        raise
    _move_into_place(described.name, source.id, staging)
    _forget(archive)
    return {"kind": "github", "url": url, "repo": source.repo, "commit": source.commit, "files": files,
            "installed": _now()}


def _forget(archive: Path) -> None:
    archive.unlink(missing_ok=True)
    archive.with_name(archive.name + ".json").unlink(missing_ok=True)


DOWNLOAD_CAP = 8 * 10**9
"""The most bytes a GitHub archive download may bring when its manifest cannot bound it (a source that
keeps only part of its repository): 8 GB, or ``$MEMEGAUGE_DATA_MAX_UNPACKED`` when set."""


def _download_cap(source: GitHubSource, expected: dict[str, list[Any]]) -> int:
    """A GitHub source's archive is at most what its manifest lists (every file kept: no `include`), plus
    tar's headers and gzip's framing; a source that keeps part of its repository is bounded by
    `DOWNLOAD_CAP` (a stated cap), or ``$MEMEGAUGE_DATA_MAX_UNPACKED``."""
    if expected and not source.include:
        return sum(size for size, _ in expected.values()) + 1024 * (len(expected) + 16) + (1 << 20)
    given = os.environ.get(ENV_MAX_UNPACKED, "").strip()
    return int(given) if given.isdigit() else DOWNLOAD_CAP


def _room_for(folder: Path, size: int, label: str) -> None:
    """Refuse before writing when the disk cannot hold `size` bytes more."""
    free = shutil.disk_usage(folder).free
    if size and free < size:
        raise InputError(f"{label} needs {size / 1e6:.1f} MB and the disk has {free / 1e6:.1f} MB free; nothing "
                         "was installed", str(folder), "free space on that disk, or set $MEMEGAUGE_DATA_DIR to a "
                         "folder on another disk")


def _extract_tar(archive: Path, staging: Path, include: tuple[str, ...], expected: dict[str, list[Any]],
                 budget: Budget, label: str) -> dict[str, list[Any]]:
    """Unpack the regular files under `include` (the archive's top folder stripped), hashing each as it is
    written. With a manifest (`expected`), a member it does not list is refused before a byte of it is
    written, and each one is cut at its listed size and checked against its sha256 as soon as it is
    written; without one, the whole is bounded by `budget`."""
    import zlib

    files: dict[str, list[Any]] = {}
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                parts = Path(member.name).parts[1:]
                relative = "/".join(parts)
                if not member.isfile() or not parts or (include and not relative.startswith(include)):
                    continue
                if ".." in parts or Path(member.name).is_absolute():
                    raise InputError("an archive path leaves its folder", f"{archive}: {printable(member.name)}",
                                     "the archive is not a GitHub source archive")
                if expected:
                    files[relative] = _member_as_listed(tar, member, relative, staging, expected, label)
                else:
                    files[relative] = _write_hashed(tar.extractfile(member), staging / relative, budget.left,
                                                    label, relative, budget)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise ChecksumError(f"{archive}: not a complete .tar.gz archive ({exc}); nothing was installed; "
                            "rerun the command to fetch it again") from exc
    return files


def _member_as_listed(tar: tarfile.TarFile, member: tarfile.TarInfo, relative: str, staging: Path,
                      expected: dict[str, list[Any]], label: str) -> list[Any]:
    if relative not in expected:
        raise ChecksumError(f"{label}: the archive holds {printable(relative)}, which the manifest does not list; "
                            "refused before it was written, nothing was installed")
    size, sha = expected[relative]
    if member.size > size:  # the header's own claim: refused before a byte is written
        raise ChecksumError(f"{label}: {printable(relative)} claims {member.size} bytes, the manifest lists {size}; "
                            "refused before it was written, nothing was installed")
    got = _write_hashed(tar.extractfile(member), staging / relative, size, label, relative)
    if got != [size, sha]:
        raise ChecksumError(f"{label}: {printable(relative)} does not match the manifest: expected sha256 {sha}, "
                            f"got {got[1]} ({got[0]} bytes, expected {size}); nothing was installed")
    return got


def _write_hashed(stream, target: Path, limit: int | None = None, label: str = "", name: str = "",
                  budget: Budget | None = None) -> list[Any]:
    """Write `stream` to `target` through sha256: [size, sha256]. More than `limit` bytes is refused at the
    first byte over it (at most `limit` bytes are written); a `budget` is charged as the bytes come."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    with target.open("wb") as handle:
        while True:
            block = stream.read(1 << 20 if limit is None else min(1 << 20, limit - size + 1))
            if not block:
                break
            size += len(block)
            if limit is not None and size > limit:
                handle.write(block[:len(block) - (size - limit)])  # up to the bound; the next byte is refused
                raise ChecksumError(f"{label}: {printable(name or target.name)} goes past {limit} bytes, the most "
                                    "expected of it; stopped at the first byte over, nothing was installed")
            if budget is not None:
                budget.take(len(block))
            digest.update(block)
            handle.write(block)
    return [size, digest.hexdigest()]


def _check_manifest(described: Entry, source: GitHubSource, files: dict[str, list[Any]], url: str) -> None:
    """Every manifest file present with its size and sha256, and no other file."""
    expected = described.manifest().get(source.id, {})
    for path, (size, sha) in sorted(expected.items()):
        if path not in files:
            raise ChecksumError(f"{described.name}/{source.id}: {path} is missing from {url}; nothing was installed")
        if files[path][1] != sha:
            raise ChecksumError(f"{described.name}/{source.id}: {path} does not match the manifest: expected "
                                f"sha256 {sha}, got {files[path][1]} ({files[path][0]} bytes, expected {size}); "
                                f"nothing was installed (source: {url})")
    extra = sorted(set(files) - set(expected))
    if extra:
        raise ChecksumError(f"{described.name}/{source.id}: {url} holds files the manifest does not list "
                            f"({', '.join(extra[:5])}{' …' if len(extra) > 5 else ''}); nothing was installed")


def _get_hub(described: Entry, source: HubSource, quiet: bool) -> dict[str, Any]:
    from memegauge.data.hub import fetch_hub  # huggingface_hub is imported only for a Hub source

    staging = data_dir() / ".staging" / f"{described.name}-{source.id}"  # kept: the Hub resumes into it
    pinned = described.manifest().get(source.id, {})
    files, commit = fetch_hub(source, staging, quiet=quiet, pinned=pinned)
    _move_into_place(described.name, source.id, staging)
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return {"kind": "hub", "repo_id": source.repo_id, "revision": source.revision, "commit": commit,
            "files": files, "installed": _now(),
            "checked_against": "sha256 pinned in the entry" if pinned else f"the hashes {endpoint} listed"}


def _move_into_place(name: str, source_id: str, staging: Path) -> None:
    target = entry_dir(name) / source_id
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # left by a process stopped between the move and the record: not installed
        shutil.rmtree(target)
    os.replace(staging, target)


def _installed(described: Entry, source: Source, record: dict[str, Any]) -> None:
    """Write the copy's record with `source` in it (last); when it completes the entry, convert first."""
    state = read_state(described.name) or {"entry": described.name, "sources": {}}
    state["sources"] = {**state.get("sources", {}), source.id: record}
    root = entry_dir(described.name)
    write_text_atomic(root / "ABOUT.txt", about_text(described))
    if all(s.id in state["sources"] for s in described.sources) and described.convert:
        described.convert(root)
        state["converted"] = _now()
    write_state(described.name, state)


# --------------------------------------------------------------------------------------------------
# import
# --------------------------------------------------------------------------------------------------


def import_copy(name: str, path: Path, *, say: Say = print) -> Outcome:
    """Install the user's copy (a folder or an archive) as `name`'s first missing user source."""
    entry(name)
    with writable(data_dir()), locked(name):
        return _import(name, path, say)


def _import(name: str, path: Path, say: Say) -> Outcome:
    described = entry(name)
    started = time.monotonic()
    users = [s for s in described.sources if isinstance(s, UserCopy)]
    if not users:
        raise InputError(f"data set {name!r} is fetched, not imported", str(path), f"run `memegauge data get {name}`")
    state = read_state(name)
    source = next((s for s in users if s.id not in state.get("sources", {})), users[0])
    if not path.exists():
        raise InputError("no such file or folder", str(path),
                         f"give the folder or archive of your copy: memegauge data import {name} PATH")
    budget = Budget(unpacked_bound(described), f"{name}: {printable(path)}")
    # everything is read and checked before a byte is written: the plan, the required files, the room
    plan = _plan_folder(path, budget) if path.is_dir() else _plan_archive(path, budget)
    _required(plan, source, path)
    if not state:
        say(about_text(described))
    staging = _staging(name, source.id)
    try:
        _room_for(staging, budget.total - budget.left, f"{name}/{source.id}")
        known = _copy(path, plan, staging, source, Budget(budget.total, budget.where))
        files = {str(p.relative_to(staging).as_posix()): [p.stat().st_size, sha256_file(p)]
                 for p in sorted(staging.rglob("*")) if p.is_file()}
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _move_into_place(name, source.id, staging)
    _installed(described, source, {"kind": "user", "from": str(path.resolve()), "release": known,
                                   "files": files, "installed": _now()})
    outcome = Outcome(name, installed=[source.id], seconds=time.monotonic() - started)
    before = state.get("sources", {})
    outcome.gated = [gated_message(name, s) for s in users if s.id != source.id and s.id not in before]
    if known:
        say(f"{name}: the archive is the {known}")
    return outcome


@dataclass
class Plan:
    """What an import will write, read whole before anything is: each file's source (a path in the user's
    folder, links resolved; or an archive member) by its path in the copy, and the copy's links
    (path → the path inside the copy whose content it takes)."""

    files: dict[str, Any] = field(default_factory=dict)
    links: dict[str, Any] = field(default_factory=dict)
    top: str = ""  # an archive's own top folder, stripped

    def has(self, wanted: str) -> bool:
        names = [*self.files, *self.links]
        return any(n == wanted or n.startswith(wanted.rstrip("/") + "/") for n in names)


MAX_DEPTH = 64
"""Folders nested deeper than this in a user's copy are refused (no release nests so deep; a link loop
that escaped detection would)."""


def _plan_folder(top: Path, budget: Budget) -> Plan:
    """Every file of the folder `top`, walked without following a link blindly: a link to a file or folder
    inside `top` is taken as its content, a link that leaves `top`, points nowhere or leads back to a
    folder it sits in (a loop) is refused; so is a folder that holds the data folder (copying it would copy
    the copy). Nothing is written."""
    real_top = top.resolve()
    data = data_dir().resolve()
    if data == real_top or data.is_relative_to(real_top):
        raise InputError(f"the data folder {printable(data)} is inside the folder imported", str(top),
                         "import the release's own folder (not one that holds the data folder), or set "
                         "$MEMEGAUGE_DATA_DIR to a folder outside it")
    plan = Plan()

    def walk(folder: Path, relative: str, ancestors: tuple[Path, ...]) -> None:
        if len(ancestors) > MAX_DEPTH:
            raise InputError(f"folders nested more than {MAX_DEPTH} deep", f"{top}/{printable(relative)}",
                             "import the release as it was unpacked")
        with os.scandir(folder) as found:
            children = sorted(found, key=lambda e: e.name)
        for child in children:
            rel = f"{relative}/{child.name}" if relative else child.name
            where = f"{top}/{printable(rel)}"
            if child.is_symlink():
                target = Path(os.path.realpath(child.path))
                if not target.is_relative_to(real_top):
                    raise InputError(f"a link that leaves the folder (to {printable(target)})", where,
                                     "replace the link with the file itself, or import the folder it points into")
                if not target.exists():
                    raise InputError("a link that points to nothing", where, "replace the link with the file itself")
                if target.is_dir():
                    if target in ancestors:
                        raise InputError(f"a link loop: it leads back to {printable(target)}, a folder it is in",
                                         where, "remove the link")
                    walk(target, rel, (*ancestors, target))
                    continue
                _plan_file(plan, rel, target, budget, where)
            elif child.is_dir(follow_symlinks=False):
                real = Path(child.path)
                if real == data:
                    raise InputError("the data folder is inside the folder imported", where,
                                     "set $MEMEGAUGE_DATA_DIR to a folder outside it")
                walk(real, rel, (*ancestors, real))
            elif child.is_file(follow_symlinks=False):
                _plan_file(plan, rel, Path(child.path), budget, where)
            else:
                raise InputError("not a regular file (a device, a pipe or a socket)", where,
                                 "import a folder of plain files")

    walk(real_top, "", (real_top,))
    return plan


def _plan_file(plan: Plan, relative: str, real: Path, budget: Budget, where: str) -> None:
    budget.take(real.stat().st_size)
    plan.files[relative] = real


def _plan_archive(path: Path, budget: Budget) -> Plan:
    """The members of a .zip or .tar archive (their headers only: nothing is unpacked): regular files and
    links inside the archive; a path or link that leaves it, a password, or a declared size past the bound
    is refused here. The archive's own top folder, when it has one, is stripped."""
    plan = Plan()
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                if any(info.flag_bits & 0x1 for info in archive.infolist()):
                    raise InputError("the archive is password-protected", str(path),
                                     "unpack it with the password that came with the licence, then import the folder")
                for info in archive.infolist():
                    _safe_member(info.filename, path)
                    mode = info.external_attr >> 16
                    if stat.S_ISLNK(mode):
                        plan.links[info.filename.rstrip("/")] = ("sym", archive.read(info).decode("utf-8", "replace"))
                    elif not info.is_dir():
                        budget.take(info.file_size)
                        plan.files[info.filename] = info
        elif tarfile.is_tarfile(path):
            with tarfile.open(path, "r:*") as tar:
                for member in tar:
                    _safe_member(member.name, path)
                    name = member.name.rstrip("/")
                    if member.issym():
                        plan.links[name] = ("sym", member.linkname)
                    elif member.islnk():  # a hard link names a path from the archive's top
                        plan.links[name] = ("hard", member.linkname)
                    elif member.isfile():
                        budget.take(member.size)
                        plan.files[name] = member
                    elif not member.isdir():
                        raise InputError("the archive holds a device or a pipe", f"{path}: {printable(member.name)}",
                                         "use the release archive")
        else:
            raise InputError("not a folder, .zip or .tar archive", str(path), "give the unpacked folder or the archive")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        raise InputError(f"the archive cannot be read ({exc})", str(path), "download it again") from exc
    return _stripped(plan, path)


def _stripped(plan: Plan, archive: Path) -> Plan:
    """The plan with the archive's single top folder taken off each path (macOS's ``__MACOSX`` left out),
    and each link resolved to the path inside the archive whose content it takes (refused if it leaves)."""
    names = [n for n in [*plan.files, *plan.links] if n.split("/")[0] not in {"__MACOSX", ".DS_Store"}]
    tops = {n.split("/")[0] for n in names}
    top = next(iter(tops)) + "/" if len(tops) == 1 and all("/" in n for n in names) else ""
    files = {n[len(top):]: v for n, v in plan.files.items() if n.startswith(top)}
    links = {}
    for name, (kind, target) in plan.links.items():
        inside = posixpath.normpath(target if kind == "hard" else posixpath.join(posixpath.dirname(name), target))
        if posixpath.isabs(target) or inside == ".." or inside.startswith("../") or not inside.startswith(top):
            raise InputError(f"a link that leaves the archive (to {printable(target)})",
                             f"{archive}: {printable(name)}", "use the release archive")
        if name.startswith(top):
            links[name[len(top):]] = inside[len(top):]
    return Plan(files=files, links=links, top=top.rstrip("/"))


def _required(plan: Plan, source: UserCopy, path: Path) -> None:
    """The release's required files are all in the plan (checked before anything is copied)."""
    missing = [p for p in source.expect if not plan.has(p)]
    if missing:
        raise InputError(f"this does not look like {source.what}: {', '.join(missing)} not found; nothing was "
                         "copied", str(path),
                         f"give the folder that holds {', '.join(source.expect)} (or the release archive)")


def _copy(path: Path, plan: Plan, staging: Path, source: UserCopy, budget: Budget) -> str:
    """Write the plan into `staging` (each archive member cut at its declared size, the whole at the
    bound); the name of a known release archive, else ""."""
    known = ""
    if path.is_dir():
        for relative, real in plan.files.items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(str(real), str(staging / relative))
    else:
        digest = sha256_file(path)
        known = next((label for label, sha in source.known.items() if sha == digest), "")
        try:
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as archive:
                    for relative, info in plan.files.items():
                        _write_hashed(archive.open(info), staging / relative, info.file_size, str(path), relative,
                                      budget)
            else:
                with tarfile.open(path, "r:*") as tar:
                    for relative, member in plan.files.items():
                        _write_hashed(tar.extractfile(member), staging / relative, member.size, str(path), relative,
                                      budget)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
            raise InputError(f"the archive cannot be read ({exc})", str(path), "download it again") from exc
    for relative, target in plan.links.items():
        _resolve_link(staging, relative, target, path, budget)
    return known


def _resolve_link(staging: Path, relative: str, target: str, archive: Path, budget: Budget) -> None:
    """An archive's link, replaced by the content of the file or folder it points to inside the copy (its
    bytes charged to the budget: a thousand links to one large file are a thousand copies of it)."""
    found = staging / target
    where = f"{archive}: {printable(relative)}"
    if found.is_file():
        budget.take(found.stat().st_size)
        (staging / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, staging / relative)
    elif found.is_dir() and not (staging / relative).resolve().is_relative_to(found.resolve()):
        budget.take(sum(p.stat().st_size for p in found.rglob("*") if p.is_file()))
        shutil.copytree(found, staging / relative, symlinks=False)
    elif found.is_dir():
        raise InputError(f"a link loop: it leads back to {printable(target)}, a folder it is in", where,
                         "use the release archive")
    else:
        raise InputError(f"a link that points to nothing in the archive ({printable(target)})", where,
                         "use the release archive")


def _link_or_copy(source: str, target: str) -> None:
    """A hard link where the file system allows (a multi-GB release is not copied twice; `data verify`
    still sees a later change to the original), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _safe_member(name: str, archive: Path) -> None:
    if name.startswith("/") or ".." in Path(name).parts:
        raise InputError("an archive path leaves its folder", f"{archive}: {name}", "use the release archive")


# --------------------------------------------------------------------------------------------------
# verify, remove
# --------------------------------------------------------------------------------------------------


def verify(name: str) -> list[str]:
    """Re-hash every installed file against the manifest (GitHub) or the install record; the problems."""
    with writable(data_dir()):
        return _verify(name)


def _verify(name: str) -> list[str]:
    described = entry(name)
    state = read_state(name)
    if not state:
        raise InputError(f"data set {name!r} is not installed", str(entry_dir(name)),
                         "install it:" + command_block(get_lines(name)))
    manifest = described.manifest()
    problems = []
    for source_id, record in sorted(state["sources"].items()):
        expected = manifest.get(source_id) or record["files"]
        folder = entry_dir(name) / source_id
        for path, (_size, sha) in sorted(expected.items()):
            file = folder / path
            if not file.is_file():
                problems.append(f"{name}/{source_id}/{printable(path)}: missing")
            elif (got := sha256_file(file)) != sha:
                problems.append(f"{name}/{source_id}/{printable(path)}: expected sha256 {sha}, got {got}")
    # the outcome is kept with the copy: `data list` shows a copy whose last verify failed as not checked
    kept = {k: v for k, v in state.items() if k not in ("checked", "verify_failed")}
    write_state(name, {**kept, "verify_failed": {"at": _now(), "problems": len(problems)}} if problems
                else {**kept, "checked": _now()})
    return problems


def remove(name: str) -> bool:
    """Delete the installed copy (moved aside first, so a half-deleted copy never reads as installed)."""
    entry(name)
    folder = entry_dir(name)
    if not folder.exists():
        return False
    with writable(data_dir()), locked(name):
        return _remove(name, folder)


def _remove(name: str, folder: Path) -> bool:
    trash = data_dir() / ".staging" / f"removing-{name}-{os.getpid()}"
    trash.parent.mkdir(parents=True, exist_ok=True)
    os.replace(folder, trash)
    shutil.rmtree(trash)
    return True
