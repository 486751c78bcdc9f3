"""The defects of issue 29, each as a test: a meme-text file that is not UTF-8, printed commands that a
shell would split, an oversized picture called corrupt, and Ctrl-C throwing away the answers in flight
(64 calls at 300 ms: every answer that was sent for is stored, none is asked again on resume)."""

from __future__ import annotations

import json
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.testing.server import start_server

from helpers.memeqa_data import make_dataset


def _err(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def _eval_args(tmp: Path, data: Path, images: Path, *extra: str) -> list[str]:
    return ["--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet", "qa", "eval",
            "--data", str(data), "--images", str(images), "--version", "none-minus", "--split", "dev",
            "--model", "vlm", *extra]


# ---- encodings ------------------------------------------------------------------------------------


def test_a_texts_file_that_is_not_utf8_is_one_message_naming_file_line_byte_and_fix(tmp_path, capsys):
    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    texts = tmp_path / "texts.jsonl"
    texts.write_bytes(('{"image": "m1.png", "text": "ok"}\n'  # a file exported on Windows
                       '{"image": "m2.png", "text": "caf\u00e9 \u2013 s\u00fc\u00df"}\n').encode("cp1252"))
    (tmp_path / "models.yaml").write_text("vlm: {backend: openai, model: vlm, base_url: http://127.0.0.1:9/v1}\n")
    code = main(_eval_args(tmp_path, data, images, "--texts", str(texts)))
    err = _err(capsys)
    assert code == 2, err
    assert f"{texts}:2" in err and "byte 0xe9" in err and "column 33" in err
    assert "re-save the file as UTF-8" in err and "--encoding cp1252" in err
    assert not (tmp_path / "s.db").exists()  # refused before the store was opened


def test_encoding_option_reads_a_cp1252_meme_set_and_a_bom_is_allowed(tmp_path, capsys):
    from memegauge.files import set_text_encoding
    from memegauge.memes import load_memes

    memes = tmp_path / "memes.jsonl"
    memes.write_bytes('{"id": "a", "text": "caf\u00e9"}\r\n'.encode("cp1252"))
    try:
        assert set_text_encoding("cp1252") == "cp1252"
        assert load_memes(memes, require_images=False)[0].text == "caf\u00e9"
    finally:
        set_text_encoding(None)
    memes.write_bytes(b"\xef\xbb\xbf" + '{"id": "a", "text": "caf\u00e9"}\r\n'.encode())
    assert load_memes(memes, require_images=False)[0].text == "caf\u00e9"
    assert main(["--encoding", "no-such-codec", "runs"]) == 2
    assert "unknown text encoding 'no-such-codec'" in _err(capsys)


def test_encoding_option_leaves_utf8_files_beside_it_intact(tmp_path, capsys):
    """`--encoding` is for the file that is not UTF-8: the UTF-8 files one command reads beside it (a
    MemeQA split next to a cp1252 texts file) still read as UTF-8, under latin-1 too, where decoding
    them as latin-1 would have garbled every non-ASCII character without an error."""
    from memegauge.files import read_user_text, set_text_encoding

    utf8, legacy = tmp_path / "split.json", tmp_path / "texts.jsonl"
    utf8.write_text('{"q": "\u201chitting rock bottom\u201d"}', encoding="utf-8")
    legacy.write_bytes('{"text": "caf\u00e9"}'.encode("cp1252"))
    for codec in ("cp1252", "latin-1"):
        try:
            set_text_encoding(codec)
            assert read_user_text(utf8) == '{"q": "\u201chitting rock bottom\u201d"}'
            assert read_user_text(legacy) == '{"text": "caf\u00e9"}'
        finally:
            set_text_encoding(None)
    utf16 = tmp_path / "u16.txt"
    utf16.write_bytes("ab".encode("utf-16-le"))  # valid UTF-8 too (with NULs): the named codec decides
    try:
        set_text_encoding("utf-16-le")
        assert read_user_text(utf16) == "ab"
    finally:
        set_text_encoding(None)


# ---- shell quoting --------------------------------------------------------------------------------


def test_the_printed_next_step_is_shell_quoted(tmp_path, capsys):
    import shlex

    data, _ = make_dataset(tmp_path, memes=("m1", "m2"))
    predictions = tmp_path / "p.jsonl"
    items = json.loads((data / "none-minus" / "dev.json").read_text())
    predictions.write_text("".join(json.dumps({"id": q["id"], "prediction": "A"}) + "\n" for q in items))
    name = "a/b;rm -rf x"
    assert main(["--store", str(tmp_path / "s.db"), "qa", "score", "--data", str(data), "--version",
                 "none-minus", "--split", "dev", "--predictions", str(predictions), "--run", name]) == 0
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "memegauge report" in line)
    command = line.split("`")[1]
    assert shlex.split(command) == ["memegauge", "report", name]  # one argument, no second command


def test_the_store_recovery_command_quotes_the_path(tmp_path):
    """The printed `sqlite3 PATH .recover` of a damaged store pastes as one path, whatever its name."""
    import random
    import shlex

    from memegauge.engine.store import StoreError

    path = tmp_path / "my runs; rm -rf x.db"
    store = Store(path)
    run_id, execution_id = store.open_run("r", "t", {}, "h", 0, "v")
    store.put_records(run_id, "k", [(str(i), {"x": "y" * 500}) for i in range(400)])
    store.close()
    with open(path, "r+b") as handle:  # a page in the middle overwritten
        handle.seek(4096 * 20)
        handle.write(bytes(random.Random(2).randrange(256) for _ in range(4096)))
    with pytest.raises(StoreError) as caught:
        Store(path).records(run_id, "k")
    command = caught.value.fix.split("readable: ")[1].split(" | ")[0]
    assert shlex.split(command) == ["sqlite3", str(path), ".recover"]


# ---- oversized pictures ---------------------------------------------------------------------------


def png_header_only(path: Path, width: int, height: int) -> Path:
    """A PNG that declares width × height (a few bytes: what a decompression bomb looks like)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    pixels = zlib.compress(b"\x00" * 64)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
                     + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))
    return path


ENV_MAX_PIXELS = "MEMEGAUGE_MAX_IMAGE_PIXELS"  # memegauge.images.check.ENV_MAX_PIXELS


def test_an_oversized_picture_names_its_size_the_limit_and_the_setting(tmp_path, capsys, monkeypatch):
    from memegauge.memeqa.dataset import load_memes_for, load_questions

    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    png_header_only(images / "m1.png", 20000, 20000)
    (tmp_path / "models.yaml").write_text("vlm: {backend: openai, model: vlm, base_url: http://127.0.0.1:9/v1}\n")
    monkeypatch.delenv(ENV_MAX_PIXELS, raising=False)
    code = main(_eval_args(tmp_path, data, images))
    err = _err(capsys)
    assert code == 2, err
    assert "400,000,000 pixels" in err and "over the limit of 178,956,970" in err
    assert f"{ENV_MAX_PIXELS}=400000000" in err and "corrupt" not in err
    assert not (tmp_path / "s.db").exists()
    monkeypatch.setenv(ENV_MAX_PIXELS, "400000000")  # the setting raises the limit: the picture passes
    questions = load_questions(data, "none-minus", "dev")
    assert load_memes_for(questions, images)["m1.png"].image.name == "m1.png"


# ---- Ctrl-C keeps what is paid for ---------------------------------------------------------------

CTRL_C_START = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                "sys.argv = ['memegauge', *sys.argv[1:]]; runpy.run_module('memegauge.cli', run_name='__main__')")


def _wait_in_flight(server, child, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.stats["in_flight"] >= count:
            return
        assert child.poll() is None, child.stderr.read()
        time.sleep(0.002)
    raise AssertionError(f"never {count} calls in flight")


def _calls_stored(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM run_calls JOIN calls USING (key) "
                           "WHERE calls.status = 'ok'").fetchone()[0]


@pytest.mark.slow
@pytest.mark.parametrize("second_ctrl_c", [False, True], ids=["once", "twice"])
def test_ctrl_c_stores_the_answers_in_flight_and_none_is_asked_again(tmp_path, second_ctrl_c):
    """64 calls in flight at 300 ms when Ctrl-C comes: once, every one of them is answered and stored
    before exit 130, and the resumed run asks none of them again; twice, it leaves at once (130)."""
    data, images = make_dataset(tmp_path, memes=tuple(f"m{i}" for i in range(20)))  # 220 questions
    with start_server(latency_ms=300, seed=1) as server:
        (tmp_path / "models.yaml").write_text(f"vlm: {{backend: openai, model: vlm, base_url: {server.base_url}, "
                                              "max_concurrency: 64}\n")
        child = subprocess.Popen([sys.executable, "-c", CTRL_C_START,
                                  *_eval_args(tmp_path, data, images, "--run", "r")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _wait_in_flight(server, child, 64)
        child.send_signal(signal.SIGINT)
        in_flight = server.stats["in_flight"]
        if second_ctrl_c:
            time.sleep(0.05)
            child.send_signal(signal.SIGINT)
        code = child.wait(timeout=60)
        message = " ".join(child.stderr.read().split())
        assert code == 130, message
        sent = server.stats["models"]["vlm"] - 1  # less the image probe
        stored = _calls_stored(tmp_path / "s.db")
        if second_ctrl_c:
            assert stored < sent  # left at once: what was in flight is dropped (and asked again)
            return
        assert "Rerun the same command" in message
        assert stored == sent and sent < 220  # every answer sent for is stored; the rest never sent
        before = server.stats["models"]["vlm"]
        assert main(_eval_args(tmp_path, data, images, "--run", "r")) == 0
        # the resume sends each question not yet answered (its image probe is replayed from the store)
        asked_again = server.stats["models"]["vlm"] - before - (220 - stored)
    print(f"Ctrl-C with {in_flight} calls in flight at 300 ms: {sent} sent, {stored} answers stored before "
          f"exit 130; on resume {asked_again} asked again")
    assert asked_again == 0
    assert Store(tmp_path / "s.db").run_summary("r")["status"] == "done"


def test_ctrl_c_during_the_preflight_says_no_run_was_opened(tmp_path):
    """Ctrl-C while the preflight waits for a server's /models (before any run exists): exit 130, and
    the message says no run was opened (not that a run is marked `interrupted`); the store holds no run."""
    import select
    import socket

    data, images = make_dataset(tmp_path)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        (tmp_path / "models.yaml").write_text(f"vlm: {{backend: openai, model: vlm, base_url: "
                                              f"'http://127.0.0.1:{port}/v1'}}\n")
        child = subprocess.Popen([sys.executable, "-c", CTRL_C_START, *_eval_args(tmp_path, data, images)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert select.select([silent], [], [], 60)[0], "the preflight never connected"
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=60)
    message = " ".join(child.stderr.read().split())
    assert code == 130, message
    assert "no run was opened" in message and "marked" not in message, message
    assert "Task was destroyed" not in message, message
    if (tmp_path / "s.db").exists():
        with sqlite3.connect(tmp_path / "s.db") as con:
            assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


# ---- docs/reliability.md ----------------------------------------------------------------------------


def test_every_test_docs_reliability_names_exists():
    """Each promise in docs/reliability.md names the test that checks it: those tests must exist."""
    import re

    root = Path(__file__).resolve().parents[1]
    named = re.findall(r"`(tests/\w+\.py)(?:::(\w+))?", (root / "docs" / "reliability.md").read_text())
    assert len(named) >= 20
    missing = [f"{path}::{name}" for path, name in named
               if not (root / path).is_file() or (name and f"def {name}(" not in (root / path).read_text())]
    assert missing == []


# ---- pictures larger than a model accepts -----------------------------------------------------------


def test_a_picture_too_large_for_a_model_is_downscaled_recorded_and_counted(tmp_path, capsys):
    """`max_image_pixels: 600` and 40×30 (1,200 px) memes: each is sent at 28×21 (588 px), not refused;
    the call records it and the report counts the calls per model."""
    import base64
    import io

    from PIL import Image

    from memegauge.models.spec import ModelSpec
    from memegauge.models.openai_backend import _data_url
    from memegauge.types import ImagePart

    data, images = make_dataset(tmp_path, memes=("m1", "m2"))
    for meme in ("m1", "m2"):
        Image.new("RGB", (40, 30), "red").save(images / f"{meme}.png")
    part = ImagePart(path=images / "m1.png", sha256="x")
    sent = Image.open(io.BytesIO(base64.b64decode(_data_url(part, 600).split(",", 1)[1])))
    assert sent.size == (28, 21) and _data_url(part).startswith("data:image/png")
    with start_server(seed=1) as server:
        (tmp_path / "models.yaml").write_text(f"vlm: {{backend: openai, model: vlm, base_url: {server.base_url}, "
                                              "max_image_pixels: 600}\n")
        assert ModelSpec(name="x", backend="openai", max_image_pixels=600).max_image_pixels == 600
        assert main(_eval_args(tmp_path, data, images, "--run", "r")) == 0
    capsys.readouterr()
    assert main(["--store", str(tmp_path / "s.db"), "report", "r", "--format", "json"]) == 0
    counts = json.loads(capsys.readouterr().out)["run"]["images_by_model"]["vlm"]
    assert counts["calls"] == counts["with_image"] == counts["downscaled"] == 22
    with sqlite3.connect(tmp_path / "s.db") as con:
        request = json.loads(con.execute("SELECT request_json FROM calls WHERE stage = 'memeqa.evaluate' LIMIT 1")
                             .fetchone()[0])
    assert [(d["from"], d["to"]) for d in request["images_downscaled"]] == [([40, 30], [28, 21])]


# ---- what the fuzz suite found (tests/test_fuzz.py), pinned as point tests -------------------------


@pytest.mark.parametrize("name,content", [
    ("memes.jsonl", '{"id": "a", "image": "x\\u0000.png", "text": "t"}\n'),  # a NUL byte in a path
    ("memes.csv", "id,image,text\na," + "x" * 5000 + ".png,t\n"),  # a file name too long
    ("memes.jsonl", "[" * 100_000 + "\n"),  # nested too deeply for the parser
    ("memes.jsonl", '{"id": ' + "9" * 5000 + ', "text": "t"}\n'),  # more digits than Python converts
])
def test_found_by_fuzzing_memes(tmp_path, name, content):
    from memegauge.memes import load_memes
    from memegauge.types import InputError

    (tmp_path / name).write_text(content)
    with pytest.raises(InputError) as caught:
        load_memes(tmp_path / name)
    assert caught.value.where and caught.value.fix


@pytest.mark.parametrize("text", ["a: " + "[" * 50_000, "a: " + "9" * 5000])
def test_found_by_fuzzing_yaml(tmp_path, text):
    from memegauge.config import load_registry
    from memegauge.types import InputError

    (tmp_path / "models.yaml").write_text(text)
    with pytest.raises(InputError, match="invalid YAML"):
        load_registry(tmp_path / "models.yaml")


def test_found_by_fuzzing_votes_and_the_original_adammeme_import(tmp_path):
    from memegauge.adammeme.legacy import read_legacy
    from memegauge.arena.agreement import read_human_votes
    from memegauge.types import InputError
    from helpers.worlds import adammeme_legacy_layout as write_layout

    (tmp_path / "votes.csv").write_text("task,model_a,model_b,winner\n" + "x" * 140_000 + ",a,b,model_a\n")
    with pytest.raises(InputError, match="malformed CSV"):
        read_human_votes(tmp_path / "votes.csv")
    root = write_layout(tmp_path / "orig", animal_log=json.dumps([{"meme_image_path": "a1.png", "run_step": "x"}]))
    with pytest.raises(InputError, match="run_step must be a step number"):
        read_legacy(root)
    root = write_layout(tmp_path / "orig2", animal_log=json.dumps([{"meme_image_path": "a1.png", "meme_text": [1]}]))
    with pytest.raises(InputError, match="rewrite"):
        read_legacy(root)
