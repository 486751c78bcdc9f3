"""Text erasure (memelens.images.erase): OCR boxes, mask + inpainting, folders, the sha256 cache.

OCR-dependent tests skip when tesseract is not installed; the mask + inpaint path runs regardless
(explicit boxes, or a stubbed `find_text_boxes`)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from memelens.images import erase
from memelens.images.erase import (
    EraseResult,
    erase_dir,
    erase_text,
    erased_image_for,
    find_text_boxes,
    iter_erase_dir,
    list_images,
    ocr_words,
    tesseract_available,
)
from memelens.types import InputError, file_sha256

HAS_TESSERACT = tesseract_available()
needs_tesseract = pytest.mark.skipif(not HAS_TESSERACT, reason="tesseract is not installed")

REAL_IMAGES = Path(__file__).resolve().parents[2] / "shared" / "data" / "semeval2021-task6" / "images"
if not REAL_IMAGES.is_dir():
    REAL_IMAGES = Path("/work/shared/data/semeval2021-task6/images")

WORDS = {"TOP", "BOTTOM", "TEXT"}
W, H = 640, 480


# --------------------------------------------------------------------------------------------------
# A synthetic meme
# --------------------------------------------------------------------------------------------------


def draw_meme(path: Path | None = None) -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """Coloured shapes with big white black-outlined "TOP TEXT" / "BOTTOM TEXT".

    Returns the image and the drawn text boxes (x, y, w, h)."""
    img = Image.new("RGB", (W, H), (70, 130, 180))
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 300, W, H], fill=(60, 140, 60))  # grass
    draw.ellipse([440, 150, 560, 270], fill=(240, 200, 40))  # sun
    draw.rectangle([60, 170, 260, 330], fill=(170, 60, 50))  # house
    draw.polygon([(40, 170), (160, 100), (280, 170)], fill=(110, 40, 30))  # roof
    draw.rectangle([300, 360, 380, 440], fill=(120, 80, 160))
    font = ImageFont.load_default(size=48)
    boxes = []
    for text, y in (("TOP TEXT", 20), ("BOTTOM TEXT", H - 80)):
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font, stroke_width=3)
        x = (W - (right - left)) // 2 - left
        draw.text((x, y), text, font=font, fill="white", stroke_width=3, stroke_fill="black")
        bx0, by0, bx1, by1 = draw.textbbox((x, y), text, font=font, stroke_width=3)
        boxes.append((bx0, by0, bx1 - bx0, by1 - by0))
    if path is not None:
        img.save(path)
    return img, boxes


def far_from_text(boxes, margin: int = 40) -> np.ndarray:
    """Pixels farther than `margin` from every text box."""
    far = np.ones((H, W), dtype=bool)
    for x, y, w, h in boxes:
        far[max(0, y - margin) : y + h + margin, max(0, x - margin) : x + w + margin] = False
    return far


def in_text(boxes) -> np.ndarray:
    inside = np.zeros((H, W), dtype=bool)
    for x, y, w, h in boxes:
        inside[y : y + h, x : x + w] = True
    return inside


def white_count(rgb: np.ndarray, region: np.ndarray) -> int:
    return int(((rgb.min(axis=2) >= 230) & region).sum())


def read(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


def found_words(image) -> set[str]:
    return {w.strip(".,:;!'\"").upper() for w in ocr_words(image, min_conf=0)} & WORDS


@pytest.fixture()
def meme(tmp_path: Path):
    path = tmp_path / "meme.png"
    img, boxes = draw_meme(path)
    return path, img, boxes


@pytest.fixture()
def fake_ocr(monkeypatch):
    """Pretend tesseract is there and "finds" the given boxes, counting calls (no OCR runs)."""
    calls = {"n": 0}
    _, boxes = draw_meme()

    def fake_find(image, min_conf=50, **kwargs):
        calls["n"] += 1
        return list(boxes)

    monkeypatch.setattr(erase, "tesseract_available", lambda: True)
    monkeypatch.setattr(erase, "find_text_boxes", fake_find)
    return calls


# --------------------------------------------------------------------------------------------------
# OCR (tesseract)
# --------------------------------------------------------------------------------------------------


def test_tesseract_available_is_a_bool():
    assert isinstance(tesseract_available(), bool)


@needs_tesseract
def test_the_synthetic_meme_is_readable():
    img, _ = draw_meme()
    assert found_words(img) >= {"TOP", "BOTTOM"}


@needs_tesseract
def test_find_text_boxes_finds_top_and_bottom_text():
    img, drawn = draw_meme()
    for image in (img, np.asarray(img)):  # PIL image and RGB array
        boxes = find_text_boxes(image)
        assert boxes, "no text found"
        assert all(isinstance(v, int) for b in boxes for v in b)
        covered = np.zeros((H, W), dtype=bool)
        for x, y, w, h in boxes:
            assert w > 0 and h > 0
            covered[y : y + h, x : x + w] = True
        for x, y, w, h in drawn:  # each text line is mostly covered by the boxes found
            assert covered[y : y + h, x : x + w].mean() > 0.6
        # nothing found in the middle of the picture (house, sun)
        assert not covered[150:330, :].any()


@needs_tesseract
@pytest.mark.parametrize("method", ["telea", "ns"])
def test_erase_text_removes_the_words(meme, tmp_path, method):
    path, img, drawn = meme
    out = tmp_path / "out" / f"erased-{method}.png"
    result = erase_text(path, out, method=method)
    assert isinstance(result, EraseResult)
    assert result.boxes_found >= 2 and result.out_path == out and out.is_file()
    assert Image.open(out).format == "PNG"
    before, after = np.asarray(img), read(out)
    assert after.shape == before.shape
    # OCR reads (almost) none of the words any more
    assert len(found_words(after)) <= 1, found_words(after)
    # far from the text nothing changed; in the text the white letters are gone
    far = far_from_text(drawn)
    assert np.array_equal(before[far], after[far])
    inside = in_text(drawn)
    assert white_count(before, inside) > 1000
    assert white_count(after, inside) < 0.05 * white_count(before, inside)
    assert np.abs(after[inside].astype(int) - before[inside].astype(int)).mean() > 20
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]


@needs_tesseract
def test_a_picture_without_text_is_written_unchanged(tmp_path):
    img = Image.new("RGB", (200, 150), (30, 90, 200))
    ImageDraw.Draw(img).ellipse([50, 30, 150, 120], fill=(200, 40, 40))
    img.save(tmp_path / "plain.jpg", quality=95)
    result = erase_text(tmp_path / "plain.jpg", tmp_path / "plain.png")
    assert result.boxes_found == 0
    assert np.array_equal(read(tmp_path / "plain.png"), read(tmp_path / "plain.jpg"))


@needs_tesseract
@pytest.mark.skipif(not REAL_IMAGES.is_dir(), reason="SemEval-2021 task 6 images are not available")
def test_real_memes_lose_their_words(tmp_path):
    # two memes with white outlined captions over photographs
    names = [n for n in ("105_image.png", "318_image_batch_2.png") if (REAL_IMAGES / n).is_file()]
    if len(names) < 2:
        names = sorted(p.name for p in list_images(REAL_IMAGES))[:2]
    for name in names:
        src = REAL_IMAGES / name
        before = ocr_words(src)
        result = erase_text(src, tmp_path / f"{Path(name).stem}.png")
        after = ocr_words(result.out_path)
        assert result.boxes_found > 0
        assert len(before) >= 5, before
        assert len(after) <= len(before) // 3, (name, before, after)


# --------------------------------------------------------------------------------------------------
# Mask + inpainting with explicit boxes (no OCR)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["telea", "ns"])
def test_explicit_boxes_need_no_tesseract(meme, tmp_path, monkeypatch, method):
    monkeypatch.setattr(erase, "tesseract_available", lambda: False)
    path, img, drawn = meme
    out = tmp_path / "erased.png"
    result = erase_text(path, out, boxes=drawn, method=method, dilate=5)
    assert result.boxes_found == 2 and result.source == path
    before, after = np.asarray(img), read(out)
    far = far_from_text(drawn, margin=10)  # only the boxes grown by `dilate` may change
    assert np.array_equal(before[far], after[far])
    inside = in_text(drawn)
    assert white_count(after, inside) < 0.05 * white_count(before, inside)
    assert (after[inside] != before[inside]).any(axis=1).mean() > 0.2


def test_build_mask_keeps_to_the_letters(meme):
    _, img, drawn = meme
    rgb = np.asarray(img)
    mask = erase.build_mask(rgb, drawn, dilate=0)
    assert mask.dtype == np.uint8 and mask.shape == (H, W)
    inside = in_text(drawn)
    assert not mask[~inside].any()  # dilate=0: nothing outside the boxes
    white = (rgb.min(axis=2) >= 230) & inside
    assert (mask[white] > 0).all()  # every white letter pixel is masked
    assert (mask[inside] > 0).mean() < 0.8  # but not the whole box: the sky between letters stays
    grown = erase.build_mask(rgb, drawn, dilate=5)
    assert (grown > 0).sum() > (mask > 0).sum()


def test_empty_boxes_copy_the_image(meme, tmp_path):
    path, img, _ = meme
    result = erase_text(path, tmp_path / "same.png", boxes=[])
    assert result.boxes_found == 0
    assert np.array_equal(read(tmp_path / "same.png"), np.asarray(img))


def test_boxes_outside_the_image_are_clipped(meme, tmp_path):
    path, img, _ = meme
    erase_text(path, tmp_path / "o.png", boxes=[(-50, -50, 20, 20), (W - 10, H - 10, 100, 100)])
    assert read(tmp_path / "o.png").shape == (H, W, 3)


def test_unknown_method_is_an_input_error(meme, tmp_path):
    path, _, drawn = meme
    with pytest.raises(InputError, match="unknown inpainting method"):
        erase_text(path, tmp_path / "o.png", boxes=drawn, method="magic")


# --------------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------------


def test_missing_tesseract_is_an_input_error(meme, tmp_path, monkeypatch):
    monkeypatch.setattr(erase, "tesseract_available", lambda: False)
    path, img, _ = meme
    for call in (
        lambda: find_text_boxes(img),
        lambda: erase_text(path, tmp_path / "o.png"),
        lambda: erase_dir(path.parent, tmp_path / "out"),
        lambda: erased_image_for(path, tmp_path / "cache"),
    ):
        with pytest.raises(InputError) as info:
            call()
        err = info.value
        assert err.what == "tesseract is not installed"
        assert err.where == "text erasure"
        assert "apt-get install tesseract-ocr" in err.fix and "--no-erase" in err.fix
        assert err.exit_code == 2
    assert not (tmp_path / "o.png").exists()


def test_corrupt_image_is_an_input_error_naming_the_file(tmp_path):
    bad = tmp_path / "broken_meme.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really a png" * 10)
    with pytest.raises(InputError) as info:
        erase_text(bad, tmp_path / "o.png", boxes=[(0, 0, 5, 5)])
    assert "broken_meme.png" in str(info.value)
    assert not (tmp_path / "o.png").exists()
    with pytest.raises(InputError, match="does not exist"):
        erase_text(tmp_path / "nope.png", tmp_path / "o.png", boxes=[])


def test_truncated_jpeg_is_an_input_error(meme, tmp_path):
    path, img, _ = meme
    jpg = tmp_path / "cut.jpg"
    img.save(jpg, quality=90)
    jpg.write_bytes(jpg.read_bytes()[: 600])
    with pytest.raises(InputError, match="cut.jpg"):
        erase_text(jpg, tmp_path / "o.png", boxes=[])


def test_a_jpeg_named_png_is_read(meme, tmp_path):
    _, img, drawn = meme
    liar = tmp_path / "liar.png"
    img.save(liar, format="JPEG", quality=95)
    erase_text(liar, tmp_path / "o.png", boxes=drawn)
    assert Image.open(tmp_path / "o.png").format == "PNG"


# --------------------------------------------------------------------------------------------------
# Folders (resumable) and the sha256 cache
# --------------------------------------------------------------------------------------------------


def test_erase_dir_is_resumable(tmp_path, fake_ocr):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    img, _ = draw_meme(src / "a.png")
    img.save(src / "b.jpg", quality=95)
    img.save(src / "c.webp")
    (src / "notes.txt").write_text("not an image")
    assert [p.name for p in list_images(src)] == ["a.png", "b.jpg", "c.webp"]

    first = erase_dir(src, out)
    assert [r.out_path.name for r in first] == ["a.png", "b.png", "c.png"]
    assert all(not r.skipped and r.boxes_found == 2 for r in first)
    assert fake_ocr["n"] == 3

    second = erase_dir(src, out)
    assert all(r.skipped and r.boxes_found is None for r in second)
    assert fake_ocr["n"] == 3  # nothing erased again

    # an input newer than its output is redone; a deleted output is redone
    later = time.time() + 5
    os.utime(src / "b.jpg", (later, later))
    (out / "c.png").unlink()
    third = list(iter_erase_dir(src, out))
    assert [r.skipped for r in third] == [True, False, False]
    assert fake_ocr["n"] == 5


def test_iter_erase_dir_is_lazy_and_names_collisions_apart(tmp_path, fake_ocr):
    src = tmp_path / "in"
    src.mkdir()
    img, _ = draw_meme(src / "x.png")
    img.save(src / "x.jpg")
    it = iter_erase_dir(src, tmp_path / "out")
    assert fake_ocr["n"] == 0
    first = next(it)
    assert fake_ocr["n"] == 1
    names = {first.out_path.name, *(r.out_path.name for r in it)}
    assert names == {"x.jpg.png", "x.png.png"}


def test_erase_dir_of_a_missing_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        erase_dir(tmp_path / "missing", tmp_path / "out")


def test_erased_image_for_erases_each_image_once(tmp_path, fake_ocr):
    cache = tmp_path / "cache"
    path = tmp_path / "meme.png"
    draw_meme(path)
    first = erased_image_for(path, cache)
    assert first == cache / f"{file_sha256(path)}.png" and first.is_file()
    assert fake_ocr["n"] == 1
    assert erased_image_for(path, cache) == first
    copy = tmp_path / "same_picture_other_name.png"
    shutil.copy(path, copy)
    assert erased_image_for(copy, cache) == first
    assert fake_ocr["n"] == 1
    other = erased_image_for(path, cache, method="ns", dilate=3)
    assert other != first and other.name.endswith("-ns-d3.png")
    assert fake_ocr["n"] == 2
    with pytest.raises(InputError, match="does not exist"):
        erased_image_for(tmp_path / "missing.png", cache)


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def test_erase_command_erases_a_folder_and_reruns_as_a_no_op(tmp_path, fake_ocr, capsys):
    from memelens.cli import main

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    draw_meme(src / "a.png")
    draw_meme(src / "b.png")
    def said() -> str:
        return " ".join(capsys.readouterr().err.split())

    assert main(["--quiet", "erase", str(src), str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["a.png", "b.png"] and fake_ocr["n"] == 2
    assert "(0 already up to date, 4 text boxes erased)" in said()  # two boxes per picture
    assert main(["--quiet", "erase", str(src), str(out)]) == 0
    assert fake_ocr["n"] == 2 and "(2 already up to date, 0 text boxes erased)" in said()
    assert main(["--quiet", "erase", str(tmp_path / "missing"), str(out)]) == 2


def test_adam_without_tesseract_says_how_to_score_on_the_originals(tmp_path, monkeypatch, capsys):
    from memelens.cli import main

    monkeypatch.setattr("memelens.adammeme.pipeline.tesseract_available", lambda: False)
    draw_meme(tmp_path / "m.png")
    (tmp_path / "memes.jsonl").write_text('{"id": "m", "image": "m.png", "text": "TOP TEXT"}\n')
    (tmp_path / "adam.yaml").write_text("memes: memes.jsonl\nagent: embedded-small\ntargets: [embedded-small]\n")
    store = tmp_path / "store.db"
    assert main(["--store", str(store), "--quiet", "adam", "-c", str(tmp_path / "adam.yaml")]) == 2
    err = capsys.readouterr().err
    assert "tesseract is not installed" in err and "--no-erase" in err and "erase: false" in err
    assert not store.exists()
