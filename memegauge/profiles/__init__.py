"""`memegauge profile MODEL…`: one model's meme understanding on one page, across every method and benchmark
whose runs the store holds (docs/profile.md).

    import memegauge
    found = memegauge.profile(["qwen-x", "gpt-x"], store="memegauge.db")   # a `Profile` (typed records)
    found.to_pandas("headline")

The profile reads only the store (data → stages → store → report): each run's own report and headline rows,
and its method's profile part (`memegauge.profiles.part`) for what only the method knows.

`memegauge.profile` is the plain function below, exported lazily by `memegauge/__init__.py`. The package is named
`profiles`, not `profile`: importing a subpackage binds it as an attribute of its parent, which would replace the
function `memegauge.profile` with the package the moment anything imported it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the records (pydantic, numpy) when a profile is made: `memegauge --help` lists profile without
    from memegauge.profiles.records import ModelProfile, PairedDifference, Profile

__all__ = ["ModelProfile", "PairedDifference", "Profile", "profile"]


def __getattr__(name: str) -> Any:
    """The record types, imported on first use (`from memegauge.profiles import Profile`)."""
    if name in ("ModelProfile", "PairedDifference", "Profile"):
        from memegauge.profiles import records

        return getattr(records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def profile(models: str | list[str], store: Any = "memegauge.db", models_file: str | Path | None = None) -> Profile:
    """The profile of `models` (a name or a list) from the runs in `store` (a `Store` or a path); `models_file`:
    the model registry whose entries give each model's endpoint and served id (None: the default registry). A model
    that no stored run evaluated raises `InputError` (what, where, and the fix)."""
    from memegauge.engine.store import Store
    from memegauge.profiles.gather import build_profile
    from memegauge.errors import InputError

    if not isinstance(store, Store):
        if not Path(store).exists():
            raise InputError("no store here", where=str(store), fix="pass store= the path of your runs' store")
        store = Store(Path(store))
    from memegauge.config import load_registry

    registry = load_registry(models_file)  # a bad file is one clear error, as in every command
    return build_profile(store, [models] if isinstance(models, str) else list(models), registry)

