"""MemeArena's part of the HTML report: leaderboard, dimensions, judges, bias and the battle browser's data
(its script: `browser.js` beside this file)."""

from __future__ import annotations

from typing import Any

from memegauge.arena.common import OVERALL
from memegauge.engine.store import Store
from memegauge.report import plots
from memegauge.report.intervals import shown
from memegauge.report.blocks import (Block, Cell, Table, count, data_blocks, interval_cell, mark_best, num, pct,
                                     plot_block, run_images, table, text, thumbnails)


def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    ranking = report.get("ranking", [])
    blocks = [Block("table", f"Leaderboard (setting: {report.get('setting')}, panel's joint overall vote)",
                    table=_arena_leaderboard(ranking))]
    blocks += [b for b in (plot_block("Bradley–Terry ratings", plots.ratings_with_ci(
        [r["model"] for r in ranking], [r["bt"] for r in ranking], [r.get("bt_ci") for r in ranking],
        "Bradley-Terry rating with 95% bootstrap interval")),) if b]
    blocks.append(Block("table", "Per dimension: Bradley–Terry rating [95% CI]; win rate [95% CI] (n battles)",
                        table=_arena_dimensions(report.get("dimensions", {}), [r["model"] for r in ranking])))
    blocks += _style_blocks(report.get("style_control"))
    blocks += _arena_judges(report, [r["model"] for r in ranking])
    if report.get("flip_rate"):
        flip = report["flip_rate"]
        blocks.append(Block("facts", "Position bias (both orders judged)", facts=[
            ("pairs judged in both orders", str(flip.get("pairs"))), ("flipped", str(flip.get("flipped"))),
            ("flip rate", pct(flip.get("rate")).text)]))
    blocks += data_blocks("Counts", report.get("counts", {}))
    if report.get("failures"):
        blocks += data_blocks("Failures by stage and class (never ranked)", report["failures"])
    detection = report.get("detection") or {}
    if detection:  # pooled per target, then per target and source data set (FHM, HarM, MAMI, …)
        blocks += data_blocks("Detection baseline", {t: {k: v for k, v in d.items() if k != "by_source"}
                                                     for t, d in detection.items()})
        blocks += data_blocks("Detection baseline by source data set", {
            f"{t} · {s or '(no source)'}": f for t, d in detection.items() for s, f in d.get("by_source", {}).items()})
    if report.get("agreement"):
        blocks += data_blocks("Agreement", report["agreement"])
    blocks.append(Block("browser", "Memes → personas → tasks → guideline rounds → battles", browser="arena",
                        text="Open a meme for its personas and tasks, a task for the answers, the guideline "
                             "rounds and its battles, a battle for both answers and each judge's verdicts."))
    memes = (report.get("details") or {}).get("memes", [])
    data = {"memes": [_browsable_meme(m) for m in memes],
            "dimensions": [*report.get("dimensions", {}), OVERALL],
            "images": _arena_images(store, report["run"], memes)}
    return blocks, data


def _ci_text(value: float | None, ci: list[float] | None) -> Cell:
    if value is None:
        return Cell("–", None)
    return Cell(f"{value:.1f} " + (f"[{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "(no interval)"), value)


def _coefficient(figure: dict[str, Any] | None) -> Cell:
    if figure is None:
        return Cell("– (constant)", None)
    ci = figure.get("ci95")
    return Cell(f"{figure['value']:+.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else " (no interval)"),
                figure["value"])


def _style_blocks(style: dict[str, Any] | None) -> list[Block]:
    """Style control (FastChat's): the leaderboard with and without it side by side, the style
    coefficients with their intervals, the ranks per dimension both ways, and the bias study with it."""
    if not style:
        return []
    overall = style["overall"]
    rows = [[count(r["rank"]), text(r["model"]), _ci_text(r["bt"], r.get("bt_ci")), count(r.get("style_rank")),
             _ci_text(r.get("style_bt"), r.get("style_ci")),
             Cell(f"{r['rank'] - r['style_rank']:+d}" if r.get("style_rank") else "–", None)]
            for r in overall["rows"]]
    blocks = [Block("table", "Leaderboard without and with style control (BT with answer length, markdown "
                             "headers, lists and bold as covariates, normalised as FastChat; L2 "
                             f"{overall['reg']:g}; {overall['battles']} battles)",
                    table=table(["rank", "model", "BT [95% CI]", "rank, style controlled",
                                 "BT style controlled [95% CI]", "places gained"], rows))]
    names = list(overall["coefficients"])
    dims = {"overall": overall, **style.get("dimensions", {})}
    blocks.append(Block("table", "Style coefficients (logit per standard deviation of the normalised difference; "
                                 "positive: the judges prefer more of it) [95% bootstrap CI]; – (constant): the "
                                 "same in every battle, no information, left out of the fit",
                        table=table(["dimension", *names],
                                    [[text(d), *[_coefficient(v["coefficients"].get(n)) for n in names]]
                                     for d, v in dims.items()])))
    models = [r["model"] for r in overall["rows"]]
    by_dim = {d: {r["model"]: r for r in v["rows"]} for d, v in dims.items()}
    blocks.append(Block("table", "Rank per dimension: without → with style control", table=table(
        ["model", *dims], [[text(m), *[Cell(f"{by_dim[d][m]['rank']} → {by_dim[d][m]['style_rank']}"
                                            if m in by_dim[d] else "–", None) for d in dims]] for m in models])))
    bias = style.get("bias") or {}
    if bias:
        judges = list(dict.fromkeys(j for v in bias.values() for j in v.get("judges", {})))
        blocks.append(Block("table", "Bias study with style control: NDCG per reference setting", table=table(
            ["setting", *judges, "average"],
            [[text(s), *[num(v["judges"].get(j), 3) for j in judges], num(v.get("avg_ndcg"), 3)]
             for s, v in bias.items()])))
    return blocks


def _arena_images(store: Store, run: dict[str, Any], memes: list[dict[str, Any]]) -> dict[str, str]:
    stored = run_images(store, run)
    if stored is not None:
        return {m["id"]: stored[m["id"]] for m in memes if m["id"] in stored}
    return thumbnails({m["id"]: m.get("image") for m in memes})


def _browsable_meme(meme: dict[str, Any]) -> dict[str, Any]:
    """A meme for the browser without its image path (thumbnails travel apart) nor the battles' copies
    of the answers (the page reads them from the task's answers): a third less page per battle."""
    tasks = [{**t, "battles": [{k: v for k, v in b.items() if k not in ("answer_a", "answer_b")}
                               for b in t["battles"]]} for t in meme["tasks"]]
    return {**{k: v for k, v in meme.items() if k != "image"}, "tasks": tasks}


def _arena_leaderboard(ranking: list[dict]) -> Table:
    rows = [[count(i + 1), text(r["model"]), num(r["bt"], 1),
             Cell(f"[{r['bt_ci'][0]:.1f}, {r['bt_ci'][1]:.1f}]" if r.get("bt_ci") else (r.get("bt_note") or "–"),
                  r["bt_ci"][0] if r.get("bt_ci") else None),
             num(r["elo"], 1), interval_cell(r.get("win_rate_ci95"), True, r["win_rate"]), pct(r.get("score")),
             count(r["battles"])]
            for i, r in enumerate(ranking)]
    result = table(["#", "model", "BT", "BT 95% CI", "Elo", "win rate", "score (tie ½)", "battles"], rows)
    for column in (2, 4, 5, 6):
        mark_best(result, column, higher=True)
    return result


def _arena_dimensions(dimensions: dict[str, list[dict]], models: list[str]) -> Table:
    by_model = {d: {r["model"]: r for r in rows} for d, rows in dimensions.items()}
    rows = []
    for model in models:
        row = [text(model)]
        for d in dimensions:
            entry = by_model[d].get(model)
            row.append(Cell(_dimension_cell(entry) if entry else "–", entry["bt"] if entry else None))
        rows.append(row)
    result = table(["model", *dimensions], rows)
    for i in range(1, len(dimensions) + 1):
        mark_best(result, i, higher=True)
    return result


def _dimension_cell(entry: dict[str, Any]) -> str:
    """One model in one dimension: "1012.9 [998.2, 1037.2]; 5.6% [0.9, 27.9] (n=18)", the BT rating and
    the win rate each with its 95% interval (or why none) and the battles behind them."""
    ci = entry.get("bt_ci")
    bt = f"{entry['bt']:.1f} " + (f"[{ci[0]:.1f}, {ci[1]:.1f}]" if ci else f"({entry.get('bt_note') or 'no interval'})")
    win = entry.get("win_rate_ci95")
    rate = shown(win, percent=True) if win else f"{100 * entry['win_rate']:.1f}%"
    return f"{bt}; {rate}" + ("" if "n=" in rate else f" (n={entry['battles']})")


def _arena_judges(report: dict[str, Any], joint: list[str]) -> list[Block]:
    judges = report.get("judges", {})
    rows = [[text(j), num(v.get("ndcg"), 3), count(v.get("battles")), pct(v.get("flip_rate")),
             text(" > ".join(v.get("ranking", [])))] for j, v in judges.items()]
    blocks = [Block("table", "Judges: NDCG of each judge's ranking against the joint ranking",
                    table=table(["judge", "NDCG", "battles", "flip rate", "ranking"], rows))]
    names = ["joint panel", *judges]
    ranks = [[float(i + 1) for i in range(len(joint))]] + [
        [float(v["ranking"].index(m) + 1) if m in v.get("ranking", []) else None for m in joint]
        for v in judges.values()]
    src = plots.rank_heatmap(names, joint, ranks, "Rank of each model by each judge")
    if src and judges:
        blocks.append(Block("plot", "Per-judge ranking", src=src))
    bias = report.get("bias", {})
    if bias:
        judge_names = list(dict.fromkeys(j for s in bias.values() for j in s.get("judges", {})))
        blocks.append(Block("table", "Bias study: NDCG per reference setting", table=table(
            ["setting", *judge_names, "average"],
            [[text(s), *[num(v["judges"].get(j), 3) for j in judge_names], num(v.get("avg_ndcg"), 3)]
             for s, v in bias.items()])))
    return blocks
