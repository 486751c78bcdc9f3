"""The AdamMeme method descriptor (see `memegauge.methods`); its hooks are in `memegauge.adammeme.hooks`."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method


def _hooks():
    from memegauge.adammeme import hooks

    return hooks


METHOD = Method.from_hooks("adammeme", "AdamMeme", _hooks, demo_order=0, folder=Path(__file__).parent)
