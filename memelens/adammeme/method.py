"""The AdamMeme method descriptor (see `memelens.methods`); its hooks are in `memelens.adammeme.hooks`."""

from __future__ import annotations

from memelens.methods import Method


def _hooks():
    from memelens.adammeme import hooks

    return hooks


METHOD = Method.from_hooks("adammeme", "AdamMeme", _hooks, demo_order=0)
