"""The benchmark kit's profile part, for every registered benchmark (`memegauge.profiles.part.ProfileFamily`): a
run's kind is its benchmark and split (its `sample` says when it asked a subset); its headline is each task's
accuracy and every metric the benchmark publishes figures on for that task (MAMI's macro-F1), so each published
figure sits beside ours on its own metric; the groups ranked for strengths and weaknesses are the tasks' group
values (language, source, subtype); its items are its answers (each with its content hash); the published figures
are the benchmark YAML's `published` ones on the run's split, matched by task and metric (the report itself
already keeps only the run's split)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.profiles.part import ProfileFamily, ProfilePart
from memegauge.profiles.records import Outcome, PublishedFigure, content_hash
from memegauge.report.headline import Headline

MAIN = "accuracy"


def kind(report: dict[str, Any]) -> str | None:
    if not report.get("tasks"):
        return None
    return f"{report['title']} · {report['split']}"


def sample(report: dict[str, Any]) -> str | None:
    """The run's cut: its first N items (`limit`) and some of the tasks; None for a full run."""
    config = report["run"].get("config") or {}
    found = [f"first {config['limit']} items"] if config.get("limit") else []
    found += [f"tasks: {', '.join(config['tasks'])}"] if config.get("tasks") else []
    return "; ".join(found) or None


def headline_metrics(spec: Any) -> dict[str, set[str]]:
    """Task → the figures of its headline: accuracy, and every metric the benchmark publishes figures on for that task
    (on any split: MAMI's macro-F1 and type-weighted F1, its organisers' scores), so a published figure always has
    our own figure on the same split beside it, on the same line."""
    out: dict[str, set[str]] = {name: {MAIN} for name in spec.tasks}
    for p in spec.published:
        out.setdefault(p.task, {MAIN}).add(p.metric)
    return out


def headline_for(spec: Any) -> Any:
    metrics = headline_metrics(spec)

    def headline(rows: list[Headline]) -> list[Headline]:
        """Each task's accuracy and the metrics its papers publish, overall."""
        return [r for r in rows if r.group.startswith("overall (")
                and r.figure in metrics.get(r.group[len("overall ("):-1], {MAIN})]

    return headline


def groups(rows: list[Headline]) -> list[Headline]:
    return [r for r in rows if not r.group.startswith("overall") and r.figure == MAIN]


def outcomes(store: Any, report: dict[str, Any], model: str) -> list[Outcome]:
    from memegauge.benchmarks.kit.report import exports

    if str(report.get("model")) != model:
        return []
    run = {**report["run"], "id": store.run_row(report["run"]["name"])["id"]}
    out = []
    for a in exports()["answers"].rows(store, run):  # the kit's own item table, with its `correct`
        gold = ", ".join(a["gold"]) if isinstance(a["gold"], list) else a["gold"]
        out.append(Outcome(key=f"{a['task']}|{a['item']}", meme=str(a["item"]), correct=a["correct"], overall=False,
                           groups=[f"overall ({a['task']})",
                                   *(f"{a['task']}: {field}={value}" for field, value in a["groups"].items())],
                           text=a["prompt"], answer=a["answer"] if a["ok"] else None, expected=gold,
                           content=content_hash(a["task"], a["item"], a["prompt"], a["gold"])))
    return out


def published(report: dict[str, Any]) -> list[PublishedFigure]:
    kind_ = kind(report) or ""
    return [PublishedFigure(kind=kind_, group=f"overall ({name})", metric=p["metric"], system=p["system"],
                            value=p["value"], split=p["split"], source=p["source"], n=p.get("n"))
            for name, task in report["tasks"].items() for p in task.get("published", [])
            if p["split"] == report["split"]]


def sources(report: dict[str, Any]) -> dict[str, str]:
    from memegauge.benchmarks.kit.family import benchmark_spec

    config = report["run"].get("config") or {}
    out = {"split": str(report["split"]), "items": str(report.get("items"))}
    if config.get("data"):
        out["data"] = str(config["data"])
    spec = benchmark_spec(report["benchmark"])
    if spec is not None:
        out["catalogue entry"] = spec.data
        try:
            from memegauge.data.catalogue import entry

            found = entry(spec.data)
            out["pinned sources"] = "; ".join(s.where() for s in found.sources)
            manifest = found.manifest()
            if manifest:
                out["manifest files (sha256 pinned)"] = str(sum(len(files) for files in manifest.values()))
        except Exception as exc:  # noqa: BLE001 (a catalogue without the entry: say so, the profile goes on)
            out["pinned sources"] = f"not in the data catalogue ({type(exc).__name__})"
    return out


def configs(base: dict[str, Any], models: list[str]) -> list[tuple[dict[str, Any], list[str]]]:
    return [({**base, "model": m}, [m]) for m in models]


def covers(stored: dict[str, Any], planned: dict[str, Any]) -> bool:
    return stored.get("split") == (planned.get("split") or stored.get("split")) and not stored.get("limit")


def plan(config: Any, checked: Any, name: str) -> list[Any]:
    """One call per (task, item with a gold answer), exactly (the kit's run asks each once)."""
    from memegauge.benchmarks.kit.run import prompt
    from memegauge.engine.estimate import PlannedCalls

    inputs = checked.inputs
    out = []
    for task_name, task in inputs.tasks.items():
        asked = [item for item in inputs.items if item.gold[task_name] is not None]
        if not asked:
            continue
        words = sum(len(prompt(task, item).split()) for item in asked) / len(asked)
        out.append(PlannedCalls(stage=f"{inputs.spec.name}.{task_name}", model=config.model, calls=len(asked),
                                max_tokens=task.max_tokens, prompt_words=words,
                                images=int(any(item.image for item in asked)), note="items × 1"))
    return out


def part_for(name: str) -> ProfilePart | None:
    from memegauge.benchmarks.kit.family import benchmark_spec

    spec = benchmark_spec(name)
    if spec is None:
        return None

    def auto(data: Path | None) -> dict[str, Any]:
        """Every installed benchmark: its folder under `--bench-data DIR` when there is one, else the catalogue's;
        with neither, an InputError naming the folder given (and the catalogue's fix)."""
        if data is not None and (data / name).is_dir():
            return {"data": data / name}
        if data is not None:
            from memegauge.benchmarks.kit.family import benchmark_spec
            from memegauge.benchmarks.kit.items import data_folder
            from memegauge.types import InputError

            spec = benchmark_spec(name)
            try:
                data_folder(spec, None)  # the catalogue's copy, installed and checked
            except InputError as exc:
                raise InputError(f"no folder {name!r} in --bench-data {data}, and the data catalogue has no copy",
                                 str(data / name), f"put {spec.title}'s release (as released) in {data / name}, "
                                                   f"or {exc.fix}") from None
        return {"data": None}

    return ProfilePart(kind=kind, sample=sample, headline=headline_for(spec), groups=groups, outcomes=outcomes,
                       published=published, sources=sources, configs=configs, covers=covers, plan=plan, auto=auto,
                       name=run_name)


def run_name(config: Any, checked: Any) -> str:
    """The name `memegauge eval` gives the same run (docs/benchmarks.md): `<benchmark>-<model>-<split>`, `-n<limit>`,
    `-s<seed>` for a seed other than 0, six hex digits only when another setting (a `--data` folder) differs."""
    from memegauge.benchmarks.kit.run import run_name as kit_name

    return kit_name(checked.inputs.spec, config, checked.inputs.split)


FAMILY = ProfileFamily(part_for)
