"""Small file-system helpers shared across MemeGauge: the user cache root and atomic text writes."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from memegauge.types import InputError

#: Environment variable that moves MemeGauge's cache (joined weights, demo inputs).
ENV_CACHE_DIR = "MEMEGAUGE_CACHE_DIR"


def user_cache_root() -> Path:
    """``$MEMEGAUGE_CACHE_DIR``, else the user cache directory (``platformdirs.user_cache_dir("memegauge")``)."""
    base = os.environ.get(ENV_CACHE_DIR)
    if not base:
        import platformdirs

        base = platformdirs.user_cache_dir("memegauge")
    return Path(base).expanduser()


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` so that a reader sees the old file or the whole new one, never half of
    it: a temporary file beside it (unique, so concurrent writers do not collide), then a rename."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, not a file", where=str(path),
                         fix=f"give a file path, e.g. {path / 'report.html'}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc.strerror or exc})", where=str(path),
                         fix="choose a path in a writable folder with free space") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path
