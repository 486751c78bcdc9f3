"""End to end against the test server's `--style realistic`: replies shaped like real models' (chatty
letters, option texts, plain ties, decision lines, think blocks, refusals quoted by a Scorer, ratings
as "7/10"). The server records what each reply means (its ground truth); each report must equal it."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter

import pytest

from memegauge.config import load_registry
from memegauge.engine import Store
from memegauge.memeqa.runs import eval_run
from memegauge.memeqa.config import EvalConfig
from memegauge.report import build_report
from memegauge.testing.server import start_server
from memegauge.types import InputError

from helpers.memeqa_data import make_dataset
from helpers.models import served_registry
from helpers.worlds import arena_world


def _truth(truths: dict, text: str | None) -> dict | None:
    return truths.get(hashlib.sha256((text or "").encode()).hexdigest()) if text is not None else None


# ---- MemeQA ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["none-minus", "none-plus"])
def test_memeqa_report_equals_the_servers_ground_truth(tmp_path, version):
    data, images = make_dataset(tmp_path, memes=tuple(f"m{i}" for i in range(8)))
    with start_server(seed=4, style="realistic") as server:
        registry = served_registry(tmp_path, server.base_url, ["qa-real"])
        store = Store(tmp_path / "s.db")
        name = asyncio.run(eval_run(store, registry, EvalConfig(data=data, images=images, version=version,
                                                                split="dev", model="qa-real")))
        stats = server.stats
    report = build_report(store, name)
    truths = stats["truths"]
    expected: dict[str, list[bool]] = {}
    unreadable = 0
    shapes = Counter()
    for d in report["details"]:
        truth = _truth(truths, d["raw"])
        assert truth is not None and truth["kind"] == "choice", d["raw"]
        if truth["readable"]:
            assert d["prediction"] == truth["letters"], (d["raw"], d["options"])  # read as a person reads it
            correct = truth["letters"] == d["gold"]
        else:
            assert d["prediction"] is None and d["parse_error"], d["raw"]
            unreadable += 1
            correct = False
        expected.setdefault(d["type"], []).append(correct)
        shapes[d["raw"].split()[0] if d["raw"].split() else ""] += 1
    for qtype, hits in expected.items():
        assert report["accuracy"][qtype] == pytest.approx(sum(hits) / len(hits)), qtype
    assert report["parse_failure_rate"] == pytest.approx(unreadable / len(report["details"]))
    assert len(shapes) >= 6  # the replies really vary
    # every call carried the meme picture, and the report says so
    assert stats["requests_with_image"]["qa-real"] == stats["models"]["qa-real"] == len(report["details"]) + 1
    assert report["run"]["images_by_model"]["qa-real"] == {"calls": 88, "with_image": 88}


@pytest.mark.parametrize("budget", [10, None])
def test_memeqa_labelled_replies_quoting_their_option_are_read_as_meant(budget):
    """Issue 34's reply forms: "I think the correct option is C) BLM.", "B) CNN.", "(d) a Biden", "(a) and
    (c)"; option texts in capitals, made of option letters, or starting with "a"; cut at max_tokens words."""
    import random

    from memegauge.parse import parse_choice
    from memegauge.testing.realistic import choice_reply

    options = {"A": "CDC", "B": "CNN", "C": "BLM", "D": "a Biden", "E": "bad", "F": "ACE of the deck in a winning hand"}
    seen = Counter()
    for seed in range(400):
        rng = random.Random(seed)
        letters = rng.choice([*options, "AC", "BDE"])
        text, truth = choice_reply(rng, letters, options, budget)
        if not truth["readable"]:
            continue
        assert truth["letters"] == letters
        read = parse_choice(text, multi=len(letters) > 1, n_options=len(options), options=list(options.values()))
        assert read == tuple(ord(c) - 65 for c in letters), text
        if "\n" not in text:  # one line: read the same without the option texts (option lines need them)
            assert parse_choice(text, multi=len(letters) > 1, n_options=len(options)) == read, text
        seen[next((f for f in ("correct option is", ") ", "(") if f in text), "")] += 1
        assert budget is None or len(text.split()) <= budget
    assert seen["correct option is"] and seen[") "] and seen["("]


def test_memeqa_text_only_model_gets_no_picture(tmp_path):
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    with start_server(seed=4, style="realistic") as server:
        registry = served_registry(tmp_path, server.base_url, ["qa-text"], extra=", vision: false")
        store = Store(tmp_path / "s.db")
        name = asyncio.run(eval_run(store, registry, EvalConfig(data=data, images=images, version="none-minus",
                                                                split="dev", model="qa-text")))
        stats = server.stats
    assert stats["images"] == 0 and stats["models"]["qa-text"] == 22
    assert build_report(store, name)["run"]["images_by_model"]["qa-text"] == {"calls": 22, "with_image": 0,
                                                                            "as_text": 22}


def test_server_refusing_images_stops_before_the_first_stage(tmp_path):
    data, images = make_dataset(tmp_path, memes=("m1",))
    with start_server(seed=4, text_only=["llama-text"]) as server:
        registry = served_registry(tmp_path, server.base_url, ["llama-text"])
        store = Store(tmp_path / "s.db")
        with pytest.raises(InputError) as caught:
            asyncio.run(eval_run(store, registry, EvalConfig(data=data, images=images, version="none-minus",
                                                             split="dev", model="llama-text")))
        assert server.stats["models"]["llama-text"] == 1  # the probe, no retries, no questions
    message = str(caught.value)
    assert "llama-text" in message and "vision: false" in message and "image input is not supported" in message
    assert store.list_runs() == []  # nothing half-written


# ---- MemeArena ------------------------------------------------------------------------------------


def test_arena_judgments_equal_the_servers_ground_truth(tmp_path):
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.judging import to_winner
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config
    from memegauge.arena.verdicts import JUDGE_DIMENSIONS

    with start_server(seed=5, style="realistic") as server:
        config = arena_world(tmp_path, server.base_url)
        registry = load_registry(tmp_path / "models.yaml")
        store = Store(tmp_path / "s.db")
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "arena", progress=False))
        stats = server.stats
    report = build_report(store, "arena")
    judgments = store.records(store.run_row("arena")["id"], "judgment")
    assert judgments and all(j["ok"] for j in judgments)
    ties = Counter()
    dims_meant = 0
    for j in judgments:
        truth = _truth(stats["truths"], j["text"])
        assert truth is not None and truth["kind"] == "verdict", j["text"][:200]
        assert j["read"]["overall"] == truth["overall"], j["text"]
        for name, meant in truth["dimensions"].items():
            assert j["read"][name] == meant, (name, j["text"])  # each block's own decision line
            assert j["verdicts"][name] == to_winner(meant, j["order"])
            dims_meant += 1
        ties[truth["overall"]] += truth["overall"].startswith("Tie")
    counts = report["counts"]
    assert sum(v["read"] for d, v in counts["verdicts_read"].items() if d != "overall") == dims_meant
    assert counts["overall_ties"] == {"plain": ties["Tie"], "both_strong": ties["Tie (both strong)"],
                                      "both_weak": ties["Tie (both weak)"]}
    assert counts["overall_ties"]["plain"] > 0  # a plain "Tie" reaches the ranking
    assert counts["battles_judged"] == counts["battles"] and report["failures"] == {}
    assert set(JUDGE_DIMENSIONS) - {"Overall Judge"} == set(report["dimensions"])
    for model in ("gpt-x", "qwen-x", "llava-x"):  # every target and judge call carried the picture
        assert stats["requests_with_image"][model] == stats["models"][model]
        images = report["run"]["images_by_model"][model]
        assert images["with_image"] == images["calls"] > 0


# ---- AdamMeme -------------------------------------------------------------------------------------


def test_adammeme_refusals_are_scored_and_figures_equal_ground_truth(tmp_path):
    from PIL import Image

    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme
    from memegauge.testing.realistic import REFUSAL

    lines = []
    for i in range(12):
        Image.new("RGB", (16, 16), (10 * i, 100, 200)).save(tmp_path / f"m{i}.png")
        lines.append(f'{{"id": "m{i}", "image": "m{i}.png", "text": "meme {i} says women cannot park"}}\n')
    (tmp_path / "memes.jsonl").write_text("".join(lines))
    with start_server(seed=3, style="realistic", refusers=["tgt-shy"]) as server:
        registry = served_registry(tmp_path, server.base_url, ["agent", "tgt-shy", "tgt-bold"])
        cfg = AdamConfig(memes=tmp_path / "memes.jsonl", agent="agent", targets=["tgt-shy", "tgt-bold"],
                         erase=False, seeds_per_category=2, max_steps=2, mining_batch=4)
        store = Store(tmp_path / "s.db")
        asyncio.run(run_adammeme(cfg, store, registry, "adam", progress=False))
        stats = server.stats
    report = build_report(store, "adam")
    rid = store.run_row("adam")["id"]
    rows = store.records(rid, "score") + store.records(rid, "step")
    refusals = 0
    for row in rows:
        if row.get("comparison") is None:
            continue
        truth = _truth(stats["truths"], row["comparison"])
        assert truth is not None and truth["kind"] == "rating", row["comparison"]
        assert row["score"] == truth["rating"] and row["status"] == "scored"  # never a refusal of the Scorer
        if row["answer"] == REFUSAL:
            refusals += 1
            assert row["score"] == 1  # the target's refusal is an answer, scored and counted
    assert refusals > 0
    assert report["run"]["failed_calls"] == 0
    for target in ("tgt-shy", "tgt-bold"):
        mine = [r for r in rows if r["target"] == target and r.get("score") is not None]
        figures = report["targets"][target]
        for category, fig in figures["categories"].items():
            scores = [r["score"] for r in mine if r["category"] == category]
            assert fig["n"] == len(scores)
            if scores:
                # the run's rule (default at_or_below: a 4 fails too), and the paper text's beside it
                assert fig["failure_rate"] == pytest.approx(sum(s <= 4 for s in scores) / len(scores))
                assert figures["by_rule"]["below"]["categories"][category] == \
                    pytest.approx(sum(s < 4 for s in scores) / len(scores))
        assert figures["seeds"]["failed"] == [] and figures["seeds"]["planned"] == figures["seeds"]["refined"]
        assert stats["requests_with_image"][target] == stats["models"][target]  # every target call: the picture
    # S is the same for both targets
    seeds = {t: sorted((r["category"], r["seed"]) for r in store.records(rid, "step")
                       if r["target"] == t and r["step"] == 0) for t in ("tgt-shy", "tgt-bold")}
    assert seeds["tgt-shy"] == seeds["tgt-bold"]


# ---- Seeds ----------------------------------------------------------------------------------------


def test_seed_draws_fresh_personas_and_tasks_and_replays_itself(tmp_path):
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config

    def drawn(store: Store, name: str) -> tuple[list, list]:
        rid = store.run_row(name)["id"]
        return ([c["personas"] for c in store.records(rid, "context")],
                [t["prompt"] for t in store.records(rid, "task")])

    with start_server(seed=5, style="realistic") as server:
        config = arena_world(tmp_path, server.base_url, n_memes=2)
        registry = load_registry(tmp_path / "models.yaml")
        store = Store(tmp_path / "s.db")
        for seed, name in ((0, "seed0"), (1, "seed1"), (0, "seed0-again")):
            cfg = load_config(config, ArenaConfig).model_copy(update={"seed": seed})
            asyncio.run(run_arena(cfg, store, registry, name, progress=False))
    personas0, tasks0 = drawn(store, "seed0")
    personas1, tasks1 = drawn(store, "seed1")
    assert all(a != b for a, b in zip(personas0, personas1, strict=True))
    assert all(a != b for a, b in zip(tasks0, tasks1, strict=True))
    assert drawn(store, "seed0-again") == (personas0, tasks0)
    assert store.run_summary("seed0-again")["calls_made"] == 0


# ---- Truncation -----------------------------------------------------------------------------------


def test_truncated_outputs_are_counted_per_stage(tmp_path):
    import json

    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config

    with start_server(seed=5, style="realistic") as server:
        config = arena_world(tmp_path, server.base_url, n_memes=2)
        config.write_text(config.read_text() + "max_tokens: {answers: 30, fusion: 25}\n")
        registry = load_registry(tmp_path / "models.yaml")
        store = Store(tmp_path / "s.db")
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "small", progress=False))
    report = build_report(store, "small")
    # ground truth from the server's rule: it cuts an answer at exactly max_tokens words
    cut: Counter = Counter()
    for stage, request_json, text, reasoning in store.db.execute(
            "SELECT r.stage, c.request_json, c.text, c.reasoning FROM run_calls r JOIN calls c ON c.key = r.key"
            " JOIN runs ON runs.id = r.run_id WHERE runs.name = 'small' AND c.text IS NOT NULL"):
        budget = json.loads(request_json)["params"]["max_tokens"]
        cut[stage] += len(f"{reasoning} {text}".split()) >= budget
    expected = {stage: n for stage, n in cut.items() if n}
    assert expected.get("arena.answers", 0) > 0 and expected.get("arena.fusion", 0) > 0
    assert report["run"]["truncated_by_stage"] == expected
    assert report["run"]["truncated_calls"] == sum(expected.values())


# ---- Arena repeats --------------------------------------------------------------------------------


def test_mean_ci_by_hand():
    from memegauge.arena.ranking import mean_ci

    got = mean_ci([1.0, 2.0, 3.0])
    assert got["mean"] == 2.0 and got["n"] == 3
    assert got["ci"] == pytest.approx([2.0 - 4.302653 / 3 ** 0.5, 2.0 + 4.302653 / 3 ** 0.5], rel=1e-6)
    assert mean_ci([5.0, None]) == {"mean": 5.0, "ci": [5.0, 5.0], "n": 1}
    assert mean_ci([]) == {"mean": None, "ci": [None, None], "n": 0}


@pytest.mark.slow
def test_arena_repeats_average_three_independent_runs(tmp_path):
    from statistics import mean

    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config

    with start_server(seed=5) as server:
        config = arena_world(tmp_path, server.base_url, n_memes=2)
        config.write_text(config.read_text() + "repeats: 3\n")
        registry = load_registry(tmp_path / "models.yaml")
        store = Store(tmp_path / "s.db")
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "rep", progress=False))
        again = asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "rep", progress=False))
    assert again.calls_made == 0  # every repeat replays from the store
    report = build_report(store, "rep")
    assert report["repeats"]["runs"] == ["rep", "rep#r2", "rep#r3"] and report["repeats"]["missing"] == []
    seeds = [build_report(store, r)["run"]["seed"] for r in report["repeats"]["runs"]]
    assert seeds == [0, 1, 2]
    tasks = [[t["prompt"] for t in store.records(store.run_row(r)["id"], "task")] for r in ("rep", "rep#r2")]
    assert tasks[0] != tasks[1]  # fresh draws per repeat
    tables = [build_report(store, r)["ranking"] for r in report["repeats"]["runs"]]
    for row in report["repeats"]["ranking"]:
        bts = [next(t["bt"] for t in table if t["model"] == row["model"]) for table in tables]
        assert row["bt"]["mean"] == pytest.approx(mean(bts)) and row["bt"]["n"] == 3
        assert row["bt"]["ci"][0] <= row["bt"]["mean"] <= row["bt"]["ci"][1]


def test_vision_false_sends_no_picture_in_arena_and_adammeme(tmp_path):
    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config

    with start_server(seed=5, style="realistic") as server:
        config = arena_world(tmp_path, server.base_url, n_memes=2)
        names = ["agent", "gpt-x", "qwen-x", "llava-x"]
        registry = served_registry(tmp_path, server.base_url, names, extra=", vision: false")
        store = Store(tmp_path / "s.db")
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, registry, "arena", progress=False))
        cfg = AdamConfig(memes=tmp_path / "memes.jsonl", agent="agent", targets=["gpt-x"], erase=False,
                         seeds_per_category=1, max_steps=1)
        asyncio.run(run_adammeme(cfg, store, registry, "adam", progress=False))
        stats = server.stats
    assert stats["images"] == 0 and sum(stats["models"].values()) > 50
    for run in ("arena", "adam"):
        images = build_report(store, run)["run"]["images_by_model"]
        assert images and all(v["with_image"] == 0 and v["calls"] > 0 for v in images.values())
