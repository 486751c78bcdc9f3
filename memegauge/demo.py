"""`memegauge demo`: every stage that has landed, on the bundled sample memes, with one model.

The demo is a functional tour, not an evaluation: the embedded model is a small offline model whose
figures say nothing about real models; everything it prints says so.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from memegauge.clikit import notes
from memegauge.engine import Store
from memegauge.files import user_cache_root, write_text_atomic
from memegauge.memes import load_memes
from memegauge.methods import DemoInputs
from memegauge.engine.preflight import preflight
from memegauge.samples import sample_memes_path
from memegauge.types import Meme

if TYPE_CHECKING:
    from memegauge.models.spec import ModelRegistry

console = notes  # status lines: `--quiet` silences them (the reports' paths on stdout stay)
WARNING = ("The embedded model is a small offline model: its figures show that the pipeline works, "
           "not how well any real model understands memes.")


def demo_meme_file(memes: list[Meme], tag: str) -> Path:
    """The chosen memes as a JSONL in the user cache, named by its content.

    A method run's config records its meme file, so the file must not live in `--out`: a rerun
    with another `--out` would then be a different config and could not replay from the store."""
    lines = "".join(json.dumps({"id": m.id, "image": str(m.image or ""), "text": m.text,
                                "caption": m.caption, "labels": m.labels}, ensure_ascii=False) + "\n"
                    for m in memes)
    digest = hashlib.sha256(lines.encode("utf-8")).hexdigest()[:16]
    path = user_cache_root() / "demo" / f"{tag}-{digest}.jsonl"
    return path if path.exists() else write_text_atomic(path, lines)


def _parts() -> list[Any]:
    """Each registered method's demo part, in `demo_order` (see `memegauge.methods.Method.demo`)."""
    from memegauge.methods import methods

    return [m.demo for m in sorted(methods(), key=lambda m: (m.demo_order, m.name)) if m.demo]


def run_demo(store: Store, registry: ModelRegistry, out_dir: Path, model: str = "embedded",
             memes_path: Path | None = None, progress: bool | None = None,
             skip_preflight: bool = False) -> None:
    """Validate everything first (memes, model, endpoint, pictures), so bad input writes nothing."""
    started = time.monotonic()
    memes = load_memes(memes_path or sample_memes_path())
    if not skip_preflight:
        preflight(registry, [model], pictures=[model], open_store=lambda: store)
    out_dir.mkdir(parents=True, exist_ok=True)
    console.print(f"[bold]MemeGauge demo[/] — {len(memes)} memes, model {model!r}, store {store.path}")
    console.print(f"[yellow]note:[/] {WARNING}")
    inputs = DemoInputs(store=store, registry=registry, memes=memes, model=model, out_dir=out_dir,
                        progress=progress)
    runs = [asyncio.run(part(inputs)) for part in _parts()]
    for name in runs:
        s = store.run_summary(name)
        console.print(f"run {name!r} ({s['method']}): {s['calls']} calls, "
                      f"{s['last_execution_new_calls']} made by this demo"
                      f"{' (the rest replayed from the store)' if s['last_execution_new_calls'] < s['calls'] else ''}"
                      f", {s['failed_calls']} failed, {s['tokens']} tokens{_run_notes(store, s)}")
    incomplete = [name for name in runs if store.run_row(name)["status"] != "done"]
    console.print(f"demo finished in {time.monotonic() - started:.0f} s; "
                  f"`memegauge report RUN` shows any run above")
    _write_reports(store, runs, out_dir)
    if incomplete:
        from memegauge.engine import RunIncomplete

        raise RunIncomplete(f"runs {', '.join(incomplete)} are incomplete (see their reports); rerun "
                            "`memegauge demo` to retry the failed calls")


def _run_notes(store: Store, summary: dict[str, Any]) -> str:
    """What a run's figures rest on that its counts do not say: answers cut at `max_tokens`, and a
    text-only model reading the meme's text in place of its picture (the embedded model is one)."""
    notes = []
    cut = sum(store.truncated_counts(summary["id"]).values())
    if cut:
        notes.append(f"{cut} of {summary['calls']} answers cut at max_tokens (read as far as they go)")
    as_text = sum(v.get("as_text", 0) for v in store.image_counts(summary["id"]).values())
    if as_text:
        notes.append(f"{as_text} calls read the meme's text and caption in place of its picture: the model is "
                     "text-only (`vision: false`)")
    return "".join(f"; {note}" for note in notes)


def _write_reports(store: Store, runs: list[str], out_dir: Path) -> None:
    """The demo's last step: one self-contained HTML report per run plus an index, paths on stdout."""
    from memegauge.report.html import write_html_reports

    index, *reports = write_html_reports(store, runs, out_dir, index=True)
    console.print("HTML reports (open in a browser; they work offline):")
    for path in reports:
        Console(soft_wrap=True).print(str(path.resolve()), highlight=False)
    Console(soft_wrap=True).print(f"{index.resolve()}  (index of the reports above)", highlight=False)
