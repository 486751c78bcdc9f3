"""Reports read only the store: a run's header plus its method's figures, in JSON/CSV/Markdown/HTML.

Each method's descriptor (`memegauge.methods`) names its builder `build(store, run) -> dict`; the formats are
renderings of that one dict (`memegauge.report.formats`), so every format shows the same numbers.
"""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.methods import method
from memegauge.report.header import PROTOCOL_KEYS, RunHeader, run_header

__all__ = ["PROTOCOL_KEYS", "RunHeader", "build_report", "run_header"]
from memegauge.types import InputError


def build_report(store: Store, name: str) -> dict[str, Any]:
    """The run's report: its header (`run`), then its method's figures (and the People vs judges section
    when the run was rated)."""
    header = run_header(store, name).as_dict()
    found = method(header["method"])
    if found is None:
        raise InputError(f"no installed method {header['method']!r} reports this run", where=f"run {name!r}",
                         fix="install the package that provides that method, or report with the MemeGauge "
                             "version that made the run")
    run_id = store.run_row(name)["id"]
    from memegauge.rating.section import people_vs_judges  # numpy, judges' parsers: only when reporting

    report = {"run": header, **found.report(store, {**header, "id": run_id})}
    people = people_vs_judges(store, {**header, "id": run_id})
    return report if people is None else {**report, "people_vs_judges": people}
