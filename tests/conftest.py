"""Fixtures every test file can use (pytest finds them by name; the helper functions behind them are
in tests/helpers/, described in its docstring).

- `store`: an empty `Store` in the test's tmp_path, closed afterwards.
- `engine_scripts`: the call engine's scripted models registered (helpers.engine); yields the call counter.
- `method_runs`: one CLI run of each method (AdamMeme, MemeArena, MemeQA None− and None+) against the
  local test server, into one store, made once per session; the first meme of each carries the XSS
  probe. For tests that only read runs (reports, views, formats); a test that changes a run or needs
  a run of its own shape makes its own.

Test tiers: `slow` marks tests that take seconds each (real models, browsers, OCR, fine-tuning, processes
killed and resumed; `embedded` implies it). `pytest` runs the fast tier (pyproject's addopts:
-m "not slow"); `pytest -m slow` the slow tier; `pytest -m ""` everything. CI (.ci/run) runs both tiers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

pytest.register_assert_rewrite("helpers")  # before the first import of a helper module

from helpers.engine import register_engine_scripts  # noqa: E402
from helpers.runs import World, run_all, world  # noqa: E402
from helpers.synthetic import PROBE  # noqa: E402
from memegauge.engine import Store  # noqa: E402
from memegauge.testing.server import start_server  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test of the real embedded model is slow by that mark alone."""
    for item in items:
        if item.get_closest_marker("embedded") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    s = Store(tmp_path / "store.db")
    yield s
    s.close()


@pytest.fixture
def engine_scripts() -> dict[str, int]:
    return register_engine_scripts()


@dataclass(frozen=True)
class MethodRuns:
    """The session's runs: `world` (its files and store path), `names` (method → run name: adammeme,
    arena, memeqa (None−), memeqa+ (None+)) and an open `store`. Read them; never write to them."""

    world: World
    names: dict[str, str]
    store: Store


@pytest.fixture(scope="session")
def method_runs(tmp_path_factory) -> Iterator[MethodRuns]:
    root = tmp_path_factory.mktemp("method-runs")
    with start_server() as server:
        w = world(root, server.base_url, meme_text=f"meme text {PROBE}")
        names = run_all(w)
    store = Store(w.store)
    yield MethodRuns(w, names, store)
    store.close()
