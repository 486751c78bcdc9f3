"""Meme-set loading (memegauge.memes) and the bundled sample memes (memegauge.samples.render)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from PIL import Image

from memegauge.samples.render import SAMPLES, SIZE, render_samples
from memegauge.memes import load_memes
from memegauge.samples import sample_memes_path
from memegauge.types import InputError, file_sha256

CATEGORIES = {"race", "gender", "religion", "nationality", "disability", "animal"}


# --------------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------------


def _png(path: Path, colour: str = "red") -> Path:
    Image.new("RGB", (8, 8), colour).save(path, format="PNG")
    return path


def _jsonl(path: Path, *records: dict | str) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def good(tmp_path: Path) -> Path:
    """A folder with two PNGs, ready for JSONL/CSV files naming them."""
    _png(tmp_path / "a.png")
    _png(tmp_path / "b.png", "blue")
    return tmp_path


def _raises(path_or_call, *, contains: tuple[str, ...], **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        load_memes(path_or_call, **kwargs)
    message = str(info.value)
    for part in contains:
        assert part in message, f"{part!r} not in {message!r}"
    assert info.value.fix, "every InputError says how to fix it"
    assert info.value.exit_code == 2
    return info.value


# --------------------------------------------------------------------------------------------------
# The bundled samples
# --------------------------------------------------------------------------------------------------


def test_samples_load_and_validate():
    memes = load_memes(sample_memes_path())
    assert 12 <= len(memes) <= 16
    assert len({m.id for m in memes}) == len(memes)
    for meme in memes:
        assert meme.image is not None and meme.image.is_absolute() and meme.image.is_file()
        with Image.open(meme.image) as image:
            assert image.size == (SIZE, SIZE) and image.format == "PNG"
        assert meme.text and meme.caption and meme.labels
        assert meme.source == "memegauge-samples"
        assert meme.labels[0] in {"harmful", "harmless"}
        if meme.labels[0] == "harmful":
            assert len(meme.labels) == 2 and meme.labels[1] in CATEGORIES, meme
        else:
            assert meme.labels == ["harmless"]
    harmful_categories = {m.labels[1] for m in memes if m.labels[0] == "harmful"}
    assert harmful_categories == CATEGORIES
    assert 3 <= sum(m.labels == ["harmless"] for m in memes) <= 4


def test_sample_records_match_the_renderer():
    memes = {m.id: m for m in load_memes(sample_memes_path())}
    assert list(memes) == [s.id for s in SAMPLES]
    for sample in SAMPLES:
        assert memes[sample.id].text == f"{sample.top} {sample.bottom}"
        assert memes[sample.id].labels == list(sample.labels)


def test_rendering_is_deterministic_and_matches_committed_files(tmp_path: Path):
    committed = sample_memes_path().parent
    first = render_samples(tmp_path / "one")
    second = render_samples(tmp_path / "two")
    assert [p.name for p in first] == [p.name for p in second]
    for path in first:
        assert file_sha256(path) == file_sha256(tmp_path / "two" / path.name), path.name
        ours, theirs = path.read_bytes(), (committed / path.name).read_bytes()
        if ours != theirs and path.suffix == ".png":
            with Image.open(path) as a, Image.open(committed / path.name) as b:
                same_pixels = a.tobytes() == b.tobytes()
            pytest.fail(f"{path.name} differs from the committed file (pixels "
                        f"{'equal: the PNG encoder differs' if same_pixels else 'differ'}); "
                        "regenerate with python -m memegauge.samples.render memegauge/samples")
        assert ours == theirs, f"{path.name} differs from the committed file"


def test_render_cli_writes_the_set(tmp_path: Path):
    from memegauge.samples.render import main

    assert main([str(tmp_path)]) == 0
    assert len(load_memes(tmp_path / "memes.jsonl")) == len(SAMPLES)


# --------------------------------------------------------------------------------------------------
# JSONL
# --------------------------------------------------------------------------------------------------


def test_jsonl_loads_with_absolute_paths_and_defaults(good: Path):
    path = _jsonl(good / "set.jsonl",
                  {"id": "a", "image": "a.png", "text": "hi", "labels": ["harmful", "race"],
                   "extra": {"anything": 1}},
                  "",
                  {"id": 7, "image": str(good / "b.png"), "text": "yo", "caption": None})
    memes = load_memes(path)
    assert [m.id for m in memes] == ["a", "7"]
    assert memes[0].image == (good / "a.png").resolve() and memes[0].labels == ["harmful", "race"]
    assert memes[1].image == (good / "b.png").resolve() and memes[1].caption == ""
    assert memes[0].caption == "" and memes[0].source == ""


def test_limit_keeps_the_first_memes_and_stops_reading(good: Path):
    path = _jsonl(good / "set.jsonl", {"id": "a", "image": "a.png", "text": "x"},
                  {"id": "b", "image": "b.png", "text": "y"}, "{broken")
    assert [m.id for m in load_memes(path, limit=1)] == ["a"]
    _raises(path, limit=0, contains=("limit",))


def test_missing_file():
    _raises("/nonexistent/memes.jsonl", contains=("memes.jsonl", "not found"))


def test_unsupported_suffix(tmp_path: Path):
    path = tmp_path / "memes.txt"
    path.write_text("x")
    _raises(path, contains=("memes.txt", "unsupported"))


def test_non_utf8_names_line_and_byte(good: Path):
    path = good / "latin.jsonl"
    ok = json.dumps({"id": "a", "image": "a.png", "text": "x"}).encode()
    path.write_bytes(ok + b"\n" + b'{"id": "b", "image": "b.png", "text": "caf\xe9"}\n')
    error = _raises(path, contains=("latin.jsonl:2", "UTF-8", "0xe9"))
    assert "offset" in error.what


def test_invalid_json_names_line(good: Path):
    path = _jsonl(good / "bad.jsonl", {"id": "a", "image": "a.png", "text": "x"}, "", '{"id": "b",')
    _raises(path, contains=("bad.jsonl:3", "invalid JSON"))


def test_line_that_is_not_an_object(good: Path):
    path = _jsonl(good / "list.jsonl", '["a", "b"]')
    _raises(path, contains=("list.jsonl:1", "JSON object"))


def test_unicode_line_separator_inside_a_string_is_not_a_line_break(good: Path):
    path = _jsonl(good / "sep.jsonl", {"id": "a", "image": "a.png", "text": "one\u2028two"})
    path.write_text(path.read_text().replace("\\u2028", "\u2028"), encoding="utf-8")
    assert load_memes(path)[0].text == "one\u2028two"


@pytest.mark.parametrize("record", [{"text": "x"},
                                    {"id": "  ", "image": "a.png", "text": "x"},
                                    {"id": None, "image": "a.png"}])
def test_missing_id(good: Path, record: dict):
    path = _jsonl(good / "noid.jsonl", record)
    _raises(path, contains=("noid.jsonl:1", "no id"))


def test_memeqa_layout_without_ids_is_named_by_the_pictures(good: Path):
    """MemeQA's memes.jsonl is `{image, text}` per line: each meme is named by its file name."""
    path = _jsonl(good / "memes.jsonl", {"image": "a.png", "text": "x"}, {"image": "b.png", "text": "y"})
    memes = load_memes(path)
    assert [(m.id, m.text, m.image) for m in memes] == [("a", "x", good / "a.png"), ("b", "y", good / "b.png")]
    (good / "sub").mkdir()
    _png(good / "sub" / "a.png")
    _jsonl(path, {"image": "a.png", "text": "x"}, {"image": "sub/a.png", "text": "y"})
    _raises(path, contains=("memes.jsonl:2", "duplicate id 'a'"))


def test_a_folder_of_pictures_reads_each_sidecar_text(good: Path):
    (good / "a.txt").write_text("the text of a\n", encoding="utf-8")
    (good / "b.txt").write_text("b's text", encoding="utf-8")
    memes = load_memes(good, ocr=lambda image: pytest.fail(f"OCR asked for {image}"))
    assert [(m.id, m.text) for m in memes] == [("a", "the text of a"), ("b", "b's text")]


def test_duplicate_id_names_both_lines(good: Path):
    path = _jsonl(good / "dup.jsonl", {"id": "a", "image": "a.png", "text": "x"},
                  {"id": "a", "image": "b.png", "text": "y"})
    _raises(path, contains=("dup.jsonl:2", "duplicate id 'a'", "dup.jsonl:1"))


def test_missing_image_file(good: Path):
    path = _jsonl(good / "set.jsonl", {"id": "a", "image": "a.png", "text": "x"},
                  {"id": "gone", "image": "gone.png", "text": "y"})
    _raises(path, contains=("set.jsonl:2", "'gone'", "gone.png", "not found"))


def test_missing_image_allowed_without_require_images(good: Path):
    path = _jsonl(good / "set.jsonl", {"id": "a", "image": "a.png", "text": "x"},
                  {"id": "gone", "image": "gone.png", "text": "y"}, {"id": "bare", "text": "z"})
    with pytest.warns(UserWarning, match="2 meme"):
        memes = load_memes(path, require_images=False)
    assert [m.image is None for m in memes] == [False, True, True]


def test_meme_without_image_key_needs_require_images_false(good: Path):
    path = _jsonl(good / "set.jsonl", {"id": "bare", "text": "z"})
    _raises(path, contains=("set.jsonl:1", "'bare'", "no image", "require_images=False"))


def test_corrupt_image(good: Path):
    (good / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    (good / "notimage.png").write_text("hello")
    path = _jsonl(good / "set.jsonl", {"id": "x", "image": "broken.png", "text": "x"})
    _raises(path, contains=("set.jsonl:1", "'x'", "broken.png", "corrupt"))
    path = _jsonl(good / "set.jsonl", {"id": "y", "image": "notimage.png", "text": "x"})
    _raises(path, contains=("set.jsonl:1", "notimage.png", "corrupt"))


def test_truncated_png_is_corrupt(good: Path):
    data = (good / "a.png").read_bytes()
    (good / "cut.png").write_bytes(data[: len(data) - 20])
    path = _jsonl(good / "set.jsonl", {"id": "cut", "image": "cut.png", "text": "x"})
    _raises(path, contains=("set.jsonl:1", "cut.png"))


@pytest.mark.parametrize("field,value,expect", [
    ("labels", "harmful", '"labels" must be a list'),
    ("labels", ["harmful", 3], '"labels" must be a list of strings'),
    ("text", 12, '"text" must be a string'),
    ("caption", ["a"], '"caption" must be a string'),
    ("source", {"a": 1}, '"source" must be a string'),
    ("image", 5, '"image" must be a string'),
    ("id", 1.5, '"id" must be a string or an integer'),
    ("id", True, '"id" must be a string or an integer'),
])
def test_wrong_types(good: Path, field: str, value, expect: str):
    record = {"id": "a", "image": "a.png", "text": "x"} | {field: value}
    path = _jsonl(good / "types.jsonl", {"id": "ok", "image": "b.png"}, record)
    _raises(path, contains=("types.jsonl:2", expect))


def test_empty_meme_set(tmp_path: Path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n")
    _raises(path, contains=("no memes in", "empty.jsonl"))


def test_nothing_is_returned_when_a_later_line_is_bad(good: Path):
    path = _jsonl(good / "set.jsonl", {"id": "a", "image": "a.png", "text": "x"},
                  {"id": "b", "image": "b.png", "labels": "oops"})
    _raises(path, contains=("set.jsonl:2",))


# --------------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------------


def test_csv_loads_with_split_labels(good: Path):
    path = good / "set.csv"
    path.write_text(" ID ,image,text,caption,labels,source,extra\n"
                    'a,a.png,"hello, world","a red square",harmful|gender,unit,zzz\n'
                    'b,b.png,"two\nlines",,harmful; race ;,,\n'
                    "\n", encoding="utf-8")
    memes = load_memes(path)
    assert [m.id for m in memes] == ["a", "b"]
    assert memes[0].text == "hello, world" and memes[0].labels == ["harmful", "gender"]
    assert memes[0].caption == "a red square" and memes[0].source == "unit"
    assert memes[1].text == "two\nlines" and memes[1].labels == ["harmful", "race"]
    assert memes[1].caption == "" and memes[1].image == (good / "b.png").resolve()


def test_csv_errors_name_the_line(good: Path):
    path = good / "set.csv"
    path.write_text('id,image,text\na,a.png,"multi\nline"\nb,missing.png,x\n', encoding="utf-8")
    _raises(path, contains=("set.csv:4", "'b'", "missing.png"))
    path.write_text("id,image,text\na,a.png,x\na,b.png,y\n", encoding="utf-8")
    _raises(path, contains=("set.csv:3", "duplicate id"))
    path.write_text("id,image,text\na,a.png,x,surplus\n", encoding="utf-8")
    _raises(path, contains=("set.csv:2", "4 cells"))
    path.write_text("name,image,text\na,a.png,x\n", encoding="utf-8")
    _raises(path, contains=("set.csv:1", "'id' column"))
    path.write_text("id,image,text\n,a.png,x\n", encoding="utf-8")
    _raises(path, contains=("set.csv:2", "no id"))
    path.write_bytes(b"id,image,text\na,a.png,\xff\n")
    _raises(path, contains=("set.csv:2", "UTF-8"))
    path.write_text("id,image,text\n", encoding="utf-8")
    _raises(path, contains=("no memes in", "set.csv"))


# --------------------------------------------------------------------------------------------------
# A folder of images
# --------------------------------------------------------------------------------------------------


def test_folder_with_sidecars_and_ocr(good: Path):
    (good / "a.txt").write_text("  sidecar text \n", encoding="utf-8")
    (good / "notes.md").write_text("ignored")
    seen = []

    def ocr(image: Path) -> str:
        seen.append(image)
        return " ocr text "

    memes = load_memes(good, ocr=ocr)
    assert [(m.id, m.text) for m in memes] == [("a", "sidecar text"), ("b", "ocr text")]
    assert seen == [(good / "b.png").resolve()]
    assert all(m.image.is_absolute() for m in memes)


def test_folder_without_ocr_warns_once(good: Path, monkeypatch):
    monkeypatch.setattr("memegauge.images.erase.text_detection_available", lambda: False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        memes = load_memes(good)
    assert [m.text for m in memes] == ["", ""]
    assert len(caught) == 1 and "2 image(s)" in str(caught[0].message)
    assert "pip install 'memegauge[erase]'" in str(caught[0].message)


def test_folder_limit_skips_ocr_of_the_rest(good: Path):
    calls = []
    memes = load_memes(good, limit=1, ocr=lambda p: calls.append(p) or "t")
    assert [m.id for m in memes] == ["a"] and len(calls) == 1


def test_folder_errors(good: Path, tmp_path_factory):
    (good / "a.jpg").write_bytes((good / "a.png").read_bytes())
    _raises(good, contains=("duplicate id 'a'", "a.png"), ocr=lambda p: "")
    (good / "a.jpg").unlink()
    (good / "c.png").write_text("not a png")
    _raises(good, contains=(str(good), "c.png", "corrupt"), ocr=lambda p: "")
    empty = tmp_path_factory.mktemp("empty")
    (empty / "readme.txt").write_text("no images here")
    _raises(empty, contains=("no memes in", str(empty)))


def test_a_meme_sets_other_keys_are_kept_not_dropped(tmp_path):
    """FHM's integer `label` (and any key MemeGauge does not read) stays with the meme, in `extra`."""
    (tmp_path / "m.jsonl").write_text('{"id": 42953, "img": "img/42953.png", "label": 1, "text": "hi"}\n')
    (tmp_path / "m.csv").write_text("id,text,target\n7,hello,community\n")
    [fhm] = load_memes(tmp_path / "m.jsonl", require_images=False)
    [csv_meme] = load_memes(tmp_path / "m.csv", require_images=False)
    assert fhm.extra == {"img": "img/42953.png", "label": 1} and fhm.id == "42953"
    assert csv_meme.extra == {"target": "community"}
