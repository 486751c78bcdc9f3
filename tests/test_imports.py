"""No import reaches the GPU that a command does not need (issue 24).

JAX, installed on most GPU images, pre-allocates 75% of the GPU's memory when it is first used; bm25s
imports it (and runs a top-k) at import time when it is installed. Here a stand-in `jax` package is put
on the path of a fresh interpreter; it records every import of itself in a file. Every CLI command then
runs (for real where a test world can feed it, `--help` for the rest, so that a new command is covered
without touching this test), and the Python API's entry points run each method; the stand-in must never
have been imported: no command needs JAX today.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

STAND_IN = '''
"""A stand-in for JAX that records being imported (tests/test_imports.py)."""
import os
import traceback

with open(os.environ["JAX_STAND_IN_LOG"], "a", encoding="utf-8") as _log:
    _log.write("".join(traceback.format_stack(limit=40)) + "\\n----\\n")

from jax import lax  # noqa: E402,F401  (bm25s imports jax.lax and calls lax.top_k)
'''

STAND_IN_LAX = '''
import numpy as np


def top_k(operand, k):
    operand = np.asarray(operand)
    order = np.argsort(-operand, kind="stable")[..., :k]
    return np.take_along_axis(operand, order, -1), order
'''

SCRIPT = textwrap.dedent('''
    import json
    import sys
    from pathlib import Path

    import typer

    import memegauge
    from memegauge.cli import command_group, main
    from memegauge.testing.server import start_server
    from helpers.runs import world

    root = Path(sys.argv[1])
    codes = {}

    def cli(*args):
        codes[" ".join(args)] = main(["--store", str(w.store), "--models", str(w.models), "--quiet", *args])

    def every_command(group, prefix=()):
        for name, command in sorted(group.commands.items()):
            yield (*prefix, name)
            if getattr(command, "commands", None):  # a group (typer vendors its own click)
                yield from every_command(command, (*prefix, name))

    with start_server(latency_ms=0) as server:
        w = world(root, server.base_url)
        cli("adam", "-c", str(w.adam), "--run", "adam")
        cli("arena", "-c", str(w.arena), "--run", "arena")
        cli("qa", "eval", "--data", str(w.qa_data), "--images", str(w.qa_images), "--model", "gpt-x",
            "--run", "qa")
        for run in ("adam", "arena", "qa"):
            for fmt in ("json", "csv", "md", "html"):
                cli("report", run, "--format", fmt, "--out", str(root / f"{run}.{fmt}"))
        cli("runs")
        cli("models")
        cli("demo", "--model", "agent", "--out", str(root / "demo"))
        api = [memegauge.run_adammeme(str(w.adam), store=w.store, models=w.models, name="adam-api"),
               memegauge.run_arena(str(w.arena), store=w.store, models=w.models, name="arena-api"),
               memegauge.run_memeqa({"data": str(w.qa_data), "images": str(w.qa_images), "model": "gpt-x"},
                                    store=w.store, models=w.models, name="qa-api")]
        codes["api"] = [r.status for r in api] + [len(r.report) > 0 for r in api]
    for path in every_command(command_group()):
        codes[" ".join(path) + " --help"] = main([*path, "--help"])
    if len(sys.argv) > 2:  # torch is installed: one tiny fine-tuning run, the command the issue saw die
        codes["qa finetune"] = main(["--store", str(root / "ft.db"), "--quiet", "qa", "finetune",
                                     "-c", sys.argv[2], "--run", "ft"])
    print(json.dumps(codes))
''')


def stand_in_jax(folder: Path) -> Path:
    package = folder / "jax"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(STAND_IN, encoding="utf-8")
    (package / "lax.py").write_text(STAND_IN_LAX, encoding="utf-8")
    return folder


def tiny_finetune_config(root: Path) -> Path:
    """A one-epoch fine-tuning of a tiny text model on 33 questions (only with torch installed)."""
    import yaml

    from memegauge.testing.tiny_models import build_tiny_model
    from helpers.memeqa_data import make_dataset

    base = build_tiny_model(root / "base", hidden=32, layers=1, heads=2, seed=1)
    data, images = make_dataset(root / "ft")
    for version in ("none-minus", "none-plus"):
        (data / version / "train.json").write_text((data / version / "dev.json").read_text())
    config = root / "ft.yaml"
    config.write_text(yaml.safe_dump({"model": str(base), "data": str(data), "images": str(images),
                                      "out": str(root / "ft-out"), "epochs": 1, "dev_limit": 3,
                                      "train_limit": 8, "max_length": 96, "device": "cpu"}))
    return config


@pytest.mark.slow
def test_no_command_and_no_api_entry_point_imports_jax(tmp_path):
    stand_in = stand_in_jax(tmp_path / "site")
    log = tmp_path / "jax-imports.log"
    args = [sys.executable, "-c", SCRIPT, str(tmp_path / "world")]
    if importlib.util.find_spec("torch") and importlib.util.find_spec("peft"):
        args.append(str(tiny_finetune_config(tmp_path)))
    env = {**os.environ, "JAX_STAND_IN_LOG": str(log),
           "PYTHONPATH": os.pathsep.join([str(stand_in), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    codes = json.loads(done.stdout.strip().splitlines()[-1])
    api = codes.pop("api")
    assert api == ["done"] * 3 + [True] * 3
    assert {k: v for k, v in codes.items() if v != 0} == {}
    assert {"view --help", "qa finetune --help", "import adammeme-human --help", "arena rank --help"} <= set(codes)
    assert not log.exists(), f"jax was imported from:\n{log.read_text()[:3000]}"
    # the stand-in was importable in that interpreter: nothing imported it
    assert subprocess.run([sys.executable, "-c", "import jax"], env=env).returncode == 0 and log.exists()


def test_retrieval_scores_without_jax_while_bm25s_alone_would_import_it(tmp_path):
    """The probe works (bm25s imported on its own brings in the stand-in), and AdamMeme's retrieval
    gets the same BM25 scores with JAX hidden from bm25s."""
    stand_in = stand_in_jax(tmp_path / "site")
    log = tmp_path / "jax-imports.log"
    env = {**os.environ, "JAX_STAND_IN_LOG": str(log), "PYTHONPATH": str(stand_in)}
    score = ("from memegauge.adammeme.retrieval import bm25_scores; "
             "print(bm25_scores('cats hate water', ['dogs love water', 'cats hate baths', 'sky']).tolist())")
    scores = subprocess.run([sys.executable, "-c", score], env=env, check=True, capture_output=True, text=True)
    assert not log.exists()
    values = [float(v) for v in scores.stdout.strip("[]\n").split(",")]
    assert values[1] > values[0] > values[2] == 0.0
    subprocess.run([sys.executable, "-c", "import bm25s"], env=env, check=True, capture_output=True)
    assert "bm25s" in log.read_text()
