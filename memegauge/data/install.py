"""Fetching, importing, checking and removing installed copies (`memegauge data get|import|verify|remove`).

Every source is installed the same way: its files are written into a staging folder under
``DATA_DIR/.staging/`` while their sha256 is computed, checked (against the manifest for GitHub
sources, the Hub's own hashes for Hugging Face sources, the expected paths for a user's copy), then the
folder is moved into place and the copy's record (`memegauge-data.json`) is written last. A failed
check removes the staging folder and installs nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from memegauge.data.errors import ChecksumError
from memegauge.data.catalogue import Entry, GitHubSource, HubSource, Source, UserCopy, entry
from memegauge.data.store import data_dir, entry_dir, get_line, read_state, write_state
from memegauge.files import write_text_atomic
from memegauge.types import InputError

ENV_MIRROR = "MEMEGAUGE_DATA_MIRROR"
Say = Callable[[str], None]


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
    with locked(name):
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
    from memegauge.data.download import DownloadError, download

    url = source.url(mirror)
    archive = data_dir() / ".downloads" / f"{source.repo.replace('/', '+')}-{source.commit}.tar.gz"
    with httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0, read=120.0),
                      headers={"User-Agent": f"memegauge/{__version__}"}) as client:
        try:
            fetched = download(url, archive, client=client, label=f"{described.name}/{source.id}", quiet=quiet)
        except DownloadError as exc:
            raise DownloadError(f"{described.name}: {exc}") from exc
    outcome.requests += fetched.requests
    outcome.received += fetched.received
    staging = _staging(described.name, source.id)
    try:
        files = _extract_tar(archive, staging, source.include)
        _check_manifest(described, source, files, url)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        archive.unlink(missing_ok=True)  # a corrupt or wrong archive is fetched afresh next time
        raise
    _move_into_place(described.name, source.id, staging)
    archive.unlink(missing_ok=True)
    return {"kind": "github", "url": url, "repo": source.repo, "commit": source.commit, "files": files,
            "installed": _now()}


def _extract_tar(archive: Path, staging: Path, include: tuple[str, ...]) -> dict[str, list[Any]]:
    """Unpack the regular files under `include` (the archive's top folder stripped), hashing each."""
    files: dict[str, list[Any]] = {}
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                parts = Path(member.name).parts[1:]
                relative = "/".join(parts)
                if not member.isfile() or not parts or (include and not relative.startswith(include)):
                    continue
                if ".." in parts or Path(member.name).is_absolute():
                    raise InputError("an archive path leaves its folder", f"{archive}: {member.name}",
                                     "the archive is not a GitHub source archive")
                files[relative] = _write_hashed(tar.extractfile(member), staging / relative)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ChecksumError(f"{archive}: not a complete .tar.gz archive ({exc}); nothing was installed; "
                            "rerun the command to fetch it again") from exc
    return files


def _write_hashed(stream, target: Path) -> list[Any]:
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    with target.open("wb") as handle:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
            handle.write(block)
            size += len(block)
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
    files, commit = fetch_hub(source, staging, quiet=quiet)
    _move_into_place(described.name, source.id, staging)
    return {"kind": "hub", "repo_id": source.repo_id, "revision": source.revision, "commit": commit,
            "files": files, "installed": _now()}


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
    with locked(name):
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
    if not state:
        say(about_text(described))
    staging = _staging(name, source.id)
    try:
        known = _unpack(path, staging, source)
        root = staging if path.is_dir() else _single_top(staging)  # a folder is the release as given
        missing = [p for p in source.expect if not (root / p).exists()]
        if missing:
            raise InputError(f"this does not look like {source.what}: {', '.join(missing)} not found", str(path),
                             f"give the folder that holds {', '.join(source.expect)} (or the release archive)")
        if root != staging:
            _lift(root, staging)
        files = {str(p.relative_to(staging).as_posix()): [p.stat().st_size, _sha256(p)]
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


def _unpack(path: Path, staging: Path, source: UserCopy) -> str:
    """Copy a folder, or unpack an archive, into `staging`; the name of a known release archive, else ""."""
    if path.is_dir():
        shutil.copytree(path, staging, dirs_exist_ok=True, symlinks=False, copy_function=_link_or_copy)
        return ""
    digest = _sha256(path)
    known = next((label for label, sha in source.known.items() if sha == digest), "")
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                if any(info.flag_bits & 0x1 for info in archive.infolist()):
                    raise InputError("the archive is password-protected", str(path),
                                     "unpack it with the password that came with the licence, then import the folder")
                for info in archive.infolist():
                    if not info.is_dir():
                        _safe_member(info.filename, path)
                        _write_hashed(archive.open(info), staging / info.filename)
        elif tarfile.is_tarfile(path):
            with tarfile.open(path, "r:*") as tar:
                tar.extractall(staging, filter="data")
        else:
            raise InputError("not a folder, .zip or .tar archive", str(path), "give the unpacked folder or the archive")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise InputError(f"the archive cannot be read ({exc})", str(path), "download it again") from exc
    return known


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


def _single_top(folder: Path) -> Path:
    """The release's own top folder: `folder` itself, or its only subfolder when it holds nothing else."""
    children = [c for c in folder.iterdir() if c.name not in {"__MACOSX", ".DS_Store"}]
    return children[0] if len(children) == 1 and children[0].is_dir() else folder


def _lift(inner: Path, staging: Path) -> None:
    """Move `inner`'s content up into `staging` (the top folder stripped)."""
    temporary = staging.with_name(staging.name + ".inner")
    shutil.rmtree(temporary, ignore_errors=True)
    os.replace(inner, temporary)
    shutil.rmtree(staging)
    os.replace(temporary, staging)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --------------------------------------------------------------------------------------------------
# verify, remove
# --------------------------------------------------------------------------------------------------


def verify(name: str) -> list[str]:
    """Re-hash every installed file against the manifest (GitHub) or the install record; the problems."""
    described = entry(name)
    state = read_state(name)
    if not state:
        raise InputError(f"data set {name!r} is not installed", str(entry_dir(name)), f"run `{get_line(name)}`")
    manifest = described.manifest()
    problems = []
    for source_id, record in sorted(state["sources"].items()):
        expected = manifest.get(source_id) or record["files"]
        folder = entry_dir(name) / source_id
        for path, (_size, sha) in sorted(expected.items()):
            file = folder / path
            if not file.is_file():
                problems.append(f"{name}/{source_id}/{path}: missing")
            elif (got := _sha256(file)) != sha:
                problems.append(f"{name}/{source_id}/{path}: expected sha256 {sha}, got {got}")
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
    with locked(name):
        return _remove(name, folder)


def _remove(name: str, folder: Path) -> bool:
    trash = data_dir() / ".staging" / f"removing-{name}-{os.getpid()}"
    trash.parent.mkdir(parents=True, exist_ok=True)
    os.replace(folder, trash)
    shutil.rmtree(trash)
    return True
