"""AdamMeme's part of `memegauge demo`, end to end against the local test server (fast, deterministic):
every stage runs on the demo meme and the report file holds the figures."""

from __future__ import annotations

import asyncio
import json

import pytest

from memegauge.adammeme.demo import DEMO_MEMES, demo
from memegauge.config import load_registry
from memegauge.engine import Store
from memegauge.memes import load_memes
from memegauge.methods import DemoInputs
from memegauge.samples import sample_memes_path
from memegauge.testing.server import start_server


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_demo_part_runs_every_stage_and_writes_its_report(tmp_path):
    with start_server(latency_ms=0, seed=1) as server:
        models = tmp_path / "models.yaml"
        models.write_text(f"demo-model: {{backend: openai, model: demo-model, base_url: {server.base_url}}}\n")
        inputs = DemoInputs(store=Store(tmp_path / "store.db"), registry=load_registry(models),
                            memes=load_memes(sample_memes_path()), model="demo-model", out_dir=tmp_path,
                            progress=False)
        name = asyncio.run(demo(inputs))
    report = json.loads((tmp_path / "adammeme-report.json").read_text())
    assert report["run"]["name"] == name and report["run"]["status"] == "done"
    assert report["mining"]["memes"] == len(DEMO_MEMES) and report["mining"]["failed"] == 0
    target = report["targets"]["demo-model"]
    assert set(target["categories"]) == {"gender"}  # the demo scores one category
    sampled = report["sampling"]["gender"]["sampled"]
    assert target["original_only"]["n"] + target["categories"]["gender"]["failed"] >= sampled
    assert target["steps"]["total"] <= len(report["sampling"]["gender"]["seeds"]) <= 1  # |S| = 1, N = 1
    # with this server seed the Miners put the gender meme in gender: every stage runs
    assert sampled == 1 and target["original_only"]["n"] == 1 and target["steps"]["scored"] == 1
    store = inputs.store
    stages = {call.stage for call in store.run_calls(store.run_row(name)["id"])}
    assert {"adammeme.mining"} <= stages and (sampled == 0 or "adammeme.scoring.scorer" in stages)
