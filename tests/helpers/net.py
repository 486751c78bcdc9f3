"""Network helpers for tests (servers bind 127.0.0.1 only)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it): for a server to start on, or for an
    endpoint that must be down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
