"""The HTML report: one self-contained page per run, rendered from Jinja2 templates.

`to_html(store, report)` turns the dict of `memegauge.report.build_report` into a page that opens from
file:// with no network: styles, script, plots (PNG data URLs, `plots.py`) and meme thumbnails are
inline. The page is a list of *blocks* (facts, tables, plots, browsers) that each method's view builds
from its report dict; one template renders every method.

Safety: autoescape is on everywhere; the only markup not escaped is our own CSS/JS and the browsers'
JSON, which is escaped for a `<script type="application/json">` element (`<`, `>`, `&`, U+2028/9) and
read with `JSON.parse` and inserted with `textContent` only. A Content-Security-Policy allows only the
page's own script (by its sha256), inline styles and `data:` images.

Large runs stay fast: the browsers (refinement chains, arena battles, MemeQA questions) are rendered
lazily by the page's script — one page of rows at a time, a row's detail only when it is opened.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from collections.abc import Iterable

import jinja2
from markupsafe import Markup

from memegauge.arena.common import OVERALL
from memegauge.engine.store import Store
from memegauge.files import write_text_atomic
from memegauge.images.thumbnail import MemeImage
from memegauge.images.thumbnail import thumbnail_data_url as thumbnail  # only for runs stored before MemeImage
from memegauge.methods import method
from memegauge.records import read_records
from memegauge.report import build_report, run_header
from memegauge.report import plots
from memegauge.types import MemeGaugeError

HERE = Path(__file__).parent
EMBEDDED_WARNING = ("This run used the embedded offline model, a small local model: its figures show "
                    "that the pipeline works, not how well any real model understands memes. They are "
                    "not meaningful evaluations.")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


# ---- view model ---------------------------------------------------------------------------------

@dataclass
class Cell:
    """A table cell: the text shown, the value sorted on, and whether it is the column's best."""

    text: str
    sort: float | str | None = None
    best: bool = False
    href: str | None = None  # a link to a file beside the page (the index's reports)


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Cell]]
    numeric: list[bool] = field(default_factory=list)


@dataclass
class Block:
    """One piece of a report page: kind is facts | table | plot | browser | note."""

    kind: str
    title: str = ""
    table: Table | None = None
    facts: list[tuple[str, str]] = field(default_factory=list)
    src: str | None = None
    text: str = ""
    browser: str = ""


def num(value: float | None, digits: int = 2) -> Cell:
    return Cell("–" if value is None else f"{value:.{digits}f}", value)


def pct(value: float | None) -> Cell:
    return Cell("–" if value is None else f"{100 * value:.1f}%", value)


def text(value: Any) -> Cell:
    shown = "–" if value is None else str(value)
    return Cell(shown, shown)


def count(value: int | None) -> Cell:
    return Cell("–" if value is None else str(value), value)


def mark_best(table: Table, column: int, higher: bool) -> None:
    """Highlight the best value of a column (only when there are rows to compare)."""
    values = [row[column].sort for row in table.rows if isinstance(row[column].sort, (int, float))]
    if len(table.rows) < 2 or len(set(values)) < 2:
        return  # nothing to compare, or all equal: a highlight would single nothing out
    best = max(values) if higher else min(values)
    for row in table.rows:
        row[column].best = row[column].sort == best


def table(columns: list[str], rows: list[list[Cell]]) -> Table:
    numeric = [all(isinstance(r[i].sort, (int, float)) or r[i].sort is None for r in rows) and i > 0
               for i in range(len(columns))]
    return Table(columns, rows, numeric)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _row_like(value: Any) -> bool:
    """A flat dict (scalars or lists of scalars): one row of a table."""
    return isinstance(value, dict) and bool(value) and all(
        _scalar(v) or (isinstance(v, list) and all(map(_scalar, v))) for v in value.values())


def value_cell(value: Any) -> Cell:
    """A cell for a value of unknown meaning: floats to 4 significant digits, lists joined."""
    if isinstance(value, float):
        return Cell(f"{value:.4g}", value)
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    if isinstance(value, list):
        return text(", ".join(map(str, value)))
    return text(value)


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts → (dotted.path, value) rows; a list of scalars stays one value."""
    if isinstance(value, dict):
        return [row for k, v in value.items() for row in _flat(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list) and not all(map(_scalar, value)):
        return [row for i, v in enumerate(value) for row in _flat(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


def kv_table(mapping: dict[str, Any]) -> Table:
    """Any nested dict as (field, value) rows — for sections without a dedicated view."""
    return table(["field", "value"], [[text(k), value_cell(v)] for k, v in _flat(mapping)])


def matrix_table(mapping: dict[str, dict[str, Any]], corner: str = "") -> Table:
    """{row: {column: value}} as one table, columns in order of first appearance."""
    columns = list(dict.fromkeys(c for row in mapping.values() for c in row))
    return table([corner, *columns], [[text(k), *[value_cell(row.get(c)) for c in columns]]
                                      for k, row in mapping.items()])


def data_blocks(title: str, mapping: dict[str, Any]) -> list[Block]:
    """A section without a dedicated view as readable tables: a dict of flat dicts is one table
    (rows × fields); otherwise each such dict under it gets its own table and the rest is listed as
    (field, value) rows."""
    if mapping and all(_row_like(v) for v in mapping.values()):
        return [Block("table", title, table=matrix_table(mapping))]
    blocks, rest = [], {}
    for key, value in mapping.items():
        if isinstance(value, dict) and value and all(_row_like(v) for v in value.values()):
            blocks.append(Block("table", f"{title}: {key}", table=matrix_table(value)))
        else:
            rest[key] = value
    return ([Block("table", title, table=kv_table(rest))] if rest else []) + blocks


# ---- header -------------------------------------------------------------------------------------

def run_models(config: dict[str, Any]) -> dict[str, list[str]]:
    """Agent, targets and judges as the run's config names them (every method's config shape)."""
    targets = [*config.get("targets", []), *config.get("added_targets", [])]
    if not targets and config.get("model"):
        targets = [config["model"]]
    return {"agent": [config["agent"]] if config.get("agent") else [], "targets": targets,
            "judges": list(config.get("judges", []))}


def uses_embedded(config: Any) -> bool:
    """A model named `embedded*`, or a `backend: embedded` anywhere in the config."""
    if isinstance(config, dict):
        if config.get("backend") == "embedded":
            return True
        return any(uses_embedded(v) for v in config.values())
    if isinstance(config, list):
        return any(uses_embedded(v) for v in config)
    return isinstance(config, str) and config.startswith("embedded")


def called_embedded(store: Store, run_name: str) -> bool:
    """Whether any call of the run went to an embedded-backend model, whatever the registry named it
    (the stored request holds the model's identity, backend included)."""
    return "embedded" in store.call_backends(store.run_row(run_name)["id"])


def embedded_warning(store: Store, run: dict[str, Any]) -> str | None:
    used = uses_embedded(run.get("config")) or called_embedded(store, run["name"])
    return EMBEDDED_WARNING if used else None


def header_facts(run: dict[str, Any]) -> list[tuple[str, str]]:
    models = run_models(run.get("config") or {})
    failed = ", ".join(f"{k}: {v}" for k, v in (run.get("failed_calls_by_class") or {}).items())
    method_name = run["method"] + (" (custom prompts)" if run.get("prompts") else "")
    facts = [("run", run["name"]), ("method", method_name), ("status", run["status"]),
             ("date", _date(run.get("created"))),
             ("agent", ", ".join(models["agent"]) or "–"), ("targets", ", ".join(models["targets"]) or "–"),
             ("judges", ", ".join(models["judges"]) or "–"), ("seed", text(run.get("seed")).text),
             ("package version", str(run.get("package_version"))), ("config hash", str(run.get("config_hash"))),
             ("calls", f"{run.get('calls')} ({run.get('calls_made')} made, {run.get('cached_calls')} cached)"),
             ("failed calls", f"{run.get('failed_calls')}" + (f" ({failed})" if failed else "")),
             ("tokens", str(run.get("tokens"))), ("cost", f"${run.get('cost') or 0:.4f}")]
    if run.get("protocol"):
        facts.append(("protocol", ", ".join(f"{k}: {v}" for k, v in run["protocol"].items())))
    if run.get("prompts"):
        facts.append(("custom prompts", f"{run['prompts']['folder']}: " + ", ".join(
            f"{name} ({digest[:12]})" for name, digest in run["prompts"]["hashes"].items())))
    truncated = ", ".join(f"{k}: {v}" for k, v in (run.get("truncated_by_stage") or {}).items())
    facts.append(("outputs cut at max_tokens", f"{run.get('truncated_calls') or 0}"
                  + (f" ({truncated})" if truncated else "")))
    images = run.get("images_by_model") or {}
    if images:
        facts.append(("calls with the picture", ", ".join(
            f"{m}: {v['with_image']} of {v['calls']}"
            + (f" ({v['unrecorded']} made before pictures were counted)" if v.get("unrecorded") else "")
            for m, v in images.items())))
    if run.get("error"):
        facts.append(("error", str(run["error"])))
    return facts


def _date(stamp: float | None) -> str:
    import datetime as dt

    if stamp is None:
        return "–"
    return dt.datetime.fromtimestamp(stamp, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


# ---- meme thumbnails ----------------------------------------------------------------------------

def thumbnails(paths: dict[str, str | Path | None]) -> dict[str, str]:
    return {meme: url for meme, url in ((m, thumbnail(p)) for m, p in paths.items()) if url}


def run_images(store: Store, run: dict[str, Any]) -> dict[str, str] | None:
    """{meme id: thumbnail data URL} as the run stored them (`memegauge.images.thumbnail`); None for a
    run made before runs stored their thumbnails, whose pictures can only come from the meme files."""
    run_id = store.run_row(run["name"])["id"]
    stored = {r.meme: r.thumbnail for r in read_records(store, run_id, MemeImage)}
    return stored or None


def meme_set_images(memes_path: str | None, wanted: Iterable[str]) -> dict[str, str]:
    """Thumbnails of the wanted meme ids, looked up in the run's meme set: only for a run made before
    runs stored their thumbnails. A meme set that moved or no longer loads gives placeholders."""
    if not memes_path:
        return {}
    from memegauge.memes import load_memes

    try:
        memes = load_memes(memes_path, require_images=False)
    except (MemeGaugeError, OSError):
        return {}
    wanted = set(wanted)
    return thumbnails({m.id: m.image for m in memes if m.id in wanted})


# ---- AdamMeme -----------------------------------------------------------------------------------

def adammeme_view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    targets: dict[str, dict] = report.get("targets", {})
    categories = list(dict.fromkeys(c for t in targets.values() for c in t.get("categories", {})))
    blocks = [Block("table", "Leaderboard: average score (1–10, higher is better) and failure rate "
                             "(share scored below the threshold) on all scored samples",
                    table=_adam_leaderboard(targets, categories)),
              Block("table", "With vs without refinement", table=_adam_refinement(targets))]
    if not any(t.get("overall", {}).get("n") for t in targets.values()):
        blocks.insert(0, Block("note", "Nothing scored", text=(
            "No sample was scored: mining found no harmful meme in the run's categories, or every "
            "scoring call failed (see Harmfulness mining below; failed calls are counted above).")))
    blocks += [b for b in (
        _plot("Score by iteration", plots.lines_by_iteration(
            {t: v.get("by_iteration", []) for t, v in targets.items()}, "Average score by refinement iteration")),
        _plot("Failure rate per category", plots.grouped_bars(
            categories, {t: [v["categories"][c]["failure_rate"] for c in categories] for t, v in targets.items()},
            "failure rate", "Failure rate per category (with refinement)", percent=True))) if b]
    blocks += [b for t, v in targets.items() if (b := _topic_plot(t, v.get("topics", {})))]
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
        overall = t.get("overall", {})
        row = [text(name), num(overall.get("avg_score")), pct(overall.get("failure_rate")), count(overall.get("n"))]
        for c in categories:
            entry = t["categories"].get(c, {})
            row += [num(entry.get("avg_score")), pct(entry.get("failure_rate"))]
        rows.append(row)
    result = table(columns, rows)
    for i, column in enumerate(columns[1:], start=1):
        if column != "n":
            mark_best(result, i, higher=column.endswith("score"))
    return result


def _adam_refinement(targets: dict[str, dict]) -> Table:
    rows = []
    for name, t in targets.items():
        before, after, steps = t.get("original_only", {}), t.get("overall", {}), t.get("steps", {})
        delta_score = _diff(after.get("avg_score"), before.get("avg_score"))
        delta_fr = _diff(after.get("failure_rate"), before.get("failure_rate"))
        rows.append([text(name), num(before.get("avg_score")), pct(before.get("failure_rate")),
                     count(before.get("n")), num(after.get("avg_score")), pct(after.get("failure_rate")),
                     count(after.get("n")), num(delta_score), pct(delta_fr), count(steps.get("total")),
                     count(steps.get("scored")), count(steps.get("improved"))])
    return table(["target", "score w/o", "FR w/o", "n w/o", "score with", "FR with", "n with", "Δ score",
                  "Δ FR", "steps", "steps scored", "steps lowering score"], rows)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _topic_plot(target: str, topics: dict[str, list[dict]]) -> Block | None:
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
    return _plot(f"Misbelief topics ({target})", src)


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
        chains[key]["steps"].append({k: v for k, v in step.items() if k not in ("examples",)}
                                    | {"attempts": len(step.get("attempts") or [])})
    return {"chains": list(chains.values())}


# ---- MemeArena ----------------------------------------------------------------------------------

def arena_view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    ranking = report.get("ranking", [])
    blocks = [Block("table", f"Leaderboard (setting: {report.get('setting')}, panel's joint overall vote)",
                    table=_arena_leaderboard(ranking))]
    blocks += [b for b in (_plot("Bradley–Terry ratings", plots.ratings_with_ci(
        [r["model"] for r in ranking], [r["bt"] for r in ranking], [r.get("bt_ci") for r in ranking],
        "Bradley-Terry rating with 95% bootstrap interval")),) if b]
    blocks.append(Block("table", "Per dimension (Bradley–Terry rating; win rate)",
                        table=_arena_dimensions(report.get("dimensions", {}), [r["model"] for r in ranking])))
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
             Cell(f"[{r['bt_ci'][0]:.1f}, {r['bt_ci'][1]:.1f}]" if r.get("bt_ci") else "–",
                  r["bt_ci"][0] if r.get("bt_ci") else None),
             num(r["elo"], 1), pct(r["win_rate"]), pct(r.get("score")), count(r["battles"])]
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
            row.append(Cell(f"{entry['bt']:.1f} ({100 * entry['win_rate']:.0f}%)" if entry else "–",
                            entry["bt"] if entry else None))
        rows.append(row)
    result = table(["model", *dimensions], rows)
    for i in range(1, len(dimensions) + 1):
        mark_best(result, i, higher=True)
    return result


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


# ---- MemeQA -------------------------------------------------------------------------------------

def memeqa_view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    if report.get("task") in ("build", "finetune"):
        blocks = data_blocks(f"MemeQA {report['task']}", {k: v for k, v in report.items()
                                                         if k not in ("run", "details", "paper", "losses")})
        if report["task"] == "finetune":
            blocks += [b for b in [_plot("Loss curve and dev accuracy", plots.loss_curve(
                report.get("losses", []), report.get("dev", []), "Fine-tuning"))] if b]
        return blocks + _paper_blocks(report.get("paper")), {}
    accuracy, baseline = report.get("accuracy", {}), report.get("random_baseline", {})
    types = [t for t in accuracy if report.get("n", {}).get(t)]
    blocks = [Block("facts", "Summary", facts=[
        ("model", str(report.get("model"))), ("version", str(report.get("version"))),
        ("split", str(report.get("split"))), ("macro accuracy", pct(report.get("macro")).text),
        ("micro accuracy", pct(report.get("micro")).text),
        ("random baseline (macro / micro)", f"{pct(baseline.get('macro')).text} / {pct(baseline.get('micro')).text}"),
        ("parse failures (count as wrong)", pct(report.get("parse_failure_rate")).text),
        ("questions / scored / failed calls",
         f"{report.get('n_questions')} / {report.get('n_scored')} / {report.get('n_failed_calls')}")])]
    rows = [[text(t), count(report["n"][t]), pct(accuracy[t]), pct(baseline.get("by_type", {}).get(t)),
             pct(_diff(accuracy[t], baseline.get("by_type", {}).get(t)))] for t in types]
    rows += [[text("macro"), count(report.get("n_scored")), pct(report.get("macro")), pct(baseline.get("macro")),
              pct(_diff(report.get("macro"), baseline.get("macro")))],
             [text("micro"), count(report.get("n_scored")), pct(report.get("micro")), pct(baseline.get("micro")),
              pct(_diff(report.get("micro"), baseline.get("micro")))]]
    blocks.append(Block("table", "Accuracy per question type", table=table(
        ["type", "n", "accuracy", "random baseline", "above baseline"], rows)))
    src = plots.grouped_bars(types, {str(report.get("model")): [accuracy[t] for t in types]}, "accuracy",
                             "Accuracy per type vs random baseline", percent=True,
                             reference=[baseline.get("by_type", {}).get(t) for t in types],
                             reference_label="random baseline")
    blocks += [b for b in (_plot("Accuracy per type", src), _none_versions(report, store)) if b]
    blocks += _paper_blocks(report.get("paper"))
    blocks.append(Block("browser", "Questions", browser="memeqa",
                        text="Filter by type and outcome; open a question for its options, the gold answer, "
                             "the prediction and the model's raw output."))
    return blocks, {"questions": report.get("details", []), **_question_pictures(store, report["run"])}


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
    rows = [[text(t), pct(minus["accuracy"].get(t)), pct(plus["accuracy"].get(t)),
             pct(_diff(plus["accuracy"].get(t), minus["accuracy"].get(t)))] for t in types]
    rows.append([text("macro"), pct(minus.get("macro")), pct(plus.get("macro")),
                 pct(_diff(plus.get("macro"), minus.get("macro")))])
    return Block("table", f"None− vs None+ (runs {minus['run']['name']} and {plus['run']['name']})",
                 table=table(["type", "None−", "None+", "difference"], rows))


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


# ---- demo screening -----------------------------------------------------------------------------

def demo_view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    screen = report.get("screen", {})
    rows = [[text(r.get("meme")), text(", ".join(r.get("labels", []))),
             text((r.get("answer") or {}).get("harmful")), text((r.get("answer") or {}).get("category")),
             text("answered" if r.get("ok") else f"failed: {r.get('error')}")]
            for r in report.get("details", [])]
    return [Block("facts", "Harmfulness screen", facts=[
        ("memes", str(screen.get("memes"))), ("answered", str(screen.get("answered"))),
        ("agreement with sample labels", pct(screen.get("agreement_with_labels")).text)]),
        Block("table", "Answers", table=table(["meme", "labels", "harmful", "category", "call"], rows))], {}


def generic_view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    return data_blocks("Figures", {k: v for k, v in report.items() if k not in ("run", "details")}), {}


def _plot(title: str, src: str | None) -> Block | None:
    return Block("plot", title, src=src) if src else None


# ---- rendering ----------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def script_json(value: Any) -> Markup:
    """JSON safe inside `<script type="application/json">`: no `</script>`, no `<!--`, no line
    separators that older parsers take as newlines."""
    encoded = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    for char, escape in _JSON_ESCAPES.items():
        encoded = encoded.replace(char, escape)
    return Markup(encoded)


def _static(name: str) -> str:
    return (HERE / "static" / name).read_text(encoding="utf-8")


def render(report: dict[str, Any], store: Store) -> str:
    run = report["run"]
    found = method(run["method"])
    blocks, data = (found.view if found and found.view else generic_view)(report, store)
    blocks = blocks + people_blocks(report.get("people_vs_judges"))
    script = _static("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; "
           "base-uri 'none'; form-action 'none'")
    return _environment().get_template("report.html.j2").render(
        run=run, facts=header_facts(run), blocks=blocks, csp=csp,
        warning=embedded_warning(store, run), data=script_json({"kind": run["method"], **data}),
        style=Markup(_static("report.css")),
        script=Markup(script))


def to_html(store: Store, report: dict[str, Any]) -> str:
    """The report dict of `build_report` as one self-contained HTML page."""
    return render(report, store)


def report_file_name(run_name: str) -> str:
    """A file name for a run's report: run names may hold any character, file names may not."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_name).strip(".") or "run"
    return f"{safe}-{hashlib.sha256(run_name.encode()).hexdigest()[:6]}.html"


INDEX_NAME = "index.html"


def render_index(store: Store, entries: list[tuple[str, str]]) -> str:
    """A page linking reports: `entries` are (run name, report file name in the same folder)."""
    runs = [(run_header(store, name), file_name) for name, file_name in entries]
    rows = []
    for run, file_name in runs:
        models = run_models(run.get("config") or {})
        rows.append([Cell(run["name"], run["name"], href=file_name), text(run["method"]), text(run["status"]),
                     text(_date(run.get("created"))), text(", ".join(models["targets"]) or None),
                     count(run.get("calls")), count(run.get("failed_calls")), count(run.get("tokens"))])
    return _environment().get_template("index.html.j2").render(
        runs=table(["run", "method", "status", "date", "models evaluated", "calls", "failed calls", "tokens"], rows),
        warning=EMBEDDED_WARNING if any(embedded_warning(store, r) for r, _ in runs) else None,
        style=Markup(_static("report.css")))


def write_html_reports(store: Store, run_names: list[str], out_dir: Path, index: bool = False) -> list[Path]:
    """Write each run's HTML report into `out_dir` (atomically, one file per run) and, with `index`,
    an `index.html` linking them (first in the returned paths). Every page is rendered before
    anything is written, so a bad run name leaves no half set."""
    names = [report_file_name(name) for name in run_names]
    pages = [(file_name, to_html(store, build_report(store, name)))
             for name, file_name in zip(run_names, names, strict=True)]
    if index:
        pages.insert(0, (INDEX_NAME, render_index(store, list(zip(run_names, names, strict=True)))))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for file_name, page in pages:
        paths.append(write_text_atomic(out_dir / file_name, page))
    return paths


# ---- People vs judges (memegauge rate) -----------------------------------------------------------

PEOPLE_TITLE = "People vs judges"


def _ci_cell(figure: dict[str, Any] | None, percent: bool = False, with_n: bool = False) -> Cell:
    """{value, ci95, n} as "0.62 [0.41, 0.80]" (or percentages), with "n=…" where columns differ in n."""
    value = (figure or {}).get("value")
    if value is None:
        return Cell("–", None)
    shown = (lambda v: f"{100 * v:.1f}%") if percent else (lambda v: f"{v:.3f}")
    ci = figure.get("ci95")
    return Cell(shown(value) + (f" [{shown(ci[0])}, {shown(ci[1])}]" if ci else "") +
                (f" n={figure['n']}" if with_n else ""), value)


def _n_of(figure: dict[str, Any] | None) -> Cell:
    return count((figure or {}).get("n"))


def people_blocks(section: dict[str, Any] | None) -> list[Block]:
    """The "People vs judges" section (`memegauge.rating.section`) as blocks: a note on what is
    compared, then tables whose cells read "value [low, high]" with n beside them."""
    if not section:
        return []
    raters = section["raters"]
    blocks = [Block("note", PEOPLE_TITLE, text=(
        f"{len(raters)} rater(s): " + ", ".join(f"{name} ({r['rated']} votes, {r['origin']})"
                                               for name, r in raters.items()) +
        ". Each figure is the value on all items with its 95% bootstrap interval (1,000 resamples of the "
        "items, seeded) and n, the items behind it. People rate a run with: memegauge rate RUN."))]
    if "scores" in section:
        blocks += _people_scores(section["scores"])
    if "labels" in section:
        blocks += _people_labels(section["labels"])
    if "pairs" in section:
        blocks += _people_pairs(section["pairs"])
    if "answers" in section:
        blocks += _people_answers(section["answers"])
    return blocks


def _people_between(title: str, between: dict[str, Any] | None, figures: dict[str, str]) -> list[Block]:
    if not between:
        return []
    rows = [[text(label), _ci_cell(between.get(key)), _n_of(between.get(key))] for key, label in figures.items()]
    return [Block("table", f"{title}: {', '.join(between['raters'])} among themselves",
                  table=table(["coefficient", "value [95% CI]", "n items"], rows))]


def _people_scores(scores: dict[str, Any]) -> list[Block]:
    rows = [[text(rater), count(r["n"]), num(r["human_avg_score"]), num(r["agent_avg_score"]),
             pct(r["human_failure_rate"]), pct(r["agent_failure_rate"]),
             _ci_cell(r["score_icc"]), _ci_cell(r["fr_icc"])] for rater, r in scores["vs_scorer"].items()]
    return [Block("table", "AdamMeme scores: each person vs the Scorer (Table 3; ICC(2,1), FR at score < "
                           f"{scores['threshold']:g})",
                  table=table(["rater", "n", "human avg", "Scorer avg", "human FR", "Scorer FR",
                               "ICC score [95% CI]", "ICC FR [95% CI]"], rows)),
            *_people_between("AdamMeme scores", scores.get("between_raters"),
                      {"icc": "ICC(2,1) (items every person scored)",
                       "krippendorff_alpha_interval": "Krippendorff's α, interval"})]


def _people_labels(labels: dict[str, Any]) -> list[Block]:
    rows = [[text(rater), _ci_cell(r["accuracy"], percent=True), _ci_cell(r["kappa"]), _n_of(r["accuracy"])]
            for rater, r in labels["vs_miners"].items()]
    return [Block("table", "AdamMeme categories: each person vs the Miners' majority vote (Table 8)",
                  table=table(["rater", "accuracy (same set) [95% CI]", "Cohen's κ per decision [95% CI]",
                               "n memes"], rows)),
            *_people_between("AdamMeme categories", labels.get("between_raters"),
                      {"mean_pairwise_kappa": "mean pairwise Cohen's κ (the paper's Agreement)",
                       "krippendorff_alpha_nominal": "Krippendorff's α, nominal"})]


def _people_pairs(pairs: dict[str, Any]) -> list[Block]:
    judges = list(dict.fromkeys(j for r in pairs["vs_judges"].values() for j in r))
    rows = [[text(rater), *[_ci_cell(r[j], percent=True, with_n=True) for j in judges]]
            for rater, r in pairs["vs_judges"].items()]
    dims = list(dict.fromkeys(d for r in pairs["vs_joint_by_dimension"].values() for d in r))
    dim_rows = [[text(rater), *[_ci_cell(r[d], percent=True) for d in dims]]
                for rater, r in pairs["vs_joint_by_dimension"].items()]
    return [Block("table", "MemeArena: accuracy of each judge against each person's overall vote "
                           "(App. C, Table 5; A / B / tie; a judge does not judge its own battles)",
                  table=table(["rater", *judges], rows)),
            Block("table", "MemeArena: agreement with the joint vote per dimension",
                  table=table(["rater", *dims], dim_rows)),
            *_people_between("MemeArena votes", pairs.get("between_raters"),
                      {"fleiss_kappa": "Fleiss' κ (battles every person voted on)",
                       "mean_pairwise_kappa": "mean pairwise Cohen's κ",
                       "krippendorff_alpha_nominal": "Krippendorff's α, nominal"})]


def _people_answers(answers: dict[str, Any]) -> list[Block]:
    rows = []
    for rater, by_type in answers["human_accuracy"].items():
        model = answers["model_on_same_questions"].get(rater, {})
        rows += [[text(rater), text(t), _ci_cell(f, percent=True), pct(model.get(t)), _n_of(f)]
                 for t, f in by_type.items() if t != "macro"]
        rows.append([text(rater), text("macro"), pct(by_type.get("macro")), text("–"), text("")])
    return [Block("table", "MemeQA: human accuracy per question type (the Hum row of Tables 2–3)",
                  table=table(["rater", "type", "human accuracy [95% CI]", "model, same questions", "n"], rows)),
            *_people_between("MemeQA answers", answers.get("between_raters"), {"fleiss_kappa": "Fleiss' κ"})]
