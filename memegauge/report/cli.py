"""`memegauge view RUN [--port P]`: serve a run's HTML report on 127.0.0.1 until Ctrl-C; the local
server it runs on (`local_server`, Host-header checked) also serves `memegauge rate` (`memegauge.rating`).

The page is rendered once, before the server starts (bad run name → exit 2, nothing served), and
served from memory by the standard library's threading HTTP server: it is self-contained, so one
URL is all there is. Only the loopback interface is bound; port 0 lets the system pick a free one.
"""

from __future__ import annotations

import signal
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Mapping

import typer

from memegauge.types import InputError


LOCAL_HOSTS = ("127.0.0.1", "localhost")


def host_allowed(header: str | None, allowed: tuple[str, ...] = LOCAL_HOSTS) -> bool:
    """Whether a request's Host header names this server: a page on 127.0.0.1 must not answer a
    name that merely resolves there (DNS rebinding would let another site read the report)."""
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:port
        host = host[1:].partition("]")[0]
    else:
        host = host.rpartition(":")[0] if host.count(":") == 1 else host
    return host in allowed


Response = tuple[int, str, bytes]
"""(HTTP status, Content-Type, body) as a responder returns it; an error status with an empty body
gets the standard error page."""
Responder = Callable[[str, str, Mapping[str, str], bytes], Response]
"""(method, path, headers, request body) -> Response; called from the server's threads."""
MAX_BODY = 1 << 20  # a local page's requests are small: refuse more than 1 MiB


def local_server(respond: Responder, port: int = 0, hosts: tuple[str, ...] = LOCAL_HOSTS) -> ThreadingHTTPServer:
    """A server (not yet serving) on 127.0.0.1 that hands GET and POST requests to `respond`; requests
    whose Host header is not one of `hosts` get 421 (misdirected) before `respond` sees them. Shared by
    `view` (one page) and `rate` (a page and its JSON API)."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            if not host_allowed(self.headers.get("Host"), hosts):
                self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "unknown host")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
                return
            status, content_type, body = respond(method, self.path, self.headers, self.rfile.read(length))
            if status >= 400 and not body:
                self.send_error(status)
                return
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._answer("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._answer("POST")

        def log_message(self, format: str, *args: object) -> None:  # quiet: the URL is what matters
            pass

    try:
        return ThreadingHTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise InputError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror})", "--port",
                         "choose another port, or leave --port out for a free one") from None


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


def serve(server: ThreadingHTTPServer, announce=print, stop: threading.Event | None = None) -> None:
    """Run `server` until Ctrl-C (or `stop` is set); `announce` gets the URL once listening.

    Ctrl-C sets the stop event through a SIGINT handler installed before the URL is announced, so an
    interrupt at any moment (even mid-print) ends in a clean shutdown rather than a traceback."""
    stop = stop or threading.Event()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    previous = _on_sigint(stop)
    try:
        announce(f"http://127.0.0.1:{server.server_address[1]}/")
        stop.wait()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        server.shutdown()
        server.server_close()


def _on_sigint(stop: threading.Event):
    """Route SIGINT to `stop`; returns the previous handler (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda *_: stop.set())


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
