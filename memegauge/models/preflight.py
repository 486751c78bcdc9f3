"""Fail fast, before a run writes anything: every model named exists, its key variable is set, and
at least one replica of each remote endpoint accepts connections."""

from __future__ import annotations

import asyncio
import os
from urllib.parse import urlparse

from rich.console import Console

from memegauge.config import ModelRegistry, ModelSpec
from memegauge.models import backends
from memegauge.types import InputError

console = Console(stderr=True)


def preflight(registry: ModelRegistry, names: list[str], timeout_s: float = 3.0) -> None:
    """Raise one InputError (exit 2) for the first model that cannot work; warn on dead replicas."""
    specs = [registry.get(name) for name in dict.fromkeys(names)]
    for spec in specs:
        backends()[spec.backend].check_installed(where=f"model {spec.name!r} ({registry.source})")
        if spec.api_key_env and not os.environ.get(spec.api_key_env):
            raise InputError(f"model {spec.name!r}: environment variable {spec.api_key_env} is not set",
                             where=registry.source, fix=f"export {spec.api_key_env}=<your key>")
    remote = [s for s in specs if s.base_url]
    if remote:
        asyncio.run(_check_reachable(remote, registry.source, timeout_s))


async def _check_reachable(specs: list[ModelSpec], source: str, timeout_s: float) -> None:
    urls = sorted({url for spec in specs for url in spec.base_url})
    reachable = dict(zip(urls, await asyncio.gather(*(_accepts(u, timeout_s) for u in urls))))
    for spec in specs:
        dead = [u for u in spec.base_url if not reachable[u]]
        if len(dead) == len(spec.base_url):
            raise InputError(f"model {spec.name!r}: cannot connect to {', '.join(dead)}",
                             where=source, fix="start the server, or correct base_url")
        for url in dead:
            console.print(f"[yellow]warning:[/] model {spec.name!r}: replica {url} is unreachable;"
                          " the others will serve")


async def _accepts(url: str, timeout_s: float) -> bool:
    """A TCP connect is enough: HTTP-level errors (401, 404 on /models) still mean 'reachable'."""
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(parsed.hostname, port), timeout_s)
    except (OSError, asyncio.TimeoutError):
        return False
    writer.close()
    return True
