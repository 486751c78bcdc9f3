"""The report shows the meme pictures from the store alone: made after the meme folder moved away, it
still has every picture the run saw (runs store a thumbnail per meme when they open)."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from memegauge.engine import Store
from memegauge.report import build_report
from memegauge.testing.server import start_server

from helpers.html_page import Page
from helpers.models import served_registry
from helpers.worlds import arena_world


def _images(store: Store, name: str) -> dict[str, str]:
    from memegauge.report.html import to_html

    return Page(to_html(store, build_report(store, name))).data()["images"]


@pytest.mark.slow
def test_arena_report_after_the_meme_folder_moved_still_shows_the_pictures(tmp_path):
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config, load_registry

    world = tmp_path / "memes"
    world.mkdir()
    with start_server(latency_ms=0, seed=3, style="realistic") as server:
        config = arena_world(world, server.base_url, n_memes=3)
        store = Store(tmp_path / "s.db")
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, load_registry(world / "models.yaml"),
                              "arena", progress=False))
    before = _images(store, "arena")
    shutil.move(world, tmp_path / "moved")
    after = _images(store, "arena")
    assert set(after) == {"m0", "m1", "m2"} and after == before
    assert all(url.startswith("data:image/jpeg;base64,") for url in after.values())


def test_adammeme_report_after_the_meme_folder_moved_still_shows_the_pictures(tmp_path):
    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme

    world = tmp_path / "memes"
    world.mkdir()
    with start_server(latency_ms=0, seed=7, style="realistic") as server:
        arena_world(world, server.base_url, n_memes=10)
        registry = served_registry(world, server.base_url, ["agent", "tgt-a"])
        cfg = AdamConfig(memes=world / "memes.jsonl", agent="agent", targets=["tgt-a"], erase=False,
                         seeds_per_category=3, max_steps=1, warn_below=0, mining_batch=4)
        store = Store(tmp_path / "s.db")
        asyncio.run(run_adammeme(cfg, store, registry, "adam", progress=False))
    shown = {s["meme"] for s in build_report(store, "adam")["details"]["samples"]}
    shutil.move(world, tmp_path / "moved")
    images = _images(store, "adam")
    assert shown and set(images) == shown
    assert all(url.startswith("data:image/jpeg;base64,") for url in images.values())


def test_memeqa_report_shows_each_questions_meme_after_the_images_moved(tmp_path):
    from memegauge.cli import main
    from memegauge.report.html import to_html
    from helpers.memeqa_data import make_dataset

    data, images = make_dataset(tmp_path / "qa", memes=("m1", "m2"))
    with start_server() as server:
        (tmp_path / "models.yaml").write_text(f"vl: {{backend: openai, model: vl, base_url: {server.base_url}}}\n")
        assert main(["--store", str(tmp_path / "s.db"), "--models", str(tmp_path / "models.yaml"), "--quiet",
                     "qa", "eval", "--data", str(data), "--images", str(images), "--model", "vl",
                     "--run", "qa"]) == 0
    shutil.move(tmp_path / "qa", tmp_path / "moved")
    store = Store(tmp_path / "s.db")
    page = Page(to_html(store, build_report(store, "qa"))).data()
    questions = {q["id"] for q in page["questions"]}
    assert len(questions) == 22 and set(page["question_memes"]) == questions
    assert set(page["question_memes"].values()) == set(page["images"]) == {"m1.png", "m2.png"}
    assert all(url.startswith("data:image/jpeg;base64,") for url in page["images"].values())
    assert page["question_memes"]["viz_id/m2/0"] == "m2.png"
