"""One grammar for every method command (issue 13): --limit, --seed, --run and -c on each, `-o KEY=VALUE`
for any config key, readable default run names, -v through logging, one results table at the end and no
raw Python warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memegauge.config import parse_overrides, with_overrides
from memegauge.engine import Store
from memegauge.testing.server import start_server
from memegauge.types import InputError

from helpers.runs import TARGETS, world


def test_overrides_are_typed_and_nested():
    sets = parse_overrides(["seed=3", "max_tokens.judging=900", "targets=[a, b]", "erase=false", "note=a=b"])
    assert sets == {"seed": 3, "max_tokens.judging": 900, "targets": ["a", "b"], "erase": False, "note": "a=b"}
    assert with_overrides({"max_tokens": {"answers": 5}}, sets)["max_tokens"] == {"answers": 5, "judging": 900}
    with pytest.raises(InputError, match="not KEY=VALUE"):
        parse_overrides(["seed"])
    with pytest.raises(InputError, match="seed is not a mapping"):
        with_overrides({"seed": 1}, {"seed.x": 2})


def _config(store: Path, name: str) -> dict:
    return json.loads(Store(store).run_row(name)["config_json"])


def test_adam_and_arena_take_limit_seed_and_overrides_with_readable_default_names(tmp_path, capsys):
    with start_server(latency_ms=0) as server:
        w = world(tmp_path, server.base_url)
        assert w.cli("adam", "-c", str(w.adam), "--limit", "3", "--seed", "3", "-o", "max_steps=1") == 0
        printed = capsys.readouterr()
        assert w.cli("arena", "-c", str(w.arena), "--limit", "1", "--seed", "5", "-o", "tasks_per_meme=1",
                     "-o", "max_tokens.judging=700") == 0
        assert w.cli("adam", "-c", str(w.adam), "-o", "max_steps=lots") == 2  # checked like the file
    names = {r["name"]: r for r in Store(w.store).list_runs()}
    adam = next(n for n in names if n.startswith("adam-"))
    arena = next(n for n in names if n.startswith("arena-"))
    assert adam.startswith("adam-gpt-x+llava-x-memes-") and len(adam.rsplit("-", 1)[1]) == 6
    assert arena.startswith(f"arena-{'+'.join(TARGETS)}-memes-")
    adam_config, arena_config = _config(w.store, adam), _config(w.store, arena)
    assert (adam_config["limit"], adam_config["seed"], adam_config["max_steps"]) == (3, 3, 1)
    assert (arena_config["limit"], arena_config["seed"], arena_config["tasks_per_meme"]) == (1, 5, 1)
    assert arena_config["max_tokens"]["judging"] == 700
    # AdamMeme ends with its results table and the report command; no raw Python warning anywhere
    out, err = " ".join(printed.out.split()), " ".join(printed.err.split())
    assert "AdamMeme — " + adam in out and f"memegauge report {adam}" in err
    assert "Warning:" not in err and ".py:" not in err


def test_verbose_shows_failed_attempts_through_logging(tmp_path, capsys):
    with start_server(latency_ms=0, fault_rate=0.3, seed=2, faults=("500",)) as server:
        w = world(tmp_path, server.base_url)
        args = ["--store", str(w.store), "--models", str(w.models)]
        from memegauge.cli import main

        assert main([*args, "--quiet", "arena", "-c", str(w.arena), "--limit", "1", "--run", "q"]) in (0, 1)
        quiet = capsys.readouterr().err
        assert main([*args, "-v", "arena", "-c", str(w.arena), "--limit", "1", "--seed", "9", "--run", "v"]) in (0, 1)
        verbose = capsys.readouterr().err
    assert "attempt 1 failed" not in quiet
    assert "run 'v' (arena): execution" in verbose and "attempt 1 failed" in verbose
