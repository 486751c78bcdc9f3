"""The profile's typed records: what `memegauge.profile(models)` returns and every page format renders."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memegauge.report.headline import Headline
from memegauge.report.published import PublishedValue


def content_hash(*parts: Any) -> str:
    """sha256 of an item's content as asked (`Outcome.content`), from its parts in a fixed order."""
    import hashlib

    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


MISSED = "got it wrong"  # `Outcome.miss` of a plain miss


class Outcome(_Record):
    """One item a model answered in one run, as its method's profile part reads it from the store."""

    key: str = Field(description="The item's identity in runs of one kind (a question id, `task|item`, "
                                 "`category|meme`): two models' outcomes with one key answered the same item.")
    meme: str = Field(description="The meme the item is about (the cluster of intervals; its picture).")
    groups: list[str] = Field(description="The headline groups the item counts in (a type, a category, a "
                                          "`task: field=value`).")
    correct: bool | None = Field(description="Whether the model got it right (AdamMeme: the score did not fail); "
                                             "None: not scored (a failed call is never a score).")
    text: str | None = Field(default=None, description="The meme's text or the question as asked.")
    answer: str | None = Field(default=None, description="The model's answer as given.")
    expected: str | None = Field(default=None, description="The expected answer (gold, or the reference).")
    overall: bool = Field(default=True, description="Whether it counts in the kind's overall paired difference "
                                                    "(False for a per-dimension or per-task item).")
    content: str | None = Field(default=None, description="sha256 of the item's content as asked (what the model "
                                                          "was shown and the expected answer): two runs asked the "
                                                          "same item only when key and content agree. None: an "
                                                          "item of this run alone (a battle between two models, a "
                                                          "refinement step), never compared across runs.")
    miss: str = Field(default=MISSED, description="What a not-correct outcome is, as its examples name "
                                                         "it: `got it wrong`, or the part's own word for an outcome "
                                                         "that is neither right nor wrong (`a tie`).")


class PublishedFigure(PublishedValue, _Record):
    """A published figure (`PublishedValue`: system, metric, value, split, n, source) as the profile sets it: beside
    the run of its kind and group, on the run's split and with the run's metric."""

    kind: str = Field(description="The profile kind it sits beside.")
    group: str = Field(description="The headline group it is of (`overall (macro)`, a type, a task).")
    n_note: str = Field(default="", description="What the source says of its n when it gives no exact count "
                                                "(MemeQA's paper: its question total and split ratio), shown once "
                                                "below the headline, as `eval` shows it.")


class Example(_Record):
    """A meme the model got wrong, as the run stored it."""

    kind: str = Field(description="The profile kind of the run.")
    run: str = Field(description="The run's name.")
    group: str = Field(description="The weakness it illustrates, or `got wrong`: one of the first items the model "
                                   "got wrong in a measurement where no group is a clear weakness.")
    meme: str = Field(description="The meme's id.")
    picture: str | None = Field(description="The meme's thumbnail as the run stored it (a data URL), or None.")
    text: str | None = Field(description="Its text or question as asked.")
    answer: str | None = Field(description="The model's answer as given.")
    expected: str | None = Field(description="The expected answer.")
    verdict: str = Field(default=MISSED, description="What the model's outcome was (`Outcome.miss`): `got "
                                                             "it wrong`, or the part's own word (`a tie`).")


class NotShown(_Record):
    """A run of the same measurement that the profile did not show, and why."""

    run: str
    status: str
    reason: str = Field(description="Older, not done, cut down while a full run exists, or asked other items.")


class RunUsed(_Record):
    """One stored run the profile read, with what it takes to repeat it."""

    kind: str = Field(description="What it measured (its method's profile kind).")
    method: str = Field(description="Its method's registered name.")
    run: str = Field(description="Its name in the store.")
    date: str = Field(description="When it was created, ISO 8601 UTC.")
    status: str = Field(description="done, incomplete, interrupted, …: a run that is not done says so.")
    config_hash: str = Field(description="sha256 of its canonical config (the same config resumes it).")
    package_version: str | None = Field(description="The MemeGauge version that last ran it.")
    calls: int = Field(description="Its calls, replayed ones included.")
    calls_made: int = Field(description="Of which made (paid) by any execution of it.")
    failed_calls: int = Field(description="Calls that still failed after their retries.")
    tokens: int = Field(description="Prompt plus completion tokens of the calls made.")
    cost: float = Field(description="US dollars of the calls made (models with a price only).")
    seconds: float = Field(description="Wall time of its executions, summed.")
    sources: dict[str, str] = Field(description="The data behind it (its method's profile part: paths, splits, "
                                                "the catalogue's pinned source and checksums).")
    sample: str | None = Field(default=None, description="How the run was cut down (its first N items, some "
                                                        "tasks or types, or a part of the chosen data set's "
                                                        "items); None: a full run.")
    data_fingerprint: str | None = Field(default=None, description="sha256 (16 hex digits) of the items it asked "
                                                                  "(key and content of each), the method version "
                                                                  "and custom prompts: runs that share it asked "
                                                                  "the same items the same way.")
    items: int | None = Field(default=None, description="Items it asked (None: its method's part lists none).")
    chosen: str = Field(default="", description="Why this run was chosen for its kind.")
    others: list[NotShown] = Field(default_factory=list, description="The model's other runs of the same "
                                                                     "measurement, not shown, each with why.")
    radar: bool = Field(default=False, description="Its method's part draws its groups as a radar too (the "
                                                   "judged dimensions of a rating).")


class Endpoint(_Record):
    """Where the model is served, from the model registry given to the profile (not stored with the runs)."""

    backend: str
    model: str = Field(description="The served model id.")
    base_url: list[str] = Field(description="The endpoint(s); empty for a local backend.")


class ModelProfile(_Record):
    """Everything the store says about one model."""

    model: str = Field(description="The model's name as its runs name it.")
    endpoint: Endpoint | None = Field(description="Its registry entry, when a registry was given and names it.")
    runs: list[RunUsed] = Field(description="The newest run of each kind that evaluated it.")
    headline: list[Headline] = Field(description="Each kind's main figure(s), with 95% interval and n.")
    published: list[PublishedFigure] = Field(description="Published figures on the same split and metric.")
    groups: list[Headline] = Field(description="Per kind, every group ranked for strengths and weaknesses.")
    strengths: list[Headline] = Field(description="Per kind, its best groups (up to 3), best first.")
    weaknesses: list[Headline] = Field(description="Per kind, its weakest groups (up to 3), weakest first.")
    examples: list[Example] = Field(description="Up to 3 memes it got wrong per weakness, where the run "
                                                "stored them.")
    missing: list[str] = Field(default_factory=list, description="Kinds another profiled model has and this "
                                                                 "one lacks.")


class PairedDifference(_Record):
    """Model A minus model B on the items both answered, in one kind and group."""

    kind: str
    group: str = Field(description="`overall`, or the headline group both items count in.")
    model_a: str
    model_b: str
    figure: str = Field(description="What is compared: the share of items right, as the method's part names it "
                                    "(accuracy, share not failed, head-to-head win rate).")
    n: int = Field(description="Items both models answered (scored for both).")
    memes: int = Field(description="Distinct memes among them (the bootstrap resamples these).")
    a_rate: float = Field(description="A's share right on those items.")
    b_rate: float = Field(description="B's share right on those items.")
    difference: float = Field(description="a_rate - b_rate.")
    ci95_lo: float | None = Field(description="Lower end of the paired cluster bootstrap's 95% interval.")
    ci95_hi: float | None = Field(description="Upper end; None with `note` when there is no interval.")
    a_only: int = Field(description="Items A got right and B wrong (McNemar's b).")
    b_only: int = Field(description="Items B got right and A wrong (McNemar's c).")
    mcnemar_p: float | None = Field(description="Exact McNemar p-value (two-sided binomial on b and c); None "
                                                "when no item is discordant.")
    method: str = Field(description="How the interval and p-value were made (`memegauge.profiles.paired`).")
    note: str | None = Field(default=None, description="Why there is no interval, or None.")
    unlike: int = Field(default=0, description="Items with the same key in both runs but other content (another "
                                               "copy of the data), left out: only the same item is paired.")


class Profile(_Record):
    """`memegauge profile MODEL…`: one page per model, and the paired differences between them."""

    version: str = Field(description="The MemeGauge version that built the profile.")
    date: str = Field(description="When it was built, ISO 8601 UTC.")
    store: str = Field(description="The store it read.")
    models: list[ModelProfile]
    paired: list[PairedDifference] = Field(description="Every pair of models, on the items both answered.")
    notes: list[str] = Field(default_factory=list, description="Stored runs of these models not shown, and why "
                                                               "(a run stopped before its results, a method not "
                                                               "installed).")

    def to_pandas(self, table: str | None = None) -> Any:
        """The figures as DataFrames: `headline`, `groups`, `published`, `paired`, `runs`, `examples` (one, or
        all of them in a dict when `table` is None)."""
        try:
            import pandas
        except ImportError:
            from memegauge.extras import install_hint
            from memegauge.types import InputError

            raise InputError("to_pandas needs pandas", "Profile.to_pandas", install_hint("pandas")) from None
        found = {name: pandas.DataFrame(rows, columns=columns) for name, (columns, rows) in tables(self).items()}
        return found if table is None else found[table]


# ---- flat tables (`Profile.to_pandas`) --------------------------------------------------------------------------

def kinds_by_run(profile: Profile) -> dict[tuple[str, str], str]:
    return {(p.model, r.run): r.kind for p in profile.models for r in p.runs}


def tables(profile: Profile) -> dict[str, tuple[list[str], list[dict[str, Any]]]]:
    """{name: (columns, rows)}: `headline`, `groups`, `strengths`, `weaknesses` (Headline rows with `kind`),
    `published`, `paired`, `runs` and `examples`."""
    kinds = kinds_by_run(profile)
    out: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    head_columns = ["kind", *Headline.model_fields]
    for name in ("headline", "groups", "strengths", "weaknesses"):
        out[name] = (head_columns, [{"kind": kinds[(p.model, r.run)], **r.model_dump()}
                                    for p in profile.models for r in getattr(p, name)])
    out["published"] = (list(PublishedFigure.model_fields),
                        [dict(x) for x in {json.dumps(f.model_dump(), sort_keys=True): f.model_dump()
                                           for p in profile.models for f in p.published}.values()])
    out["paired"] = (list(PairedDifference.model_fields), [d.model_dump() for d in profile.paired])
    run_columns = ["model", *RunUsed.model_fields]
    out["runs"] = (run_columns, [{"model": p.model, **{k: (json.dumps(v) if isinstance(v, (dict, list)) else v)
                                                      for k, v in r.model_dump().items()}}
                                 for p in profile.models for r in p.runs])
    example_columns = ["model", "kind", "run", "group", "meme", "text", "answer", "expected"]
    out["examples"] = (example_columns, [{"model": p.model, **e.model_dump(exclude={"picture"})}
                                         for p in profile.models for e in p.examples])
    return out
