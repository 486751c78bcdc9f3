"""Fuzzing every reader of a user file (issue 29): no traceback on any input.

Each reader starts from a valid example and is fed mutations of it (Hypothesis): keys dropped or
renamed, values of the wrong type, very long strings, deep nesting, huge numbers, lone surrogates,
duplicated records (so duplicate ids); then, on the bytes, invalid UTF-8, a BOM, CRLF, NUL bytes,
truncation, 100,000 open brackets and 5,000-digit numbers. Pictures are drawn from a gallery of hard
cases (truncated PNG/JPEG, 20000×20000, CMYK, 16-bit, animated GIF, EXIF rotation) and byte mutations.

The property, for every example: the reader returns, or raises `InputError` with a what, a where and a
fix; for an input it refuses, the command that reads that file exits 2 with that message and leaves no
store behind. The store reader's property is the same with `StoreError` (exit 1: the file is not bad
input but a damaged store, and its message names the `.recover` fix).

Profiles: the default is seeded (`derandomize`) and bounded (`EXAMPLES` per reader, about a minute for
the whole file on a laptop); `MEMEGAUGE_FUZZ=long` runs `LONG_EXAMPLES` per reader (1,000, or
`MEMEGAUGE_FUZZ_EXAMPLES`), drawn afresh each time. With
`MEMEGAUGE_FUZZ_SUMMARY=FILE`, each reader's counts are appended to FILE as JSON lines: examples
run (shrinking included), returned, refused (InputError, or StoreError for the store) and other
exceptions (each one also fails its test).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import os
import shutil
import struct
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from helpers.memeqa_data import make_dataset
from helpers.worlds import adammeme_legacy_layout as write_layout
from memegauge.cli import main
from memegauge.types import ActionableError, InputError


pytestmark = pytest.mark.fuzz

EXAMPLES, LONG_EXAMPLES = 30, int(os.environ.get("MEMEGAUGE_FUZZ_EXAMPLES") or 1000)
LONG = os.environ.get("MEMEGAUGE_FUZZ") == "long"
FUZZ = settings(max_examples=LONG_EXAMPLES if LONG else EXAMPLES, derandomize=not LONG, database=None,
                deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
SAMPLES = Path(__file__).resolve().parents[1] / "memegauge" / "samples"


# ---- mutations ------------------------------------------------------------------------------------

WRONG = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                  st.text(max_size=12), st.just("\ud800"), st.just("x" * 100_000), st.just(10**300),
                  st.just([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]),
                  st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


def _containers(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every dict and list in a JSON-like value, the root first."""
    found = [path] if isinstance(value, (dict, list)) else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        found += _containers(child, (*path, key))
    return found


def _at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def structural(draw, valid: Any) -> Any:
    """`valid` with 0-3 structural edits, each at a random dict or list inside it."""
    value = copy.deepcopy(valid)
    for _ in range(draw(st.integers(0, 3))):
        paths = _containers(value)
        if not paths:
            return copy.deepcopy(draw(WRONG))
        node = _at(value, draw(st.sampled_from(paths)))
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node, key=str)))
            edit = draw(st.sampled_from(["drop", "rename", "retype"]))
            if edit == "drop":
                del node[key]
            elif edit == "rename":
                node[draw(st.sampled_from([key.upper(), key + "_", " " + key, "", "id"]))] = node.pop(key)
            else:
                node[key] = copy.deepcopy(draw(WRONG))  # never the strategy's own object
        elif isinstance(node, list) and node:
            index = draw(st.integers(0, len(node) - 1))
            edit = draw(st.sampled_from(["duplicate", "drop", "retype", "empty"]))
            if edit == "duplicate":
                node.insert(index, copy.deepcopy(node[index]))
            elif edit == "drop":
                del node[index]
            elif edit == "retype":
                node[index] = copy.deepcopy(draw(WRONG))
            else:
                node.clear()
    return value


@st.composite
def byte_edits(draw, data: bytes) -> bytes:
    """`data` with 0-2 edits of its bytes."""
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["utf8", "bom", "crlf", "nul", "truncate", "nest", "digits", "junk"]))
        insert = {"utf8": draw(st.sampled_from([b"\xff", b"\xe9", b"\xc3\x28", b"\xed\xa0\x80"])),
                  "nul": b"\x00", "nest": b"[" * 100_000, "digits": b"9" * 5000,
                  "junk": draw(st.binary(min_size=1, max_size=8))}.get(edit)
        if insert is not None:
            data = data[:at] + insert + data[at:]
        elif edit == "bom":
            data = b"\xef\xbb\xbf" + data
        elif edit == "crlf":
            data = data.replace(b"\n", b"\r\n")
        else:
            data = data[:at]
    return data


def _dump_json(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def _dump_yaml(value: Any, ascii_only: bool) -> bytes:
    try:
        return yaml.safe_dump(value, allow_unicode=not ascii_only).encode("utf-8", "surrogatepass")
    except (yaml.YAMLError, RecursionError, ValueError):
        return _dump_json(value, True)  # JSON is YAML too


def _dump_jsonl(rows: Any, ascii_only: bool) -> bytes:
    rows = rows if isinstance(rows, list) else [rows]
    return b"".join(_dump_json(row, ascii_only) + b"\n" for row in rows)


def _dump_csv(rows: Any, ascii_only: bool) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows if isinstance(rows, list) else [rows]:
        writer.writerow(row if isinstance(row, list) else [row])
    return buffer.getvalue().encode("utf-8", "surrogatepass")


DUMPS = {"json": _dump_json, "yaml": _dump_yaml, "jsonl": _dump_jsonl, "csv": _dump_csv}
LOADS = {"json": json.loads, "yaml": yaml.safe_load,
         "jsonl": lambda text: [json.loads(line) for line in text.splitlines() if line.strip()],
         "csv": lambda text: [row for row in csv.reader(io.StringIO(text))]}


@st.composite
def mutated(draw, valid: bytes, kind: str) -> bytes:
    """A mutation of the valid file `valid` (its text parsed as `kind`): structure, then bytes."""
    if kind != "bytes":
        value = draw(structural(LOADS[kind](valid.decode("utf-8"))))
        valid = DUMPS[kind](value, draw(st.booleans()))
    return draw(byte_edits(valid))


# ---- pictures -------------------------------------------------------------------------------------


def _save(image: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def png_declaring(width: int, height: int) -> bytes:
    """A few bytes of PNG that declare width × height (what a decompression bomb looks like)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def picture_gallery() -> dict[str, bytes]:
    """The hard cases every picture reader must survive."""
    rgb = Image.new("RGB", (64, 48), "white")
    rgb.paste((200, 30, 30), (10, 10, 40, 30))
    png, jpeg = _save(rgb, "PNG"), _save(rgb, "JPEG")
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90° CW
    frames = [Image.new("P", (32, 32), i * 40) for i in range(3)]
    return {
        "png": png, "jpeg": jpeg, "empty": b"",
        "truncated-png": png[: len(png) // 2], "truncated-jpeg": jpeg[: len(jpeg) // 2],
        "bomb-20000x20000": png_declaring(20000, 20000), "wide-100000x1": png_declaring(100000, 1),
        "cmyk-jpeg": _save(Image.new("CMYK", (40, 30), (0, 255, 255, 0)), "JPEG"),
        "16-bit-png": _save(Image.new("I;16", (40, 30), 40000), "PNG"),
        "animated-gif": _save(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0),
        "exif-rotated-jpeg": _save(rgb, "JPEG", exif=exif.tobytes()),
        "palette-transparent-png": _save(Image.new("P", (16, 16), 3), "PNG", transparency=3),
        "la-png": _save(Image.new("LA", (16, 16), (100, 50)), "PNG"),
        "one-pixel-webp": _save(Image.new("RGB", (1, 1)), "WEBP"),
        "text-named-png": b"this is not a picture\n",
    }


GALLERY = picture_gallery()


@st.composite
def pictures(draw) -> bytes:
    name = draw(st.sampled_from(sorted(GALLERY)))
    data = GALLERY[name]
    return draw(byte_edits(data)) if draw(st.booleans()) else data


# ---- the readers ----------------------------------------------------------------------------------


@dataclass
class Reader:
    """One reader of a user file: a valid example layout, the file fuzzed in it and how it is read."""

    name: str
    layout: Callable[[Path], None]  # writes a valid example under the folder given
    target: str  # the file (relative) that is mutated
    kind: str  # how its valid text is parsed for structural edits: json, yaml, jsonl, csv or bytes
    read: Callable[[Path], Any]  # reads the example under the folder given (the API)
    command: Callable[[Path], list[str]] | None = None  # the CLI reading it (after --store ROOT/s.db)
    refusal: type[ActionableError] = InputError
    counts: dict[str, int] = field(default_factory=lambda: {"examples": 0, "returned": 0, "refused": 0,
                                                            "other": 0})


OFFLINE = ("vlm: {backend: openai, model: vlm, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n"
           "vlm2: {backend: openai, model: vlm2, base_url: 'http://127.0.0.1:9/v1', max_retries: 0}\n")


def _copy_samples(root: Path, count: int = 2) -> list[dict]:
    rows = [json.loads(line) for line in (SAMPLES / "memes.jsonl").read_text().splitlines()][:count]
    for row in rows:
        shutil.copy(SAMPLES / row["image"], root / row["image"])
    return rows


def _memes_layout(root: Path) -> None:
    rows = _copy_samples(root)
    (root / "memes.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (root / "models.yaml").write_text(OFFLINE)
    (root / "arena.yaml").write_text("memes: memes.jsonl\nagent: vlm\ntargets: [vlm, vlm2]\njudges: [vlm]\n")


def _memes_csv_layout(root: Path) -> None:
    _memes_layout(root)
    rows = [json.loads(line) for line in (root / "memes.jsonl").read_text().splitlines()]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "image", "text", "caption", "labels", "source"])
    for row in rows:
        writer.writerow([row["id"], row["image"], row["text"], row["caption"], "|".join(row["labels"]), row["source"]])
    (root / "memes.csv").write_text(buffer.getvalue())
    (root / "arena.yaml").write_text("memes: memes.csv\nagent: vlm\ntargets: [vlm, vlm2]\njudges: [vlm]\n")


def _folder_layout(root: Path) -> None:
    _memes_layout(root)
    folder = root / "folder"
    folder.mkdir()
    for row in [json.loads(line) for line in (root / "memes.jsonl").read_text().splitlines()]:
        shutil.copy(root / row["image"], folder / row["image"])
        (folder / row["image"]).with_suffix(".txt").write_text(row["text"])
    (root / "arena.yaml").write_text("memes: folder\nagent: vlm\ntargets: [vlm, vlm2]\njudges: [vlm]\n")


def _arena_command(root: Path) -> list[str]:
    return ["--models", str(root / "models.yaml"), "arena", "-c", str(root / "arena.yaml")]


def _qa_layout(root: Path) -> None:
    data, images = make_dataset(root, memes=("m1", "m2"))
    items = json.loads((data / "none-minus" / "dev.json").read_text())
    (root / "predictions.jsonl").write_text("".join(json.dumps({"id": q["id"], "prediction": "B"}) + "\n"
                                                    for q in items))
    (root / "models.yaml").write_text(OFFLINE)


def _qa_score(root: Path) -> list[str]:
    return ["qa", "score", "--data", str(root / "data"), "--version", "none-minus", "--split", "dev",
            "--predictions", str(root / "predictions.jsonl"), "--run", "fuzz"]


def _qa_eval(root: Path) -> list[str]:
    return ["--models", str(root / "models.yaml"), "qa", "eval", "--data", str(root / "data"), "--images",
            str(root / "images"), "--version", "none-minus", "--split", "dev", "--model", "vlm",
            "--texts", str(root / "images" / "memes.jsonl")]


def _read_split(root: Path) -> Any:
    from memegauge.memeqa.dataset import load_questions

    return load_questions(root / "data", "none-minus", "dev")


def _read_predictions(root: Path) -> Any:
    from memegauge.memeqa.runs import read_predictions

    return read_predictions(root / "predictions.jsonl")


def _read_texts(root: Path) -> Any:
    from memegauge.memeqa.dataset import load_memes_for

    return load_memes_for(_read_split(root), root / "images", root / "images" / "memes.jsonl")


def _registry_layout(root: Path) -> None:
    (root / "models.yaml").write_text(
        "vlm: {backend: openai, model: qwen2-vl, base_url: ['http://127.0.0.1:9/v1'], max_concurrency: 8, "
        "rpm: 600, timeout_s: 30, vision: true, price_in: 0.1, price_out: 0.2}\n"
        "judge: {backend: openai, model: judge, base_url: 'http://127.0.0.1:9/v1', api_key_env: JUDGE_KEY, "
        "system_prompt: 'You are a careful judge.', max_retries: 2, extra: {top_k: 5}}\n")


def _read_registry(root: Path) -> Any:
    from memegauge.config import load_registry

    return load_registry(root / "models.yaml")


def _method_configs() -> list[tuple[str, Callable[[Any], Any], str]]:
    """Every registered method's config hook with a valid YAML example (a new method without an
    example fails `test_every_method_config_has_a_fuzz_example`)."""
    from memegauge.methods import methods

    return [(m.name, m.config, CONFIG_EXAMPLES.get(m.name) or _benchmark_example(m)) for m in methods() if m.config]


def _benchmark_example(method: Any) -> str:
    """A benchmark kit's method (a folder holding benchmark.yaml) shares one config shape: its example."""
    if method.folder is not None and (method.folder / "benchmark.yaml").is_file():
        return f"benchmark: {method.name}\nmodel: vlm\ndata: data\nlimit: 2\nseed: 1\n"
    return ""


CONFIG_EXAMPLES = {
    "adammeme": "memes: memes.jsonl\nagent: vlm\ntargets: [vlm]\nlimit: 2\nseed: 3\nerase: false\n",
    "arena": "memes: memes.jsonl\nagent: vlm\ntargets: [vlm, vlm2]\njudges: [vlm]\nsettings: [fused, none]\n"
             "max_tokens: {answers: 300}\n",
    "memeqa": "data: data\nimages: images\nmodel: vlm\nversion: none-minus\nsplit: dev\nlimit: 4\n",
}


def _config_reader(name: str, hook: Callable[[Any], Any], example: str) -> Reader:
    def layout(root: Path) -> None:
        _memes_layout(root)
        _qa_layout(root)
        (root / "config.yaml").write_text(example)

    command = {"adammeme": ["adam", "-c"], "arena": ["arena", "-c"], "memeqa": ["qa", "eval", "-c"]}.get(name)
    return Reader(f"config:{name}", layout, "config.yaml", "yaml", lambda root: hook(root / "config.yaml"),
                  (lambda root: ["--models", str(root / "models.yaml"), *command, str(root / "config.yaml")])
                  if command else None)


def _build_layout(root: Path) -> None:
    shutil.copy(SAMPLES / "annotations.jsonl", root / "annotations.jsonl")
    (root / "build.yaml").write_text("annotations: annotations.jsonl\nout: built\ngenerator: vlm\n")
    (root / "models.yaml").write_text(OFFLINE)


def _read_annotations(root: Path) -> Any:
    from memegauge.memeqa.construct import load_annotations

    return load_annotations(root / "annotations.jsonl")


def _read_build_config(root: Path) -> Any:
    from memegauge.config import load_config
    from memegauge.memeqa.build import BuildConfig

    return load_config(root / "build.yaml", BuildConfig)


def _battles_layout(root: Path) -> None:
    battles = [{"model_a": a, "model_b": b, "winner": w, "judge": "j", "dimension": d}
               for a, b, w, d in (("m1", "m2", "model_a", "overall"), ("m2", "m3", "tie", "overall"),
                                  ("m1", "m3", "model_b", "humor"), ("m3", "m1", "tie (bothbad)", "overall"))]
    (root / "battles.jsonl").write_text("".join(json.dumps(b) + "\n" for b in battles))


def _read_battles(root: Path) -> Any:
    from memegauge.arena.battle_file import rank_battle_file

    return rank_battle_file(root / "battles.jsonl", bootstrap_rounds=5)


def _votes_layout(root: Path) -> None:
    (root / "votes.csv").write_text("task,model_a,model_b,winner\nparking:1,m1,m2,model_a\n"
                                    "parking:2,m2,m1,tie\nsandwich:1,m1,m2,m2\n")
    (root / "guidelines.jsonl").write_text('{"meme": "parking", "guideline": "A good answer names the '
                                           'stereotype."}\n{"meme": 7, "guideline": "Say who is mocked.", "task": 2}\n')
    (root / "scores.csv").write_text("sample_id,score\ns1,7\ns2,3.5\ns3,10\n")
    (root / "labels.csv").write_text("meme,labels\nparking,gender\nsandwich,gender|race\n")


def _reader(module: str, function: str, file: str) -> Callable[[Path], Any]:
    def read(root: Path) -> Any:
        import importlib

        return getattr(importlib.import_module(module), function)(root / file)

    return read


def _legacy_layout(root: Path) -> None:
    write_layout(root / "orig")


def _read_legacy(root: Path) -> Any:
    from memegauge.adammeme.legacy import read_legacy

    return read_legacy(root / "orig")


def _store_layout(root: Path) -> None:
    from memegauge.engine import Store

    store = Store(root / "s.db")
    run_id, execution_id = store.open_run("r", "adammeme", {}, "h", 0, "v")
    store.put_records(run_id, "k", [(str(i), {"x": "y" * 50}) for i in range(20)])
    store.finish_run(run_id, execution_id, "done")
    store.close()


def _read_store(root: Path) -> Any:
    from memegauge.engine import Store

    store = Store(root / "s.db")
    try:
        return store.list_runs()
    finally:
        store.close()


def _read_pictures(root: Path) -> Any:
    """A folder of pictures is read, and every picture it accepts can be thumbnailed and sent."""
    from memegauge.images.thumbnail import thumbnail_data_url
    from memegauge.memes import load_memes
    from memegauge.models.openai_backend import _data_url
    from memegauge.types import ImagePart

    memes = load_memes(root / "folder")
    for meme in memes:
        thumbnail_data_url(meme.image)
        assert _data_url(ImagePart(path=meme.image, sha256=meme.image_sha256)).startswith("data:")
    return memes


READERS = [
    Reader("registry", _registry_layout, "models.yaml", "yaml", _read_registry,
           lambda root: ["--models", str(root / "models.yaml"), "models"]),
    Reader("memes.jsonl", _memes_layout, "memes.jsonl", "jsonl",
           lambda root: __import__("memegauge.memes").memes.load_memes(root / "memes.jsonl"), _arena_command),
    Reader("memes.csv", _memes_csv_layout, "memes.csv", "csv",
           lambda root: __import__("memegauge.memes").memes.load_memes(root / "memes.csv"), _arena_command),
    Reader("folder sidecar text", _folder_layout, "folder/parking.txt", "bytes",
           lambda root: __import__("memegauge.memes").memes.load_memes(root / "folder"), _arena_command),
    Reader("picture", _folder_layout, "folder/parking.png", "picture", _read_pictures, _arena_command),
    Reader("memeqa split", _qa_layout, "data/none-minus/dev.json", "json", _read_split, _qa_score),
    Reader("memeqa texts", _qa_layout, "images/memes.jsonl", "jsonl", _read_texts, _qa_eval),
    Reader("qa score predictions", _qa_layout, "predictions.jsonl", "jsonl", _read_predictions, _qa_score),
    Reader("annotations", _build_layout, "annotations.jsonl", "jsonl", _read_annotations,
           lambda root: ["--models", str(root / "models.yaml"), "qa", "build", "-c", str(root / "build.yaml")]),
    Reader("config:qa build", _build_layout, "build.yaml", "yaml", _read_build_config,
           lambda root: ["--models", str(root / "models.yaml"), "qa", "build", "-c", str(root / "build.yaml")]),
    Reader("battles", _battles_layout, "battles.jsonl", "jsonl", _read_battles,
           lambda root: ["arena", "rank", str(root / "battles.jsonl"), "--rounds", "5"]),
    Reader("human votes", _votes_layout, "votes.csv", "csv",
           _reader("memegauge.arena.agreement", "read_human_votes", "votes.csv")),
    Reader("human guidelines", _votes_layout, "guidelines.jsonl", "jsonl",
           _reader("memegauge.arena.pipeline", "read_human_guidelines", "guidelines.jsonl")),
    Reader("human scores", _votes_layout, "scores.csv", "csv",
           _reader("memegauge.adammeme.agreement", "read_human_scores", "scores.csv")),
    Reader("human labels", _votes_layout, "labels.csv", "csv",
           _reader("memegauge.adammeme.agreement", "read_human_labels", "labels.csv")),
    Reader("adammeme import: log", _legacy_layout, "orig/results/exp1/log_animal.json", "json", _read_legacy,
           lambda root: ["import", "adammeme", str(root / "orig")]),
    Reader("adammeme import: scores", _legacy_layout, "orig/results/exp1/scoring_res.json", "json", _read_legacy,
           lambda root: ["import", "adammeme", str(root / "orig")]),
    Reader("adammeme import: data", _legacy_layout, "orig/data/set1/cls_res_full.json", "json", _read_legacy,
           lambda root: ["import", "adammeme", str(root / "orig")]),
    *[_config_reader(*entry) for entry in _method_configs()],
]
STORE = Reader("store bytes", _store_layout, "s.db", "bytes", _read_store,
               lambda root: ["runs"], refusal=ActionableError)


# ---- the property ---------------------------------------------------------------------------------


def _check_refusal(error: ActionableError) -> None:
    assert error.what.strip() and error.where.strip() and error.fix.strip(), repr(error)


def _run_cli(root: Path, reader: Reader) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["--store", str(root / "s.db"), "--quiet", *reader.command(root)])
    return code, " ".join(err.getvalue().split())


def _words(text: str) -> str:
    from memegauge.clikit import _CONTROL

    return " ".join(_CONTROL.sub("", text).split())


def check(reader: Reader, data: bytes) -> None:
    """Write the mutated file into a fresh valid layout; read it; check the property."""
    reader.counts["examples"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        reader.layout(root)
        (root / reader.target).write_bytes(data)
        store_before = (root / "s.db").read_bytes() if (root / "s.db").exists() else None
        try:
            reader.read(root)
        except reader.refusal as error:
            reader.counts["refused"] += 1
            _check_refusal(error)
            if reader.command is None:
                return
            code, err = _run_cli(root, reader)
            assert code == getattr(error, "exit_code", 2), err
            assert _words(error.what)[:60] in err, (error.what, err)
            after = (root / "s.db").read_bytes() if (root / "s.db").exists() else None
            assert after == store_before, "the store changed"
            return
        except Exception:
            reader.counts["other"] += 1  # the property is broken: counted for the summary, then raised
            raise
        reader.counts["returned"] += 1


def _valid(reader: Reader) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        reader.layout(Path(tmp))
        return (Path(tmp) / reader.target).read_bytes()


def _inputs(reader: Reader):
    if reader.kind == "picture":
        return pictures()
    return mutated(_valid(reader), reader.kind)


@pytest.fixture(scope="module", autouse=True)
def summary():
    yield
    out = os.environ.get("MEMEGAUGE_FUZZ_SUMMARY")
    if out:
        with open(out, "a", encoding="utf-8") as handle:
            for reader in [*READERS, STORE]:
                handle.write(json.dumps({"reader": reader.name, **reader.counts}) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_reader_returns_or_refuses_with_one_message(reader: Reader):
    @FUZZ
    @given(_inputs(reader))
    def run(data: bytes) -> None:
        check(reader, data)

    valid = _valid(reader) if reader.kind != "picture" else GALLERY["png"]
    check(reader, valid)
    assert reader.counts["returned"] == 1, "the valid example itself was refused"
    run()


@FUZZ
@given(st.one_of(st.binary(max_size=4096), byte_edits(b"SQLite format 3\x00" + b"\x00" * 200)))
def test_a_store_of_arbitrary_bytes_is_one_message(data: bytes):
    check(STORE, data)


@FUZZ
@given(st.binary(min_size=1, max_size=64), st.integers(0, 40))
def test_a_store_with_damaged_pages_is_one_message(junk: bytes, page: int):
    """A real store, one of its pages overwritten."""
    with tempfile.TemporaryDirectory() as tmp:
        _store_layout(Path(tmp))
        data = bytearray((Path(tmp) / "s.db").read_bytes())
    at = min(page * 4096 + 100, len(data))
    data[at:at + len(junk)] = junk
    check(STORE, bytes(data))


def test_every_method_config_has_a_fuzz_example():
    assert all(example for _, _, example in _method_configs()), "add the method to CONFIG_EXAMPLES"
