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
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from memegauge.engine import failure_text
from memegauge.engine.store import Store
from memegauge.files import write_text_atomic
from memegauge.methods import method, methods
from memegauge.report import build_report, run_header
from memegauge.report.blocks import Block, Cell, count, data_blocks, table, text
from memegauge.report.sections import section_blocks
from memegauge.errors import MemeGaugeError

HERE = Path(__file__).parent
EMBEDDED_WARNING = ("This run used the embedded offline model, a small local model: its figures show "
                    "that the pipeline works, not how well any real model understands memes. They are "
                    "not meaningful evaluations.")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


# ---- header -------------------------------------------------------------------------------------

ROLES = ("agent", "targets", "judges")


def run_models(method_name: str, config: dict[str, Any],
               stored: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """The models a run used, by role: as the run stored them (`RunHeader.roles`), or for a run made
    before runs stored them, as its method reads them from the run's config (`Method.models`); no
    role when the method is not installed or names none."""
    found = method(method_name) if stored is None else None
    named = stored if stored is not None else found.models(config) if found and found.models else {}
    return {role: list(named.get(role, [])) for role in dict.fromkeys([*ROLES, *named])}


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
    models = run_models(run["method"], run.get("config") or {}, run.get("roles"))
    failed = ", ".join(f"{k}: {v}" for k, v in (run.get("failed_calls_by_class") or {}).items())
    method_name = run["method"] + (" (custom prompts)" if run.get("prompts") else "")
    facts = [("run", run["name"]), ("method", method_name), ("status", run["status"]),
             ("date", _date(run.get("created"))),
             *((role, ", ".join(names)) for role, names in models.items() if names),  # only the roles it has
             ("seed", text(run.get("seed")).text),
             ("package version", str(run.get("package_version"))),
             *((("method version", run["method_version"]),) if run.get("method_version") else ()),
             ("config hash", str(run.get("config_hash"))),
             ("calls", f"{run.get('calls')} ({run.get('calls_made')} made, {run.get('cached_calls')} cached)"),
             ("failed calls", f"{run.get('failed_calls')}" + (f" ({failed})" if failed else "")),
             ("tokens", str(run.get("tokens"))), ("cost", f"${run.get('cost') or 0:.4f}")]
    if run.get("protocol"):
        facts.append(("protocol", ", ".join(f"{k}: {v}" for k, v in run["protocol"].items())))
    if run.get("prompts"):
        facts.append(("custom prompts", f"{run['prompts']['folder']}: " + ", ".join(
            f"{name} ({digest[:12]})" for name, digest in run["prompts"]["hashes"].items())))
    truncated = ", ".join(f"{k}: {v}" for k, v in (run.get("truncated_by_stage") or {}).items())
    facts.append(("outputs cut at max_tokens", f"{run.get('truncated_calls') or 0} of {run.get('calls')}"
                  + (f" ({truncated}): the answer stopped at its budget, and what was read of it is all "
                     "there is" if truncated else "")))
    images = run.get("images_by_model") or {}
    if images:
        facts.append(("calls with the picture", ", ".join(
            f"{m}: {v['with_image']} of {v['calls']}"
            + (f" ({v['unrecorded']} made before pictures were counted)" if v.get("unrecorded") else "")
            + (f" ({v['as_text']} read the meme's text and caption in place of the picture: the model is "
               "text-only, `vision: false`)" if v.get("as_text") else "")
            for m, v in images.items())))
    if run.get("error"):
        facts.append(("error", error_text(run["error"])))
    return facts


def error_text(error: str) -> str:
    """A run's stored error in words: an incomplete run stores its failure summary as JSON (the
    engine's `failure_text` reads it out); any other error is its own message."""
    try:
        summary = json.loads(error)
        return failure_text(summary)
    except (ValueError, TypeError, KeyError, AttributeError):
        return str(error)


def _date(stamp: float | None) -> str:
    import datetime as dt

    if stamp is None:
        return "–"
    return dt.datetime.fromtimestamp(stamp, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def generic_view(report: dict[str, Any], store: Store) -> tuple[list[Block], dict[str, Any]]:
    return data_blocks("Figures", {k: v for k, v in report.items() if k not in ("run", "details")}), {}


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


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def page_script() -> str:
    """The page's script: the shared core (`static/report.js`: helpers, sortable tables, start-up) with
    every registered method's browser (`<method folder>/browser.js`) inside the core's closure, so that
    it uses the core's helpers (`el`, `lazy`, `pagedList`, …), and the table of browsers by method name
    that a browser block (`Block(browser=NAME)`) is looked up in. A browser file defines one function
    named as its method: `function arena(root, data) {…}`."""
    browsers = [m for m in methods() if m.folder and (m.folder / "browser.js").is_file()]
    for found in browsers:
        if not _IDENTIFIER.fullmatch(found.name):
            raise MemeGaugeError(f"method {found.name!r} has a browser.js but its name is not a JavaScript "
                                 "identifier (the browser function is named as the method)")
    table = ", ".join(f"{m.name}: {m.name}" for m in browsers)
    scripts = "".join((m.folder / "browser.js").read_text(encoding="utf-8") for m in browsers)
    return (_static("report.js").replace("  /*@METHOD-BROWSERS@*/\n", scripts)
            .replace("  /*@BROWSER-TABLE@*/\n", f"  var BROWSERS = {{{table}}};\n"))


def render(report: dict[str, Any], store: Store) -> str:
    run = report["run"]
    found = method(run["method"])
    blocks, data = (found.view if found and found.view else generic_view)(report, store)
    blocks = blocks + section_blocks(report)
    script = page_script()
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
        models = run_models(run.method, run.config, run.roles)
        rows.append([Cell(run.name, run.name, href=file_name), text(run.method), text(run.status),
                     text(_date(run.created)), text(", ".join(models["targets"]) or None),
                     count(run.calls), count(run.failed_calls), count(run.tokens)])
    return _environment().get_template("index.html.j2").render(
        runs=table(["run", "method", "status", "date", "models evaluated", "calls", "failed calls", "tokens"], rows),
        warning=EMBEDDED_WARNING if any(embedded_warning(store, r.as_dict()) for r, _ in runs) else None,
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
