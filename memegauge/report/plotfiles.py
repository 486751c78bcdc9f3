"""`memegauge report RUN --plots DIR`: every plot of a run's HTML report as PNG (200 dpi), SVG and PDF
files, for a paper or a slide (`memegauge.report.plots.save_plot`). File names come from the plot
titles (made safe for any file system); every plot is drawn before anything is written."""

from __future__ import annotations

import re
from pathlib import Path

from memegauge.engine.store import Store
from memegauge.methods import method
from memegauge.report import build_report
from memegauge.report.plots import PlotImage, save_plot


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "plot"


def write_plots(store: Store, name: str, out_dir: Path) -> list[Path]:
    """Write the run's plots into `out_dir`; the paths written (none for a run without plots)."""
    report = build_report(store, name)
    found = method(report["run"]["method"])
    if found is None or found.view is None:
        return []
    blocks, _ = found.view(report, store)
    images = [(b.title, b.src) for b in blocks if b.kind == "plot" and isinstance(b.src, PlotImage)]
    paths: list[Path] = []
    taken: dict[str, int] = {}
    for title, image in images:
        stem = _slug(title)
        taken[stem] = taken.get(stem, 0) + 1
        suffix = f"-{taken[stem]}" if taken[stem] > 1 else ""
        paths += save_plot(image, Path(out_dir) / f"{stem}{suffix}")
    return paths
