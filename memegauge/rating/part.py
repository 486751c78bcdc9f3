"""A method's side of the ratings (`Method.rating`): what people rate in one of its runs, the ratings its
own CSV imports stored, how the report compares the ratings with the run's judges, and how the HTML
report shows that. The kit (`memegauge.rating`) does the rest for every method: the seeded sample, the
page and its API, the stored `HumanRating`s, the agreement coefficients and the section's frame."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from memegauge.engine.store import Store
    from memegauge.rating.items import Item, Pictures
    from memegauge.rating.records import HumanRating
    from memegauge.report.blocks import Block

ByRater = dict[str, dict[str, "HumanRating"]]
"""rater → the rated thing's key in the run (`HumanRating.source`) → that rater's rating of it."""


class ItemsHook(Protocol):
    def __call__(self, store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]: ...


class ImportedHook(Protocol):
    def __call__(self, store: Store, run: dict[str, Any]) -> list[HumanRating]: ...


class SectionHook(Protocol):
    def __call__(self, store: Store, run: dict[str, Any], by_task: dict[str, ByRater],
                 seed: int) -> dict[str, Any]: ...


class BlocksHook(Protocol):
    def __call__(self, section: dict[str, Any]) -> list[Block]: ...


class MemePathsHook(Protocol):
    def __call__(self, store: Store, run: dict[str, Any]) -> dict[str, Any]: ...


def _none_imported(store: Store, run: dict[str, Any]) -> list[HumanRating]:
    return []


@dataclass(frozen=True)
class RatingPart:
    """A method's rating part.

    items       `items(store, run, n, images) -> [Item]`: up to n items per rating task of the run (drawn
                with `memegauge.rating.items.stratified`, so every rater gets the same ones), pictures
                from `images.get(meme id)`.
    section     `section(store, run, by_task, seed) -> {key: figures}`: the method's figures of the
                "People vs judges" section from the ratings of each task (`by_task[task]`, see `ByRater`);
                each figure {value, ci95, n} (`memegauge.rating.stats.interval`).
    blocks      `blocks(section) -> [Block]`: the method's tables of that section in the HTML report.
    imported    `imported(store, run) -> [HumanRating]`: ratings the method's own CSV imports stored in
                their own record kinds, read as ratings (rater ``csv``); none by default.
    meme_paths  `meme_paths(store, run) -> {meme id: picture path}`: where a run stored before runs kept
                their pictures finds a meme's picture; None: no picture for such runs.
    tasks       the names of the method's rating tasks (`memegauge rate --task` is checked against them;
                empty: not checked).
    needs_meme  items whose meme has neither text nor picture in the store are left out, with a warning
                (`memegauge.rating.items.shown_only`), after `--task` chose the tasks.
    """

    items: ItemsHook
    section: SectionHook
    blocks: BlocksHook
    imported: ImportedHook = _none_imported
    meme_paths: MemePathsHook | None = None
    tasks: tuple[str, ...] = ()
    needs_meme: bool = False
