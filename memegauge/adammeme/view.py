"""AdamMeme's part of the HTML report: leaderboard, refinement, plots, tables and the refinement-chain
browser's data (its script: `browser.js` beside this file)."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.report import plots
from memegauge.report.blocks import (Block, Cell, Table, count, data_blocks, diff, interval_cell, mark_best,
                                     meme_set_images, num, pct, plot_block, run_images, table, text)


def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    targets: dict[str, dict] = report.get("targets", {})
    categories = list(dict.fromkeys(c for t in targets.values() for c in t.get("categories", {})))
    blocks = [Block("table", "Leaderboard: average score (1–10, higher is better) and failure rate "
                             "(share scored below the threshold) on all scored samples, with 95% intervals",
                    table=_adam_leaderboard(targets, categories)),
              Block("table", "With vs without refinement", table=_adam_refinement(targets))]
    if not any(t.get("overall", {}).get("n") for t in targets.values()):
        blocks.insert(0, Block("note", "Nothing scored", text=(
            "No sample was scored: mining found no harmful meme in the run's categories, or every "
            "scoring call failed (see Harmfulness mining below; failed calls are counted above).")))
    blocks += [b for b in (
        plot_block("Score by iteration", plots.lines_by_iteration(
            {t: v.get("by_iteration", []) for t, v in targets.items()}, "Average score by refinement iteration")),
        plot_block("Failure rate per category", plots.grouped_bars(
            categories, {t: [v["categories"][c]["failure_rate"] for c in categories] for t, v in targets.items()},
            "failure rate", "Failure rate per category (with refinement), 95% intervals", percent=True,
            **_adam_fr_intervals(targets, categories)))) if b]
    blocks += [b for t, v in targets.items() if (b := _topicplot_block(t, v.get("topics", {})))]
    blocks += _adam_tables(report, categories)
    blocks.append(Block("browser", "Refinement chains", browser="adammeme",
                        text="Each chain starts from a seed meme; every step shows the rewrite, the "
                             "Refiner's explanation, the reference answer, the target's answer, the "
                             "Scorer's comment and score."))
    details = report.get("details", {})
    data = adam_chains(details.get("samples", []), details.get("steps", []))
    wanted = {s["meme"] for s in details.get("samples", [])}
    stored = run_images(store, report["run"])
    data["images"] = ({m: url for m, url in stored.items() if m in wanted} if stored is not None else
                      meme_set_images((report["run"].get("config") or {}).get("memes"), wanted))
    return blocks, data


def _adam_leaderboard(targets: dict[str, dict], categories: list[str]) -> Table:
    columns = ["target", "score", "FR", "n"] + [f"{c} {m}" for c in categories for m in ("score", "FR")]
    rows = []
    for name, t in targets.items():
        overall, found = t.get("overall", {}), t.get("intervals") or {}
        shown = found.get("overall", {})
        row = [text(name), interval_cell(shown.get("avg_score"), fallback=overall.get("avg_score")),
               interval_cell(shown.get("failure_rate"), True, overall.get("failure_rate")), count(overall.get("n"))]
        for c in categories:
            entry, shown = t["categories"].get(c, {}), found.get("categories", {}).get(c, {})
            row += [interval_cell(shown.get("avg_score"), fallback=entry.get("avg_score")),
                    interval_cell(shown.get("failure_rate"), True, entry.get("failure_rate"))]
        rows.append(row)
    result = table(columns, rows)
    for i, column in enumerate(columns[1:], start=1):
        if column != "n":
            mark_best(result, i, higher=column.endswith("score"))
    return result


def _adam_fr_intervals(targets: dict[str, dict], categories: list[str]) -> dict[str, Any]:
    """The FR plot's error bars and n per target and category (none for a report without intervals)."""
    if not all(t.get("intervals") for t in targets.values()):
        return {}
    figs = {t: [v["intervals"]["categories"][c]["failure_rate"] for c in categories] for t, v in targets.items()}
    return {"intervals": {t: [f["ci95"] for f in fs] for t, fs in figs.items()},
            "counts": {t: [f["n"] for f in fs] for t, fs in figs.items()}}


def _adam_refinement(targets: dict[str, dict]) -> Table:
    rows = []
    for name, t in targets.items():
        before, after, steps = t.get("original_only", {}), t.get("overall", {}), t.get("steps", {})
        found = t.get("intervals") or {}
        was, now = found.get("original_only", {}), found.get("overall", {})
        delta_score = diff(after.get("avg_score"), before.get("avg_score"))
        delta_fr = diff(after.get("failure_rate"), before.get("failure_rate"))
        rows.append([text(name), interval_cell(was.get("avg_score"), fallback=before.get("avg_score")),
                     interval_cell(was.get("failure_rate"), True, before.get("failure_rate")),
                     count(before.get("n")), interval_cell(now.get("avg_score"), fallback=after.get("avg_score")),
                     interval_cell(now.get("failure_rate"), True, after.get("failure_rate")),
                     count(after.get("n")), num(delta_score), pct(delta_fr), count(steps.get("total")),
                     count(steps.get("scored")), count(steps.get("improved"))])
    return table(["target", "score w/o", "FR w/o", "n w/o", "score with", "FR with", "n with", "Δ score",
                  "Δ FR", "steps", "steps scored", "steps lowering score"], rows)


def _topicplot_block(target: str, topics: dict[str, list[dict]]) -> Block | None:
    totals: dict[str, list[int]] = {}
    for terms in topics.values():
        for term in terms:
            entry = totals.setdefault(term["term"], [0, 0])
            entry[0] += term["refined"]
            entry[1] += term["original"]
    top = sorted(totals.items(), key=lambda kv: (-kv[1][0], kv[0]))[:12]
    src = plots.horizontal_bars([t for t, _ in top], [v[0] for _, v in top],
                                f"Misbelief topics of refined samples: {target}",
                                "samples whose misbelief uses the term",
                                secondary=[v[1] for _, v in top], secondary_label="originals",
                                primary_label="refined")
    return plot_block(f"Misbelief topics ({target})", src)


def _adam_mining(mining: dict[str, Any]) -> Block:
    proposals = ", ".join(f"{k}: {v}" for k, v in (mining.get("proposals") or {}).items()) or "none"
    return Block("facts", "Harmfulness mining", facts=[
        *[(key, text(mining.get(key)).text) for key in ("memes", "harmful", "harmless", "failed")],
        ("new-category proposals", proposals)])


def _adam_tables(report: dict[str, Any], categories: list[str]) -> list[Block]:
    taxonomy = report.get("taxonomy", {})
    mining, sampling = report.get("mining", {}), report.get("sampling", {})
    rows = [[text(c), text(taxonomy.get("categories", {}).get(c)), text(taxonomy.get("added", {}).get(c, "seed")),
             count(mining.get("per_category", {}).get(c)), count(sampling.get(c, {}).get("sampled")),
             text(sampling.get(c, {}).get("warning") or "")] for c in categories]
    blocks = [_adam_mining(mining), Block("table", "Taxonomy and samples", table=table(
        ["category", "description", "added by meme", "mined", "sampled", "warning"], rows))]
    failures = [[text(t), text(k), count(n)] for t, v in report.get("targets", {}).items()
                for k, n in v.get("failures", {}).items()]
    if failures:
        blocks.append(Block("table", "Failed samples and steps (never scored)",
                            table=table(["target", "stage:class", "count"], failures)))
    tests = report.get("paired_tests") or []
    if tests:
        blocks.append(Block("table", "Paired t-tests between targets (shared originals)", table=table(
            ["a", "b", "n", "mean diff", "t", "p"],
            [[text(r["a"]), text(r["b"]), count(r["n"]), num(r["mean_diff"]), num(r["t"]), num(r["p"], 4)]
             for r in tests])))
    repeats = {t: v["repeats"] for t, v in report.get("targets", {}).items() if v.get("repeats")}
    if repeats:
        blocks.append(Block("table", "Across repeats (mean ± std)", table=table(
            ["target", "score", "FR", "score w/o", "FR w/o"],
            [[text(t), _pm(r["overall"]["avg_score"]), _pm(r["overall"]["failure_rate"], True),
              _pm(r["original_only"]["avg_score"]), _pm(r["original_only"]["failure_rate"], True)]
             for t, r in repeats.items()])))
    if report.get("agreement"):
        blocks += data_blocks("Agreement with human annotations", report["agreement"])
    return blocks


def _pm(stats: dict[str, Any], percent: bool = False) -> Cell:
    if stats.get("mean") is None:
        return Cell("–")
    scale, unit = (100, "%") if percent else (1, "")
    return Cell(f"{scale * stats['mean']:.2f}{unit} ± {scale * stats['std']:.2f}", stats["mean"])


def _last_attempt(step: dict, attempts: list[dict]) -> dict[str, Any] | None:
    """What a step that got no usable rewrite last tried: the rewrite the check rejected (or could not
    judge), the raw reply of the call that failed, and why; None for a step that has its rewrite."""
    if step.get("rewrite") is not None or not attempts:
        return None
    from memegauge.adammeme.refinement import validity_checked

    last = attempts[-1]
    return {"rewrite": last.get("rewrite"), "text": last.get("text"), "reason": last.get("reason"),
            "reply_of": "validity check" if validity_checked(last) else "Refiner",
            "error_class": last.get("error_class")}


def adam_chains(samples: list[dict], steps: list[dict]) -> dict[str, Any]:
    """Refinement chains for the browser: each chain's seed (the original sample) and its steps."""
    originals = {s["id"]: s for s in samples}
    chains: dict[tuple, dict[str, Any]] = {}
    for step in sorted(steps, key=lambda s: s["id"]):
        key = (step["target"], step["repeat"], step["category"], step["chain"])
        if key not in chains:
            seed_id = f"{step['target']}/{step['repeat']}/{step['category']}/{step['seed']}"
            chains[key] = {"target": step["target"], "repeat": step["repeat"], "category": step["category"],
                           "chain": step["chain"], "seed": step["seed"], "original": originals.get(seed_id),
                           "steps": []}
        attempts = step.get("attempts") or []
        chains[key]["steps"].append({k: v for k, v in step.items() if k not in ("examples",)}
                                    | {"attempts": len(attempts), "last_attempt": _last_attempt(step, attempts)})
    return {"chains": list(chains.values())}
