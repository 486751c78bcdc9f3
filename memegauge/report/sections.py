"""Report sections: what a package other than a run's method has to show in that run's report.

The report knows sections, not who brings them: a `Section` names the key it fills in the report dict, the
function that builds it from the store (None: nothing to show for this run) and the one that turns it into
HTML blocks. Each is declared as an entry point of the group ``memegauge.sections``, named after its key
(`memegauge.registry`), by whoever has something to show: the rating kit declares its "People vs judges"
section this way (`memegauge.rating.view.SECTION`), so the report imports nothing of the rating kit.

    [project.entry-points."memegauge.sections"]
    people_vs_judges = "memegauge.rating.view:SECTION"

Sections are built, and shown, in name order after the method's own figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from memegauge.registry import Registry

ENTRY_POINT_GROUP = "memegauge.sections"


@dataclass(frozen=True)
class Section:
    """One section of the report.

    name    The report key it fills (`report[name]`), and its entry point's name.
    title   Its heading (HTML and Markdown reports).
    build   ``"module:function"``: `function(store, run) -> dict | None`, the section's figures of one run read
            from the store (`run` is the run header plus its store id); None leaves the key out. Imported when
            a report is built, so declaring a section imports none of its statistics.
    blocks  ``"module:function"``: `function(section, run) -> [Block]`, the section's part of the HTML page
            (`memegauge.report.blocks`), after the method's own blocks.
    """

    name: str
    title: str
    build: str
    blocks: str

    def call(self, which: str, *args: Any) -> Any:
        module, _, function = getattr(self, which).partition(":")
        return getattr(import_module(module), function)(*args)


SECTIONS: Registry[Section] = Registry("report section", ENTRY_POINT_GROUP, Section)


def build_sections(store: Any, run: dict[str, Any]) -> dict[str, Any]:
    """{name: figures} of every section with something to show for this run."""
    built = {name: section.call("build", store, run) for name, section in SECTIONS.all().items()}
    return {name: value for name, value in built.items() if value is not None}


def present_sections(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, title) of every section the report holds, in name order."""
    return [(name, section.title) for name, section in SECTIONS.all().items() if report.get(name) is not None]


def section_blocks(report: dict[str, Any]) -> list[Any]:
    """The HTML blocks of every section the report holds."""
    return [block for name, section in SECTIONS.all().items() if report.get(name) is not None
            for block in section.call("blocks", report[name], report["run"])]
