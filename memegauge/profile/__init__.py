"""`memegauge profile MODEL…`: one model's meme understanding on one page, across every method and benchmark
whose runs the store holds (docs/profile.md).

    import memegauge
    found = memegauge.profile(["qwen-x", "gpt-x"], store="memegauge.db")   # a `Profile` (typed records)
    found.to_pandas("headline")

The profile reads only the store (data → stages → store → report): each run's own report and headline rows,
and its method's profile part (`memegauge.profile.part`) for what only the method knows.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the records (pydantic, numpy) when a profile is made: `memegauge --help` lists profile without
    from memegauge.profile.records import ModelProfile, PairedDifference, Profile

__all__ = ["ModelProfile", "PairedDifference", "Profile", "profile"]


def profile(models: str | list[str], store: Any = "memegauge.db", models_file: str | Path | None = None) -> Profile:
    """The profile of `models` (a name or a list) from the runs in `store` (a `Store` or a path); `models_file`:
    the model registry whose entries give each model's endpoint and served id (None: the default registry)."""
    from memegauge.engine.store import Store
    from memegauge.profile.gather import build_profile
    from memegauge.errors import InputError

    if not isinstance(store, Store):
        if not Path(store).exists():
            raise InputError("no store here", where=str(store), fix="pass store= the path of your runs' store")
        store = Store(Path(store))
    from memegauge.config import load_registry

    registry = load_registry(models_file)  # a bad file is one clear error, as in every command
    return build_profile(store, [models] if isinstance(models, str) else list(models), registry)


class _CallableModule(types.ModuleType):
    """`memegauge.profile` is this package once anything imports it (Python sets the attribute on `memegauge`), so
    the package itself is callable: `memegauge.profile(models, store=…)` is `memegauge.profile.profile(…)`."""

    def __call__(self, models: str | list[str], store: Any = "memegauge.db",
                 models_file: str | Path | None = None) -> Profile:
        return profile(models, store=store, models_file=models_file)


sys.modules[__name__].__class__ = _CallableModule
