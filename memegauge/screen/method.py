"""The demo's harmfulness screen as a method (see `memegauge.methods`): runs named `demo-screen-MODEL`,
stored under the method name ``demo``, with their own report and HTML view. `memegauge demo` runs the
screen itself before the other methods' parts, so it has no commands and no demo part of its own."""

from __future__ import annotations

from typing import Any

from memegauge.methods import Method


def _report(store: Any, run: dict[str, Any]) -> dict[str, Any]:
    from memegauge.report.demo import build

    return build(store, run)


def _view(report: dict[str, Any], store: Any) -> tuple[list[Any], dict[str, Any]]:
    from memegauge.report.html import demo_view

    return demo_view(report, store)


def _tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    from memegauge.report.demo import tables

    return tables(report)


METHOD = Method(name="demo", title="demo screen", report=_report, view=_view, tables=_tables)
