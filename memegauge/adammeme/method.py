"""The AdamMeme method descriptor (see `memegauge.methods`); its hooks are in `memegauge.adammeme.hooks`."""

from __future__ import annotations

from memegauge.methods import Method


def _hooks():
    from memegauge.adammeme import hooks

    return hooks


METHOD = Method.from_hooks("adammeme", "AdamMeme", _hooks, demo_order=0)
