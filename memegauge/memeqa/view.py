"""MemeQA's part of the HTML report: accuracy per type against the random baseline, None− vs None+, the
paper's tables beside the run, and the question browser's data (its script: `browser.js` beside this file)."""

from __future__ import annotations

import json
from typing import Any

from memegauge.engine.store import Store
from memegauge.report import build_report, plots
from memegauge.report.blocks import (Block, count, data_blocks, diff, interval_cell, pct, plot_block, run_images,
                                     table, text)


def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    if report.get("task") in ("build", "finetune"):
        blocks = data_blocks(f"MemeQA {report['task']}", {k: v for k, v in report.items()
                                                         if k not in ("run", "details", "paper", "losses")})
        if report["task"] == "finetune":
            blocks += [b for b in [plot_block("Loss curve and dev accuracy", plots.loss_curve(
                report.get("losses", []), report.get("dev", []), "Fine-tuning"))] if b]
        return blocks + _paper_blocks(report.get("paper")), {}
    accuracy, baseline = report.get("accuracy", {}), report.get("random_baseline", {})
    types = [t for t in accuracy if report.get("n", {}).get(t)]
    found = report.get("intervals") or {}
    per_type = found.get("accuracy", {})
    blocks = [Block("facts", "Summary", facts=[
        ("model", str(report.get("model"))), ("version", str(report.get("version"))),
        ("split", str(report.get("split"))),
        ("macro accuracy (95% CI)", interval_cell(found.get("macro"), True, report.get("macro")).text),
        ("micro accuracy (95% CI)", interval_cell(found.get("micro"), True, report.get("micro")).text),
        ("random baseline (macro / micro)", f"{pct(baseline.get('macro')).text} / {pct(baseline.get('micro')).text}"),
        ("parse failures (count as wrong; 95% CI)",
         interval_cell(found.get("parse_failure_rate"), True, report.get("parse_failure_rate")).text),
        ("questions / scored / failed calls",
         f"{report.get('n_questions')} / {report.get('n_scored')} / {report.get('n_failed_calls')}")])]
    if report.get("format_warning"):  # first, before any figure it qualifies
        blocks.insert(0, Block("note", "These figures measure the output format, not the model",
                               text=report["format_warning"]))
    rows = [[text(t), count(report["n"][t]), interval_cell(per_type.get(t), True, accuracy[t]),
             pct(baseline.get("by_type", {}).get(t)),
             _above(per_type.get(t), accuracy[t], baseline.get("by_type", {}).get(t))] for t in types]
    rows += [[text("macro"), count(report.get("n_scored")),
              interval_cell(found.get("macro"), True, report.get("macro")),
              pct(baseline.get("macro")), _above(found.get("macro"), report.get("macro"), baseline.get("macro"))],
             [text("micro"), count(report.get("n_scored")),
              interval_cell(found.get("micro"), True, report.get("micro")),
              pct(baseline.get("micro")),
              _above(found.get("micro"), report.get("micro"), baseline.get("micro"))]]
    blocks.append(Block("table", "Accuracy per question type", table=table(
        ["type", "n", "accuracy (95% CI)", "random baseline", "above baseline"], rows)))
    src = plots.grouped_bars(types, {str(report.get("model")): [accuracy[t] for t in types]}, "accuracy",
                             "Accuracy per type vs random baseline", percent=True,
                             reference=[baseline.get("by_type", {}).get(t) for t in types],
                             reference_label="random baseline",
                             intervals={str(report.get("model")): [(per_type.get(t) or {}).get("ci95") for t in types]},
                             counts={str(report.get("model")): [report["n"][t] for t in types]})
    blocks += [b for b in (plot_block("Accuracy per type", src), _none_versions(report, store)) if b]
    blocks += _paper_blocks(report.get("paper"))
    blocks.append(Block("browser", "Questions", browser="memeqa",
                        text="Filter by type and outcome; open a question for its options, the gold answer, "
                             "the prediction and the model's raw output."))
    return blocks, {"questions": report.get("details", []), **_question_pictures(store, report["run"])}


def _above(fig: dict[str, Any] | None, value: float | None, baseline: float | None) -> Any:
    """Accuracy minus the random baseline, with the accuracy's interval shifted by it (the baseline is the
    expectation of guessing on these very questions, a constant, not a second measurement)."""
    if fig is None or baseline is None or fig.get("value") is None:
        return pct(diff(value, baseline))
    ci = fig.get("ci95")
    shifted = {**fig, "value": fig["value"] - baseline,
               "ci95": None if ci is None else [ci[0] - baseline, ci[1] - baseline]}
    return interval_cell(shifted, True)


def _question_pictures(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    """`images` ({img: thumbnail}, as the run stored them) and `question_memes` ({question id: img}):
    each question's meme picture in the browser. Runs stored before their pictures show none."""
    from memegauge.memeqa.runs import load_run_records

    images = run_images(store, run) or {}
    if not images:
        return {"images": {}, "question_memes": {}}
    _, records = load_run_records(store, run["name"])
    return {"images": images, "question_memes": {r["id"]: r["img"] for r in records if r["img"] in images}}


def _paper_blocks(paper: dict[str, Any] | None) -> list[Block]:
    """The paper's Tables 2 and 3 for the run's version(s), with the run's own column first."""
    if not paper:
        return []
    from memegauge.memeqa.paper import SETTINGS, TABLE_OF

    blocks = []
    for version, rows in paper["versions"].items():
        for setting in SETTINGS:
            models = list(rows[0][setting])
            with_run = any(r["run"] is not None for r in rows)
            columns = ["type", *([paper["run_label"]] if with_run else []), "random (paper)", "human",
                       *models]
            body = [[text(r["type"]), *([pct(r["run"])] if with_run else []), pct(r["random"]),
                     pct(r["human"]), *[pct(r[setting][m]) for m in models]] for r in rows]
            blocks.append(Block("table", f"Beside the paper: {setting} results, {version} "
                                         f"({TABLE_OF[setting]}, {paper['split']} split)",
                                table=table(columns, body)))
    notes = " ".join(paper["notes"].values())
    models = "; ".join(f"{k}: {v}" for k, v in paper["models"].items())
    blocks.append(Block("note", "About the paper's figures",
                        text=f"Source: {paper['source']}, on its {paper['split']} split. {notes} "
                             f"Columns: {models}."))
    return blocks


def _none_versions(report: dict[str, Any], store: Store) -> Block | None:
    """None− vs None+ side by side when the store holds the same evaluation in the other version."""
    other = _counterpart(report, store)
    if other is None:
        return None
    both = {report.get("version"): report, other.get("version"): other}
    minus, plus = both.get("none-minus"), both.get("none-plus")
    if minus is None or plus is None:
        return None
    types = [t for t in minus.get("accuracy", {}) if minus["accuracy"].get(t) is not None
             or plus.get("accuracy", {}).get(t) is not None]
    mine, theirs = minus.get("intervals") or {}, plus.get("intervals") or {}
    rows = [[text(t), interval_cell(mine.get("accuracy", {}).get(t), True, minus["accuracy"].get(t)),
             interval_cell(theirs.get("accuracy", {}).get(t), True, plus["accuracy"].get(t)),
             *_paired(minus, plus, t)] for t in types]
    rows.append([text("micro"), interval_cell(mine.get("micro"), True, minus.get("micro")),
                 interval_cell(theirs.get("micro"), True, plus.get("micro")), *_paired(minus, plus, None)])
    rows.append([text("macro"), interval_cell(mine.get("macro"), True, minus.get("macro")),
                 interval_cell(theirs.get("macro"), True, plus.get("macro")),
                 text("– (a mean of per-type rates: see the rows above)"), count(None)])
    return Block("table", f"None− vs None+ (runs {minus['run']['name']} and {plus['run']['name']})",
                 table=table(["type", "None− (95% CI)", "None+ (95% CI)", "None+ − None− (95% CI, paired)",
                              "pairs"], rows),
                 text="The difference pairs each question with its None+ counterpart (same id): Newcombe's "
                      "interval for paired rates; pairs = questions scored in both runs.")


def _paired(minus: dict[str, Any], plus: dict[str, Any], qtype: str | None) -> list[Any]:
    """[difference cell, pairs] of None+ − None− accuracy over the questions both runs scored (one type, or all)."""
    from memegauge.report.intervals import paired_difference

    theirs = {d["id"]: d for d in plus.get("details", []) if d.get("correct") is not None}
    pairs = [(float(bool(theirs[d["id"]]["correct"])), float(bool(d["correct"])))
             for d in minus.get("details", []) if d.get("correct") is not None and d["id"] in theirs
             and (qtype is None or d["type"] == qtype)]
    if not pairs:
        return [text("– (no question scored in both)"), count(0)]
    fig = paired_difference([p for p, _ in pairs], [m for _, m in pairs])
    return [interval_cell(fig, True), count(len(pairs))]


def _counterpart(report: dict[str, Any], store: Store) -> dict[str, Any] | None:
    config = report["run"].get("config") or {}
    same = ("task", "split", "model", "limit", "types", "circular")
    for run in store.list_runs():
        if run["method"] != "memeqa" or run["name"] == report["run"]["name"]:
            continue
        other = json.loads(run["config_json"])
        if other.get("version") not in (None, config.get("version")) and all(
                other.get(k) == config.get(k) for k in same):
            return build_report(store, run["name"])
    return None
