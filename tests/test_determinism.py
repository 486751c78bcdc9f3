"""Two clean runs of the same config give the same report, byte for byte, once the clock's own fields
(when it ran, how long it took) are left out: stable ordering everywhere, whatever the completion order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from memegauge.engine import Store
from memegauge.report import build_report
from memegauge.testing.server import start_server

from helpers.memeqa_data import make_dataset
from helpers.models import served_registry
from helpers.reports import without_clock
from helpers.worlds import arena_world

def _report_text(store: Store, name: str) -> str:
    return json.dumps(without_clock(build_report(store, name)), indent=2, ensure_ascii=False, default=str)


def _twice(tmp: Path, run) -> tuple[str, str]:
    texts = []
    for i in (1, 2):
        with start_server(latency_ms=2, seed=7, style="realistic", refusers=["tgt-b"]) as server:
            store = Store(tmp / f"s{i}.db")
            texts.append(run(server, store))
    return texts[0], texts[1]


def test_adammeme_report_is_byte_identical_between_two_clean_runs(tmp_path):
    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme

    def run(server, store):
        arena_world(tmp_path, server.base_url, n_memes=10)
        registry = served_registry(tmp_path, server.base_url, ["agent", "tgt-a", "tgt-b"])
        cfg = AdamConfig(memes=tmp_path / "memes.jsonl", agent="agent", targets=["tgt-a", "tgt-b"], erase=False,
                         seeds_per_category=3, max_steps=3, warn_below=0, mining_batch=4)
        asyncio.run(run_adammeme(cfg, store, registry, "adam", progress=False))
        return _report_text(store, "adam")

    first, second = _twice(tmp_path, run)
    assert json.loads(first)["details"]["steps"]
    assert first == second


def test_arena_report_is_byte_identical_between_two_clean_runs(tmp_path):
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config, load_registry

    def run(server, store):
        config = arena_world(tmp_path, server.base_url, n_memes=3)
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, load_registry(tmp_path / "models.yaml"),
                              "arena", progress=False))
        return _report_text(store, "arena")

    first, second = _twice(tmp_path, run)
    assert first == second


def test_memeqa_report_is_byte_identical_between_two_clean_runs(tmp_path):
    from memegauge.memeqa.runs import eval_run
    from memegauge.memeqa.config import EvalConfig

    data, images = make_dataset(tmp_path, memes=("m1", "m2", "m3"))

    def run(server, store):
        registry = served_registry(tmp_path, server.base_url, ["vlm"])
        name = asyncio.run(eval_run(store, registry, EvalConfig(data=data, images=images, version="none-plus",
                                                                split="dev", model="vlm"), run_name="qa"))
        return _report_text(store, name)

    first, second = _twice(tmp_path, run)
    assert first == second
