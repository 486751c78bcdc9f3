"""Report thumbnails are made once per picture and kept in the user cache by the picture's sha256 (issue 44:
`qa eval` decoded every picture again for each run's report); the bytes read back are the bytes made, so a
report is the same with a cold or a warm cache."""

from __future__ import annotations

import os

import pytest
from PIL import Image

from memegauge.images import thumbnail
from memegauge.images.thumbnail import meme_image_records, thumbnail_cache_file, thumbnail_data_url
from memegauge.types import Meme, file_sha256


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _picture(path, colour=(200, 30, 40), size=(640, 480)):
    Image.new("RGB", size, colour).save(path)
    return path


def test_a_thumbnail_is_made_once_and_read_back_the_same(tmp_path, cache, monkeypatch):
    picture = _picture(tmp_path / "a.png")
    first = thumbnail_data_url(picture)
    cached = thumbnail_cache_file(file_sha256(picture))
    assert first.startswith("data:image/jpeg;base64,") and cached.is_file() and cached.is_relative_to(cache)
    opened = []
    monkeypatch.setattr(thumbnail.Image, "open", lambda *a, **k: opened.append(a) or pytest.fail("decoded"))
    assert thumbnail_data_url(picture) == first and opened == []  # the cache, not Pillow
    copy = tmp_path / "elsewhere.png"  # the same bytes under another name: the same thumbnail
    copy.write_bytes(picture.read_bytes())
    assert thumbnail_data_url(copy) == first


def test_a_cached_thumbnail_equals_a_fresh_one_and_another_picture_gets_its_own(tmp_path, cache):
    picture = _picture(tmp_path / "a.png")
    fresh = thumbnail_data_url(picture)
    thumbnail_cache_file(file_sha256(picture)).unlink()
    assert thumbnail_data_url(picture) == fresh  # made again: byte for byte the same
    other = _picture(tmp_path / "b.png", colour=(10, 200, 90))
    assert thumbnail_data_url(other) != fresh
    assert len(list((cache / "thumbnails").rglob("*.jpg"))) == 2


def test_a_broken_cache_file_is_made_again_and_an_unwritable_cache_is_skipped(tmp_path, cache):
    picture = _picture(tmp_path / "a.png")
    fresh = thumbnail_data_url(picture)
    cached = thumbnail_cache_file(file_sha256(picture))
    cached.write_bytes(cached.read_bytes()[:100])  # cut short (a full disk)
    assert thumbnail_data_url(picture) == fresh and cached.read_bytes().endswith(b"\xff\xd9")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    os.environ["MEMEGAUGE_CACHE_DIR"] = str(blocked)  # restored by the fixture's monkeypatch
    assert thumbnail_data_url(picture) == fresh


def test_records_of_missing_and_undrawable_pictures_are_left_out_as_before(tmp_path, cache):
    good = _picture(tmp_path / "good.png")
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a picture")
    memes = [Meme(id="good", image=good), Meme(id="broken", image=broken), Meme(id="gone", image=tmp_path / "x.png"),
             Meme(id="text", text="no picture")]
    records = meme_image_records(memes)
    assert [(r.meme, r.sha256) for r in records] == [("good", file_sha256(good))]
    assert thumbnail_data_url(broken) is None and thumbnail_data_url(tmp_path / "x.png") is None
    assert not list((cache / "thumbnails").rglob(f"{file_sha256(broken)}.jpg"))  # a failure is not cached
