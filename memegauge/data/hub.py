"""Hugging Face dataset sources, through `huggingface_hub`.

The Hub is asked for the revision's file list with each file's hashes (`dataset_info(files_metadata=
True)`: an LFS file's sha256, any other file's git blob id); `snapshot_download` fetches the files into
the staging folder (resuming its own ``.incomplete`` files); every file is then hashed here and held
against the Hub's hashes. ``HF_ENDPOINT`` (a mirror) and ``HF_TOKEN`` are read when the source is
fetched, so a value set after start-up counts; ``HF_HUB_OFFLINE`` is honoured by the caller.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from memegauge.data.catalogue import HubSource
from memegauge.data.errors import ChecksumError
from memegauge.files import printable
from memegauge.errors import InputError, MemeGaugeError


def fetch_hub(source: HubSource, staging: Path, *, quiet: bool = False,
              pinned: dict[str, list[Any]] | None = None) -> tuple[dict[str, list[Any]], str]:
    """Fetch `source` into `staging` and check it; ``({path: [size, sha256]}, commit)``.

    `pinned` (the entry's manifest for this source, ``{path: [size, sha256]}``): the files are held against
    these hashes, written in the entry, and the server's file list must name exactly them, so a mirror
    (``HF_ENDPOINT``) cannot supply both the files and the hashes they are checked against. Without it,
    the answering server's own hashes are used (a mirror's, when ``HF_ENDPOINT`` names one)."""
    from httpx2 import TransportError  # huggingface_hub 2.x's HTTP client: a dropped connection raises this
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.hf_api import RepoFile
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError
    from huggingface_hub.utils import disable_progress_bars

    endpoint = os.environ.get("HF_ENDPOINT") or None
    token = os.environ.get("HF_TOKEN") or None
    where = f"{endpoint or 'https://huggingface.co'}/datasets/{source.repo_id}@{source.revision}"
    if quiet:
        disable_progress_bars()
    try:
        api = HfApi(endpoint=endpoint, token=token)
        commit = api.dataset_info(source.repo_id, revision=source.revision).sha or source.revision
        wanted = [f for f in api.list_repo_tree(source.repo_id, recursive=True, revision=commit, repo_type="dataset")
                  if isinstance(f, RepoFile) and _allowed(f.path, source.allow)]
        snapshot_download(source.repo_id, repo_type="dataset", revision=commit,
                          local_dir=staging, allow_patterns=list(source.allow) or None, endpoint=endpoint,
                          token=token)
    except GatedRepoError as exc:
        raise InputError("a gated Hugging Face dataset: your account must be granted access", where,
                         f"request access at https://huggingface.co/datasets/{source.repo_id}, then set HF_TOKEN "
                         "to a token of that account") from exc
    except (RepositoryNotFoundError, RevisionNotFoundError) as exc:
        raise MemeGaugeError(f"{where}: not found on the Hub ({type(exc).__name__}); a mirror (HF_ENDPOINT) "
                             "may lack it") from exc
    except (HfHubHTTPError, TransportError, OSError) as exc:
        raise MemeGaugeError(f"{where}: the download failed ({exc}); rerun the command to resume") from exc
    files = _check_pinned(staging, wanted, pinned, where) if pinned else _check(source, staging, wanted, where)
    shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's own download records
    return files, commit


def _allowed(path: str, allow: tuple[str, ...]) -> bool:
    return not allow or any(fnmatch.fnmatch(path, pattern) for pattern in allow)


def _check(source: HubSource, staging: Path, wanted: list, where: str) -> dict[str, list[Any]]:
    """Each file against the Hub's sha256 (LFS) or git blob id; a mismatch names the file and both hashes."""
    files: dict[str, list[Any]] = {}
    for sibling in wanted:
        path = staging / sibling.path
        if not path.is_file():
            raise ChecksumError(f"{where}: {sibling.path} was not downloaded; nothing was installed")
        data_sha, blob = _hashes(path)
        if sibling.lfs is not None and data_sha != sibling.lfs.sha256:
            shutil.rmtree(staging, ignore_errors=True)
            raise ChecksumError(f"{where}: {sibling.path} does not match the Hub: expected sha256 "
                                f"{sibling.lfs.sha256}, got {data_sha}; nothing was installed")
        if sibling.lfs is None and sibling.blob_id and blob != sibling.blob_id:
            shutil.rmtree(staging, ignore_errors=True)
            raise ChecksumError(f"{where}: {sibling.path} does not match the Hub: expected git blob "
                                f"{sibling.blob_id}, got {blob}; nothing was installed")
        files[sibling.path] = [path.stat().st_size, data_sha]
    return files


def _check_pinned(staging: Path, wanted: list, pinned: dict[str, list[Any]], where: str) -> dict[str, list[Any]]:
    """Each file against the size and sha256 pinned in the entry; a file listed by the server but not
    pinned, or pinned but not listed, installs nothing."""
    listed = {sibling.path for sibling in wanted}
    extra, absent = sorted(listed - set(pinned)), sorted(set(pinned) - listed)
    if extra or absent:
        shutil.rmtree(staging, ignore_errors=True)
        raise ChecksumError(f"{where}: the server's file list differs from the files pinned in the entry ("
                            + "; ".join(part for part in (f"not pinned: {', '.join(map(printable, extra[:5]))}" if extra
                                                          else "", f"missing: {', '.join(absent[:5])}" if absent
                                                          else "") if part) + "); nothing was installed")
    files: dict[str, list[Any]] = {}
    for path_name, (size, sha) in sorted(pinned.items()):
        path = staging / path_name
        got = [path.stat().st_size, _hashes(path)[0]] if path.is_file() else None
        if got != [size, sha]:
            shutil.rmtree(staging, ignore_errors=True)
            found = f"{got[1]} ({got[0]} bytes)" if got else "no file"
            raise ChecksumError(f"{where}: {printable(path_name)} does not match the sha256 pinned in the entry: "
                                f"expected {sha} ({size} bytes), got {found}; nothing was installed")
        files[path_name] = got
    return files


def _hashes(path: Path) -> tuple[str, str]:
    """sha256 of the bytes, and the git blob id (sha1 of ``blob SIZE\\0`` + bytes)."""
    sha256 = hashlib.sha256()
    blob = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha256.update(block)
            blob.update(block)
    return sha256.hexdigest(), blob.hexdigest()
