"""Quality studies: people rate what a run's agents *wrote* (a reference answer, a rewritten meme text, a
guideline, a set of personas and tasks) on a few criteria, each on a short ordinal scale with its
definition from the paper; the report gives the mean per criterion with its interval and n, the raters'
agreement per criterion and overall, and the paper's published values beside.

A method declares its studies (`Study`, in its own folder) and builds their items with `quality_item`;
the kit stores the votes (`HumanRating.criteria`), checks them (`parse_criteria`) and computes the
section (`quality_section`, pure apart from the figures it is given) and its tables (`quality_blocks`).

Figures (all seeded, all over the items as the unit of resampling):

* mean per criterion: the mean of every rating given on it (each rater's rating of each item), with a
  percentile bootstrap over items (an item's ratings travel together) and n = items, ratings;
* agreement per criterion: ICC(2,1) (two-way random, absolute agreement, single rater) on the items
  every rater rated, and Krippendorff's α (ordinal, every item rated by two or more) beside it;
* overall agreement: the same two coefficients over every (item, criterion) unit at once, as a paper
  gives one "intra-judge agreement" for a whole study;
* per group (`Study.by`, e.g. a discussion round): the mean per criterion of each group's items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memegauge.rating import stats
from memegauge.rating.items import Item, item_id
from memegauge.report.blocks import Block, Cell, count, table, text

QUALITY_PAGE = "quality"


@dataclass(frozen=True)
class Published:
    """A value a paper published, and where: `where` quotes its table (or figure) and row."""

    value: float
    where: str


@dataclass(frozen=True)
class Criterion:
    """One criterion of a study: its name and definition as the paper gives them, the scale's ends,
    and the paper's published mean and agreement (None where it published none)."""

    name: str
    definition: str
    low: str = "poorest"
    high: str = "best"
    lower_is_better: bool = False
    mean: Published | None = None
    agreement: Published | None = None


@dataclass(frozen=True)
class Study:
    """A quality study. `task` is the rating task's name (`HumanRating.task`); `paper` names the table;
    `question` heads the page; `points` the scale (1..points); `coefficient` says which agreement the
    paper reports and how ours relates to it; `overall` the paper's overall agreement, if any; `by` the
    name of the item groups whose means are shown apart (None: no grouping)."""

    task: str
    title: str
    paper: str
    question: str
    criteria: tuple[Criterion, ...]
    coefficient: str
    points: int = 3
    overall: Published | None = None
    by: str | None = None
    notes: tuple[str, ...] = field(default=())

    def page(self) -> dict[str, Any]:
        """What the page needs to draw the criteria: names, definitions and the scale's ends."""
        return {"task": QUALITY_PAGE, "study": self.task, "title": self.title, "question": self.question,
                "points": self.points,
                "criteria": [{"name": c.name, "definition": c.definition, "low": c.low, "high": c.high,
                              "lower_is_better": c.lower_is_better} for c in self.criteria]}


def quality_item(study: Study, source: str, stratum: str, shown: list[tuple[str, str]], *,
                 text: str = "", image: str | None = None) -> Item:
    """An item of a study: the meme (`text`, `image`) and the blocks the rater judges (`shown`: (heading,
    text) pairs, in order), already blinded by the caller."""
    return Item(item_id(study.task, source), study.task, source, stratum,  # type: ignore[arg-type]
                {**study.page(), "text": text, "image": image,
                 "shown": [{"title": title, "text": body} for title, body in shown]})


class CriteriaError(ValueError):
    pass


def parse_criteria(page: dict[str, Any], body: dict[str, Any]) -> dict[str, int]:
    """The vote's {criterion: 1..points}, every criterion of the item's study given once."""
    names = [c["name"] for c in page["criteria"]]
    given = body.get("criteria")
    points = page["points"]
    if not isinstance(given, dict) or set(given) != set(names) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= points for v in given.values()):
        raise CriteriaError(f"a quality vote gives a whole number from 1 to {points} for each of "
                            f"{', '.join(names)}")
    return {n: given[n] for n in names}


# ---- the section ---------------------------------------------------------------------------------

def rating_cube(per_rater: dict[str, dict[str, Any]], names: list[str]) -> tuple[list[str], list[str], np.ndarray]:
    """(raters, items, raters × items × criteria array of the ratings, nan where not rated)."""
    raters = sorted(per_rater)
    sources = sorted(set().union(*(per_rater[r] for r in raters))) if raters else []
    cube = np.full((len(raters), len(sources), len(names)), np.nan)
    for i, r in enumerate(raters):
        for j, s in enumerate(sources):
            given = getattr(per_rater[r].get(s), "criteria", None) or {}
            cube[i, j] = [given.get(n, np.nan) for n in names]
    return raters, sources, cube


def mean_of(cube: np.ndarray, items: np.ndarray) -> float | None:
    """The mean of every rating of the chosen items (one criterion's raters × items slice)."""
    values = cube[:, items]
    return float(np.nanmean(values)) if np.isfinite(values).any() else None


def icc_complete(cube: np.ndarray, items: np.ndarray) -> float | None:
    """ICC(2,1) of a raters × units slice on the units every rater rated (None under 2 raters)."""
    x = cube[:, items].T
    x = x[np.isfinite(x).all(axis=1)]
    return stats.icc_2_1(x) if x.shape[1] >= 2 else None


def quality_section(study: Study, per_rater: dict[str, dict[str, Any]], seed: int,
                    groups: dict[str, str] | None = None) -> dict[str, Any]:
    """The study's figures from its ratings (`per_rater`: rater → source → `HumanRating`); `groups`:
    source → group (e.g. the discussion round) when `study.by` is set."""
    names = [c.name for c in study.criteria]
    raters, sources, cube = rating_cube(per_rater, names)
    n = len(sources)
    criteria = {}
    for k, c in enumerate(study.criteria):
        slice_ = cube[:, :, k]
        rated = np.flatnonzero(np.isfinite(slice_).any(axis=0))
        mean = stats.interval(lambda idx, s=slice_[:, rated]: mean_of(s, idx), rated.size, seed)
        complete = np.flatnonzero(np.isfinite(slice_).all(axis=0))
        criteria[c.name] = {
            "mean": {**mean, "ratings": int(np.isfinite(slice_).sum())},
            "icc": stats.interval(lambda idx, s=slice_[:, complete]: icc_complete(s, idx), complete.size, seed)
            if len(raters) >= 2 else None,
            "krippendorff_alpha_ordinal": stats.interval(
                lambda idx, s=slice_: stats.krippendorff_alpha(s[:, idx], "ordinal"), n, seed)
            if len(raters) >= 2 else None,
            "published_mean": _published(c.mean), "published_agreement": _published(c.agreement)}
    out: dict[str, Any] = {"study": study.task, "title": study.title, "paper": study.paper,
                           "coefficient": study.coefficient, "raters": raters, "items": n, "criteria": criteria,
                           "published_overall": _published(study.overall), "notes": list(study.notes)}
    if len(raters) >= 2:
        units = lambda idx: cube[:, idx].reshape(len(raters), -1)  # noqa: E731 (item, criterion) units
        complete = np.flatnonzero(np.isfinite(cube).all(axis=(0, 2)))
        out["overall"] = {
            "icc": stats.interval(lambda idx: icc_complete(units(complete[idx]), np.arange(idx.size * len(names))),
                                  complete.size, seed),
            "krippendorff_alpha_ordinal": stats.interval(
                lambda idx: stats.krippendorff_alpha(units(idx), "ordinal"), n, seed)}
    if study.by and groups:
        out["by"] = study.by
        out["groups"] = group_means(study, cube, sources, groups, seed)
    return out


def group_means(study: Study, cube: np.ndarray, sources: list[str], groups: dict[str, str],
                seed: int) -> dict[str, dict[str, Any]]:
    """Per group (in the groups' natural order), the mean of each criterion with its interval and n."""
    keys = sorted({groups[s] for s in sources if s in groups}, key=_natural)
    out = {}
    for g in keys:
        members = np.array([j for j, s in enumerate(sources) if groups.get(s) == g], dtype=int)
        out[g] = {c.name: stats.interval(lambda idx, s=cube[:, members, k]: mean_of(s, idx), members.size, seed)
                  for k, c in enumerate(study.criteria)}
    return out


def _natural(key: str) -> tuple[int, Any]:
    return (0, int(key)) if key.lstrip("-").isdigit() else (1, key)


def _published(value: Published | None) -> dict[str, Any] | None:
    return None if value is None else {"value": value.value, "where": value.where}


# ---- the tables ------------------------------------------------------------------------------------

def _figure(figure: dict[str, Any] | None, digits: int = 3) -> Cell:
    value = (figure or {}).get("value")
    if value is None:
        return Cell("–", None)
    ci = figure.get("ci95")
    return Cell(f"{value:.{digits}f}" + (f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else " (no interval)"),
                value)


def _quoted(published: dict[str, Any] | None) -> Cell:
    return Cell("–", None) if not published else Cell(f"{published['value']:g} ({published['where']})",
                                                       published["value"])


def quality_blocks(section: dict[str, Any]) -> list[Block]:
    """The study's tables: per criterion ours beside the paper's; the overall agreement; per group."""
    raters = section["raters"]
    rows = [[text(name), _figure(c["mean"]), count(c["mean"]["n"]), count(c["mean"]["ratings"]),
             _quoted(c["published_mean"]), _figure(c["icc"]), _figure(c["krippendorff_alpha_ordinal"]),
             _quoted(c["published_agreement"])] for name, c in section["criteria"].items()]
    title = (f"{section['title']} ({section['paper']}): {len(raters)} rater(s) ({', '.join(raters)}), "
             f"{section['items']} items; agreement: {section['coefficient']}")
    blocks = [Block("table", title, table=table(
        ["criterion", "mean [95% CI]", "n items", "n ratings", "paper's mean", "ICC(2,1) [95% CI]",
         "Krippendorff's α ordinal [95% CI]", "paper's agreement"], rows))]
    if section.get("overall") or section.get("published_overall"):
        overall = section.get("overall") or {}
        blocks.append(Block("table", f"{section['title']}: agreement over all criteria at once", table=table(
            ["ICC(2,1) [95% CI]", "Krippendorff's α ordinal [95% CI]", "paper's overall agreement"],
            [[_figure(overall.get("icc")), _figure(overall.get("krippendorff_alpha_ordinal")),
              _quoted(section.get("published_overall"))]])))
    if section.get("groups"):
        names = list(section["criteria"])
        blocks.append(Block("table", f"{section['title']}: mean per {section['by']} [95% CI] (n items)",
                            table=table([section["by"], *names], [
                                [text(g), *[Cell(_figure(v[n]).text + f" (n={v[n]['n']})", v[n]["value"])
                                            for n in names]]
                                for g, v in section["groups"].items()])))
    for note in section.get("notes", []):
        blocks.append(Block("note", f"{section['title']}: note", text=note))
    return blocks
