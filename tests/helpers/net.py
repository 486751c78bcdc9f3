"""Network helpers for tests (servers bind 127.0.0.1 only)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it): for a server to start on, or for an
    endpoint that must be down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@asynccontextmanager
async def chat_server(handler: Callable[..., Awaitable[Any]]) -> AsyncIterator[int]:
    """An aiohttp server on 127.0.0.1 whose `POST /v1/chat/completions` is `handler`; yields its port."""
    from aiohttp import web

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]
    finally:
        await runner.cleanup()
