"""`memegauge rate RUN [--rater NAME] [--sample N] [--port P]`: people rate a run's outputs in the browser."""

from __future__ import annotations

import getpass
import re

import typer

from memegauge.errors import InputError


def default_rater() -> str:
    """The login name, cut to what a rater name may hold (`HumanRating.rater`)."""
    try:
        name = getpass.getuser()
    except (OSError, KeyError):
        name = ""
    return re.sub(r"[^\w .@+-]", "_", name)[:40] or "rater"


def register(app: typer.Typer) -> None:
    from memegauge.clikit import console, out, settings

    @app.command("rate")
    def rate_command(ctx: typer.Context, run: str = typer.Argument(..., help="Run name."),
                     rater: str | None = typer.Option(None, "--rater", help="Who rates (default: your login "
                                                         "name); each rater's votes are kept apart."),
                     sample: int = typer.Option(120, "--sample", min=1, help="Items per task (each task its own "
                                                "n); every rater gets the same ones."),
                     task: list[str] = typer.Option([], "--task", help="Only these rating tasks (repeatable; "
                                                    "default: every task the run offers). AdamMeme: score, "
                                                    "labels, reference, refined; MemeArena: pair, guideline, "
                                                    "guideline_round, context; MemeQA: answer."),
                     port: int = typer.Option(0, "--port", min=0, max=65535,
                                              help="Port on 127.0.0.1 (default: a free one)."),
                     host: list[str] = typer.Option([], "--host", help="Another name the page may be asked "
                                                    "for (Host header); it still listens on 127.0.0.1 only.")
                     ) -> None:
        """Rate a run's outputs in the browser (AdamMeme scores and categories, MemeArena pairs, MemeQA
        questions; the papers' quality studies of what the agents wrote: AdamMeme's reference answers and
        refined texts, MemeArena's guidelines, guideline rounds and contexts); the report's "People vs
        judges" section compares the votes with the judges and the quality studies with the papers."""
        from memegauge.rating.items import run_items
        from memegauge.rating.records import RATER_NAME
        from memegauge.rating.server import RatingApp
        from memegauge.rating.votes import CSV_RATER
        from memegauge.report import run_header
        from memegauge.localserver import LOCAL_HOSTS, local_server, serve

        name = rater if rater is not None else default_rater()
        if not RATER_NAME.match(name) or name == CSV_RATER:
            raise InputError(f"rater name {name!r} is not allowed", "--rater",
                             f"use 1–40 letters, digits, spaces or . @ + - _ ({CSV_RATER!r} names the CSV imports)")
        cfg = settings(ctx)
        if not cfg.store_path.exists():
            raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
        store = cfg.store()
        rated_run = {**run_header(store, run).as_dict(), "id": store.run_row(run)["id"]}
        items = run_items(store, rated_run, sample, task or None)
        hosts = (*LOCAL_HOSTS, *(h.lower() for h in host))
        page = RatingApp(store, rated_run, items, name, hosts)
        state = page.state()
        serve(local_server(page.respond, port, hosts),
              announce=lambda url: (out.print(url, highlight=False, soft_wrap=True),
                                    console.print(f"{len(items)} items for {name!r}, {state['rated']} rated; "
                                                  "votes are stored as given; Ctrl-C stops")))
