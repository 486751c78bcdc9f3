"""The items a rater sees: a seeded, stratified sample of a run's outputs, blinded.

Every rater of a run gets the same items in the same order: the draw depends only on the run's seed
and the task, never on the rater or on time. Which items a run offers and their strata are its
method's (`RatingPart.items`, in the method's folder: the strata its paper balances its human study
over). Each stratum is shuffled, then the strata are taken in turn (round robin), so a sample of n is
the first n of a sample of n + 1 and every stratum is as evenly covered as n allows.

Blinding: an item's id is a hash, never the rated thing's key; a method that shows two answers side by
side decides which one is A with a seeded coin per item (`swapped`) and replaces the names of the run's
models in every text shown by `MODEL_PLACEHOLDER` (`blinder`), so an answer that names itself does not
unblind the rater.
"""

from __future__ import annotations

import hashlib
import random
import re
import warnings
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from memegauge.engine.store import Store
from memegauge.images.thumbnail import MemeImage, thumbnail_data_url
from memegauge.methods import method, methods
from memegauge.rating.part import RatingPart
from memegauge.rating.records import Task
from memegauge.records import read_records
from memegauge.errors import InputError

MODEL_PLACEHOLDER = "[a model]"
DEFAULT_SAMPLE = 120


@dataclass(frozen=True)
class Item:
    """One thing to rate: `page` is all the page may see of it; the rest stays on the server."""

    id: str
    task: Task
    source: str
    stratum: str
    page: dict[str, Any] = field(compare=False)
    swapped: bool = False


def item_id(task: str, source: str) -> str:
    return f"{task}-{hashlib.sha256(f'{task}|{source}'.encode()).hexdigest()[:12]}"


def stratified(strata: dict[str, list[str]], n: int, rng: random.Random) -> list[tuple[str, str]]:
    """(stratum, key) pairs: each stratum shuffled, then taken in turn until n are drawn."""
    queues = {s: rng.sample(keys, len(keys)) for s, keys in sorted(strata.items()) if keys}
    drawn: list[tuple[str, str]] = []
    while queues and len(drawn) < n:
        for s in list(queues):
            if len(drawn) == n:
                break
            drawn.append((s, queues[s].pop(0)))
            if not queues[s]:
                del queues[s]
    return drawn


def rng(seed: Any, task: str) -> random.Random:
    return random.Random(f"{seed}:rate:{task}")


def group(rows: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for stratum, key in rows:
        out.setdefault(stratum, []).append(key)
    return out


def blinder(names: Iterable[str]):
    """A function that replaces every model name (case-insensitive, longest first) by the placeholder."""
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE)
    return lambda text: pattern.sub(MODEL_PLACEHOLDER, text)


def rating_part(run: dict[str, Any]) -> RatingPart | None:
    """The rating part of the run's method (`Method.rating`), None when it has none for this run."""
    found = method(run["method"])
    return found.rating(run) if found is not None and found.rating is not None else None


def run_items(store: Store, run: dict[str, Any], n: int = DEFAULT_SAMPLE,
              tasks: Iterable[str] | None = None) -> list[Item]:
    """The rating items of a run (`run` as `memegauge.report.run_header` gives it, with its `id`); only
    those of `tasks` when given (`memegauge rate --task`)."""
    part = rating_part(run)
    if part is None:
        offered = ", ".join(m.title for m in methods() if m.rating is not None)
        raise InputError(f"a {run['method']} run has nothing for people to rate", f"run {run['name']!r}",
                         f"rate a run of a method that offers rating ({offered}; not every run kind does)")
    items = part.items(store, run, n, Pictures(store, run, part))
    if tasks is not None:
        wanted = set(tasks)
        offered = part.tasks or tuple(dict.fromkeys(i.task for i in items))
        unknown = sorted(wanted - set(offered))
        if unknown:
            raise InputError(f"a {run['method']} run has no rating task {', '.join(map(repr, unknown))}",
                             "--task", f"choose among {', '.join(offered) or 'none'}")
        items = [i for i in items if i.task in wanted]
    if part.needs_meme and items:
        items = shown_only(items, run)
    if not items:
        raise InputError("the run has no finished output to rate yet", f"run {run['name']!r}",
                         "let the run finish (or resume it), then rate it")
    return items


def shown_only(items: list[Item], run: dict[str, Any]) -> list[Item]:
    """The items a rater can judge, for a builder whose items are about their meme: each shows it, by
    its text or its picture. Those whose meme has neither in the store (an import of results without
    the meme texts or pictures, a meme set since moved) are left out, with one warning saying how many
    and why; none left is an error."""
    shown = [item for item in items if item.page.get("text") or item.page.get("image")]
    if not shown:
        raise InputError(f"none of the run's {len(items)} items can be shown: their memes have neither text "
                         "nor picture in the store", f"run {run['name']!r}",
                         "import or run it again with the meme set at hand (its texts and pictures)")
    if len(shown) < len(items):
        warnings.warn(f"{len(items) - len(shown)} of {len(items)} items left out: their memes have neither "
                      "text nor picture in the store (a rater could not judge them)", stacklevel=2)
    return shown


class Pictures:
    """Meme id → picture (JPEG data URL) as the run stored it (`MemeImage`); for a run made before runs
    stored their pictures, a thumbnail of the meme file, made only for the memes a rater is shown."""

    def __init__(self, store: Store, run: dict[str, Any], part: RatingPart) -> None:
        self.stored = {r.meme: r.thumbnail for r in read_records(store, run["id"], MemeImage)}
        self.store, self.run, self.part = store, run, part
        self._paths: dict[str, Any] | None = None

    def get(self, meme: str) -> str | None:
        if self.stored:
            return self.stored.get(meme)
        if self._paths is None:
            self._paths = self.part.meme_paths(self.store, self.run) if self.part.meme_paths else {}
        return thumbnail_data_url(self._paths.get(meme))
