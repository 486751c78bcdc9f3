"""Reports read only the store: a run's header plus its method's figures, in JSON/CSV/Markdown/HTML.

Each method's descriptor (`memegauge.methods`) names its builder `build(store, run) -> dict`; the formats are
renderings of that one dict (`memegauge.report.formats`), so every format shows the same numbers. Importing a
report module (its blocks, its sections) loads neither the method registry nor the engine: `build_report` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memegauge.engine.store import Store

__all__ = ["PROTOCOL_KEYS", "RunHeader", "build_report", "run_header"]


def __getattr__(name: str) -> Any:
    if name in ("PROTOCOL_KEYS", "RunHeader", "run_header"):  # the header's, imported when first asked for
        from memegauge.report import header

        return getattr(header, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_report(store: Store, name: str) -> dict[str, Any]:
    """The run's report: its header (`run`), then its method's figures, then the sections registered by other
    packages that have something to show for it (`memegauge.report.sections`: the rating kit's People vs judges
    when the run was rated)."""
    from memegauge.methods import method  # lazy: the registry (and its store steps) when a report is built
    from memegauge.report.header import run_header
    from memegauge.report.sections import build_sections
    from memegauge.errors import InputError

    header = run_header(store, name).as_dict()
    found = method(header["method"])
    if found is None:
        raise InputError(f"no installed method {header['method']!r} reports this run", where=f"run {name!r}",
                         fix="install the package that provides that method, or report with the MemeGauge "
                             "version that made the run")
    run_id = store.run_row(name)["id"]
    report = {"run": header, **found.report(store, {**header, "id": run_id})}
    return {**report, **build_sections(store, {**header, "id": run_id})}
