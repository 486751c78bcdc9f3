"""The profile as a page: self-contained HTML (no script, no request leaving the file; every meme text, answer
and name escaped by the template engine), Markdown, JSON, and flat tables (`tables`, `Profile.to_pandas`). All of
them render one `Profile`, so every format shows the same figures."""

from __future__ import annotations

import base64
import hashlib
import math
import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from memegauge.profiles.gather import MIN_N, RULE, WRONG
from memegauge.profiles.records import (Headline, ModelProfile, PairedDifference, Profile, PublishedFigure, RunUsed,
                                        kinds_by_run)
from memegauge.report.leaderboard import cell

HERE = Path(__file__).parent
FORMATS = ("html", "md", "json")
INTERVALS = ("95% intervals: Wilson for rates (clustered by meme where items share one), cluster bootstrap for means "
             "and ratings (a macro accuracy on fewer than 10 memes: Wilson on the pooled items' effective n), as each "
             "run's own report gives them; paired differences: see each row's method.")


# ---- what the pages show -------------------------------------------------------------------------------------

def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _published_text(found: list[PublishedFigure]) -> str:
    """Each figure with its n as the source states it (`n not stated` where it does not), as `eval` shows them."""
    return "; ".join(f"{f.system} {_pct(f.value)} ({f.n_text})" for f in found)


def published_notes(profile: Profile) -> list[str]:
    """What the sources say of their n where they give no exact count (`PublishedFigure.n_note`), each once."""
    return list(dict.fromkeys(f.n_note for p in profile.models for f in p.published if f.n_note))


def _kinds(profile: Profile) -> list[str]:
    return list(dict.fromkeys(r.kind for p in profile.models for r in p.runs))


def runs_used(profile: Profile) -> dict[tuple[str, str], RunUsed]:
    return {(p.model, r.run): r for p in profile.models for r in p.runs}


def headline_lines(profile: Profile) -> list[dict[str, Any]]:
    """One line per kind × group × figure of the headline block: each model's cell, its n, how its run was cut
    down (a cut-down run shares its full run's line, never a line of its own), and the published figures for that
    kind, group and metric (same split by construction)."""
    used = runs_used(profile)
    lines: dict[tuple[str, str, str], dict[str, Any]] = {}
    for p in profile.models:
        for r in p.headline:
            key = (used[(p.model, r.run)].kind, r.group, r.figure)
            line = lines.setdefault(key, {"kind": key[0], "group": r.group, "figure": r.figure, "cells": {},
                                          "values": {}, "n": {}, "samples": {}, "published": []})
            line["cells"][p.model] = cell(r)
            line["values"][p.model] = r.value
            line["n"][p.model] = r.n
            if used[(p.model, r.run)].sample:
                line["samples"][p.model] = used[(p.model, r.run)].sample
    seen = set()
    for p in profile.models:
        for f in p.published:
            key = (f.kind, f.group, f.metric)
            if key in lines and (key, f.system) not in seen:
                seen.add((key, f.system))
                lines[key]["published"].append(f)
    for line in lines.values():
        line["published_text"] = _published_text(line["published"])
    return sorted(lines.values(), key=lambda x: (_kinds(profile).index(x["kind"]), x["group"], x["figure"]))


def bar(r: Headline) -> dict[str, Any]:
    """A CSS bar for a rate with its interval: widths in percent of the track (no script, no picture)."""
    if r.unit != "rate" or r.value is None:
        return {"shown": False}
    lo, hi = (r.ci95_lo, r.ci95_hi) if r.ci95_lo is not None else (r.value, r.value)
    return {"shown": True, "value": round(100 * r.value, 2), "lo": round(100 * lo, 2),
            "width": round(100 * (hi - lo), 2)}


FONT = 10  # the radar labels' font size (px)
CHAR = 0.62  # a generous average glyph width of a sans-serif font, in em: labels are laid out to this estimate


def _label_box(x: float, y: float, anchor: str, lines: list[str]) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a text label drawn at (x, y) (its first baseline) with `anchor`, estimated."""
    width = max(len(line) for line in lines) * FONT * CHAR
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return left, y - FONT, left + width, y + FONT * 0.3 + FONT * 1.2 * (len(lines) - 1)


def radar(rows: list[Headline], size: int = 220) -> Markup | None:
    """An inline SVG radar of a model's arena win rate per dimension (3+ dimensions), with a text title per point;
    every name escaped. Each label (its dimension over its figure) is anchored away from the centre on its side,
    and the viewBox is widened to hold every label whole (by a generous estimate of its width), so none is cut.
    None with fewer than 3 dimensions."""
    rows = [r for r in rows if r.unit == "rate" and r.value is not None]
    if len(rows) < 3:
        return None
    from markupsafe import escape

    centre, radius = size / 2, size / 2 - 40
    points, axes, labels = [], [], []
    boxes = [(centre - radius, centre - radius, centre + radius, centre + radius)]
    for i, r in enumerate(rows):
        angle = -math.pi / 2 + 2 * math.pi * i / len(rows)
        x, y = math.cos(angle), math.sin(angle)
        points.append(f"{centre + radius * r.value * x:.1f},{centre + radius * r.value * y:.1f}")
        axes.append(f'<line x1="{centre}" y1="{centre}" x2="{centre + radius * x:.1f}" y2="{centre + radius * y:.1f}" '
                    'stroke="#c8ccd4"/>')
        anchor = "middle" if abs(x) < 0.3 else ("start" if x > 0 else "end")
        lines = [r.group, f"{100 * r.value:.0f}%"]
        lx = centre + (radius + 6) * x
        # above the top axis the two lines sit over the tip; below the bottom, under it; at the sides, centred on it
        ly = centre + (radius + 8) * y + (FONT if y > 0.3 else -FONT * 1.2 if y < -0.3 else 0) + FONT * 0.35
        boxes.append(_label_box(lx, ly, anchor, lines))
        spans = "".join(f'<tspan x="{lx:.1f}" dy="{0 if k == 0 else FONT * 1.2:.0f}">{escape(line)}</tspan>'
                        for k, line in enumerate(lines))
        labels.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" font-size="{FONT}">{spans}</text>')
    pad = 4
    left, top = min(b[0] for b in boxes) - pad, min(b[1] for b in boxes) - pad
    width, height = max(b[2] for b in boxes) + pad - left, max(b[3] for b in boxes) + pad - top
    rings = "".join(f'<circle cx="{centre}" cy="{centre}" r="{radius * f:.1f}" fill="none" stroke="#e3e6ec"/>'
                    for f in (0.25, 0.5, 0.75, 1.0))
    title = escape("Win rate per judged dimension: " + "; ".join(f"{r.group} {cell(r)}" for r in rows))
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width:.0f}" height="{height:.0f}" '
                  f'viewBox="{left:.1f} {top:.1f} {width:.1f} {height:.1f}" style="max-width: 100%; height: auto">'
                  f'<title>{title}</title>{rings}{"".join(axes)}'
                  f'<polygon points="{" ".join(points)}" fill="rgba(46,90,172,.25)" stroke="#2e5aac"/>'
                  f'{"".join(labels)}</svg>')


def model_sections(profile: Profile, p: ModelProfile) -> list[dict[str, Any]]:
    """Per kind of one model: its groups ranked (with bars), strengths, weaknesses with examples, radar."""
    out = []
    kinds = kinds_by_run(profile)
    for run in p.runs:
        groups = [r for r in p.groups if kinds[(p.model, r.run)] == run.kind]
        out.append({
            "kind": run.kind, "run": run.run,
            "groups": [{"row": r, "cell": cell(r), "bar": bar(r)} for r in groups],
            "strengths": [r for r in p.strengths if kinds[(p.model, r.run)] == run.kind],
            "weaknesses": [{"row": r, "cell": cell(r),
                            "examples": [e for e in p.examples if e.run == run.run and e.group == r.group]}
                           for r in p.weaknesses if kinds[(p.model, r.run)] == run.kind],
            "wrong": [e for e in p.examples if e.run == run.run and e.kind == run.kind and e.group == WRONG],
            "radar": radar(groups) if run.radar else None,
            "higher_is_better": groups[0].higher_is_better if groups else True,
        })
    return out


def reading(d: PairedDifference) -> str:
    """What a paired difference supports: a better model only when its 95% interval excludes 0 and the exact
    McNemar test agrees (p < 0.05); an interval and a test that disagree (few discordant items) say so."""
    if d.ci95_lo is None:
        return "no interval"
    excludes = d.ci95_lo > 0 or d.ci95_hi < 0
    if not excludes:
        return "no clear difference"
    if d.mcnemar_p is None or d.mcnemar_p >= 0.05:
        return "unclear: the interval excludes 0, McNemar p ≥ 0.05"
    return f"{d.model_a if d.ci95_lo > 0 else d.model_b} better"


def paired_lines(profile: Profile) -> list[dict[str, Any]]:
    out = []
    for d in profile.paired:
        ci = "" if d.ci95_lo is None else f" [{100 * d.ci95_lo:+.1f}, {100 * d.ci95_hi:+.1f}]"
        verdict = reading(d)
        out.append({"d": d, "difference": f"{100 * d.difference:+.1f} pts{ci}" + (f" ({d.note})" if d.note else ""),
                    "p": "–" if d.mcnemar_p is None else f"{d.mcnemar_p:.3g}", "verdict": verdict})
    return out


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = _pct
    env.filters["cell"] = cell
    return env


def style() -> Markup:
    return Markup((HERE / "templates" / "profile.css").read_text(encoding="utf-8"))


def to_html(profile: Profile, links: dict[str, str] | None = None, home: str | None = None) -> str:
    """One self-contained page: a column per model (side by side when there are several). `links`: model → the
    href of its own page (the static site); `home`: the href of the site's index."""
    return _environment().get_template("profile.html.j2").render(
        profile=profile, title=" vs ".join(p.model for p in profile.models), headline=headline_lines(profile),
        sections={p.model: {s["kind"]: s for s in model_sections(profile, p)} for p in profile.models},
        paired=paired_lines(profile), published_notes=published_notes(profile),
        kinds=_kinds(profile), intervals=INTERVALS, rule=RULE, min_n=MIN_N, style=style(), links=links or {}, home=home)


def script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


# ---- Markdown ------------------------------------------------------------------------------------------------

def md(value: Any) -> str:
    """A Markdown table cell: markup shown as text by any renderer that passes HTML through, pipes escaped."""
    text = "" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("`", "\\`")


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    return ["| " + " | ".join(md(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(md(c) for c in row) + " |" for row in rows), ""]


def to_markdown(profile: Profile) -> str:
    models = [p.model for p in profile.models]
    out = [f"# MemeGauge profile: {md(' vs '.join(models))}", "",
           f"MemeGauge {md(profile.version)} · built {md(profile.date)} · store {md(profile.store)}", "",
           *(f"Not shown: {md(note)}" for note in profile.notes), "", "## Headline", ""]
    out += _md_table(["kind", "group", "figure", *models, "published (same split and metric)"],
                     [[x["kind"], x["group"], x["figure"], *(headline_text(x, m) for m in models),
                       x["published_text"] or "–"] for x in headline_lines(profile)])
    out += [*(f"Published n: {md(note)}" for note in published_notes(profile)), ""] if published_notes(profile) else []
    if profile.paired:
        out += ["## Side by side: paired differences on the items both answered", ""]
        out += _md_table(["kind", "group", "figure", "A − B", "n", "A only right", "B only right", "McNemar p",
                          "reading", "method"],
                         [[x["d"].kind, x["d"].group, x["d"].figure,
                           f"{x['d'].model_a} − {x['d'].model_b}: {x['difference']}",
                           x["d"].n, x["d"].a_only, x["d"].b_only, x["p"], x["verdict"], x["d"].method]
                          for x in paired_lines(profile)])
    for p in profile.models:
        out += [f"## {md(p.model)}", ""]
        if p.missing:
            out += [f"Not measured (another profiled model was): {md('; '.join(p.missing))}", ""]
        for section in model_sections(profile, p):
            out += [f"### {md(section['kind'])}", ""]
            if section["groups"]:
                out += _md_table(["group", "figure", "value [95% CI]", "n"],
                                 [[g["row"].group, g["row"].figure, g["cell"], g["row"].n] for g in section["groups"]])
            if section["strengths"]:
                out += ["Strengths: " + md("; ".join(f"{r.group} {cell(r)}, n={r.n}" for r in section["strengths"])),
                        ""]
            for weak in section["weaknesses"]:
                out += [f"Weakness: **{md(weak['row'].group)}** {md(weak['cell'])}, n={weak['row'].n}", ""]
                out += [f"- meme {md(e.meme)} ({md(e.verdict)}): {md(e.text)} — answer: {md(e.answer)} — expected: "
                        f"{md(e.expected)}"
                        for e in weak["examples"]]
                out += [""] if weak["examples"] else []
            if section["groups"] and not section["strengths"] and not section["weaknesses"]:
                out += [f"No group is a clear strength or weakness (n ≥ {MIN_N}, interval clear of the overall).", ""]
            if section["wrong"]:
                out += ["Memes it got wrong (no group is a clear weakness):", ""]
                out += [f"- meme {md(e.meme)} ({md(e.verdict)}): {md(e.text)} — answer: {md(e.answer)} — expected: "
                        f"{md(e.expected)}"
                        for e in section["wrong"]] + [""]
        out += ["### Reproducibility", ""]
        if p.endpoint:
            where = ", ".join(p.endpoint.base_url) or "local"
            out += [f"Endpoint: {md(p.endpoint.backend)} {md(p.endpoint.model)} at {md(where)}", ""]
        out += _md_table(["kind", "run", "date", "status", "config hash", "MemeGauge", "calls (made, failed)", "tokens",
                          "cost $", "seconds", "data", "items (fingerprint)", "chosen because", "not shown"],
                         [[r.kind, r.run, r.date, r.status, r.config_hash[:16], r.package_version,
                           f"{r.calls} ({r.calls_made}, {r.failed_calls})", r.tokens, f"{r.cost:.4f}",
                           f"{r.seconds:.1f}",
                           "; ".join(f"{k}: {v}" for k, v in r.sources.items()),
                           f"{r.items if r.items is not None else '–'} ({r.data_fingerprint or '–'})"
                           + (f", cut down: {r.sample}" if r.sample else ""), r.chosen,
                           "; ".join(f"{o.run}: {o.reason}" for o in r.others) or "–"] for r in p.runs])
    return "\n".join(out + [RULE, INTERVALS, ""])


def headline_text(line: dict[str, Any], model: str) -> str:
    """A model's headline cell as text: the figure with its interval and n, and how its run was cut down."""
    if model not in line["cells"]:
        return "–"
    text = f"{line['cells'][model]}, n={line['n'][model]}"
    return text + (f" (cut down: {line['samples'][model]})" if model in line["samples"] else "")


TERMINAL_PUBLISHED = 3  # published figures a terminal line names (every one is on the page: --out)


def few_published(found: list[PublishedFigure], limit: int = TERMINAL_PUBLISHED) -> str:
    """A headline line's published figures in a few words: humans first, then the best system, then random, and
    '+k more (--out)' saying where the others are."""
    human = [f for f in found if "human" in f.system.lower()]
    chance = [f for f in found if f.system.lower().startswith("random")]
    others = sorted((f for f in found if f not in human and f not in chance), key=lambda f: -f.value)
    chosen = (human[:1] + others[:1] + chance[:1] + others[1:])[:limit]
    more = len(found) - len(chosen)
    return _published_text(chosen) + (f"; +{more} more (--out FILE shows them all)" if more else "")


WHOLE = re.compile(r"\(n not stated\)|`[^`]*`|\[[^\]]*\]|--[a-z][a-z-]* (?:[A-Z][A-Za-z]*|FILE|DIR)(?:\.[a-z]+)?")
"""What a wrapped line never breaks inside: `(n not stated)`, a command in backquotes, an interval, an option with
its argument."""
KEEP = "\x00"  # a space inside such a span while wrapping (never in the text: `safe` strips control characters)


def _wrapped(line: str, width: int | None) -> list[str]:
    """`line` on lines of at most `width` columns (None: one line), broken between words only, never inside a
    command, an interval or an option and its argument (`WHOLE`); a continuation is indented two more spaces than
    the line. A single word wider than the terminal stays whole (a run name, a path)."""
    if width is None or len(line) <= width:
        return [line]
    import textwrap

    indent = line[:len(line) - len(line.lstrip(" "))]
    kept = WHOLE.sub(lambda m: m.group(0).replace(" ", KEEP), line[len(indent):])
    return [x.replace(KEEP, " ") for x in textwrap.wrap(kept, width=max(width, 40), initial_indent=indent,
                                                         subsequent_indent=indent + "  ", break_long_words=False,
                                                         break_on_hyphens=False)]


def to_text(profile: Profile, width: int | None = None) -> str:
    """A readable summary for the terminal (`memegauge profile MODEL` without --out): each headline figure with its
    interval and n per model, the named strengths and weaknesses, the paired readings and the runs read. Plain
    text; the caller strips control sequences. The published figures beside a headline are a few (`few_published`),
    each with its n. Every line is wrapped at `width` columns (the terminal's; None, for a file or a pipe: whole
    lines)."""
    models = [p.model for p in profile.models]
    out = [f"MemeGauge profile: {' vs '.join(models)}  (MemeGauge {profile.version}, store {profile.store})", "",
           "Headline (figure [95% CI], n):"]
    for line in headline_lines(profile):
        out.append(f"  {line['kind']} — {line['group']}, {line['figure'].replace('_', ' ')}")
        out += [f"    {m}: {headline_text(line, m)}" for m in models if m in line["cells"]]
        if line["published"]:
            out.append(f"    published (same split and metric): {few_published(line['published'])}")
    out += [f"  published n: {note}" for note in published_notes(profile)]
    out += ["", f"Strengths and weaknesses (n ≥ {MIN_N}, 95% interval clear of the overall figure):"]
    for p in profile.models:
        for section in model_sections(profile, p):
            named = [f"strongest {r.group} {cell(r)}, n={r.n}" for r in section["strengths"]]
            named += [f"weakest {w['row'].group} {w['cell']}, n={w['row'].n}" for w in section["weaknesses"]]
            out.append(f"  {p.model} · {section['kind']}: {'; '.join(named) or 'no clear strength or weakness'}")
    if profile.paired:
        out += ["", "Paired differences (A − B on the same items):"]
        out += [f"  {x['d'].kind}, {x['d'].group}: {x['d'].model_a} − {x['d'].model_b} {x['difference']}, "
                f"n={x['d'].n}, McNemar p={x['p']}: {x['verdict']}" for x in paired_lines(profile)
                if x["d"].group == "overall"]
    out += ["", "Runs read:"]
    for p in profile.models:
        out += [f"  {p.model}: {r.kind}: {r.run} ({r.chosen})" for r in p.runs]
    out += [f"  not shown: {note}" for note in profile.notes]
    out += ["", "The whole page, with groups, examples and reproducibility: --out FILE.html (or .md, .json), or "
                "--site DIR."]
    return "\n".join(wrapped for line in out for wrapped in _wrapped(line, width)) + "\n"


def render(profile: Profile, fmt: str) -> str:
    from memegauge.types import InputError

    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {', '.join(FORMATS)}")
    if fmt == "json":
        return profile.model_dump_json(indent=2)
    return to_markdown(profile) if fmt == "md" else to_html(profile)
