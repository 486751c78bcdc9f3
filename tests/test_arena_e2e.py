"""MemeArena end to end through the CLI against the local OpenAI-compatible test server: a full run and its
report, extension by a target, kill -9 and resume, `arena rank`, bad input."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.testing.server import start_server

pytestmark = pytest.mark.slow  # seconds each: run by `pytest -m slow` and in CI

TARGETS = ["gpt-x", "gemini-x", "qwen-x", "llava-x", "pixtral-x"]
JUDGES = ["gpt-x", "gemini-x", "qwen-x"]


@pytest.fixture(scope="module")
def server():
    with start_server(latency_ms=5, seed=1) as s:
        yield s


def write_world(tmp: Path, base_url: str, n_memes: int, targets: list[str] = TARGETS,
                extra: str = "") -> tuple[Path, Path]:
    # one picture per meme: a vision model reads the meme from its picture (not its text), so memes
    # sharing a picture would be one meme to it
    for i in range(n_memes):
        Image.new("RGB", (16, 16), (255 - i, 255, 255)).save(tmp / f"meme{i}.png")
    labels = ['["harmful", "gender"]', '["harmless"]']
    (tmp / "memes.jsonl").write_text("".join(
        f'{{"id": "m{i}", "image": "meme{i}.png", "text": "meme text number {i} about parking", '
        f'"caption": "a car", "labels": {labels[i % 2]}}}\n' for i in range(n_memes)))
    models = "".join(f"{m}: {{backend: openai, model: {m}, base_url: {base_url}, max_concurrency: 8, "
                     f"backoff_s: 0.01, backoff_max_s: 0.05}}\n" for m in ["agent", *targets, "step-x"])
    (tmp / "models.yaml").write_text(models)
    config = tmp / "arena.yaml"
    config.write_text(f"memes: memes.jsonl\nagent: agent\ntargets: [{', '.join(targets)}]\n"
                      f"judges: [{', '.join(JUDGES)}]\nbootstrap_rounds: 100\n{extra}")
    return config, tmp / "models.yaml"


def cli(tmp: Path, *args: str, store: str = "store.db") -> int:
    return main(["--store", str(tmp / store), "--models", str(tmp / "models.yaml"), "--quiet", *args])


def report(tmp: Path, run: str, capsys, store: str = "store.db") -> dict:
    capsys.readouterr()
    assert cli(tmp, "report", run, "--format", "json", store=store) == 0
    return json.loads(capsys.readouterr().out)


def test_full_run_report_is_complete(tmp_path, server, capsys):
    config, _ = write_world(tmp_path, server.base_url, 6, extra="both_orders: true\n")
    battles = tmp_path / "battles.jsonl"
    assert cli(tmp_path, "arena", "-c", str(config), "--run", "r", "--battles-out", str(battles)) == 0
    r = report(tmp_path, "r", capsys)
    assert r["run"]["method"] == "arena" and r["run"]["status"] == "done"
    assert [row["model"] for row in r["ranking"]] and {row["model"] for row in r["ranking"]} == set(TARGETS)
    for row in r["ranking"]:
        assert set(row) == {"model", "elo", "bt", "bt_ci", "bt_note", "win_rate", "win_rate_ci95", "score", "battles"}
        assert row["bt_ci"][0] <= row["bt_ci"][1] and 0 <= row["win_rate"] <= 1
        low, high = row["win_rate_ci95"]["ci95"]  # clustered by meme (docs/reports.md)
        assert low <= row["win_rate"] <= high and row["win_rate_ci95"]["n"] == row["battles"]
    assert set(r["dimensions"]) == {"Instruction Following", "Correctness", "Redundancy", "Relevance",
                                    "Accuracy"}
    assert set(r["judges"]) == set(JUDGES) and all(0 < j["ndcg"] <= 1 for j in r["judges"].values())
    assert 0 <= r["flip_rate"]["rate"] <= 1 and r["flip_rate"]["pairs"] > 0
    read = r["counts"].pop("verdicts_read")
    assert all(v["missing"] == 0 and v["read"] == r["counts"]["judgments"] for v in read.values())
    ties = r["counts"].pop("overall_ties")
    assert ties["plain"] == 0 and ties["both_strong"] + ties["both_weak"] > 0  # the strict style never says "Tie"
    assert r["counts"] == {"memes": 6, "tasks": 18, "answers": 90, "fusion_rounds": 90,
                           "judgments": r["counts"]["judgments"], "battles": 54, "battles_judged": 54,
                           "answers_missing_sections": 0, "judgments_truncated": 0}
    assert set(r["detection"]) == set(TARGETS) and r["failures"] == {}
    meme = r["details"]["memes"][0]
    assert len(meme["personas"]) == 3 and len(meme["tasks"]) == 3
    task = meme["tasks"][0]
    assert task["rounds"][0]["round"] == 0 and len(task["rounds"]) == len(TARGETS)  # every answer fused
    battle = task["battles"][0]
    assert battle["answer_a"] and battle["answer_b"] and battle["joint"]["overall"]
    assert all(set(v) == {*r["dimensions"], "overall"} for v in battle["judges"].values())
    # the exported battles rank to the same ratings through `memegauge arena rank`
    capsys.readouterr()
    assert main(["arena", "rank", str(battles), "--rounds", "0"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert {x["model"]: round(x["bt"], 6) for x in ranked["ranking"]} == \
           {x["model"]: round(x["bt"], 6) for x in r["ranking"]}
    assert set(ranked["dimensions"]) == set(r["dimensions"])


def test_extending_with_a_sixth_target_makes_only_new_calls(tmp_path, server, capsys):
    config, _ = write_world(tmp_path, server.base_url, 6)
    assert cli(tmp_path, "arena", "-c", str(config), "--run", "base") == 0
    grown, _ = write_world(tmp_path, server.base_url, 6, targets=[*TARGETS, "step-x"])
    before = server.stats["requests"]
    assert cli(tmp_path, "arena", "-c", str(grown), "--extend", "base") == 0
    made = server.stats["requests"] - before
    r = report(tmp_path, "base+step-x", capsys)
    base = report(tmp_path, "base", capsys)
    assert r["run"]["config"]["added_targets"] == ["step-x"]
    new_battles = [b for m in r["details"]["memes"] for t in m["tasks"] for b in t["battles"]
                   if "step-x" in (b["model_a"], b["model_b"])]
    judgments = sum(len(b["judges"]) for b in new_battles)
    # its answers, one fusion round per task merging them, its detection (6 labelled memes), new judgments,
    # and the one image probe of the new model (the others' probes are cached in the store)
    assert made == 18 + 18 + 6 + judgments + 1
    assert r["counts"]["battles"] == base["counts"]["battles"] + len(new_battles)
    assert r["run"]["calls_made"] == made - 1


def test_extend_refuses_a_changed_config(tmp_path, server):
    config, _ = write_world(tmp_path, server.base_url, 2)
    assert cli(tmp_path, "arena", "-c", str(config), "--run", "base") == 0
    changed, _ = write_world(tmp_path, server.base_url, 2, targets=[*TARGETS, "step-x"], extra="seed: 5\n")
    assert cli(tmp_path, "arena", "-c", str(changed), "--extend", "base") == 2
    assert cli(tmp_path, "arena", "-c", str(config), "--extend", "base") == 2  # adds nothing


def _calls(store: Path) -> int:
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _battles(store: Path, run: str) -> list[dict]:
    s = Store(store)
    try:
        return sorted(s.records(s.run_row(run)["id"], "battle"), key=lambda b: b["order"])
    finally:
        s.close()


def test_kill_mid_run_then_resume_equals_uninterrupted(tmp_path):
    with start_server(latency_ms=40, seed=2) as slow:
        config, models = write_world(tmp_path, slow.base_url, 5)
        args = [sys.executable, "-m", "memegauge.cli", "--store", str(tmp_path / "killed.db"), "--models",
                str(models), "--quiet", "arena", "-c", str(config), "--run", "r"]
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while _calls(tmp_path / "killed.db") < 120:  # past the answers, inside fusion/judging
            if child.poll() is not None:
                pytest.fail(f"run ended before the kill: {child.stderr.read().decode()}")
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
        stored = _calls(tmp_path / "killed.db")
        before = slow.stats["requests"]
        assert subprocess.run(args, capture_output=True).returncode == 0
        resumed_requests = slow.stats["requests"] - before
        assert cli(tmp_path, "arena", "-c", str(config), "--run", "r", store="clean.db") == 0
    total = _calls(tmp_path / "clean.db")
    assert 120 <= stored < total and resumed_requests == total - stored  # nothing finished repeated
    assert _battles(tmp_path / "killed.db", "r") == _battles(tmp_path / "clean.db", "r")


def test_bad_config_is_one_clear_error_and_writes_nothing(tmp_path, server, capsys):
    config, _ = write_world(tmp_path, server.base_url, 2, extra="judges_typo: 1\n")
    assert cli(tmp_path, "arena", "-c", str(config)) == 2
    assert "judges_typo" in capsys.readouterr().err
    config, _ = write_world(tmp_path, server.base_url, 2)
    config.write_text(config.read_text().replace("agent: agent", "agent: nobody"))
    assert cli(tmp_path, "arena", "-c", str(config)) == 2
    assert "unknown model" in capsys.readouterr().err
    assert cli(tmp_path, "arena") == 2
    assert not (tmp_path / "store.db").exists()


def test_rank_command_formats_and_errors(tmp_path, capsys):
    path = tmp_path / "b.jsonl"
    path.write_text('{"model_a": "x", "model_b": "y", "winner": "model_a"}\n'
                    '{"model_a": "x", "model_b": "y", "winner": "model_a"}\n'
                    '{"model_a": "y", "model_b": "x", "winner": "model_a"}\n'
                    '{"model_a": "x", "model_b": "y", "winner": "model_b"}\n')
    assert main(["arena", "rank", str(path), "--format", "md", "--rounds", "10"]) == 0
    assert "| 1 | x |" in capsys.readouterr().out
    assert main(["arena", "rank", str(path), "--rounds", "0"]) == 0
    rows = json.loads(capsys.readouterr().out)["ranking"]
    assert rows[0]["bt"] - rows[1]["bt"] == pytest.approx(0.0, abs=1e-6)  # 2 wins each
    path.write_text('{"model_a": "x", "model_b": "y", "winner": "maybe"}\n')
    assert main(["arena", "rank", str(path)]) == 2
    assert f"{path}:1" in capsys.readouterr().err
