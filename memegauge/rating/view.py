"""The "People vs judges" section in the HTML report: the kit's note on who rated what, then the run's
method's tables (`RatingPart.blocks`), built with the cells below so every method's tables read alike:
"value [low, high]" with n beside."""

from __future__ import annotations

from typing import Any

from memegauge.rating.items import rating_part
from memegauge.report.blocks import Block, Cell, count, table, text
from memegauge.report.sections import Section

PEOPLE_TITLE = "People vs judges"
SECTION = Section("people_vs_judges", PEOPLE_TITLE, build="memegauge.rating.section:people_vs_judges",
                  blocks="memegauge.rating.view:people_blocks")
"""The rating kit's section of every report (entry point ``memegauge.sections``: the report imports no rating)."""


def ci_cell(figure: dict[str, Any] | None, percent: bool = False, with_n: bool = False) -> Cell:
    """{value, ci95, n} as "0.62 [0.41, 0.80]" (or percentages), with "n=…" where columns differ in n."""
    value = (figure or {}).get("value")
    if value is None:
        return Cell("–", None)
    shown = (lambda v: f"{100 * v:.1f}%") if percent else (lambda v: f"{v:.3f}")
    ci = figure.get("ci95")
    why = f" ({figure['note']})" if not ci and figure.get("note") else ""
    return Cell(shown(value) + (f" [{shown(ci[0])}, {shown(ci[1])}]" if ci else why) +
                (f" n={figure['n']}" if with_n else ""), value)


def n_of(figure: dict[str, Any] | None) -> Cell:
    return count((figure or {}).get("n"))


def between_blocks(title: str, between: dict[str, Any] | None, figures: dict[str, str]) -> list[Block]:
    """The people among themselves: one row per coefficient (`figures`: key → label)."""
    if not between:
        return []
    rows = [[text(label), ci_cell(between.get(key)), n_of(between.get(key))] for key, label in figures.items()]
    return [Block("table", f"{title}: {', '.join(between['raters'])} among themselves",
                  table=table(["coefficient", "value [95% CI]", "n items"], rows))]


def people_blocks(section: dict[str, Any] | None, run: dict[str, Any]) -> list[Block]:
    """The section (`memegauge.rating.section`) as blocks: a note on what is compared, then the tables
    of the run's method."""
    part = rating_part(run) if section else None
    if not section or part is None:
        return []
    raters = section["raters"]
    return [Block("note", PEOPLE_TITLE, text=(
        f"{len(raters)} rater(s): " + ", ".join(f"{name} ({r['rated']} votes, {r['origin']})"
                                               for name, r in raters.items()) +
        ". Each figure is the value on all items with its 95% interval and n, the items behind it: an "
        "accuracy a Wilson interval (clustered by meme where items share one), a macro accuracy and every "
        "coefficient a seeded bootstrap over the items. People rate a run with: memegauge rate RUN.")),
        *part.blocks(section)]
