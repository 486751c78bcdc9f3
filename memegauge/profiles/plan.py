"""`memegauge profile --run-missing`: the runs a profile lacks, planned from the user's base configs (`--with
METHOD=FILE`) and every installed field benchmark (each part's `auto`), shown before anything is sent (`--dry-run`:
each run's planned calls and cost bound, `memegauge.engine.estimate`), then made one by one through the one run
path (`memegauge.run_path.run_checked`). Each planned run has a name fixed by its method and config (the method's
default run name; `memegauge.methods.default_run_name` for the benchmarks), so a profile stopped by `--budget` or
Ctrl-C resumes where it stopped: the rerun reopens the same runs and the engine's cache answers every question
already answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memegauge.methods import Method, default_run_name, method, methods
from memegauge.profiles.part import ProfilePart, part_of
from memegauge.types import InputError, MemeGaugeError


@dataclass
class PlannedRun:
    """One run the profile would make (or reuse)."""

    method: str
    name: str
    models: list[str]  # the profiled models it measures
    config: Any  # the validated config
    checked: Any = None  # the method's checked inputs (None when skipped)
    calls: list[Any] = field(default_factory=list)  # PlannedCalls
    state: str = "to run"  # to run | resume (its stored status) | skipped: why


def _stored_cover(found: dict[str, list[Any]], model: str, name: str, part: ProfilePart,
                  planned: dict[str, Any]) -> str | None:
    """The name of a done stored run of `model` by method `name` that already measures what `planned` would."""
    for run in found.get(model, []):
        header = run.report["run"]
        if header["method"] == name and header["status"] == "done" and part.covers(header.get("config") or {}, planned):
            return header["name"]
    return None


def _base(described: Method, source: Path) -> dict[str, Any]:
    if described.config is None:
        raise InputError(f"method {described.name!r} has no runs to plan", where="--with", fix="name another method")
    return described.config(source).model_dump(mode="python")  # validated, its paths resolved from the file


def parse_with(items: list[str]) -> list[tuple[Method, ProfilePart, Path]]:
    """`--with METHOD=FILE` items: the method, its profile part and the base config file."""
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        described = method(name.strip()) if sep else None
        part = part_of(name.strip()) if described else None
        if not sep or described is None:
            known = ", ".join(m.name for m in methods() if (p := part_of(m.name)) and p.configs and not p.auto)
            raise InputError(f"--with {item!r} names no method", where="--with",
                             fix=f"write --with METHOD=CONFIG.yaml with METHOD one of: {known}")
        if part is None or part.configs is None:
            raise InputError(f"the profile cannot plan runs of {name!r}", where="--with",
                             fix="run it with its own command; the profile then reads its runs")
        out.append((described, part, Path(path)))
    return out


def plan(found: dict[str, list[Any]], models: list[str], with_: list[str], registry: Any,
         bench_data: Path | None = None) -> tuple[list[PlannedRun], list[str]]:
    """(the planned runs, notes on what is not planned and why). `found`: `gather.stored_runs` of the models."""
    bases: list[tuple[Method, ProfilePart, dict[str, Any]]] = [(d, p, _base(d, f)) for d, p, f in parse_with(with_)]
    notes = []
    asked = {d.name for d, _, _ in bases}
    for described in methods():
        part = part_of(described.name)
        if described.name in asked or part is None or part.configs is None:
            continue
        if part.auto is None:
            notes.append(f"{described.title}: not planned (give --with {described.name}=CONFIG.yaml)")
            continue
        try:
            base = part.auto(bench_data)
        except InputError as exc:  # no data for it: said, not a failure
            notes.append(f"{described.title}: not planned — {exc}")
            continue
        if base is not None:
            bases.append((described, part, base))
    runs: list[PlannedRun] = []
    for described, part, base in bases:
        covered = {m: [_stored_cover(found, m, described.name, part, c) for c, _ in part.configs(dict(base), [m])]
                   for m in models}
        missing = [m for m in models if not all(covered[m])]
        notes += [f"{described.title} for {m}: stored run(s) {', '.join(c for c in covered[m] if c)} kept"
                  for m in models if any(covered[m])]
        if not missing:
            continue
        for planned, who in part.configs(dict(base), missing):
            if all(_stored_cover(found, m, described.name, part, planned) for m in who):
                continue  # one MemeQA version already stored for this model, the other not
            try:
                config = described.config(planned)
                checked = described.check(config, registry)
            except InputError as exc:  # a benchmark whose data is not installed: said, not a failure
                notes.append(f"{described.title}: not planned — {exc}")
                break
            # the name the method's own command gives this run (so either command resumes it), else the shared one
            if part.name is not None:
                name = part.name(config, checked)
            elif hasattr(config, "default_name"):
                name = config.default_name()
            else:
                name = default_run_name(described.name, who, "profile", config.model_dump(mode="json"))
            run = PlannedRun(described.name, name, who, config, checked)
            if part.plan is not None:
                run.calls = list(part.plan(config, checked, name))
            runs.append(run)
    return runs, notes


def mark_stored(runs: list[PlannedRun], store: Any) -> None:
    """A planned run already in the store is resumed (its status said); a done one is kept as it is."""
    if store is None:
        return
    for run in runs:
        try:
            status = store.run_summary(run.name)["status"]
        except MemeGaugeError:
            continue
        run.state = "done (kept)" if status == "done" else f"resume ({status})"


async def execute(runs: list[PlannedRun], store_factory: Any, registry: Any, progress: bool | None,
                  preflight: bool = True) -> list[Any]:
    """Make each planned run (done ones are left as they are) through the one run path."""
    from memegauge.run_path import run_checked

    results = []
    for run in runs:
        if run.state.startswith("done"):
            continue
        described = method(run.method)
        results += await run_checked(described, [(run.config, run.name)], store=store_factory, registry=registry,
                                     progress=progress, preflight=preflight)
    return results
