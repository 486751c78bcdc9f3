"""The benchmark kit end to end: each shipped benchmark runs through `memegauge eval` against the test server on a
fixture in its release's own layout (made here), and every figure of its report equals the figure computed
here, with scikit-learn, from the gold labels and what the server says it answered (its truths, keyed by
prompt: the answer it meant, None for an unreadable reply, and the P(yes) its log-probabilities carry)."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from memegauge.testing.realistic import truth_key
from memegauge.testing.server import start_server

sklearn_metrics = pytest.importorskip("sklearn.metrics")

CLI = [sys.executable, "-c", "import sys; from memegauge.cli import main; sys.exit(main(sys.argv[1:]))"]


def picture(path: Path, n: int) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (24, 24), ((n * 37) % 256, (n * 91) % 256, (n * 53) % 256)).save(path)
    return path.name


@pytest.fixture
def world(tmp_path):
    with start_server() as server:
        (tmp_path / "models.yaml").write_text(
            f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, max_concurrency: 8, "
            "backoff_s: 0.01, backoff_max_s: 0.05}\n"
            f"tsrv2: {{backend: openai, model: tsrv2, base_url: {server.base_url}, max_concurrency: 8, "
            "backoff_s: 0.01, backoff_max_s: 0.05}\n")
        yield tmp_path, server


def cli(tmp: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([*CLI, "--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet",
                           *args], capture_output=True, text=True, timeout=300, env=env)
    assert not check or done.returncode == 0, done.stdout + done.stderr
    return done


# ---- fixtures in each release's own layout ---------------------------------------------------------------


def fhm(root: Path, n: int = 40) -> dict[str, str]:
    """FHM: img/<id>.png, <split>.jsonl with {id, img, label, text}."""
    gold = {}
    root.mkdir(parents=True, exist_ok=True)
    with (root / "dev_seen.jsonl").open("w") as handle:
        for i in range(n):
            meme_id = 10000 + i
            picture(root / "img" / f"{meme_id}.png", i)
            label = i % 3 == 0
            handle.write(json.dumps({"id": meme_id, "img": f"img/{meme_id}.png", "label": int(label),
                                     "text": f"fhm meme number {i} about topic {i * 7}"}) + "\n")
            gold[str(meme_id)] = "yes" if label else "no"
    return gold


# ---- the ground truth -----------------------------------------------------------------------------------


def truths(server, model: str) -> dict[str, dict]:
    """The server's benchmark truths of one model, by prompt."""
    return {key: truth for key, truth in server.stats["truths"].items()} | {"model": model}


def meant(found: dict, prompt: str) -> dict:
    return found[truth_key(f"{found['model']}\x1f{prompt}")]


def expected(answers: list[dict], server_truths: dict[str, dict], classes: list[str], multi: bool = False) -> dict:
    """Accuracy and macro-F1 from gold and the server's meant answers (unreadable: wrong, credited to no class)."""
    said = [meant(server_truths, a["prompt"])["answer"] for a in answers]
    gold = [a["gold"] for a in answers]
    if multi:
        y = np.array([[c in g for c in classes] for g in gold])
        p = np.array([[m is not None and c in m for c in classes] for m in said])
        correct = [m is not None and sorted(m) == sorted(g) for m, g in zip(said, gold, strict=True)]
        f1 = sklearn_metrics.f1_score(y, p, average="macro", zero_division=0)
    else:
        pred = ["<unreadable>" if m is None else m for m in said]
        correct = [m == g for m, g in zip(pred, gold, strict=True)]
        f1 = sklearn_metrics.f1_score(gold, pred, labels=classes, average="macro", zero_division=0)
    return {"accuracy": float(np.mean(correct)), "macro_f1": float(f1),
            "unreadable": sum(m is None for m in said), "n": len(answers)}


def test_fhm_runs_end_to_end_and_every_figure_is_the_ground_truth(world):
    tmp, server = world
    data = tmp / "fhm"
    gold = fhm(data)
    done = cli(tmp, "eval", "fhm", "--model", "tsrv", "--model", "tsrv2", "--split", "dev_seen", "--data", str(data))
    assert "tsrv2" in done.stdout and "accuracy" in done.stdout and "macro_f1" in done.stdout
    runs = json.loads(cli(tmp, "runs", "--json").stdout)
    assert len(runs) == 2
    for run in runs:
        report = json.loads(cli(tmp, "report", run["name"], "--format", "json").stdout)
        answers = [json.loads(line) for line in
                   cli(tmp, "export", run["name"], "--table", "answers", "--format", "jsonl").stdout.splitlines()]
        assert {a["item"]: a["gold"] for a in answers} == gold
        task = report["tasks"]["hateful"]
        found = truths(server, report["model"])
        want = expected(answers, found, ["yes", "no"])
        assert task["answered"] == want["n"] == 40 and task["unreadable"] == want["unreadable"]
        assert task["accuracy"]["value"] == pytest.approx(want["accuracy"], rel=1e-9)
        assert task["macro_f1"]["value"] == pytest.approx(want["macro_f1"], rel=1e-9)
        assert task["accuracy"]["ci95"] and task["macro_f1"]["n"] == 40
        with_p = [(a["gold"] == "yes", meant(found, a["prompt"])["p_yes"]) for a in answers]
        with_p = [(y, p) for y, p in with_p if p is not None]
        assert task["auroc"]["n"] == len(with_p)
        assert task["auroc"]["value"] == pytest.approx(
            sklearn_metrics.roc_auc_score([y for y, _ in with_p], [p for _, p in with_p]), rel=1e-6)
        for per in task["per_class"]:
            assert per["f1"]["value"] == pytest.approx(sklearn_metrics.f1_score(
                [a["gold"] for a in answers],
                [meant(found, a["prompt"])["answer"] or "<u>" for a in answers],
                labels=[per["class"]], average="macro", zero_division=0), rel=1e-9)
        assert task["published"] and all(p["source"] for p in task["published"])
    csv_text = cli(tmp, "report", runs[0]["name"], "--format", "csv").stdout
    lines = list(csv.DictReader(csv_text.splitlines()))
    assert {line["group"] for line in lines} == {"hateful"}
    assert all(lines[0][k] not in ("", None) for k in ("accuracy", "accuracy_ci95_lo", "accuracy_n", "macro_f1",
                                                        "macro_f1_ci95_hi", "macro_f1_n", "auroc"))
