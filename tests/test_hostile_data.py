"""Issue 47, the data catalogue: hostile archives, mirrors and user copies, against a local GitHub- and
Hub-shaped server (memegauge.testing.dataserver); small shapes (a 2 MB member claiming 200 MB)."""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from memegauge.data import catalogue, installed_dir
from memegauge.data import install as install_module
from memegauge.data.catalogue import Entry, GitHubSource, HubSource, UserCopy, register
from memegauge.data.download import DownloadError, download
from memegauge.data.errors import ChecksumError
from memegauge.data.install import _write_hashed, get, import_copy, remove, verify
from memegauge.data.store import data_dir
from memegauge.testing.archives import tar_gz
from memegauge.testing.dataserver import DataServer
from memegauge.types import InputError

COMMIT = "e" * 40
HUB_COMMIT = "f" * 40
SMALL = {"a.txt": b"hello\n", "big.bin": b"\1" * 2_000_000}  # the manifest: a 2 MB member
HUB_FILES = {"data/test.parquet": b"PAR1" + bytes(3000) + b"PAR1"}


def _manifest(files: dict[str, bytes]) -> dict[str, list]:
    return {p: [len(d), hashlib.sha256(d).hexdigest()] for p, d in files.items()}


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


GITHUB = GitHubSource(id="files", repo="owner/bomb", commit=COMMIT, licence="MIT", what="files")
HUB = HubSource(id="hub", repo_id="org/pinned", revision=HUB_COMMIT, licence="MIT", what="parquet")
USER = UserCopy(id="copy", request="ask example.org", licence="research", what="the release",
                expect=("train.jsonl", "img"))


def _entry(folder: Path, name: str, sources, manifest: dict) -> Entry:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return Entry(name=name, title="t", size="1 MB", licence="MIT", citation="-", sources=tuple(sources), folder=folder)


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    for name in ("MEMEGAUGE_DATA_MIRROR", "HF_HUB_OFFLINE", "MEMEGAUGE_ALLOW_UNCHECKED", "MEMEGAUGE_DATA_MAX_UNPACKED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    server = DataServer()
    server.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    known = {}
    for described in (_entry(tmp_path / "e1", "bomb", [GITHUB], {"files": _manifest(SMALL)}),
                      _entry(tmp_path / "e2", "pinned", [HUB], {"hub": _manifest(HUB_FILES)}),
                      _entry(tmp_path / "e3", "unpinned", [HUB], {}),
                      _entry(tmp_path / "e4", "mine", [USER], {})):
        known = register(described, known)
    monkeypatch.setattr(catalogue, "entries", lambda: known)
    yield server
    server.stop()


def _get(name: str, server: DataServer, mirror: str | None = None):
    return get(name, mirror=mirror or server.url, quiet=True, say=lambda text: None)


def _written(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.exists() else 0


# --------------------------------------------------------------------------------------------------
# bounded and checked as it is written
# --------------------------------------------------------------------------------------------------


def test_a_member_claiming_200_mb_against_a_2_mb_manifest_entry_is_refused_before_it_is_written(env):
    """Probe: a mirror's archive expanding to GiBs wrote 1.5 GB in 13 s: every member was written before
    the manifest was checked. Now the member's claim is refused before a byte of it is written."""
    env.add_github("owner/bomb", COMMIT, archive=tar_gz(f"bomb-{COMMIT}", {"a.txt": SMALL["a.txt"],
                                                                         "big.bin": 200_000_000}))
    seen = []
    real = install_module._write_hashed

    def spy(stream, target, *args, **kwargs):
        seen.append(target.name)
        return real(stream, target, *args, **kwargs)

    install_module._write_hashed = spy
    try:
        with pytest.raises(ChecksumError, match="big.bin claims 200000000 bytes, the manifest lists 2000000"):
            _get("bomb", env)
    finally:
        install_module._write_hashed = real
    assert seen == ["a.txt"] and _written(data_dir()) < 1000  # only the first, small member was written
    with pytest.raises(InputError, match="not installed"):
        installed_dir("bomb")


def test_a_member_the_manifest_does_not_list_is_refused_before_it_is_written_and_named_printably(env):
    """Probe (partly): a newline inside an archive member's name printed a forged status line."""
    env.add_github("owner/bomb", COMMIT, archive=tar_gz(f"bomb-{COMMIT}", {
        **SMALL, "x\ndone: bomb installed, 0 problems": b"#!/bin/sh\n"}))
    with pytest.raises(ChecksumError) as caught:
        _get("bomb", env)
    assert "\n" not in str(caught.value) and "x\\ndone" in str(caught.value)
    assert "does not list" in str(caught.value)


def test_a_stream_is_refused_at_the_first_byte_over_its_bound(tmp_path):
    with pytest.raises(ChecksumError, match="goes past 2000000 bytes"):
        _write_hashed(io.BytesIO(bytes(3_000_000)), tmp_path / "m", 2_000_000, "set", "m")
    assert (tmp_path / "m").stat().st_size == 2_000_000  # not a byte more than the bound was written


def test_without_a_manifest_the_whole_is_bounded(env, tmp_path, monkeypatch):
    """A user's archive (no manifest): bounded by 10 × the entry's stated size (here set to 10 MB): a 2 MB
    member claiming 200 MB is refused from its header, before anything is written."""
    monkeypatch.setattr(install_module, "MIN_UNPACK_BOUND", 0)
    archive = tmp_path / "release.tar.gz"
    archive.write_bytes(tar_gz("release", {"train.jsonl": b"{}\n", "img/1.png": 200_000_000}))
    with pytest.raises(ChecksumError, match="more than 10000000 bytes"):
        import_copy("mine", archive, say=lambda text: None)
    assert _written(data_dir()) == 0
    monkeypatch.setenv("MEMEGAUGE_DATA_MAX_UNPACKED", "300000000")  # the stated fix lifts the bound
    assert install_module.unpacked_bound(catalogue.entries()["mine"]) == 300_000_000


class _Endless(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sent = [0]

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/loop"):
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while True:
                self.wfile.write(bytes(65536))
                self.sent[0] += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def endless():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_endless_body_without_a_length_is_stopped_at_the_cap_and_nothing_is_kept(endless, tmp_path):
    """Probe: an endless body with no Content-Length wrote 735 MB in 2.6 s."""
    target = tmp_path / "a.tar.gz"
    with httpx.Client() as client, pytest.raises(DownloadError, match="goes past 5000000 bytes"):
        download(f"{endless}/a.tar.gz", target, client=client, quiet=True, max_bytes=5_000_000)
    assert not target.exists() and not list(tmp_path.iterdir())


def test_a_redirect_loop_is_one_message(env, endless):
    """Probe: a redirect loop ended in a traceback (httpx.TooManyRedirects)."""
    with pytest.raises(DownloadError, match="redirected more than 5 times"):
        _get("bomb", env, mirror=f"{endless}/loop")


def test_a_cached_archive_is_reused_only_for_its_own_source_and_hash(env):
    """Probe: a complete archive left from a killed run was reused whatever mirror was asked next."""
    good = tar_gz(f"bomb-{COMMIT}", SMALL)
    env.add_github("owner/bomb", COMMIT, archive=good)
    downloads = data_dir() / ".downloads"
    downloads.mkdir(parents=True)
    # another mirror's archive, complete, with its note: never taken for this mirror's
    other = downloads / f"owner+bomb-{COMMIT}-{hashlib.sha256(b'elsewhere').hexdigest()[:12]}.tar.gz"
    other.write_bytes(tar_gz(f"bomb-{COMMIT}", {**SMALL, "a.txt": b"evil\n"}))
    outcome = _get("bomb", env)
    assert outcome.requests == 1 and (installed_dir("bomb") / "files" / "a.txt").read_bytes() == b"hello\n"
    # this mirror's own file, left by a killed run without its note, or changed since: fetched again
    remove("bomb")
    url = f"{env.url}/owner/bomb/archive/{COMMIT}.tar.gz"
    mine = downloads / f"owner+bomb-{COMMIT}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.tar.gz"
    mine.write_bytes(b"left by a killed run")
    assert _get("bomb", env).requests == 1
    remove("bomb")
    mine.write_bytes(good)
    mine.with_name(mine.name + ".json").write_text(json.dumps({"url": url, "sha256": "0" * 64}))
    assert _get("bomb", env).requests == 1
    remove("bomb")
    mine.write_bytes(good)  # complete, noted, same source and hash: reused without a request
    mine.with_name(mine.name + ".json").write_text(json.dumps({"url": url, "sha256": hashlib.sha256(good).hexdigest()}))
    assert _get("bomb", env).requests == 0


def test_hub_files_are_checked_against_hashes_pinned_in_the_entry_not_the_mirrors(env):
    """Probe (partly): a Hub mirror (HF_ENDPOINT) supplied both the files and the hashes they were checked
    against. With the hashes pinned in the entry, a mirror's consistent but different file is refused."""
    env.add_hub("org/pinned", HUB_COMMIT, {"data/test.parquet": b"PAR1" + b"\1" * 3000 + b"PAR1"},
                lfs={"data/test.parquet"})
    with pytest.raises(ChecksumError, match="pinned in the entry"):
        get("pinned", quiet=True, say=lambda text: None)
    with pytest.raises(InputError, match="not installed"):
        installed_dir("pinned")
    env.add_hub("org/pinned", HUB_COMMIT, HUB_FILES, lfs={"data/test.parquet"})
    get("pinned", quiet=True, say=lambda text: None)
    record = json.loads((installed_dir("pinned") / "memegauge-data.json").read_text())["sources"]["hub"]
    assert record["checked_against"] == "sha256 pinned in the entry"


def test_an_unpinned_hub_source_records_whose_hashes_it_was_checked_against(env):
    env.add_hub("org/pinned", HUB_COMMIT, HUB_FILES, lfs={"data/test.parquet"})
    get("unpinned", quiet=True, say=lambda text: None)
    record = json.loads((installed_dir("unpinned") / "memegauge-data.json").read_text())["sources"]["hub"]
    assert record["checked_against"] == f"the hashes {env.url} listed"


# --------------------------------------------------------------------------------------------------
# user copies read safely
# --------------------------------------------------------------------------------------------------


def _release(folder: Path, rows: str | None = None) -> Path:
    (folder / "img").mkdir(parents=True)
    (folder / "img" / "1.png").write_bytes(_png())
    (folder / "train.jsonl").write_text(rows if rows is not None
                                        else json.dumps({"id": "1", "img": "img/1.png"}) + "\n")
    return folder


def test_a_picture_given_as_a_link_inside_the_copy_is_installed_as_its_content(env, tmp_path):
    """Probe: a relative symlink was installed as a dangling link and left out of the record."""
    release = _release(tmp_path / "release")
    (release / "img" / "2.png").symlink_to("1.png")
    (release / "pictures").symlink_to("img")  # a folder link inside: its content
    import_copy("mine", release, say=lambda text: None)
    copy = installed_dir("mine") / "copy"
    assert not (copy / "img" / "2.png").is_symlink() and (copy / "img" / "2.png").read_bytes() == _png()
    assert (copy / "pictures" / "1.png").read_bytes() == _png()
    files = json.loads((installed_dir("mine") / "memegauge-data.json").read_text())["sources"]["copy"]["files"]
    assert {"img/2.png", "pictures/1.png", "pictures/2.png"} <= set(files)


@pytest.mark.parametrize("make, message", [
    (lambda r: (r / "img" / "2.png").symlink_to("/etc/passwd"), "a link that leaves the folder"),
    (lambda r: (r / "img" / "2.png").symlink_to("nothing.png"), "points to nothing"),
    (lambda r: (r / "img" / "loop").symlink_to(".."), "a link loop"),
])
def test_a_link_leaving_the_copy_dangling_or_looping_is_refused_before_any_copy(env, tmp_path, make, message):
    """Probes: a link to /etc/passwd was installed and hashed; a folder link loop ended in shutil.Error /
    RecursionError after copying the wrong folder whole."""
    release = _release(tmp_path / "release")
    make(release)
    with pytest.raises(InputError, match=message):
        import_copy("mine", release, say=lambda text: None)
    assert not (data_dir() / ".staging" / "mine-copy").exists() and _written(data_dir() / "mine") == 0


def test_a_data_folder_inside_the_imported_folder_is_refused_before_any_copy(env, tmp_path, monkeypatch):
    release = _release(tmp_path / "release")
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(release / "data"))
    with pytest.raises(InputError, match="data folder .* is inside the folder imported"):
        import_copy("mine", release, say=lambda text: None)
    assert not (release / "data" / ".staging" / "mine-copy").exists()


def test_required_files_are_checked_before_anything_is_copied(env, tmp_path):
    """Probe: 294 MB were copied before the required files were checked."""
    (tmp_path / "wrong" / "sub").mkdir(parents=True)
    (tmp_path / "wrong" / "sub" / "big.bin").write_bytes(bytes(1_000_000))
    with pytest.raises(InputError, match="train.jsonl, img not found; nothing was copied"):
        import_copy("mine", tmp_path / "wrong", say=lambda text: None)
    assert not (data_dir() / ".staging" / "mine-copy").exists()


def test_an_archive_link_leaving_it_is_refused(env, tmp_path):
    archive = tmp_path / "release.tar.gz"
    archive.write_bytes(tar_gz("release", {"train.jsonl": b"{}\n", "img/1.png": _png()},
                             {"img/2.png": "../../../etc/passwd"}))
    with pytest.raises(InputError, match="a link that leaves the archive"):
        import_copy("mine", archive, say=lambda text: None)
    archive.write_bytes(tar_gz("release", {"train.jsonl": b"{}\n", "img/1.png": _png()}, {"img/2.png": "1.png"}))
    import_copy("mine", archive, say=lambda text: None)
    assert (installed_dir("mine") / "copy" / "img" / "2.png").read_bytes() == _png()


# --------------------------------------------------------------------------------------------------
# NOT-checked copies, read-only folders, full disks
# --------------------------------------------------------------------------------------------------


def test_a_copy_marked_not_checked_is_refused_unless_allowed(env, tmp_path, monkeypatch):
    """Probe: a copy marked NOT checked by `data verify` was still used by `qa eval --data NAME`."""
    import_copy("mine", _release(tmp_path / "release"), say=lambda text: None)
    (installed_dir("mine") / "copy" / "train.jsonl").write_text("changed\n")
    assert verify("mine")
    with pytest.raises(InputError, match="(?s)NOT checked.*memegauge data remove mine.*--allow-unchecked"):
        installed_dir("mine")
    monkeypatch.setenv("MEMEGAUGE_ALLOW_UNCHECKED", "1")
    assert installed_dir("mine").is_dir()


def test_allow_unchecked_is_a_command_line_option(env, tmp_path, capsys):
    from memegauge.cli import main

    import_copy("mine", _release(tmp_path / "release"), say=lambda text: None)
    (installed_dir("mine") / "copy" / "train.jsonl").write_text("changed\n")
    assert main(["data", "verify", "mine"]) == 1
    assert main(["data", "path", "mine"]) == 2 and "NOT checked" in capsys.readouterr().err.replace("\n", " ")
    assert main(["--allow-unchecked", "data", "path", "mine"]) == 0
    os.environ.pop("MEMEGAUGE_ALLOW_UNCHECKED", None)


@pytest.mark.parametrize("code, message", [(errno.ENOSPC, "the disk is full"),
                                           (errno.EROFS, "the data folder cannot be written")])
def test_a_full_disk_or_a_read_only_folder_is_one_message_for_every_command(env, tmp_path, monkeypatch, code,
                                                                           message):
    """Probe: a read-only data folder and a full disk gave OSError tracebacks (verify, import, remove, get)."""
    import_copy("mine", _release(tmp_path / "release"), say=lambda text: None)
    env.add_github("owner/bomb", COMMIT, archive=tar_gz(f"bomb-{COMMIT}", SMALL))

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(data_dir()))

    monkeypatch.setattr("memegauge.data.store.write_text_atomic", fail)
    monkeypatch.setattr("memegauge.data.install.write_text_atomic", fail)
    with pytest.raises(InputError, match=message):
        verify("mine")
    with pytest.raises(InputError, match=message):
        import_copy("mine", _release(tmp_path / "again"), say=lambda text: None)
    with pytest.raises(InputError, match=message):
        _get("bomb", env)
    monkeypatch.setattr("memegauge.data.install.os.replace", fail)
    with pytest.raises(InputError, match=message):
        remove("mine")


# --------------------------------------------------------------------------------------------------
# every row error one message naming file and line; picture paths confined to the release
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows, where, message", [
    ('{"id": 2, "img": \n', "train.jsonl:1", "invalid JSON"),  # the file's only line: not the release's JSONL
    ('{"id": 1, "img": "img/1.png", "label": 0}\n{"id": 2, "img": \n[3]\n', "train.jsonl:2",
     "2 of 3 lines cannot be read"),  # more than half its lines: the whole file refused
    ('{"id": 1, "img": "img/1.png", "label": 0}\n\n{"id": 2, "label": 1}\n', "train.jsonl:3", "has no picture"),
    ('[1, 2]\n', "train.jsonl:1", "not a JSON object"),
    ('{"id": 1, "img": "/etc/passwd", "label": 0}\n', "train.jsonl:1", "leaves the release's folder"),
    ('{"id": 1, "img": "../../../etc/passwd", "label": 0}\n', "train.jsonl:1", "leaves the release's folder"),
])
def test_every_row_error_of_a_users_copy_is_one_message_naming_file_and_line(tmp_path, monkeypatch, rows, where,
                                                                            message):
    """Probes: a broken JSONL line, a missing `img` or `img: "/etc/passwd"` ended in JSONDecodeError / KeyError /
    ValueError tracebacks (the real FHM entry's reader); nothing is installed."""
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    release = _release(tmp_path / "release", rows)
    with pytest.raises(InputError, match=message) as caught:
        import_copy("fhm", release, say=lambda text: None)
    assert where in str(caught.value)
    with pytest.raises(InputError, match="not installed"):
        installed_dir("fhm")


def test_one_unreadable_line_of_a_users_copy_is_listed_and_the_rest_imported(tmp_path, monkeypatch):
    """A line cut short, a line that is no object and a row whose `label` is an object, among readable rows: the
    copy is imported, those three lines listed (FILE:LINE and why) beside the meme set, the other rows converted
    (issue 49: a row the reader cannot interpret is counted, never a crash, never a silent skip)."""
    from memegauge.data.catalogue import entry

    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    good = "".join(json.dumps({"id": i, "img": "img/1.png", "label": i % 2}) + "\n" for i in range(5))
    release = _release(tmp_path / "release", good + '{"id": 7, "img": \n[3]\n{"id": 8, "img": "img/1.png", '
                                                   '"label": {"x": 1}}\n')
    import_copy("fhm", release, say=lambda text: None)
    converted = installed_dir("fhm") / "converted"
    assert len((converted / "train.jsonl").read_text().splitlines()) == 5
    listed = (converted / "train.unreadable.txt").read_text().splitlines()
    assert [line.split("\t")[0].rsplit("/", 1)[-1] for line in listed] == ["train.jsonl:6", "train.jsonl:7",
                                                                          "train.jsonl:8"]
    assert listed[0].endswith("(train.jsonl:6: invalid JSON: Expecting value (column 18))")
    assert listed[1].endswith("(train.jsonl:7: the line is list, not a JSON object)")
    assert listed[2].endswith("(train.jsonl:8: 'label' is dict, not text or a number)")
    released = entry("fhm").rows(installed_dir("fhm") / "fhm", "train")
    assert len(released) == 8 and [r.unreadable != "" for r in released].count(True) == 3


def test_confined_keeps_paths_inside_the_release(tmp_path):
    from memegauge.files import confined

    assert confined(tmp_path, "img/1.png", "w") == tmp_path / "img" / "1.png"
    assert confined(tmp_path, tmp_path / "img" / "1.png", "w") == tmp_path / "img" / "1.png"
    for bad in ("../x.png", "/etc/passwd", "img/../../x.png", "a\0b"):
        with pytest.raises(InputError, match="FILE:3"):
            confined(tmp_path, bad, "FILE:3")


@pytest.mark.parametrize("img", ["/etc/passwd", "../outside.png", "img/../../outside.png"])
def test_a_release_files_picture_path_is_confined_to_the_release_folder(tmp_path, img):
    """Probe (partly): a release file's picture path could point anywhere (`../`, `/etc/passwd` was sent to the
    model). The kit's reader refuses it, naming the file and line."""
    from memegauge.benchmarks.kit.items import read_split
    from memegauge.benchmarks.kit.spec import load_spec

    folder = Path(install_module.__file__).parents[1] / "benchmarks" / "fhm"
    release = tmp_path / "release"
    release.mkdir()
    (tmp_path / "outside.png").write_bytes(_png())
    (release / "dev_seen.jsonl").write_text(json.dumps({"id": 1, "img": img, "label": 0, "text": "t"}) + "\n")
    with pytest.raises(InputError, match="leaves the release's folder") as caught:
        spec = load_spec(folder)
        read_split(spec, release, "dev_seen", None, spec.tasks, None)
    assert "dev_seen.jsonl:1" in str(caught.value)


def test_a_mami_release_files_picture_path_is_confined_too(tmp_path):
    from memegauge.benchmarks.kit.items import load_hooks, read_split
    from memegauge.benchmarks.kit.spec import load_spec

    folder = Path(install_module.__file__).parents[1] / "benchmarks" / "mami"
    spec = load_spec(folder)
    release = tmp_path / "release"
    split = release / spec.splits[spec.split]
    split.parent.mkdir(parents=True)
    split.write_text("file_name\tmisogynous\tshaming\tstereotype\tobjectification\tviolence\tText Transcription\n"
                     "../../../etc/passwd\t1\t0\t0\t0\t0\thello\n")
    with pytest.raises(InputError, match="leaves the release's folder"):
        read_split(spec, release, spec.split, load_hooks(folder, spec.name), spec.tasks, None)


def test_get_refuses_before_writing_when_the_disk_cannot_hold_the_manifests_files(env, monkeypatch):
    env.add_github("owner/bomb", COMMIT, archive=tar_gz(f"bomb-{COMMIT}", SMALL))
    monkeypatch.setattr(install_module.shutil, "disk_usage", lambda path: type("U", (), {"free": 1000})())
    with pytest.raises(InputError, match="needs 2.0 MB and the disk has 0.0 MB free"):
        _get("bomb", env)
    assert not (data_dir() / ".staging" / "bomb-files").exists() or _written(data_dir() / ".staging") == 0


def test_a_download_announcing_more_than_expected_is_refused_before_its_body_is_read(env, tmp_path):
    env.add("/big", bytes(3_000_000))
    with httpx.Client() as client, pytest.raises(DownloadError, match="announces 3000000 bytes, more than the "
                                                                      "2000000 expected"):
        download(f"{env.url}/big", tmp_path / "dl" / "big", client=client, quiet=True, max_bytes=2_000_000)
    assert not list((tmp_path / "dl").iterdir())


def test_the_bound_without_a_manifest_is_ten_times_the_stated_size_and_at_least_a_gib():
    from memegauge.data.install import stated_bytes, unpacked_bound

    assert stated_bytes("71 MB") == 71_000_000 and stated_bytes("3.9 GB (the release zip)") == 3_900_000_000
    assert stated_bytes("about a gigabyte") == 0
    toy = Entry(name="t", title="t", size="3.9 GB", licence="-", citation="-", sources=(), folder=Path("."))
    assert unpacked_bound(toy) == 39_000_000_000
    assert unpacked_bound(Entry(name="t", title="t", size="1 MB", licence="-", citation="-", sources=(),
                                folder=Path("."))) == 1 << 30


def test_a_mirror_listing_a_file_the_entry_does_not_pin_installs_nothing(env):
    env.add_hub("org/pinned", HUB_COMMIT, {**HUB_FILES, "extra.bin": b"x"}, lfs={"data/test.parquet"})
    with pytest.raises(ChecksumError, match="not pinned: extra.bin"):
        get("pinned", quiet=True, say=lambda text: None)


def test_links_in_an_archive_are_charged_to_the_bound_as_the_copies_they_become(env, tmp_path, monkeypatch):
    monkeypatch.setattr(install_module, "MIN_UNPACK_BOUND", 0)  # 10 × "1 MB"
    archive = tmp_path / "release.tar.gz"
    archive.write_bytes(tar_gz("release", {"train.jsonl": b"{}\n", "img/1.png": b"\1" * 1_000_000},
                             {f"img/{n}.png": "1.png" for n in range(2, 30)}))
    with pytest.raises(ChecksumError, match="more than 10000000 bytes"):
        import_copy("mine", archive, say=lambda text: None)
    assert not (data_dir() / "mine" / "copy").exists()


def test_a_picture_linked_out_of_a_data_folder_is_refused_and_a_link_inside_it_is_followed(tmp_path):
    """Review of issue 47: a picture of a `--data` release given as a link to /etc/passwd was sent to the model
    (the check read the path as written). A link that leaves the release is refused; one inside it is followed."""
    from memegauge.files import confined

    release = tmp_path / "release"
    (release / "img").mkdir(parents=True)
    (release / "img" / "1.png").write_bytes(_png())
    (release / "img" / "inside.png").symlink_to(release / "img" / "1.png")
    (release / "img" / "outside.png").symlink_to("/etc/passwd")
    assert confined(release, "img/inside.png", "w") == release / "img" / "inside.png"
    with pytest.raises(InputError, match="is a link that leaves the release's folder") as caught:
        confined(release, "img/outside.png", "dev_seen.jsonl:1")
    assert "dev_seen.jsonl:1" in str(caught.value)
    linked = tmp_path / "linked-release"
    linked.symlink_to(release)  # a release folder that is itself a link is followed
    assert confined(linked, "img/1.png", "w") == linked / "img" / "1.png"


def test_a_bad_line_inside_a_goat_bench_zip_is_counted_with_its_line_and_the_rest_read(tmp_path, monkeypatch):
    """GOAT-Bench's zipped JSONL listing (test/TASK.zip as the Hub keeps it): a line cut short and a row whose
    `label` is a list are rows of their own marked unreadable (listing and line), the others read; it was a
    bare JSONDecodeError traceback (issue 49)."""
    import zipfile

    from memegauge.data.catalogue import entry

    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "test").mkdir()
    for task in ("hatefulness", "misogyny", "offensiveness", "sarcasm", "harmfulness"):
        good = [json.dumps({"id": f"{i}", "img": f"{i}.png", "label": str(i % 2), "text": "t"}) for i in range(4)]
        with zipfile.ZipFile(tmp_path / "test" / f"{task}.zip", "w") as z:
            z.writestr(f"{task}/test.jsonl", "\n".join(good[:2] + ['{"id": "9", "img": "9.p', good[2],
                                                                   '{"id": "8", "label": ["1"]}', good[3]]) + "\n")
            for i in range(4):
                z.writestr(f"{task}/images/{i}.png", _png())
    released = entry("goat-bench").rows(tmp_path, "test")
    assert len(released) == 5 * 6
    bad = [r for r in released if r.unreadable]
    assert sorted(list(r.labels.items()) for r in bad) == sorted(
        [(task, None)] for task in ("hatefulness", "misogyny", "offensiveness", "sarcasm", "harmfulness") * 2)
    assert bad[0].unreadable.startswith("unreadable line (test.jsonl:3: invalid JSON: Unterminated string")
    assert bad[1].unreadable == "unreadable line (test.jsonl:5: 'label' is list, not text or a number)"
    assert all(r.id for r in released if not r.unreadable)
