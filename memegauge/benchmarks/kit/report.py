"""A benchmark run's report, read from the store only (`Method.report`, `tables`, `models`, `headline`,
`exports`, `view`), the same for every benchmark: per task, how many items were asked, answered, unreadable and
failed; accuracy, macro-F1, per-class precision/recall/F1 and AUROC (where the model gave probabilities), each
with its 95% interval and n; the same per group value; and the papers' published figures beside ours."""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.benchmarks.kit.metrics import auroc, indicators, task_figures
from memegauge.benchmarks.kit.records import BenchAnswer
from memegauge.benchmarks.kit.spec import Benchmark, Task
from memegauge.engine.store import Store
from memegauge.export import ExportTable, record_rows
from memegauge.records import read_checked
from memegauge.report.blocks import Block, count, interval_cell, table, text
from memegauge.report.headline import Headline, row
from memegauge.report.intervals import rate

NO_PROBABILITY = ("no log-probabilities: no answer carried the log-probabilities of both \"yes\" and \"no\" among its "
                  "first token's top 5 alternatives, so AUROC was not computed (it is never made from the hard "
                  "answers); fix: serve the model where chat completions return `logprobs` with `top_logprobs` "
                  "(vLLM, whose --max-logprobs must stay at 5 or more, 20 by default; SGLang; OpenAI's API; "
                  "`memegauge eval` says before the run whether the server does) and rerun the same command")
"""Why AUROC is absent, and the fix: every place that shows the figures shows this where AUROC would be."""


def build(spec: Benchmark, store: Store, run: dict[str, Any]) -> dict[str, Any]:
    config = run.get("config") or {}
    rows = read_checked(store, run["id"], BenchAnswer)
    seed = int(config.get("seed") or 0)
    tasks = {name: _task(spec.tasks[name], [r for r in rows if r["task"] == name], seed)
             for name in dict.fromkeys(r["task"] for r in rows) if name in spec.tasks}
    split = config.get("split") or spec.split
    counts = config.get("benchmark_rows") or {}
    for name, found in tasks.items():
        found["published"] = [p.model_dump() for p in spec.published if p.task == name and p.split == split]
        found["rows"] = (counts.get(name) or {}).get("rows")  # the split's rows: "asked n of N" (stored at run)
        found["left_out"] = (counts.get(name) or {}).get("left_out", {})  # reason → rows left out of the task
        for group in found["groups"]:  # each group value's rows in the split: "asked n of N" per config, language…
            group["rows"] = ((counts.get(name) or {}).get("groups") or {}).get(f"{group['group']}={group['value']}")
    return {"benchmark": spec.name, "title": spec.title, "paper": spec.paper, "split": split,
            "model": config.get("model"), "items": len({r["item"] for r in rows}), "tasks": tasks,
            "format_warning": format_warning(tasks),
            "asked": {name: asked_line(found) for name, found in tasks.items()},  # every format says it (docs)
            "prompts": config.get("benchmark_prompts") or {}, "details": rows}


UNREADABLE_ABOVE = 0.5
"""More than half the answered items unreadable: every figure is then bounded by the output format (as MemeQA's
`memegauge.memeqa.metrics.UNREADABLE_ABOVE`); the report, the run page and `eval`'s exit status (3) say so."""


def format_warning(tasks: dict[str, Any]) -> str | None:
    """What to tell a user whose run's answers mostly could not be read (over every task), or None."""
    answered = sum(t["answered"] for t in tasks.values())
    unreadable = sum(t["unreadable"] for t in tasks.values())
    if not answered or unreadable <= UNREADABLE_ABOVE * answered:
        return None
    return (f"{unreadable} of {answered} answers could not be read (more than {UNREADABLE_ABOVE:.0%} of the answered "
            "items): these figures measure the model's output format, not its understanding of memes. Check the raw "
            "answers (the run page's items, or `memegauge export RUN --table answers`): a reasoning model spends its "
            "answer tokens thinking (raise them with -o max_tokens=512), or it answers in prose; fix the model's "
            "settings (models.yaml) and rerun.")


def _task(task: Task, rows: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    scored = [r for r in rows if r["ok"]]
    out: dict[str, Any] = {"answer": task.answer, "classes": task.classes, "asked": len(rows),
                           "answered": len(scored), "failed": len(rows) - len(scored),
                           "unreadable": sum(not r["readable"] for r in scored),
                           "unreadable_share": rate([float(not r["readable"]) for r in scored]),
                           **_figures(task, scored, seed, fields=(fields := tuple(_one_set_fields(task, scored))))}
    out["groups"] = [{"group": field, "value": value, "asked": sum(r["groups"].get(field) == value for r in rows),
                      **_figures(task, [r for r in scored if r["groups"].get(field) == value], seed, auroc_too=False,
                                 fields=fields)}
                     for field in task.groups
                     for value in sorted({r["groups"][field] for r in scored if field in r["groups"]})]
    return out


def _figures(task: Task, scored: list[dict[str, Any]], seed: int, auroc_too: bool = True,
             fields: tuple[str, ...] = ()) -> dict[str, Any]:
    """The task's figures over `scored` (answered items; unreadable ones score as wrong). Where each item brings
    its own classes (`labels_from`), F1 figures are computed only over items sharing one class set."""
    own = {tuple(r.get("classes") or ()) for r in scored} if task.labels_from else set()
    named = list(next(iter(own))) if len(own) == 1 else task.classes
    classes = named if task.answer != "letter" else [chr(ord("A") + i) for i in range(26)]
    gold = indicators([r["gold"] for r in scored], classes)
    pred = indicators([r["read"] for r in scored], classes)
    correct = np.array([r["readable"] and _same(r["gold"], r["read"]) for r in scored], dtype=bool)
    metrics = [m for m in task.metrics if (task.answer != "letter" and len(own) <= 1) or m == "accuracy"]
    out = task_figures(gold, pred, correct, named, metrics, seed)
    if task.labels_from:
        out["classes"] = named if len(own) == 1 else []
    if task.answer != "letter" and len(own) > 1:  # said wherever the line is shown: why it has no F1 figure
        for metric in ("macro_f1",) if "macro_f1" in task.metrics else ():
            out[metric], out[f"{metric}_note"] = None, mixed_classes(len(own), list(fields))
    if auroc_too and "auroc" in task.metrics:
        out["auroc"], out["auroc_note"] = _auroc(task, scored, seed)
    return out


def mixed_classes(sets: int, fields: list[str]) -> str:
    """Why a line over items of several class sets (MemeLens' overall line, a language spanning configs) has no F1
    figure: F1 is computed over one class set; `fields`: the group fields whose lines each hold one."""
    where = " or ".join(f"`{f}=`" for f in fields) or "a group whose items share one class set"
    return (f"mixed class sets: these items were asked {sets} different sets of classes, and F1 is computed over one "
            f"class set; fix: read macro-F1 on the lines of one {where}, where it is given")


def _one_set_fields(task: Task, scored: list[dict[str, Any]]) -> list[str]:
    """The task's group fields each of whose values holds items of one class set (MemeLens' config)."""
    def sets(field: str, value: Any) -> int:
        return len({tuple(r.get("classes") or ()) for r in scored if r["groups"].get(field) == value})

    return [f for f in task.groups if all(sets(f, v) <= 1 for v in {r["groups"].get(f) for r in scored})]


def _same(gold: Any, read: Any) -> bool:
    """Right: a list answer equal to the gold list; a single answer equal to the gold, or, where the gold lists
    several (a HarMeme meme with two targets), equal to any one of them."""
    if isinstance(gold, list) and not isinstance(read, list):
        return read in gold
    return sorted(gold) == sorted(read) if isinstance(gold, list) else gold == read


def _auroc(task: Task, scored: list[dict[str, Any]], seed: int) -> tuple[dict[str, Any] | None, str | None]:
    with_p = [r for r in scored if r["p_positive"] is not None]
    if not with_p:
        return None, NO_PROBABILITY
    positive = np.array([r["gold"] == task.positive for r in with_p], dtype=bool)
    figure = auroc(positive, np.array([r["p_positive"] for r in with_p], dtype=float), seed)
    missing = len(scored) - len(with_p)
    left_out = f"{missing} answer{'s' if missing != 1 else ''} without yes/no log-probabilities left out" \
        if missing else None
    if figure["value"] is None:  # every item with a probability is of one class: there is no curve to draw
        gold = with_p[0]["gold"]
        return figure, (f"one class only: the {len(with_p)} item(s) with log-probabilities are all gold {gold!r}, "
                        "and AUROC needs items of both classes; fix: ask more items (a larger --limit, or another "
                        "split)" + (f"; {left_out}" if left_out else ""))
    return figure, left_out


def tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    shared = {"model": report.get("model"), "split": report.get("split")}
    return {"answers": [{**shared, **d, **_correct(d)} for d in report["details"]],
            "figures": [{"task": name, "figure": figure, **fig} for name, task in report["tasks"].items()
                        for figure, fig in _named_figures(task)]}


def _named_figures(task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [(name, task[name]) for name in ("accuracy", "macro_f1", "auroc", *_extra(task)) if task.get(name)]
    for per in task.get("per_class", []):
        found += [(f"{part}[{per['class']}]", per[part]) for part in ("precision", "recall", "f1")]
    return found


def _extra(task: dict[str, Any]) -> list[str]:
    """The task's figures of registered metrics (type_weighted_f1, a benchmark module's own)."""
    from memegauge.benchmarks.kit.metrics import METRICS  # light: the registry

    return [name for name in METRICS if name in task]


def asked_line(task: dict[str, Any]) -> str:
    """``asked n of N`` and each reason a row was left out of the task, with its count."""
    rows = task.get("rows")
    line = f"asked {task['asked']} of {rows if rows is not None else '?'}"
    reasons = sorted((task.get("left_out") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    return line + ("; left out: " + ", ".join(f"{reason} ({count})" for reason, count in reasons) if reasons else "")


def models(config: dict[str, Any]) -> dict[str, list[str]]:
    return {"targets": [config["model"]]} if config.get("model") else {}


def headline(report: dict[str, Any]) -> list[Headline]:
    """Per task: accuracy, macro-F1, AUROC (where there is one) and the share of unreadable answers (lower is
    better), as the group ``overall (task)`` (the index page's key figures are a run's first overall group);
    per group value accuracy and macro-F1, as groups ``task: field=value``."""
    run, model = report["run"], str(report.get("model"))
    rows = []
    for name, task in report["tasks"].items():
        for figure in ("accuracy", "macro_f1", "auroc"):
            if task.get(figure) and task[figure].get("value") is not None:  # AUROC on fewer items: why, as its note
                left_out = task.get(f"{figure}_note")
                fig = {**task[figure], "note": "; ".join(filter(None, (task[figure].get("note"), left_out))) or None}
                rows.append(row(run, model, f"overall ({name})", figure, fig, "rate"))
            elif figure in task:  # asked for but not computable (no log-probabilities, one class only): say why,
                rows.append(row(run, model, f"overall ({name})", figure,  # over n=0: no item is behind it
                                {"value": None, "n": 0,
                                 "note": task.get(f"{figure}_note") or (task[figure] or {}).get("note")}, "rate"))
        for figure in _extra(task):
            if task.get(figure):
                rows.append(row(run, model, f"overall ({name})", figure, task[figure], "rate"))
        rows.append(row(run, model, f"overall ({name})", "unreadable", task["unreadable_share"], "rate",
                        higher_is_better=False))
        for group in task["groups"]:
            for figure in ("accuracy", "macro_f1"):
                if group.get(figure):
                    rows.append(row(run, model, f"{name}: {group['group']}={group['value']}", figure,
                                    group[figure], "rate"))
                elif group.get(f"{figure}_note"):  # not computable on this line (mixed class sets): why, n=0
                    rows.append(row(run, model, f"{name}: {group['group']}={group['value']}", figure,
                                    {"value": None, "n": 0, "note": group[f"{figure}_note"]}, "rate"))
    return rows


def exports() -> dict[str, ExportTable]:
    return {"answers": ExportTable("every (task, item): the model and split, gold, the answer, how it was read (None: "
                                   "unreadable or failed), `correct`, and P(positive) where the model gave "
                                   "log-probabilities", _answer_rows,
                                   columns=("model", "split", *BenchAnswer.model_fields, "correct"),
                                   types=(("p_positive", "float64"), ("correct", "bool_"), ("error", "string"),
                                          ("options", "int64"), ("classes", "list<string>")))}


def _answer_rows(store: Store, run: dict[str, Any]) -> list[dict[str, Any]]:
    """`answers`: each record with the run's model and split first (a table of several runs says which is which)."""
    import json

    config = json.loads(run.get("config_json") or "{}")
    shared = {"model": config.get("model"), "split": config.get("split")}
    return [{**shared, **row} for row in record_rows(BenchAnswer, _correct)(store, run)]


def _correct(item: dict[str, Any]) -> dict[str, Any]:
    return {"correct": bool(item["readable"] and _same(item["gold"], item["read"])) if item["ok"] else None}


BROWSED = 400  # items the run page lists (failed, unreadable and wrong ones first); the export has every one


def view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    facts = [("paper", report["paper"]), ("split", report["split"]), ("model", str(report["model"])),
             ("items", str(report["items"]))]
    blocks = [Block("facts", report["title"], facts=facts)]
    if report.get("format_warning"):  # first, before any figure it qualifies
        blocks.append(Block("note", "These figures measure the output format, not the model",
                            text=report["format_warning"]))
    for name, task in report["tasks"].items():
        said = (f"{name}: {asked_line(task)}. {task['answered']} answered, {task['unreadable']} unreadable (scored "
                f"as wrong), {task['failed']} failed (not scored)."
                + (f" {task['auroc_note']}" if task.get("auroc_note") else "")
                + "".join(f" {g['group']}={g['value']}: asked {g['asked']} of {g['rows']}." for g in task["groups"]
                          if g.get("rows") is not None))
        blocks.append(Block("table", f"{name}: figures (95% interval, n; published: the paper's own)",
                            table=_figure_table(task), text=said))
    blocks.append(_browser(report, store))
    return blocks, {}


def _figure_table(task: dict[str, Any]) -> Any:
    """Each figure with its interval and n (a figure that could not be computed: why, and the fix); the unreadable
    share; then the paper's figures for the same split and metric, marked published, with the paper's n."""
    rows = [[text(name), interval_cell(fig, percent=True) if fig.get("value") is not None else
             text(f"– ({_why_none(name)})"), _n_cell(fig.get("n"), task.get("auroc_note") if name == "auroc" else None)]
            for name, fig in _named_figures(task) if name != "auroc" or fig.get("value") is not None]
    if "auroc" in task and (task.get("auroc") or {}).get("value") is None:  # why, and the fix, where it would be
        rows.append([text("auroc"), text(f"not computed — {task.get('auroc_note') or NO_PROBABILITY}"), count(0)])
    rows.append([text("unreadable (lower is better)"), interval_cell(task["unreadable_share"], percent=True),
                 count(task["unreadable_share"].get("n"))])
    if task.get("macro_f1_note") and task.get("macro_f1") is None:  # why the line has no F1 (mixed class sets)
        rows.append([text("macro_f1"), text(f"not computed — {task['macro_f1_note']}"), count(0)])
    rows += [[text(f"{g['group']}={g['value']}: {name}"),
              interval_cell(g[name], percent=True) if g.get(name) else text(f"not computed — {g[f'{name}_note']}"),
              count(g[name].get("n") if g.get(name) else 0)]
             for g in task["groups"] for name in ("accuracy", "macro_f1") if g.get(name) or g.get(f"{name}_note")]
    rows += [[text(f"published: {p['metric']} of {p['system']}"),
              text(f"{100 * p['value']:.1f}% (n={p['n']})" if p.get("n") is not None else
                   f"{100 * p['value']:.1f}% (n not stated; {p['source']})"), count(p.get("n"))]
             for p in task["published"]]
    return table(["figure", "value [95% interval]", "n"], rows)


def _n_cell(n: int | None, left_out: str | None) -> Any:
    """A figure's n, with why it is below the items answered where it is (AUROC: answers without log-probabilities)."""
    from memegauge.report.blocks import Cell

    return count(n) if not left_out else Cell(f"{n} ({left_out})", n)


def _why_none(name: str) -> str:
    """Why a per-class figure has no value: what it divides by was zero."""
    if name.startswith("precision["):
        return "no answer said this class: precision divides by those answers"
    if name.startswith("recall["):
        return "no item has this class: recall divides by them"
    return "nothing was scored"


def _outcome(r: dict[str, Any]) -> str:
    if not r["ok"]:
        return "failed"
    if not r["readable"]:
        return "unreadable"
    return "right" if _same(r["gold"], r["read"]) else "wrong"


def _browser(report: dict[str, Any], store: Store) -> Block:
    """The items as asked: the meme, the exact prompt, the raw answer, how it was read, the gold and the outcome."""
    from memegauge.report.blocks import run_images

    pictures = run_images(store, report["run"]) or {}
    order = {"failed": 0, "unreadable": 1, "wrong": 2, "right": 3}
    rows = sorted(report["details"], key=lambda r: order[_outcome(r)])
    items = []
    for r in rows[:BROWSED]:
        read = "unreadable: no answer of the task's kind found" if r["ok"] and not r["readable"] else (
            f"failed call: {r['error']}" if not r["ok"] else
            f"read as {_shown(r['read'])}" + (f"; P(positive) = {r['p_positive']:.3f}"
                                      if r.get("p_positive") is not None else ""))
        items.append({"id": r["item"], "picture": pictures.get(r["item"]),
                      "summary": f"{_outcome(r)} · {r['task']} · item {r['item']} · gold {_shown(r['gold'])} · "
                                 f"read {_shown(r['read'])}",
                      "parts": [("prompt (exact text sent, with the picture)", r["prompt"]),
                                ("raw answer", r["answer"] or "(none)"), ("how it was read", read),
                                ("gold", _shown(r["gold"]))]})
    more = len(rows) - len(items)
    return Block("items", "Items", items=items,
                 text=("Failed, unreadable and wrong answers first; open an item for its prompt, raw answer, how it "
                       "was read and the gold." + (f" {more} more (right answers) are in `memegauge export "
                                                   f"{report['run']['name']} --table answers`." if more else "")))


def _shown(value: Any) -> str:
    if value is None:
        return "–"
    return ", ".join(value) if isinstance(value, list) else str(value)
