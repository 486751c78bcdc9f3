"""`memegauge view RUN [--port P]`: serve a run's HTML report on 127.0.0.1 until Ctrl-C, on the local
server (`memegauge.localserver`: Host header checked) that also serves `memegauge rate`.

The page is rendered once, before the server starts (bad run name → exit 2, nothing served), and
served from memory by the standard library's threading HTTP server: it is self-contained, so one
URL is all there is. Only the loopback interface is bound; port 0 lets the system pick a free one.
"""

from __future__ import annotations

import threading
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from collections.abc import Mapping

import typer

from memegauge.localserver import LOCAL_HOSTS, Response, host_allowed, local_server, serve  # noqa: F401
from memegauge.types import InputError


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


def serve_report(page: str, port: int = 0, announce=print, stop: threading.Event | None = None,
                 hosts: tuple[str, ...] = LOCAL_HOSTS) -> None:
    """Serve the page until Ctrl-C (or `stop` is set, for tests); `announce` gets the URL once listening."""
    serve(report_server(page, port, hosts), announce, stop)


def register(app: typer.Typer) -> None:
    from memegauge.clikit import console, out, settings

    @app.command("view")
    def view_command(ctx: typer.Context, run: str = typer.Argument(..., help="Run name."),
                     port: int = typer.Option(0, "--port", min=0, max=65535,
                                              help="Port on 127.0.0.1 (default: a free one)."),
                     host: list[str] = typer.Option([], "--host", help="Another name this page may be "
                                                    "asked for (Host header), e.g. behind a tunnel; it "
                                                    "still listens on 127.0.0.1 only.")) -> None:
        """Serve a run's HTML report on 127.0.0.1 and print its URL; Ctrl-C stops."""
        from memegauge.report.formats import render_report

        cfg = settings(ctx)
        if not cfg.store_path.exists():
            raise InputError("no store here yet", where=str(cfg.store_path), fix="pass --store PATH")
        page = render_report(cfg.store(), run, "html")
        serve_report(page, port, announce=lambda url: (out.print(url, highlight=False, soft_wrap=True),
                                                       console.print("serving; Ctrl-C stops")),
                     hosts=(*LOCAL_HOSTS, *(h.lower() for h in host)))

    from memegauge.rating.cli import register as register_rating

    register_rating(app)
