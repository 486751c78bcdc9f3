"""`memegauge view [RUN] [--port P]`: serve the store's reports on 127.0.0.1 until Ctrl-C, on the local
server (`memegauge.localserver`: Host header checked) that also serves `memegauge rate`; and
`memegauge compare RUN...`: one leaderboard across runs (`memegauge.report.compare`).

`view` serves `/` (every run in the store: method, models, status, ISO date, key figures, and a form
to compare runs; with RUN, that run's report, rendered before the server starts so that a bad name
exits 2 with nothing served), `/run/<name>` (a run's report) and `/compare?runs=a&runs=b` (or
`runs=a,b`): the comparison page. Anything else is a 404 with a one-line text body; a comparison
that cannot be made (unknown run, mixed methods) is a 400 saying why. Pages are rendered when asked
for, one at a time (the store's connection is shared). Only the loopback interface is bound; port 0
lets the system pick a free one.
"""

from __future__ import annotations

import sys
import threading
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from collections.abc import Mapping

import typer

from memegauge.localserver import LOCAL_HOSTS, Response, host_allowed, local_server, serve  # noqa: F401
from memegauge.errors import InputError, MemeGaugeError


def report_server(page: str, port: int = 0, hosts: tuple[str, ...] = LOCAL_HOSTS) -> ThreadingHTTPServer:
    """A server (not yet serving) that answers `GET /` with the page and 404 elsewhere; requests whose
    Host header is not one of `hosts` get 421 (misdirected)."""
    body = page.encode("utf-8")

    def respond(method: str, path: str, headers: Mapping[str, str], _: bytes) -> Response:
        if method != "GET":
            return HTTPStatus.METHOD_NOT_ALLOWED, "", b""
        if path.split("?", 1)[0] not in ("/", "/index.html"):
            return HTTPStatus.NOT_FOUND, "", b""
        return HTTPStatus.OK, "text/html; charset=utf-8", body

    return local_server(respond, port, hosts)


def _runs_asked(query: str, known: set[str]) -> list[str]:
    """The runs of `/compare?runs=a&runs=b` or `?runs=a,b` (a value that is itself a run name is kept
    whole, so a run name with a comma still works)."""
    from urllib.parse import parse_qs

    names: list[str] = []
    for value in parse_qs(query, keep_blank_values=False).get("runs", []):
        names += [value] if value in known else [v for v in value.split(",") if v]
    return names


def store_server(store: Any, run: str | None = None, port: int = 0,
                 hosts: tuple[str, ...] = LOCAL_HOSTS) -> ThreadingHTTPServer:
    """A server (not yet serving) for the store's pages (see the module docstring)."""
    from urllib.parse import parse_qs, unquote

    from memegauge.report.compare import comparison
    from memegauge.report.formats import render_report
    from memegauge.report.pages import compare_page, runs_page

    lock = threading.Lock()
    first = render_report(store, run, "html").encode("utf-8") if run is not None else None

    def page(path: str, query: str) -> Response:
        if path in ("/", "/index.html"):
            return HTTPStatus.OK, HTML, first if first is not None else runs_page(store).encode("utf-8")
        if path.startswith("/run/") and len(path) > len("/run/"):
            name = unquote(path[len("/run/"):])
            if name not in {r[0] for r in store.db.execute("SELECT name FROM runs")}:
                return HTTPStatus.NOT_FOUND, TEXT, f"no run named {name!r} in this store\n".encode()
            return HTTPStatus.OK, HTML, render_report(store, name, "html").encode("utf-8")
        if path == "/compare":
            known = {r[0] for r in store.db.execute("SELECT name FROM runs")}
            try:
                allowed = parse_qs(query).get("allow_different", [""])[-1].lower() in ("1", "true", "yes")
                return HTTPStatus.OK, HTML, compare_page(comparison(store, _runs_asked(query, known), allowed),
                                                         links=True).encode("utf-8")
            except InputError as exc:
                again = "" if "allow_different" in query else (
                    "\nto compare them anyway, with the differences listed: add &allow_different=1 to the address "
                    "(or tick 'also runs that asked different questions' on the run list)\n")
                return HTTPStatus.BAD_REQUEST, TEXT, f"cannot compare: {exc}\n{again}".encode()
        if path.startswith("/profiles/"):  # `memegauge profile --site`'s pages, built when asked for (docs/profile.md)
            from memegauge.registry import PROFILE_PAGE, provided

            served_page = provided(PROFILE_PAGE)  # the profile's, by entry point: the report imports no profile
            if served_page is not None and (found := served_page(store, unquote(path[len("/profiles/"):]))) \
                    is not None:
                return HTTPStatus.OK, HTML, found.encode("utf-8")
        return HTTPStatus.NOT_FOUND, TEXT, b"not found: this server has /, /run/<name> and /compare?runs=...\n"

    def respond(method: str, path: str, headers: Mapping[str, str], _: bytes) -> Response:
        if method != "GET":
            return HTTPStatus.METHOD_NOT_ALLOWED, "", b""
        route, _, query = path.partition("?")
        with lock:
            try:
                return page(route, query)
            except MemeGaugeError as exc:  # a run that cannot be reported (e.g. stopped before its results)
                return HTTPStatus.CONFLICT, TEXT, f"cannot show this page: {exc}\n".encode()

    return local_server(respond, port, hosts)


HTML, TEXT = "text/html; charset=utf-8", "text/plain; charset=utf-8"


def serve_report(page: str, port: int = 0, announce=print, stop: threading.Event | None = None,
                 hosts: tuple[str, ...] = LOCAL_HOSTS) -> None:
    """Serve the page until Ctrl-C (or `stop` is set, for tests); `announce` gets the URL once listening."""
    serve(report_server(page, port, hosts), announce, stop)


def register(app: typer.Typer) -> None:
    from memegauge.clikit import console, out, safe, settings

    @app.command("view")
    def view_command(ctx: typer.Context,
                     run: str | None = typer.Argument(None, help="Run name (default: list every run)."),
                     port: int = typer.Option(0, "--port", min=0, max=65535,
                                              help="Port on 127.0.0.1 (default: a free one)."),
                     host: list[str] = typer.Option([], "--host", help="Another name this page may be "
                                                    "asked for (Host header), e.g. behind a tunnel; it "
                                                    "still listens on 127.0.0.1 only.")) -> None:
        """Serve the store's reports on 127.0.0.1: every run, each report, comparisons; Ctrl-C stops."""
        cfg = settings(ctx)
        if not cfg.store_path.exists():
            raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
        server = store_server(cfg.store(), run, port, hosts=(*LOCAL_HOSTS, *(h.lower() for h in host)))
        serve(server, announce=lambda url: (out.print(url, highlight=False, soft_wrap=True),
                                            console.print("serving; Ctrl-C stops")))

    @app.command("compare")
    def compare_command(ctx: typer.Context,
                        runs: list[str] = typer.Argument(..., help="Runs of one method."),
                        fmt: str = typer.Option("table", "--format", help="table, json, csv, md or html."),
                        out_path: Path | None = typer.Option(None, "--out", help="Write here instead of "
                                                                "stdout."),
                        allow_different: bool = typer.Option(
                            False, "--allow-different", help="Put runs that asked different questions "
                            "(other version, split, limit, types, seed, memes, prompts, …) side by side; "
                            "each difference is listed. Without it they are refused.")) -> None:
        """One leaderboard across runs of one method, every figure with its 95% interval."""
        from memegauge.files import write_text_atomic
        from memegauge.report.compare import FORMATS, comparison, render_found, warning

        cfg = settings(ctx)
        if not cfg.store_path.exists():
            raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
        if fmt not in FORMATS:
            raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {', '.join(FORMATS)}")
        found = comparison(cfg.store(), runs, allow_different)
        text = render_found(found, fmt)
        if warning(found) and (out_path or fmt != "table"):  # the table's text names them itself
            console.print(safe(warning(found)))
        if out_path:
            write_text_atomic(out_path, text)
            console.print(f"comparison written to {out_path}")
        elif fmt == "table":
            out.print(safe(text.rstrip("\n")), highlight=False, soft_wrap=True)
        else:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")

