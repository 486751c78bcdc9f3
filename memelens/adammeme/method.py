"""The AdamMeme method descriptor (see `memelens.methods`): its report, HTML view, commands and demo part.

Light on purpose: every hook imports its implementation when it is called."""

from __future__ import annotations

from typing import Any

from memelens.methods import Method


def _report(store: Any, run: dict[str, Any]) -> dict[str, Any]:
    from memelens.report.adammeme import build

    return build(store, run)


def _view(report: dict[str, Any], store: Any) -> tuple[list[Any], dict[str, Any]]:
    from memelens.report.html import adammeme_view

    return adammeme_view(report, store)


def _commands(app: Any) -> None:
    from memelens.adammeme.cli import register

    register(app)


async def _demo(*args: Any) -> str:
    from memelens.adammeme.demo import demo

    return await demo(*args)


METHOD = Method(name="adammeme", title="AdamMeme", report=_report, view=_view, commands=_commands, demo=_demo,
                demo_order=0)
