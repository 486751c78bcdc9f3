"""The local web server of `memegauge view` and `memegauge rate`: it listens on 127.0.0.1 only and answers
a request only when its Host header names this server (`host_allowed`), so a page on another site that
resolves its own name to 127.0.0.1 (DNS rebinding) cannot read or drive it. A command hands it a
`Responder`; `serve` runs it until Ctrl-C.
"""

from __future__ import annotations

import logging
import signal
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from memegauge.errors import InputError

LOCAL_HOSTS = ("127.0.0.1", "localhost")
log = logging.getLogger(__name__)


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


def same_origin(origin: str, host_header: str | None, allowed: tuple[str, ...] = LOCAL_HOSTS) -> bool:
    """Whether a request's `Origin` is this server: scheme http, a local host name, and the port the
    request was sent to (the Host header's). Another local server (another port) is another site."""
    try:
        parts, port = urlsplit(origin.strip()), _port(host_header)
        return (parts.scheme == "http" and parts.hostname in allowed and port is not None
                and (parts.port or 80) == port)
    except ValueError:  # a port out of range or not a number
        return False


def _port(host_header: str | None) -> int | None:
    """The port a Host header names (80 when it names none)."""
    if not host_header:
        return None
    tail = host_header.strip().rpartition("]")[2] if host_header.strip().startswith("[") else host_header
    text = tail.rpartition(":")[2] if ":" in tail else "80"
    return int(text) if text.isascii() and text.isdigit() else None


def _content_length(value: str | None) -> int | None:
    """A Content-Length header as a length; None when it is not a plain non-negative number (`-1`
    would read until the client closes, `abc` would raise)."""
    text = (value or "0").strip()
    return int(text) if text.isascii() and text.isdigit() else None


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
        timeout = CLIENT_TIMEOUT_S  # a client that stops sending mid-request frees its thread

        def _answer(self, method: str) -> None:
            if not host_allowed(self.headers.get("Host"), hosts):
                self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "unknown host")
                return
            length = _content_length(self.headers.get("Content-Length"))
            if length is None:
                self.send_error(HTTPStatus.BAD_REQUEST, "bad Content-Length")
                return
            if length > MAX_BODY:
                self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
                return
            request = self.rfile.read(length)  # a client silent past `timeout`: TimeoutError, the request dropped
            try:
                status, content_type, body = respond(method, self.path, self.headers, request)
            except Exception as exc:  # a bug answered as one, never a traceback on the rater's terminal
                log.error("%s %s: %s: %s", method, self.path[:200], type(exc).__name__, exc)
                self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR)
                return
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
        return _QuietServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise InputError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror})", "--port",
                         "choose another port, or leave --port out for a free one") from None


CLIENT_TIMEOUT_S = 30.0  # a local page sends its small requests at once; a client silent this long is gone


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001 (socketserver's signature)
        """A client that left mid-request (closed, reset, timed out) is one debug line, never
        socketserver's traceback on the rater's terminal; anything else is one error line."""
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            log.debug("client %s left mid-request: %s", client_address[0], type(exc).__name__)
        else:
            log.error("request from %s failed: %s: %s", client_address[0], type(exc).__name__, exc)


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
