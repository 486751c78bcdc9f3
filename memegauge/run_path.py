"""The one run path of every method, for the CLI's commands and the Python API alike (`run_checked`).

Apart from `memegauge.methods` because it needs the engine (the preflight), and the engine's store needs the
registry of methods (their store migrations): the registry stays free of the engine, so the two import one way.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Callable

from memegauge.engine.preflight import PreflightFailed, find_problems
from memegauge.engine.store import Store
from memegauge.methods import Method, RunResult
from memegauge.models.spec import ModelRegistry
from memegauge.errors import MemeGaugeError


async def run_checked(described: Method, configs: list[tuple[Any, str | None]], *,
                      store: Callable[[], Store], registry: ModelRegistry, progress: bool | None = None,
                      preflight: bool = True, **options: Any) -> list[RunResult]:
    """The one run path of every method, the CLI's commands and the Python API alike: each `(config, run
    name)`'s inputs read and checked (`check`: no network, nothing written), then every model they call
    checked once (the preflight, unless `preflight` is False), then the store opened (`store()`: bad input
    creates no store) and each config run in turn (`run`). `options` go to the method's `run`."""
    if described.check is None or described.run is None:
        raise MemeGaugeError(f"method {described.name!r} has no runs")
    checked = [described.check(config, registry) for config, _ in configs]
    if preflight:
        models = list(dict.fromkeys(m for c in checked for m in c.models))
        pictures = list(dict.fromkeys(m for c in checked for m in c.pictures))
        problems = await find_problems(registry, models, pictures, store)
        if problems:
            raise PreflightFailed(problems)
    opened = store()
    results = []
    for (config, name), found in zip(configs, checked, strict=True):
        result = await described.run(config, store=opened, registry=registry, name=name, progress=progress,
                                     checked=found, **options)
        stored = json.loads(opened.run_row(result.name)["config_json"])
        opened.set_run_origin(result.name, described.models(stored) if described.models else {},
                              described.version)
        results.append(result)
    return results
