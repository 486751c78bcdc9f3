"""Gather one model's stored runs into its profile, reading only the store: each run's report and headline rows
(so every figure is the run's own report's), and its method's profile part (`memegauge.profiles.part`) for the
kind, the items and the published figures."""

from __future__ import annotations

import datetime as dt
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
from memegauge.profiles.records import (Endpoint, Example, ModelProfile, Outcome, PairedDifference, Profile,
                                       RunUsed)
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
    """One stored run that evaluated a model, with what the profile reads of it."""

    name: str
    created: float
    run_id: int
    report: dict[str, Any]
    part: ProfilePart
    kind: str
    rows: list[Headline]
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)

    def outcomes_of(self, store: Store, model: str) -> list[Outcome]:
        if model not in self.outcomes:
            self.outcomes[model] = list(self.part.outcomes(store, self.report, model))
        return self.outcomes[model]


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
                                     kind, [r for r in rows if r.model == model]))
    return found


def newest(runs: list[_Run]) -> tuple[dict[str, _Run], dict[str, list[str]]]:
    """({kind: its newest done run, or its newest run when none is done}, {kind: the other runs' names})."""
    chosen: dict[str, _Run] = {}
    older: dict[str, list[str]] = {}
    for run in sorted(runs, key=lambda r: (r.report["run"]["status"] == "done", r.created, r.run_id)):
        if run.kind in chosen:
            older.setdefault(run.kind, []).append(chosen[run.kind].name)
        chosen[run.kind] = run
    return chosen, older


def _seconds(store: Store, run_id: int) -> float:
    row = store.db.execute("SELECT COALESCE(SUM(ended - started), 0) FROM executions"
                           " WHERE run_id=? AND ended IS NOT NULL",
                           (run_id,)).fetchone()
    return round(float(row[0] or 0.0), 3)


def _run_used(store: Store, run: _Run, older: list[str]) -> RunUsed:
    h = run.report["run"]
    return RunUsed(kind=run.kind, method=h["method"], run=h["name"], date=iso_date(h.get("created")),
                   status=h["status"],
                   config_hash=h["config_hash"], package_version=h.get("package_version"), calls=h["calls"],
                   calls_made=h["calls_made"], failed_calls=h["failed_calls"], tokens=h["tokens"],
                   cost=float(h["cost"]), seconds=_seconds(store, run.run_id), sources=run.part.sources(run.report),
                   older=older, radar=run.part.radar)


def ranked(rows: list[Headline]) -> list[Headline]:
    """Best first (None last); ties by group name, so the order never depends on the store's."""
    return sorted(rows, key=lambda r: (r.value is None, -(r.value or 0.0) if r.higher_is_better else (r.value or 0.0),
                                       r.group))


def _strengths_weaknesses(groups: list[Headline]) -> tuple[list[Headline], list[Headline]]:
    """Up to TOP best and TOP weakest groups, never one group in both (a kind with one group has neither)."""
    scored = [r for r in ranked(groups) if r.value is not None]
    half = min(TOP, len(scored) // 2)
    return scored[:half], list(reversed(scored[len(scored) - half:])) if half else []


def _examples(store: Store, run: _Run, model: str, weaknesses: list[Headline]) -> list[Example]:
    from memegauge.report.blocks import run_images

    outcomes = run.outcomes_of(store, model)
    if not outcomes:
        return []
    pictures = run_images(store, {"name": run.name}) or {}
    out = []
    for weak in weaknesses:
        wrong = [o for o in outcomes if o.correct is False and weak.group in o.groups]
        out += [Example(kind=run.kind, run=run.name, group=weak.group, meme=o.meme, picture=pictures.get(o.meme),
                        text=o.text, answer=o.answer, expected=o.expected) for o in wrong[:TOP]]
    return out


def _endpoint(registry: Any, model: str) -> Endpoint | None:
    if registry is None:
        return None
    try:
        spec = registry.get(model)
    except MemeGaugeError:
        return None
    return Endpoint(backend=spec.backend, model=spec.model, base_url=list(spec.base_url))


def model_profile(store: Store, model: str, runs: list[_Run],
                  registry: Any = None) -> tuple[ModelProfile, dict[str, _Run]]:
    chosen, older = newest(runs)
    headline, groups, strengths, weaknesses, examples, published = [], [], [], [], [], []
    for run in chosen.values():
        headline += run.part.headline(run.rows)
        mine = run.part.groups(run.rows)
        groups += ranked(mine)
        best, worst = _strengths_weaknesses(mine)
        strengths += best
        weaknesses += worst
        examples += _examples(store, run, model, worst)
        published += run.part.published(run.report)
    used = [_run_used(store, run, older.get(kind, [])) for kind, run in chosen.items()]
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
        common = [k for k in mine if k in theirs]
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
            out.append(PairedDifference(kind=kind, group=group, model_a=a, model_b=b,
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


def build_profile(store: Store, models: list[str], registry: Any = None) -> Profile:
    """The profile of `models` (one or more) from the runs in `store`."""
    models = list(dict.fromkeys(models))
    if not models:
        raise InputError("no model to profile", where="memegauge profile", fix="name one or more models")
    notes: list[str] = []
    found = stored_runs(store, models, notes)
    pages, chosen = [], {}
    for model in models:
        page, chosen[model] = model_profile(store, model, found[model], registry)
        pages.append(page)
    every = set().union(*(set(c) for c in chosen.values()))
    for page in pages:
        page.missing = sorted(every - set(chosen[page.model]))
    paired = [d for a, b in itertools.combinations(models, 2)
              for d in paired_differences(store, a, b, chosen[a], chosen[b])]
    return Profile(version=__version__, date=iso_date(dt.datetime.now(dt.UTC).timestamp()), store=str(Path(store.path)),
                   models=pages, paired=paired, notes=notes)
