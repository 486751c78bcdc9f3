"""The MemeQA method descriptor (see `memelens.methods`); its hooks are in `memelens.memeqa.hooks`."""

from __future__ import annotations

from memelens.methods import Method


def _hooks():
    from memelens.memeqa import hooks

    return hooks


METHOD = Method.from_hooks("memeqa", "MemeQA", _hooks, demo_order=2)
