"""Where the command line finds the run store and the model registry: an option, else the environment.

Apart from `memegauge.config` (which re-exports these names) so that every command reads them without importing
the config's pydantic models: `memegauge data list` or `runs` never loads a model spec (bench/startup.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from memegauge.errors import InputError

ENV_STORE = "MEMEGAUGE_STORE"
ENV_MODELS = "MEMEGAUGE_MODELS"


def registry_path(path: Path | str | None) -> Path | None:
    """The registry file to read: `path` (`--models`), else ``$MEMEGAUGE_MODELS``, else None (the
    built-in models). Either one naming no file is refused with the same message, whatever the command:
    a mistyped variable must not silently fall back to the built-ins."""
    given, where = (path, str(path)) if path is not None else \
        (os.environ.get(ENV_MODELS) or None, f"${ENV_MODELS}={os.environ.get(ENV_MODELS)}")
    if given is None:
        return None
    if not Path(given).is_file():
        how = "pass --models with" if path is not None else f"set {ENV_MODELS} to (or unset it for the built-ins)"
        raise InputError("no such registry file", where=where,
                         fix=f"{how} the path of your models.yaml (docs/models.md)")
    return Path(given)
