"""Gather one model's stored runs into its profile, reading only the store: each run's report and headline rows
(so every figure is the run's own report's), and its method's profile part (`memegauge.profiles.part`) for the
kind, the items and the published figures."""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memegauge._version import __version__
from memegauge.engine.store import Store
from memegauge.methods import method
from memegauge.profiles.paired import paired as paired_difference
from memegauge.profiles.part import ProfilePart, part_of
from memegauge.profiles.records import (MISSED, Endpoint, Example, ModelProfile, NotShown, Outcome,
                                        PairedDifference, Profile, RunUsed)
from memegauge.report import build_report
from memegauge.report.headline import Headline, headline_rows, iso_date
from memegauge.types import InputError, MemeGaugeError

TOP = 3  # strengths, weaknesses and examples per weakness


def _generic(method_name: str) -> ProfilePart:
    """A method without a profile part: one kind per method, its headline rows only."""
    found = method(method_name)
    title = found.title if found else method_name
    return ProfilePart(kind=lambda report: title)


@dataclass
class _Run:
    """One stored run that evaluated a model, with what the profile reads of it (for that model)."""

    name: str
    created: float
    run_id: int
    report: dict[str, Any]
    part: ProfilePart
    kind: str
    rows: list[Headline]
    model: str = ""
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)
    _items: dict[str, str] | None = None

    def outcomes_of(self, store: Store, model: str) -> list[Outcome]:
        if model not in self.outcomes:
            self.outcomes[model] = list(self.part.outcomes(store, self.report, model))
        return self.outcomes[model]

    @property
    def status(self) -> str:
        return str(self.report["run"]["status"])

    @property
    def sample(self) -> str | None:
        return self.part.sample(self.report)

    @property
    def basis(self) -> tuple[str, str]:
        """What besides the items makes two runs ask alike: the method version and the custom prompts."""
        header = self.report["run"]
        return (str(header.get("method_version") or "–"),
                json.dumps(header.get("prompts") or "shipped prompts", sort_keys=True))

    def items(self, store: Store) -> dict[str, str]:
        """{item key: its content hash} of the data-set items the model was asked (none for a part without)."""
        if self._items is None:
            self._items = {o.key: o.content for o in self.outcomes_of(store, self.model) if o.content is not None}
        return self._items

    def fingerprint(self, store: Store) -> str:
        """`RunUsed.data_fingerprint`: its items (or, without items, its data sources) and its basis, hashed."""
        items = self.items(store)
        what = sorted(items.items()) if items else self.part.sources(self.report)
        return hashlib.sha256(json.dumps([self.basis, what], sort_keys=True, default=str).encode()).hexdigest()[:16]


def _targets(summary: dict[str, Any]) -> set[str]:
    """The models a run evaluated, from its stored roles or its method's `models` hook (no report built)."""
    roles = json.loads(summary["roles_json"]) if summary.get("roles_json") else None
    if roles is None:
        found = method(summary["method"])
        config = json.loads(summary["config_json"])
        roles = found.models(config) if found and found.models else {}
    return set(roles.get("targets", [])) | set(roles.get("model", []))


def stored_runs(store: Store, models: list[str], notes: list[str] | None = None) -> dict[str, list[_Run]]:
    """model → every run that evaluated it and its method profiles (oldest first); a run that names one of the
    models but cannot be reported is said in `notes`, never dropped silently."""
    wanted = set(models)
    found: dict[str, list[_Run]] = {m: [] for m in models}
    for summary in store.list_runs():
        named = _targets(summary)
        if named and not (named & wanted):
            continue
        try:
            report = build_report(store, summary["name"])
        except MemeGaugeError as exc:  # a method not installed, a run stopped before its results
            if named and notes is not None:
                notes.append(f"run {summary['name']} ({summary['method']}, {summary['status']}) not shown: {exc}")
            continue
        part = part_of(summary["method"]) or _generic(summary["method"])
        kind = part.kind(report)
        rows = headline_rows(report) if kind is not None else []
        if not {r.model for r in rows} & wanted:
            if named & wanted and summary["status"] != "done" and notes is not None:
                notes.append(f"run {summary['name']} ({summary['method']}, {summary['status']}) not shown: it has "
                             "no figures yet (rerun its command to finish it)")
            continue
        for model in {r.model for r in rows} & wanted:
            found[model].append(_Run(summary["name"], float(summary["created"]), int(summary["id"]), report, part,
                                     kind, [r for r in rows if r.model == model], model))
    return found


def same_items(store: Store, x: _Run, y: _Run) -> bool:
    """Whether two runs asked the same items the same way: one run; or the same method version and prompts and,
    of the items the smaller asked, every one asked by the larger with the same content (a cut-down run of the
    same data set); runs whose part lists no items, the same data sources."""
    if x.name == y.name:
        return True
    if x.basis != y.basis:
        return False
    ix, iy = x.items(store), y.items(store)
    if not ix and not iy:
        return x.part.sources(x.report) == y.part.sources(y.report)
    small, large = sorted((ix, iy), key=len)
    return bool(small) and all(large.get(key) == content for key, content in small.items())


@dataclass
class Choice:
    """The run shown for one model and measurement, why, and why each other run of that measurement is not."""

    run: _Run
    kind: str
    sample: str | None
    why: str
    others: list[NotShown]


def _merit(store: Store, run: _Run) -> tuple[Any, ...]:
    """A model's best run among those that asked alike: full before cut down, done before not, more items, newer."""
    return run.sample is None, run.status == "done", len(run.items(store)), run.created, run.run_id


def _why_not(store: Store, run: _Run, shown: _Run, reference: _Run) -> str:
    if not same_items(store, run, reference):
        if run.basis != reference.basis:
            return (f"made another way (method version {run.basis[0]}, {run.basis[1]}) than the runs shown "
                    f"({reference.basis[0]}, {reference.basis[1]})")
        return (f"asked other items (data fingerprint {run.fingerprint(store)}) than the runs shown "
                f"({reference.fingerprint(store)}): another copy or version of the data, not comparable")
    if run.sample is not None and shown.sample is None:
        return f"cut down ({run.sample}) while a full run exists"
    if run.status != "done" and shown.status == "done":
        return f"not done ({run.status}) while a done run exists"
    if len(run.items(store)) < len(shown.items(store)):
        return f"asked fewer items ({len(run.items(store))} of {len(shown.items(store))})"
    return "older"


def choose(store: Store, found: dict[str, list[_Run]]) -> dict[str, dict[str, Choice]]:
    """model → {kind: the run shown}. Per measurement (a part's kind), the reference is the run that asked what
    most of the profiled models' runs asked (full runs first, then done, more items, newer), so that the models
    are compared on the same items; each model shows its best run that asked alike (a cut-down run only when it
    has no full one). A model with no such run shows its best run apart, as the kind `… · other items (FP)`."""
    out: dict[str, dict[str, Choice]] = {m: {} for m in found}
    labels = dict.fromkeys(r.kind for runs in found.values() for r in runs)
    for label in labels:
        mine = {m: [r for r in runs if r.kind == label] for m, runs in found.items()}
        every = [r for runs in mine.values() for r in runs]

        def support(run: _Run, mine: dict[str, list[_Run]] = mine) -> int:
            return sum(any(same_items(store, run, r) for r in runs) for runs in mine.values())

        reference = max(every, key=lambda r: (r.sample is None, support(r), *_merit(store, r)[1:]))
        for model, runs in mine.items():
            if not runs:
                continue
            alike = [r for r in runs if same_items(store, r, reference)]
            shown = max(alike or runs, key=lambda r: _merit(store, r))
            kind = label if alike else f"{label} · other items ({shown.fingerprint(store)})"
            sample = shown.sample
            n, full = len(shown.items(store)), len(reference.items(store))
            if sample is None and alike and n < full:
                sample = f"{n} of the {full} items the other runs asked"
            why = ["a full run" if sample is None else f"cut down ({sample}): no full run of these items",
                   shown.status]
            others = support(shown) - 1
            if others > 0:
                why.append(f"asked the same items as the runs shown for {others} other model(s)")
            elif not alike:
                why.append("no run of this model asked the items the other models' runs asked")
            if len(runs) > 1:
                why.append("the newest such run")
            basis = reference if alike else shown
            rest = [NotShown(run=r.name, status=r.status, reason=_why_not(store, r, shown, basis))
                    for r in sorted(runs, key=lambda r: (r.created, r.run_id), reverse=True) if r is not shown]
            out[model][kind] = Choice(shown, kind, sample, "; ".join(why), rest)
    return out


def _seconds(store: Store, run_id: int) -> float:
    row = store.db.execute("SELECT COALESCE(SUM(ended - started), 0) FROM executions"
                           " WHERE run_id=? AND ended IS NOT NULL",
                           (run_id,)).fetchone()
    return round(float(row[0] or 0.0), 3)


def _run_used(store: Store, choice: Choice) -> RunUsed:
    run = choice.run
    h = run.report["run"]
    return RunUsed(kind=choice.kind, method=h["method"], run=h["name"], date=iso_date(h.get("created")),
                   status=h["status"],
                   config_hash=h["config_hash"], package_version=h.get("package_version"), calls=h["calls"],
                   calls_made=h["calls_made"], failed_calls=h["failed_calls"], tokens=h["tokens"],
                   cost=float(h["cost"]), seconds=_seconds(store, run.run_id), sources=run.part.sources(run.report),
                   sample=choice.sample, data_fingerprint=run.fingerprint(store),
                   items=len(run.items(store)) or None, chosen=choice.why, others=choice.others, radar=run.part.radar)


def ranked(rows: list[Headline]) -> list[Headline]:
    """Best first (None last); ties by group name, so the order never depends on the store's."""
    return sorted(rows, key=lambda r: (r.value is None, -(r.value or 0.0) if r.higher_is_better else (r.value or 0.0),
                                       r.group))


WRONG = "got wrong"  # `Example.group` of a wrong item shown where no group is a clear weakness
MIN_N = 10  # a group with fewer scored items is ranked but never named a strength or a weakness
RULE = (f"A strength is a group of at least {MIN_N} scored items whose 95% interval lies wholly on the better side "
        "of the model's overall figure for that measurement; a weakness, wholly on the worse side. Groups are "
        "ranked by their figure, shown with its interval and n; up to 3 of each, best (weakest) first. A group "
        "whose interval reaches the overall figure is neither.")


def _reference(group: Headline, lead: list[Headline]) -> Headline | None:
    """The overall figure a group is held against: its task's (`task: field=value` → `overall (task)`), else the
    pooled (`overall (micro)`), else the measurement's first overall row, of the group's figure."""
    same = [r for r in lead if r.figure == group.figure and r.value is not None]
    task = group.group.split(": ", 1)[0] if ": " in group.group else None
    for name in ([f"overall ({task})"] if task else []) + ["overall (micro)", "overall"]:
        found = [r for r in same if r.group == name]
        if found:
            return found[0]
    return same[0] if same else None


def strengths_weaknesses(groups: list[Headline], lead: list[Headline]) -> tuple[list[Headline], list[Headline]]:
    """Up to TOP strengths and TOP weaknesses by `RULE`: n ≥ MIN_N, an interval, wholly above (below) the overall."""
    best, worst = [], []
    for r in ranked(groups):
        ref = _reference(r, lead)
        if r.value is None or r.ci95_lo is None or r.ci95_hi is None or r.n < MIN_N or ref is None:
            continue
        above, below = r.ci95_lo > ref.value, r.ci95_hi < ref.value
        better, worse = (above, below) if r.higher_is_better else (below, above)
        if better:
            best.append(r)
        elif worse:
            worst.append(r)
    return best[:TOP], list(reversed(worst))[:TOP]


def _distinct(wrong: list[Outcome]) -> list[Outcome]:
    """Up to TOP of the wrong outcomes, one per meme (two or three memes, never one meme three times), the clear
    misses before those the part names otherwise (ties), each in the run's order."""
    out: dict[str, Outcome] = {}
    for o in sorted(wrong, key=lambda o: o.miss != MISSED):  # stable: the run's order within each
        out.setdefault(o.meme, o)
    return list(out.values())[:TOP]


def _examples(store: Store, run: _Run, kind: str, model: str, weaknesses: list[Headline],
              lead: list[Headline]) -> list[Example]:
    from memegauge.report.blocks import run_images

    outcomes = run.outcomes_of(store, model)
    if not outcomes:
        return []
    pictures = run_images(store, {"name": run.name}) or {}

    def example(o: Outcome, group: str) -> Example:
        return Example(kind=kind, run=run.name, group=group, meme=o.meme, picture=pictures.get(o.meme), text=o.text,
                       answer=o.answer, expected=o.expected, verdict=o.miss)

    out = []
    for weak in weaknesses:
        out += [example(o, weak.group) for o in _distinct([o for o in outcomes
                                                           if o.correct is False and weak.group in o.groups])]
    if not weaknesses:  # no clear weakness: still the first memes it got wrong, named as such (no claim of a group)
        # an item of the headline: one counted overall, or in a headline group (a benchmark's `overall (TASK)`)
        headline = {r.group for r in lead}
        wrong = [o for o in outcomes if o.correct is False and (o.overall or headline & set(o.groups))]
        out += [example(o, WRONG) for o in _distinct(wrong)]
    return out


def _endpoint(registry: Any, model: str) -> Endpoint | None:
    if registry is None:
        return None
    try:
        spec = registry.get(model)
    except MemeGaugeError:
        return None
    return Endpoint(backend=spec.backend, model=spec.model, base_url=list(spec.base_url))


def model_profile(store: Store, model: str, choices: dict[str, Choice],
                  registry: Any = None) -> tuple[ModelProfile, dict[str, _Run]]:
    chosen = {kind: c.run for kind, c in choices.items()}
    headline, groups, strengths, weaknesses, examples, published = [], [], [], [], [], []
    for kind, run in chosen.items():
        lead = run.part.headline(run.rows)
        headline += lead
        mine = run.part.groups(run.rows)
        groups += ranked(mine)
        best, worst = strengths_weaknesses(mine, lead)
        strengths += best
        weaknesses += worst
        examples += _examples(store, run, kind, model, worst, lead)
        published += run.part.published(run.report)
    used = [_run_used(store, c) for c in choices.values()]
    return ModelProfile(model=model, endpoint=_endpoint(registry, model), runs=used, headline=headline,
                        published=published, groups=groups, strengths=strengths, weaknesses=weaknesses,
                        examples=examples), chosen


def paired_differences(store: Store, a: str, b: str, runs_a: dict[str, _Run], runs_b: dict[str, _Run]
                       ) -> list[PairedDifference]:
    """A − B on the items both answered, per kind both have: overall (the items that count in it) and per group."""
    out = []
    for kind in [k for k in runs_a if k in runs_b]:
        mine = {o.key: o for o in runs_a[kind].outcomes_of(store, a) if o.correct is not None}
        theirs = {o.key: o for o in runs_b[kind].outcomes_of(store, b) if o.correct is not None}
        one_run = runs_a[kind].name == runs_b[kind].name
        # the same item: the same key and the same content (an item of one run alone is paired only within it)
        common = [k for k in mine if k in theirs and mine[k].content == theirs[k].content
                  and (mine[k].content is not None or one_run)]
        unlike = sum(1 for k in mine if k in theirs) - len(common)
        if not common:
            continue
        groups = ["overall", *dict.fromkeys(g for k in common for g in mine[k].groups if g in theirs[k].groups)]
        for group in groups:
            keys = [k for k in common if (mine[k].overall and theirs[k].overall if group == "overall"
                                          else group in mine[k].groups and group in theirs[k].groups)]
            if not keys:
                continue
            found = paired_difference([mine[k].correct for k in keys], [theirs[k].correct for k in keys],
                                 [mine[k].meme for k in keys])
            ci = found.pop("ci95")
            out.append(PairedDifference(kind=kind, group=group, model_a=a, model_b=b, unlike=unlike,
                                        figure=runs_a[kind].part.paired_figure,
                                        ci95_lo=ci[0] if ci else None, ci95_hi=ci[1] if ci else None, **found))
    return out


def evaluated_models(store: Store) -> list[str]:
    """Every model some stored run evaluated (its headline rows name it), in first-run order."""
    found: dict[str, None] = {}
    for run in store.list_runs():
        try:
            found |= dict.fromkeys(r.model for r in headline_rows(build_report(store, run["name"])))
        except MemeGaugeError:
            continue
    return list(found)


def build_profile(store: Store, models: list[str], registry: Any = None, named: bool = True) -> Profile:
    """The profile of `models` (one or more) from the runs in `store`. A named model that no stored run evaluated
    is an InputError; `named=False` (every model the store evaluated, as the site and `memegauge view` list them)
    leaves such a model out instead (a run with headline rows that measures nothing, e.g. a build)."""
    models = list(dict.fromkeys(models))
    if not models:
        raise InputError("no model to profile", where="memegauge profile", fix="name one or more models")
    notes: list[str] = []
    found = stored_runs(store, models, notes)
    choices = choose(store, found)
    pages, chosen = [], {}
    for model in models:
        page, chosen[model] = model_profile(store, model, choices[model], registry)
        pages.append(page)
    unmeasured = [page.model for page in pages if not page.runs]
    if unmeasured and not named:
        pages = [page for page in pages if page.runs]
    elif unmeasured:
        raise InputError(f"no stored run evaluated {', '.join(unmeasured)}", where=str(Path(store.path)),
                         fix="check the name as its runs spell it (memegauge runs), or run what is missing first: "
                             f"memegauge --models models.yaml profile {' '.join(unmeasured)} --run-missing "
                             "--with METHOD=CONFIG.yaml (docs/profile.md)")
    every = set().union(*(set(c) for c in chosen.values()))
    for page in pages:
        page.missing = sorted(every - set(chosen[page.model]))
    paired = [d for a, b in itertools.combinations([p.model for p in pages], 2)
              for d in paired_differences(store, a, b, chosen[a], chosen[b])]
    return Profile(version=__version__, date=iso_date(dt.datetime.now(dt.UTC).timestamp()), store=str(Path(store.path)),
                   models=pages, paired=paired, notes=notes)
