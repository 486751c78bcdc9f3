"""What an OpenAI-compatible server says of its own load, for `max_concurrency: auto`.

vLLM and SGLang publish Prometheus gauges at `/metrics` (requests running in the batch and waiting for
it), llama.cpp too when started with `--metrics` (else its `/slots` lists the decoding slots and
whether each is busy). `server_load(url)` reads whichever answers and returns (running, waiting), or
None when the server publishes nothing (OpenAI, Ollama): the engine then paces by latency and errors
alone.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any


RUNNING = ("vllm:num_requests_running", "sglang:num_running_reqs", "llamacpp:requests_processing")
WAITING = ("vllm:num_requests_waiting", "sglang:num_queue_reqs", "llamacpp:requests_deferred")
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+([-+0-9.eEinfINFaN]+)")
TIMEOUT_S = 2.0


def parse_metrics(text: str) -> tuple[int, int] | None:
    """(running, waiting) summed over the label sets (every model the server serves); None when
    neither gauge is there."""
    running = waiting = 0.0
    found = False
    for line in text.splitlines():
        match = _SAMPLE.match(line.strip())
        if not match:
            continue
        name, value = match.group(1), float(match.group(3))
        if name in RUNNING:
            running, found = running + value, True
        elif name in WAITING:
            waiting, found = waiting + value, True
    return (int(running), int(waiting)) if found else None


def parse_slots(slots: object) -> tuple[int, int] | None:
    """llama.cpp's `/slots`: busy slots run; all of them busy counts as one waiting (the queue beyond
    its `--parallel` slots is not published)."""
    if not isinstance(slots, list) or not slots:
        return None
    busy = sum(bool(s.get("is_processing") or s.get("state")) for s in slots if isinstance(s, dict))
    return busy, int(busy >= len(slots))


async def server_load(base_url: str, session: Any) -> tuple[int, int] | None:  # session: aiohttp's
    """(running, waiting) at the server of `base_url` (`…/v1`), or None where it publishes neither."""
    import aiohttp  # lazy: the HTTP client when a load is read (start-up imports no aiohttp)

    root = base_url.rstrip("/").removesuffix("/v1")
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    try:
        async with session.get(f"{root}/metrics", timeout=timeout) as response:
            if response.status == 200:
                load = parse_metrics(await response.text())
                if load is not None:
                    return load
        async with session.get(f"{root}/slots", timeout=timeout) as response:
            if response.status == 200 and response.content_type == "application/json":
                return parse_slots(await response.json())
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    return None


async def watch_load(urls: list[str], report: Callable[[str, int, int], None], busy: Callable[[], bool],
                     every_s: float = 1.0, idle_s: float = 30.0) -> str:
    """Read each replica's load every `every_s` seconds and `report(url, running, waiting)`, until
    the calls stop for `idle_s` ("idle": watch again at the next call) or no replica publishes its
    load ("unpublished": never again)."""
    import aiohttp  # lazy: as in `server_load`

    async with aiohttp.ClientSession() as session:
        quiet = 0.0
        while quiet < idle_s:
            loads = [await server_load(url, session) for url in urls]
            if all(load is None for load in loads):
                return "unpublished"
            for url, load in zip(urls, loads, strict=True):
                if load is not None:
                    report(url, *load)
            await asyncio.sleep(every_s)
            quiet = 0.0 if busy() else quiet + every_s
    return "idle"
