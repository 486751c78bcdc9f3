"""MemeQA's profile part (`memegauge.profiles.part`): a run's kind is its version and split (its `sample` says
when it asked a subset); its items are its questions; the published figures are the paper's Tables 2–3, only beside
a run on the paper's split."""

from __future__ import annotations

from typing import Any

from memegauge.memeqa.benchmark import PAPER_N
from memegauge.profiles.part import ProfilePart
from memegauge.profiles.records import Outcome, PublishedFigure, content_hash
from memegauge.report.headline import Headline


def kind(report: dict[str, Any]) -> str | None:
    """Version and split (and `circular`, which asks every question in every option order): how much of it the
    run asked is its `sample`."""
    if report.get("task") not in ("eval", "score") or not report.get("intervals"):
        return None  # a build or fine-tuning run measures no model
    return f"MemeQA {report['version']} · {report['split']}" + (" · circular" if report.get("circular") else "")


def sample(report: dict[str, Any]) -> str | None:
    """The run's cut: its first N questions (`limit`) and a subset of the types; None for every question."""
    config = report["run"].get("config") or {}
    found = [f"first {config['limit']} questions (seed {config.get('seed', 0)})"] if config.get("limit") else []
    from memegauge.memeqa.dataset import QUESTION_TYPES

    every = {t.name for t in QUESTION_TYPES}
    if config.get("types") and set(config["types"]) != every:  # a stored config names all 11 when none was asked
        found += [f"types: {', '.join(config['types'])}"]
    return "; ".join(found) or None


def headline(rows: list[Headline]) -> list[Headline]:
    """Macro and micro accuracy (the paper's headline is the macro)."""
    return [r for r in rows if r.group.startswith("overall")]


def outcomes(store: Any, report: dict[str, Any], model: str) -> list[Outcome]:
    """Every question asked, as the run stored it (its record, with the meme picture's id)."""
    from memegauge.memeqa.records import QuestionRecord
    from memegauge.records import read_checked

    if str(report.get("model")) != model:
        return []
    out = []
    for r in read_checked(store, store.run_row(report["run"]["name"])["id"], QuestionRecord):
        letters = [chr(ord("A") + i) for i in range(len(r["options"]))]
        options = " ".join(f"({letter}) {o}" for letter, o in zip(letters, r["options"], strict=True))
        expected = ", ".join(f"({letters[i]}) {r['options'][i]}" for i in r["gold"] if 0 <= i < len(letters))
        out.append(Outcome(key=str(r["id"]), meme=str(r["img"]), groups=[r["type"]], correct=r["correct"],
                           text=f"{r['question']} {options}".strip(), answer=r["raw"],
                           expected=expected or r["gold_letters"],
                           content=content_hash(r["img"], r["type"], r["question"], r["options"], r["gold"])))
    return out


def published(report: dict[str, Any]) -> list[PublishedFigure]:
    """The paper's accuracies (zero-shot and fine-tuned columns, humans, random) for the run's version, when the
    run is on the paper's split; none otherwise (a figure is never set beside another split's)."""
    paper = report.get("paper") or {}
    if report.get("split") != paper.get("split") or report.get("version") not in paper.get("versions", {}):
        return []
    kind_ = kind(report) or ""
    out = []
    for row in paper["versions"][report["version"]]:
        group = "overall (macro)" if row["type"] == "macro" else row["type"]
        systems = {"human annotators": row["human"], "random guessing": row["random"]}
        for setting in ("zero-shot", "fine-tuned"):
            systems |= {f"{paper['models'].get(m, m)} ({setting})": v for m, v in row[setting].items()}
        # n=None ("n not stated"): the paper gives 9,031 questions per version split 60:20:20 by meme (§3.6), never
        # the test split's own count, nor a type's; its note says so, in `eval`'s words
        out += [PublishedFigure(kind=kind_, group=group, metric="accuracy", system=system, value=value,
                                split=paper["split"], source=paper["source"], n=None, n_note=PAPER_N)
                for system, value in systems.items() if value is not None]
    return out


def sources(report: dict[str, Any]) -> dict[str, str]:
    config = report["run"].get("config") or {}
    out = {k: str(config[k]) for k in ("data", "images", "version", "split") if config.get(k) is not None}
    return out | {"questions asked": str(len(report.get("details", [])))}


def configs(base: dict[str, Any], models: list[str]) -> list[tuple[dict[str, Any], list[str]]]:
    """Both versions for each model, on the base config's split and sample (its `limit`: a stated sample)."""
    return [({**base, "model": m, "version": v}, [m]) for m in models for v in ("none-minus", "none-plus")]


def covers(stored: dict[str, Any], planned: dict[str, Any]) -> bool:
    return all(stored.get(k) == planned.get(k) for k in ("version", "split", "limit", "circular"))


def plan(config: Any, checked: Any, name: str) -> list[Any]:
    from memegauge.memeqa.plan import plan_eval

    questions, memes = checked.inputs
    return plan_eval(questions, memes, model=config.model, version=config.version, circular=config.circular,
                     requests=True)


PART = ProfilePart(kind=kind, sample=sample, headline=headline, outcomes=outcomes, published=published, sources=sources,
                   configs=configs, covers=covers, plan=plan)
