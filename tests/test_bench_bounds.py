"""The lower bounds `bench/adammeme_schedule.py` prints, checked by hand on a small run: the issue-16
figures (`bound_ratio`) are only as good as these counts."""

from __future__ import annotations

import warnings

import pytest

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.refinement import validity_checked
from helpers.bench import load_bench
from memegauge.testing.synthetic_memes import write_meme_set
from memegauge.testing.server import start_server


@pytest.fixture(scope="module")
def bench():
    return load_bench("adammeme_schedule")


@pytest.fixture(scope="module")
def small_run(bench, tmp_path_factory):
    """40 memes (waves of 32 and 8), two targets, against the local test server."""
    tmp = tmp_path_factory.mktemp("bounds")
    with start_server(latency_ms=0) as server, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = AdamConfig(memes=write_meme_set(tmp, 40, seed=1), agent="agent", targets=list(bench.TARGETS),
                         seed=1, erase=False, seeds_per_category=3, max_steps=3)
        _, _, store = bench.memegauge_run(cfg, bench.registry(server.base_url, 64), tmp / "s.db")
    return cfg, store


def test_mining_rounds_count_each_wave_in_slots(bench, small_run):
    cfg, store = small_run
    assert cfg.mining_batch == 32 and cfg.miners == 3
    vetting = [p for r in store.records(store.run_row("bench")["id"], "mining") for p in r["proposals"]
               if p["examiner"] is not None]
    assert not vetting  # the synthetic Miners raise no new names: the rounds are the Miners' alone
    assert bench.mining_rounds(store, cfg, 64) == 2 + 1  # 96 Miner calls in 64 slots, then 24
    assert bench.mining_rounds(store, cfg, 8) == 12 + 3
    assert bench.mining_rounds(store, cfg, 200) == 1 + 1


def test_chain_calls_and_the_calls_before_them_add_up_to_the_agents_calls(bench, small_run):
    """Every agent call is mining, narration, an original reference (candidates + senior), an
    original's Scorer, or a chain's: the inputs bound's "calls before the chains" are the rest."""
    cfg, store = small_run
    rid = store.run_row("bench")["id"]
    agent = [c for c in store.run_calls(rid) if c.model == "agent"]
    assert all(c.status == "ok" for c in agent)
    mining = sum(c.stage.startswith("adammeme.mining") for c in agent)
    narration = len(store.records(rid, "misbelief"))
    references = len(store.records(rid, "reference"))
    scores = len(store.records(rid, "score"))
    chains = bench.chain_agent_calls(store, cfg)
    assert chains > 0 and mining == 3 * 40
    # A request identical to one already made in the run is answered once (the call cache): two chains
    # whose Refiners wrote the same text for the same case send one validity check between them, which
    # `chain_agent_calls` (an upper bound) counts twice.
    checked = sum(validity_checked(a) for step in store.records(rid, "step") for a in step["attempts"])
    shared = checked - sum(c.stage == "adammeme.refinement.validity" for c in agent)
    assert shared >= 0
    assert mining + narration + (cfg.candidates + 1) * references + scores + chains - shared == len(agent)


def test_the_inputs_bound_takes_the_category_whose_longest_chain_is_shortest(bench, small_run):
    cfg, store = small_run
    paths = bench.chain_paths(store)
    longest = {}
    for (_, category), path in paths.items():
        longest[category] = max(longest.get(category, 0), path)
    category = min(longest, key=longest.get)
    agent = [c for c in store.run_calls(store.run_row("bench")["id"]) if c.model == "agent"]
    before = len(agent) - 3 * 40 - bench.chain_agent_calls(store, cfg)
    seconds, how = bench.inputs_bound(store, cfg, 0.5, 64)
    assert seconds == pytest.approx((3 + before / 64 + longest[category]) * 0.5)
    assert f"{category}'s longest chain ({longest[category]} calls)" in how
    floor, where = bench.algorithm1_floor(store)
    assert floor == max(paths.values()) and where == "/".join(max(paths, key=paths.get))
