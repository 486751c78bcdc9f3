"""`memegauge profile --site DIR`: a static site to publish as it is (GitHub Pages, an intranet): `index.html`, a
leaderboard across the profiled models (sortable by a small inline script, ordered and readable without it), one
page per model under `models/`, and `compare.html` with every model side by side and their paired differences.
Every page is self-contained: pictures are data: URLs, styles inline, the only script is the index's sorter
(allowed by its hash in the page's Content-Security-Policy); no request leaves the folder."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from markupsafe import Markup

from memegauge.files import write_text_atomic
from memegauge.profiles.records import Profile
from memegauge.profiles.render import _environment, headline_lines, headline_text, script_hash, style, to_html

SORTER = """document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.tabIndex = 0; th.title = "sort by this column";
  function sort() {
    var body = th.closest("table").tBodies[0], up = th.dataset.dir !== "asc";
    th.dataset.dir = up ? "asc" : "desc";
    Array.from(body.rows).sort(function (a, b) {
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (x === "" || x === undefined) return 1; if (y === "" || y === undefined) return -1;
      var d = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
      return up ? d : -d;
    }).forEach(function (row) { body.appendChild(row); });
  }
  th.addEventListener("click", sort);
  th.addEventListener("keydown", function (e) { if (e.key === "Enter") sort(); });
});
document.body.setAttribute("data-ready", "1");"""


def page_name(model: str) -> str:
    """A file name for a model's page: its name's safe characters and 8 hex digits of its sha256 (two names that
    differ only in unsafe characters never share a page)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._")[:60] or "model"
    return f"{safe}-{hashlib.sha256(model.encode('utf-8')).hexdigest()[:8]}.html"


def _single(profile: Profile, index: int) -> Profile:
    page = profile.models[index]
    return profile.model_copy(update={"models": [page], "paired": []})


def index_columns(profile: Profile) -> list[tuple[str, str, str]]:
    """(kind, group, figure) of every headline line, in the page's order."""
    return [(x["kind"], x["group"], x["figure"]) for x in headline_lines(profile)]


def index_html(profile: Profile, links: dict[str, str]) -> str:
    lines = headline_lines(profile)
    first = next((x for x in lines if x["values"]), None)
    models = [p.model for p in profile.models]
    if first is not None:  # ordered without the script too: best first on the first column
        rows_by = {r.model: r for p in profile.models for r in p.headline}
        higher = next((r.higher_is_better for r in rows_by.values()), True)
        models.sort(key=lambda m: (first["values"].get(m) is None,
                                   -(first["values"].get(m) or 0) if higher else (first["values"].get(m) or 0)))
    table = [{"model": m, "href": links[m],
              "cells": [{"text": x["cells"].get(m, "–"), "n": x["n"].get(m), "sample": x["samples"].get(m),
                         "title": headline_text(x, m), "v": "" if x["values"].get(m) is None else x["values"][m]}
                        for x in lines]} for m in models]
    return _environment().get_template("index.html.j2").render(
        profile=profile, lines=lines, table=table, style=style(), script=Markup(SORTER),
        script_hash=script_hash(SORTER), compare="compare.html" if len(profile.models) > 1 else None)


def site_pages(profile: Profile) -> dict[str, str]:
    """{path relative to the site's folder: page}: what `write_site` writes and `memegauge view` serves."""
    links = {p.model: f"models/{page_name(p.model)}" for p in profile.models}
    pages = {links[p.model]: to_html(_single(profile, i), home="../index.html") for i, p in enumerate(profile.models)}
    if len(profile.models) > 1:
        pages["compare.html"] = to_html(profile, links=links, home="index.html")
    return {**pages, "index.html": index_html(profile, links)}


def served_page(store: Any, path: str) -> str | None:
    """`memegauge view`'s `/profiles/<path>`: the static site's page at `path` for every model the store evaluated,
    built from the store when asked for; None when the site has no such page."""
    from memegauge.profiles.gather import build_profile, evaluated_models

    models = evaluated_models(store)
    found = build_profile(store, models, named=False) if models else None
    return site_pages(found).get(path or "index.html") if found and found.models else None


def write_site(profile: Profile, folder: Path) -> list[Path]:
    """Write the site into `folder` (created); each file whole or not at all. Returns the files written."""
    pages = site_pages(profile)  # every page rendered before the first is written
    (folder / "models").mkdir(parents=True, exist_ok=True)
    for path, text in pages.items():
        write_text_atomic(folder / path, text)
    return [folder / path for path in pages]


__all__ = ["page_name", "write_site"]
