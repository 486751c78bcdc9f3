"""Text erasure (memegauge.images.erase): text detection (RapidOCR), masks + inpainting, folders, the
sha256 cache; tesseract's word boxes, the second engine.

An erasure is checked with the engine that did not detect the text: RapidOCR erases, tesseract reads
what is left (and the bench, bench/erase_quality.py, reads with both). Tesseract-dependent tests skip
when it is not installed; the mask + inpaint path runs regardless (explicit boxes, or a stubbed
`detect_text`)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from memegauge.images import erase
from memegauge.images.erase import (
    EraseResult,
    erase_dir,
    erase_text,
    erased_image_for,
    iter_erase_dir,
    list_images,
    text_detection_available,
)
from memegauge.testing import ocr_check
from memegauge.testing.ocr_check import find_text_boxes, ocr_words, tesseract_available
from memegauge.types import InputError, file_sha256

HAS_TESSERACT = tesseract_available()
needs_tesseract = pytest.mark.skipif(not HAS_TESSERACT, reason="tesseract is not installed")
needs_detector = pytest.mark.skipif(not text_detection_available(), reason="RapidOCR is not installed")

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
    """Pretend the detector is there and finds the drawn text lines while their white letters are
    still there (so a second pass finds nothing); counts the pictures it found text in."""
    calls = {"n": 0}
    _, boxes = draw_meme()
    quads = [((x, y), (x + w, y), (x + w, y + h), (x, y + h)) for x, y, w, h in boxes]

    def fake_detect(image):
        rgb = np.asarray(image)
        if white_count(rgb, in_text(boxes)) < 100:
            return []
        calls["n"] += 1
        return list(quads)

    monkeypatch.setattr(erase, "_rapidocr", lambda: object())
    monkeypatch.setattr(erase, "detect_text", fake_detect)
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


@pytest.mark.slow
@needs_detector
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
    # tesseract, which did not detect them, reads none of the words any more
    assert found_words(np.asarray(img)) >= {"TOP", "BOTTOM"} and found_words(after) == set()
    # far from the text nothing changed; in the text the white letters are gone
    far = far_from_text(drawn)
    assert np.array_equal(before[far], after[far])
    inside = in_text(drawn)
    assert white_count(before, inside) > 1000
    assert white_count(after, inside) < 0.05 * white_count(before, inside)
    assert np.abs(after[inside].astype(int) - before[inside].astype(int)).mean() > 20
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")]


@needs_detector
def test_a_picture_without_text_is_written_unchanged(tmp_path):
    img = Image.new("RGB", (200, 150), (30, 90, 200))
    ImageDraw.Draw(img).ellipse([50, 30, 150, 120], fill=(200, 40, 40))
    img.save(tmp_path / "plain.jpg", quality=95)
    result = erase_text(tmp_path / "plain.jpg", tmp_path / "plain.png")
    assert result.boxes_found == 0
    assert np.array_equal(read(tmp_path / "plain.png"), read(tmp_path / "plain.jpg"))


@pytest.mark.slow
@needs_detector
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
        assert len(after) <= len(before) // 5, (name, before, after)


# --------------------------------------------------------------------------------------------------
# Mask + inpainting with explicit boxes (no OCR)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["telea", "ns"])
def test_explicit_boxes_need_no_detector(meme, tmp_path, monkeypatch, method):
    def no_detector():
        raise AssertionError("no detection with explicit boxes")

    monkeypatch.setattr(erase, "_rapidocr", no_detector)
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


def test_a_missing_detector_is_an_input_error_naming_the_extra(meme, tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def without_rapidocr(name, *args, **kwargs):
        if name.startswith("rapidocr_onnxruntime"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_rapidocr)
    erase._rapidocr.cache_clear()
    path, img, _ = meme
    try:
        assert not text_detection_available()
        for call in (
            lambda: erase_text(path, tmp_path / "o.png"),
            lambda: erase_dir(path.parent, tmp_path / "out"),
            lambda: erased_image_for(path, tmp_path / "cache"),
        ):
            with pytest.raises(InputError) as info:
                call()
            err = info.value
            assert err.what.startswith("text detection needs the `erase` extra")
            assert err.where == "text erasure"
            assert "pip install 'memegauge[erase]'" in err.fix and "--no-erase" in err.fix
            assert err.exit_code == 2
        assert not (tmp_path / "o.png").exists()
    finally:
        erase._rapidocr.cache_clear()


def test_missing_tesseract_is_an_input_error(meme, monkeypatch):
    monkeypatch.setattr(ocr_check, "tesseract_available", lambda: False)
    _, img, _ = meme
    with pytest.raises(InputError) as info:
        find_text_boxes(img)
    assert info.value.what == "tesseract is not installed" and "--no-erase" in info.value.fix


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
    assert first == cache / f"{file_sha256(path)}-lines.png" and first.is_file()
    assert fake_ocr["n"] == 1
    assert erased_image_for(path, cache) == first
    copy = tmp_path / "same_picture_other_name.png"
    shutil.copy(path, copy)
    assert erased_image_for(copy, cache) == first
    assert fake_ocr["n"] == 1
    other = erased_image_for(path, cache, method="ns")
    assert other != first and other.name.endswith("-lines-ns.png")
    assert fake_ocr["n"] == 2
    with pytest.raises(InputError, match="does not exist"):
        erased_image_for(tmp_path / "missing.png", cache)


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def test_erase_command_erases_a_folder_and_reruns_as_a_no_op(tmp_path, fake_ocr, capsys):
    from memegauge.cli import main

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


def test_adam_without_text_detection_says_how_to_score_on_the_originals(tmp_path, monkeypatch, capsys):
    from memegauge.cli import main

    monkeypatch.setattr("memegauge.adammeme.pipeline.text_detection_available", lambda: False)
    draw_meme(tmp_path / "m.png")
    (tmp_path / "memes.jsonl").write_text('{"id": "m", "image": "m.png", "text": "TOP TEXT"}\n')
    (tmp_path / "adam.yaml").write_text("memes: memes.jsonl\nagent: embedded-small\ntargets: [embedded-small]\n")
    store = tmp_path / "store.db"
    assert main(["--store", str(store), "--quiet", "adam", "-c", str(tmp_path / "adam.yaml")]) == 2
    err = capsys.readouterr().err
    assert "text detection (RapidOCR, OpenCV) is not installed" in err and "--no-erase" in err
    assert "erase: false" in err and "pip install 'memegauge[erase]'" in err
    assert not store.exists()


# --------------------------------------------------------------------------------------------------
# Drawn memes with captions of many kinds, checked by the other engine
# --------------------------------------------------------------------------------------------------

CAPTIONS = [  # (text, fill, outline, band behind the text, angle)
    ("THINK AMERICA", (255, 230, 0), (0, 0, 0), None, 0),
    ("CONSPIRACY THEORY", (220, 30, 30), (255, 255, 255), None, 0),
    ("SCARE TACTICS", (0, 0, 0), None, (255, 255, 255), 0),
    ("WEEKEND PARTY", (255, 255, 255), None, None, 0),
    ("ELECTION COMING", (40, 200, 255), (0, 0, 60), None, 8),
]


def photo_like(seed: int, width: int = 720, height: int = 540) -> Image.Image:
    """Smooth coloured noise with shapes: a background with texture and edges, as photos have."""
    rng = np.random.default_rng(seed)
    small = rng.integers(30, 220, size=(height // 30, width // 30, 3)).astype(np.uint8)
    img = Image.fromarray(small).resize((width, height), Image.BICUBIC)
    draw = ImageDraw.Draw(img)
    for _ in range(6):
        x, y = int(rng.integers(0, width - 120)), int(rng.integers(0, height - 120))
        draw.ellipse([x, y, x + 120, y + 100], fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
    return img


def captioned(seed: int) -> tuple[Image.Image, list[str]]:
    img = photo_like(seed)
    words = []
    for i, (text, fill, outline, band, angle) in enumerate(CAPTIONS[seed % 2::2] + CAPTIONS[:1]):
        layer = Image.new("RGBA", img.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(layer)
        font = ImageFont.load_default(size=44)
        x, y = 40, 30 + i * 150
        if band:
            draw.rectangle(draw.textbbox((x, y), text, font=font), fill=band + (255,))
        draw.text((x, y), text, font=font, fill=fill + (255,), stroke_width=3 if outline else 0,
                  stroke_fill=(outline or fill) + (255,))
        img.paste(layer.rotate(angle, center=(x, y)), (0, 0), layer.rotate(angle, center=(x, y)))
        words += text.split()
    return img, words


@pytest.mark.slow
@needs_detector
@needs_tesseract
def test_drawn_captions_of_every_kind_are_erased_as_tesseract_reads_them(tmp_path):
    readable = left = 0
    for seed in range(4):
        img, words = captioned(seed)
        path = tmp_path / f"m{seed}.png"
        img.save(path)
        before = {w.strip(".,:;!'\"").upper() for w in ocr_words(path, min_conf=0)} & set(words)
        result = erase_text(path, tmp_path / f"e{seed}.png")
        after = {w.strip(".,:;!'\"").upper() for w in ocr_words(result.out_path, min_conf=0)} & set(words)
        readable, left = readable + len(before), left + len(after & before)
        changed = np.any(read(result.out_path) != np.asarray(img), axis=2)
        assert changed.mean() < 0.45  # the picture is not wiped, only its text lines
    assert readable >= 8  # tesseract reads most drawn captions before erasure (not the coloured ones)
    assert left / readable <= 0.03, (left, readable)


# --------------------------------------------------------------------------------------------------
# A folder of images as the meme set: its text read by OCR and stored with the run
# --------------------------------------------------------------------------------------------------


@pytest.mark.slow
@needs_detector
def test_a_folder_of_memes_gets_its_text_by_ocr_and_the_run_stores_it(tmp_path, monkeypatch):
    import asyncio

    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme
    from memegauge.adammeme.records import MiningRecord
    from memegauge.config import load_registry
    from memegauge.engine import Store
    from memegauge.memes import load_memes
    from memegauge.records import read_records
    from memegauge.testing.server import start_server

    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "memes"
    folder.mkdir()
    draw_meme(folder / "house.png")
    img, _ = captioned(0)
    img.save(folder / "party.png")
    (folder / "sidecar.png").write_bytes((folder / "house.png").read_bytes())
    (folder / "sidecar.txt").write_text("the sidecar wins\n")
    memes = {m.id: m.text for m in load_memes(folder)}

    def letters(text: str) -> str:  # PP-OCRv4 recognition often drops the spaces between words
        return "".join(c for c in text.upper() if c.isalnum())

    assert "TOPTEXT" in letters(memes["house"]) and "BOTTOMTEXT" in letters(memes["house"])
    assert "THINKAMERICA" in letters(memes["party"]) and memes["sidecar"] == "the sidecar wins"
    assert len(list((tmp_path / "cache" / "ocr").iterdir())) == 2  # read once per picture (sha256)

    with start_server(latency_ms=0) as server:
        (tmp_path / "models.yaml").write_text(f"m: {{backend: openai, model: m, base_url: {server.base_url}}}\n")
        config = AdamConfig(memes=folder, agent="m", targets=["m"], erase=False, warn_below=0, max_steps=1,
                            seeds_per_category=1)
        store = Store(tmp_path / "s.db")
        asyncio.run(run_adammeme(config, store, load_registry(tmp_path / "models.yaml"), "folder", progress=False))
    stored = {r.meme: r.text for r in read_records(store, store.run_row("folder")["id"], MiningRecord)}
    assert stored == memes  # every meme the run saw, with the text it was evaluated on
