"""The MemeArena method descriptor (see `memelens.methods`); its hooks are in `memelens.arena.hooks`."""

from __future__ import annotations

from memelens.methods import Method


def _hooks():
    from memelens.arena import hooks

    return hooks


METHOD = Method.from_hooks("arena", "MemeArena", _hooks, demo_order=1)
