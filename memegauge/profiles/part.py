"""A method's side of `memegauge profile`: a `ProfilePart`, provided by the method (or by the benchmark kit for
every benchmark) through the entry point group ``memegauge.profile``, never listed here.

    [project.entry-points."memegauge.profile"]
    memeqa = "memegauge.memeqa.profile:PART"            # a ProfilePart for the method of that name
    benchmarks = "memegauge.benchmarks.kit.profile:FAMILY"  # a ProfileFamily: a part for each benchmark

The profile reads only the store: a run's report (`memegauge.report.build_report`) and its headline rows
(`memegauge.report.headline`), so every figure it shows is the figure of the run's own report. A part says
what the shared code cannot know: which runs measure the same thing (`kind`), which rows are the headline,
which items each model answered (for examples and paired differences) and which published figures sit beside
the run on the same split and metric. A method without a part is profiled from its headline rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from memegauge.registry import DuplicatePlugin, Registry

if TYPE_CHECKING:
    from memegauge.engine.store import Store
    from memegauge.profiles.records import Outcome, PublishedFigure
    from memegauge.report.headline import Headline

ENTRY_POINT_GROUP = "memegauge.profile"


def overall_rows(rows: list[Headline]) -> list[Headline]:
    """The default headline: the first figure of the first `overall…` group (a run's key figure)."""
    overall = [r for r in rows if r.group.startswith("overall")]
    if not overall:
        return []
    first = overall[0]
    return [r for r in overall if r.group == first.group and r.figure == first.figure]


def group_rows(rows: list[Headline]) -> list[Headline]:
    """The default groups ranked for strengths and weaknesses: every non-overall group's row of the
    headline's figure."""
    lead = overall_rows(rows)
    figure = lead[0].figure if lead else (rows[0].figure if rows else None)
    return [r for r in rows if not r.group.startswith("overall") and r.figure == figure]


def _no_outcomes(store: Store, report: dict[str, Any], model: str) -> list[Outcome]:
    return []


def _no_published(report: dict[str, Any]) -> list[PublishedFigure]:
    return []


def _no_sources(report: dict[str, Any]) -> dict[str, str]:
    return {}


def config_sample(report: dict[str, Any]) -> str | None:
    """The default `sample`: the config's `limit` (its first N items), or None for a full run."""
    config = report["run"].get("config") or {}
    return f"first {config['limit']} items" if config.get("limit") else None


def _any_run(stored: dict[str, Any], planned: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class ProfilePart:
    """A method's profile part.

    kind       `kind(report) -> str | None`: what the run measured, as a label (MemeQA's version and split, a
               benchmark's split, …), never how much of it (that is `sample`): a cut-down run has the label of
               its full run, so it never gets a leaderboard column of its own. Within a label the profile keeps
               the runs that asked the same items the same way (the items' keys and contents, the method version,
               the prompts: `gather.choose`). None: the run is not profiled (a build, a fine-tuning).
    sample     `sample(report) -> str | None`: how the run was cut down (its first N items, some tasks), or None
               for a full run; a full run is preferred to a cut-down one (default: the config's `limit`).
    headline   `headline(rows) -> [Headline]`: of one model's headline rows of the run, those of its headline
               block (default: the first figure of the first overall group).
    groups     `groups(rows) -> [Headline]`: those ranked for strengths and weaknesses (default: the
               non-overall groups of the headline's figure).
    outcomes   `outcomes(store, report, model) -> [Outcome]`: the model's items in the run, each right or wrong
               (for its examples and for paired differences between models on the same items), each with the
               hash of its content (`Outcome.content`) where it is an item of the data set; none by default.
    published  `published(report) -> [PublishedFigure]`: the published figures measured on the run's split with
               the run's metric (never another split); none by default.
    sources    `sources(report) -> {label: value}`: the data behind the run as it was pinned (catalogue source,
               checksums, question-set hash); none by default.
    paired_figure  What an outcome's `correct` means, as paired differences name it ("accuracy", "share not
               failed", "head-to-head win rate").
    radar      Draw the groups as a radar too (a handful of judged dimensions), beside the bars.

    `profile --run-missing` (memegauge.profiles.plan) plans each missing part as a normal run of its method:
    configs    `configs(base, models) -> [(config dict, models it measures)]`: the runs that measure `models` from a
               base config (the
               user's, `--with METHOD=FILE`, validated; or `auto`'s): MemeQA both versions, one AdamMeme run for
               every target, one arena with the reference targets and the models. None: the profile cannot plan
               this method's runs.
    covers     `covers(stored config, planned config) -> bool`: a done run of the model with the stored config
               already measures what the planned one would (MemeQA: the same version); default: any run of the
               method.
    plan       `plan(config, checked, run name) -> [PlannedCalls]`: the planned calls (`--dry-run`).
    auto       `auto(data folder or None) -> base config | None`: a run the profile plans unasked (every installed
               field benchmark, from `--bench-data DIR/<name>` or the data catalogue's copy); None: only when asked.
               An InputError: the run cannot be planned (no data), said in the plan's notes.
    name       `name(config, checked) -> str`: the run's name as the method's own command names it (a benchmark's
               `eval` name); default: the config's `default_name()`, else `methods.default_run_name`.
    """

    kind: Callable[[dict[str, Any]], str | None]
    sample: Callable[[dict[str, Any]], str | None] = config_sample
    headline: Callable[[list[Headline]], list[Headline]] = overall_rows
    groups: Callable[[list[Headline]], list[Headline]] = group_rows
    outcomes: Callable[[Store, dict[str, Any], str], list[Outcome]] = _no_outcomes
    published: Callable[[dict[str, Any]], list[PublishedFigure]] = _no_published
    sources: Callable[[dict[str, Any]], dict[str, str]] = _no_sources
    paired_figure: str = "accuracy"
    radar: bool = False
    configs: Callable[[dict[str, Any], list[str]], list[tuple[dict[str, Any], list[str]]]] | None = None
    covers: Callable[[dict[str, Any], dict[str, Any]], bool] = _any_run
    plan: Callable[[Any, Any, str], list[Any]] | None = None
    auto: Callable[[Path | None], dict[str, Any] | None] | None = None
    name: Callable[[Any, Any], str] | None = None


@dataclass(frozen=True)
class ProfileFamily:
    """Parts for several methods behind one entry point: `part_for(method name)` or None (the benchmark kit's,
    for every registered benchmark)."""

    part_for: Callable[[str], ProfilePart | None]


class DuplicateProfilePart(DuplicatePlugin):
    """Two providers claim one method's profile part."""


# The declared parts and families, loaded by the one registry (type-checked, duplicates refused): each known by
# its entry point's name (a part by its method's).
_DECLARED: Registry[Any] = Registry("profile part", ENTRY_POINT_GROUP, (ProfilePart, ProfileFamily),
                                    name_of=lambda plugin: None, duplicate=DuplicateProfilePart)


class _Parts:
    def __init__(self) -> None:
        self._parts: dict[str, tuple[ProfilePart, str]] = {}
        self._families: list[tuple[ProfileFamily, str]] = []
        self._loaded = False

    def register(self, name: str, part: ProfilePart, source: str = "code") -> ProfilePart:
        if name in self._parts:
            raise DuplicateProfilePart(f"the profile part of method {name!r} is provided twice: by "
                                       f"{self._parts[name][1]} and by {source}; remove one of them")
        self._parts[name] = (part, source)
        return part

    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for name, found in _DECLARED.all().items():
            source = _DECLARED.source(name) or "entry point"
            if isinstance(found, ProfileFamily):
                self._families.append((found, source))
            else:
                self.register(name, found, source)

    def get(self, name: str) -> ProfilePart | None:
        self.load()
        if name in self._parts:
            return self._parts[name][0]
        found = [(p, source) for family, source in self._families if (p := family.part_for(name)) is not None]
        if len(found) > 1:
            raise DuplicateProfilePart(f"the profile part of method {name!r} is provided twice: by "
                                       f"{found[0][1]} and by {found[1][1]}; remove one of them")
        return found[0][0] if found else None


PARTS = _Parts()


def register_part(name: str, part: ProfilePart, source: str = "code") -> ProfilePart:
    """Register a method's profile part from code (tests, notebooks); see the module docstring for packages."""
    return PARTS.register(name, part, source)


def part_of(name: str) -> ProfilePart | None:
    """The profile part of the method `name`, or None (the method is then profiled from its headline rows)."""
    return PARTS.get(name)
