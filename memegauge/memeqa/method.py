"""The MemeQA method descriptor (see `memegauge.methods`); its hooks are in `memegauge.memeqa.hooks`."""

from __future__ import annotations

from pathlib import Path

from memegauge.methods import Method


def _hooks():
    from memegauge.memeqa import hooks

    return hooks


METHOD = Method.from_hooks("memeqa", "MemeQA", _hooks, demo_order=2, folder=Path(__file__).parent)
