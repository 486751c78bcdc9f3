"""Optional parts of MemeGauge (the extras of `pyproject.toml`): a feature whose extra is not installed
stops with one message naming the `pip install` that adds it, before anything is written."""

from __future__ import annotations

import importlib.util

from memegauge.errors import InputError


def missing_modules(*modules: str) -> list[str]:
    """The modules of `modules` that cannot be imported (found without importing them)."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_extra(extra: str, *modules: str, needed_for: str, where: str) -> None:
    """Raise one InputError when any of `modules` (from the extra `extra`) is not installed."""
    missing = missing_modules(*modules)
    if missing:
        raise InputError(f"{needed_for} needs the `{extra}` extra ({', '.join(missing)} not installed)",
                         where, install_hint(extra))


def install_hint(extra: str) -> str:
    return f"pip install 'memegauge[{extra}]'"
