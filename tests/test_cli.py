"""Command line: the bad-input catalogue (one clear error, exit 2, nothing written) and plumbing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from helpers.net import free_port
from memegauge.cli import main


@pytest.fixture
def image(tmp_path) -> Path:
    path = tmp_path / "ok.png"
    Image.new("RGB", (8, 8), "white").save(path)
    return path


def write_memes(tmp_path: Path, lines: list[str] | bytes) -> Path:
    path = tmp_path / "memes.jsonl"
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    else:
        path.write_text("\n".join(lines), encoding="utf-8")
    return path


def run_cli(tmp_path: Path, *args: str) -> int:
    return main(["--store", str(tmp_path / "store.db"), *args])


def assert_nothing_written(tmp_path: Path) -> None:
    assert not (tmp_path / "store.db").exists()
    assert not (tmp_path / "out").exists()


def registry(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


CASES = {
    "missing model": (lambda t, i: ["demo", "--model", "no-such-model"], "unknown model"),
    "bad yaml syntax": (lambda t, i: ["--models", str(registry(t, "a: [1, 2\nb: {")), "demo"],
                        "invalid YAML"),
    "unknown registry key": (
        lambda t, i: ["--models", str(registry(t, "m:\n  backend: openai\n  base_url: http://x/v1"
                                                  "\n  temprature: 1\n")), "demo", "--model", "m"],
        "temprature"),
    "bad registry value": (
        lambda t, i: ["--models", str(registry(t, "m:\n  backend: scripted\n  max_concurrency: lots\n")),
                      "demo", "--model", "m"], "m.max_concurrency"),
    "unknown backend": (
        lambda t, i: ["--models", str(registry(t, "m:\n  backend: telepathy\n")), "demo"],
        "unknown backend"),
    "unreachable endpoint": (
        lambda t, i: ["--models", str(registry(t, f"m:\n  backend: openai\n  model: x\n  base_url: "
                                                  f"http://127.0.0.1:{free_port()}/v1\n")),
                      "demo", "--model", "m"], "cannot connect"),
    "unset key variable": (
        lambda t, i: ["--models", str(registry(t, "m:\n  backend: openai\n  base_url: http://127.0.0.1:9/v1"
                                                  "\n  api_key_env: MEMEGAUGE_TEST_UNSET_KEY\n")),
                      "demo", "--model", "m"], "MEMEGAUGE_TEST_UNSET_KEY is not set"),
    "missing image": (
        lambda t, i: ["demo", "--memes", str(write_memes(t, ['{"id": "a", "image": "nope.png", '
                                                              '"text": "hi"}']))], "nope.png"),
    "corrupt image": (
        lambda t, i: ["demo", "--memes", str(write_memes(
            t, [json.dumps({"id": "a", "image": _corrupt(t), "text": "hi"})]))], "bad.png"),
    "non-UTF-8 meme file": (
        lambda t, i: ["demo", "--memes", str(write_memes(
            t, b'{"id": "a", "image": "ok.png", "text": "caf\xe9"}\n'))], "UTF-8"),
    "empty meme set": (lambda t, i: ["demo", "--memes", str(write_memes(t, ["", "  "]))],
                       "no memes"),
}


def _corrupt(tmp_path: Path) -> str:
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really an image" * 10)
    return "bad.png"


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_catalogue(case, tmp_path, image, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMEGAUGE_TEST_UNSET_KEY", raising=False)
    make_args, needle = CASES[case]
    args = make_args(tmp_path, image)
    if "demo" in args:
        args = [*args, "--out", str(tmp_path / "out")]
    code = run_cli(tmp_path, *args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert_nothing_written(tmp_path)


def test_runs_and_report_on_missing_store_or_run(tmp_path, capsys):
    assert run_cli(tmp_path, "runs") == 2
    assert "no store" in capsys.readouterr().err
    from memegauge.engine import Store

    store = Store(tmp_path / "store.db")
    store.list_runs()  # a new store's file is made on first use
    store.close()
    assert run_cli(tmp_path, "report", "ghost") == 2
    assert "no run named 'ghost'" in capsys.readouterr().err


def test_models_lists_builtins_and_check_reports_failure(tmp_path, capsys):
    path = registry(tmp_path, f"dead:\n  backend: openai\n  model: x\n  base_url: "
                              f"http://127.0.0.1:{free_port()}/v1\n  timeout_s: 2\n")
    assert main(["--models", str(path), "models"]) == 0
    out = capsys.readouterr().out
    assert "embedded" in out and "dead" in out
    assert main(["--models", str(path), "models", "--check", "dead"]) == 1
    assert "server" in capsys.readouterr().out


def test_models_check_against_local_server(tmp_path, capsys):
    from memegauge.testing.server import start_server

    with start_server() as server:
        path = registry(tmp_path, f"local:\n  backend: openai\n  model: x\n  base_url: {server.base_url}\n")
        assert main(["--models", str(path), "models", "--check", "local"]) == 0
    assert "ok" in capsys.readouterr().out
    assert not (tmp_path / "store.db").exists()  # a health check leaves no trace


def test_models_check_says_which_models_accept_an_image(tmp_path, capsys):
    from memegauge.testing.server import start_server

    with start_server(latency_ms=0, text_only=["llama-text"]) as server:
        path = tmp_path / "models.yaml"
        path.write_text(f"vl: {{backend: openai, model: vl, base_url: {server.base_url}}}\n"
                        f"llama-text: {{backend: openai, model: llama-text, base_url: {server.base_url}}}\n"
                        f"txt: {{backend: openai, model: txt, base_url: {server.base_url}, vision: false}}\n")
        assert main(["--models", str(path), "models", "--check", "vl", "txt"]) == 0
        assert main(["--models", str(path), "models", "--check", "llama-text"]) == 1
    out = capsys.readouterr().out
    assert "vl: ok" in out and "image: yes" in out and "image: text-only" in out
    assert "image: no" in out and "vision: false" in out


def test_tables_piped_to_a_file_keep_their_full_rows(tmp_path):
    """Under a pipe, rich's default is 80 columns, which cut run names to "meme…" (issue 27)."""
    import os
    import subprocess
    import sys

    from memegauge.engine import Store

    name = "memeqa-eval-a-rather-long-model-name-none-minus-dev-n200-s7-circular"
    store = Store(tmp_path / "store.db")
    store.open_run(name, "memeqa", {"k": 1}, "h", 7, "test")
    store.close()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    result = subprocess.run([str(Path(sys.executable).with_name("memegauge")), "--store", str(tmp_path / "store.db"),
                             "runs"], capture_output=True, text=True, env=env, check=True)
    assert name in result.stdout and "…" not in result.stdout


def test_a_missing_registry_file_is_refused_even_by_a_command_that_needs_no_model(tmp_path, capsys):
    """`--models` naming no file was silent for `runs` (the registry is read only when a model is needed)."""
    code = main(["--store", str(tmp_path / "s.db"), "--models", str(tmp_path / "nosuch.yaml"), "runs"])
    err = capsys.readouterr().err
    assert code == 2 and "nosuch.yaml: no such registry file" in err and "fix:" in err
    assert not (tmp_path / "s.db").exists()
