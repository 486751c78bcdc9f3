"""The MemeArena method descriptor (see `memegauge.methods`); its hooks are in `memegauge.arena.hooks`."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method, lazy


def _hooks():
    from memegauge.arena import hooks

    return hooks


METHOD = Method.from_hooks("arena", "MemeArena", _hooks, demo_order=1, folder=Path(__file__).parent,
                           migrations=((2, lazy("memegauge.arena.store_migrations:repeat_keys_from_field")),))
