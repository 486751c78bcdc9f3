"""`memegauge data`: fetching, checking, resuming, offline use, gated sets and names where a folder is
asked, against a local GitHub- and Hub-shaped server (memegauge.testing.dataserver); no internet."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from memegauge.cli import main
from memegauge.data import catalogue, installed_dir
from memegauge.data.catalogue import DuplicateEntry, Entry, GitHubSource, HubSource, UserCopy, register
from memegauge.data.download import DownloadError
from memegauge.data.errors import ChecksumError
from memegauge.data.install import get, import_copy, remove, verify
from memegauge.memes import load_memes
from memegauge.testing.dataserver import DataServer
from memegauge.types import InputError, MemeGaugeError

COMMIT = "c" * 40
HUB_COMMIT = "d" * 40
FILES = {"none-minus/dev.json": b'[{"id": "q1"}]\n', "img/1.png": bytes(range(256)) * 400, "LICENSE": b"MIT\n"}
HUB_FILES = {"data/test-00000.parquet": b"PAR1" + bytes(5000) + b"PAR1", "README.md": b"---\nlicense: mit\n---\n"}


def _entry(folder: Path, sources, **fields) -> Entry:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {s.id: {p: [len(d), hashlib.sha256(d).hexdigest()] for p, d in FILES.items()}
                for s in sources if s.kind == "github"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return Entry(name=fields.pop("name", "toy"), title="a toy set", size="1 MB", licence="MIT",
                 citation="@misc{toy, title={Toy}}", sources=tuple(sources), folder=folder, **fields)


GITHUB = GitHubSource(id="questions", repo="owner/toy", commit=COMMIT, licence="MIT", what="questions")
HUB = HubSource(id="hub", repo_id="org/toy", revision=HUB_COMMIT, licence="Apache-2.0", what="parquet")
USER = UserCopy(id="copy", request="ask the authors at example.org", licence="research use", what="the pictures",
                expect=("train.jsonl",))


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A data folder, a server with the toy repository and Hub dataset, and the toy entries registered."""
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MEMEGAUGE_DATA_MIRROR", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    server = DataServer()
    server.add_github("owner/toy", COMMIT, FILES)
    server.add_hub("org/toy", HUB_COMMIT, HUB_FILES, lfs={"data/test-00000.parquet"})
    server.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    known = {}
    for described in (_entry(tmp_path / "toy", [GITHUB]), _entry(tmp_path / "hubtoy", [HUB], name="hubtoy"),
                      _entry(tmp_path / "gated", [GITHUB, USER], name="gated", convert=_convert,
                             splits=lambda root: {p.stem: p for p in (root / "converted").glob("*.jsonl")})):
        known = register(described, known)
    monkeypatch.setattr(catalogue, "entries", lambda: known)
    yield server
    server.stop()


def _convert(root: Path) -> None:
    rows = [json.loads(line) for line in (root / "copy" / "train.jsonl").read_text().splitlines()]
    (root / "converted").mkdir(exist_ok=True)
    (root / "converted" / "train.jsonl").write_text("".join(
        json.dumps({"id": r["id"], "image": f"../copy/{r['img']}", "text": r["text"]}) + "\n" for r in rows))


def _quiet_get(name: str, server: DataServer, **options):
    said = []
    outcome = get(name, mirror=server.url, quiet=True, say=said.append, **options)
    return outcome, said


def test_a_good_get_installs_checked_files_in_the_release_layout_with_licence_and_citation(env):
    outcome, said = _quiet_get("toy", env)
    root = installed_dir("toy")
    assert (root / "questions" / "none-minus" / "dev.json").read_bytes() == FILES["none-minus/dev.json"]
    assert (root / "questions" / "img" / "1.png").read_bytes() == FILES["img/1.png"]
    assert "licence: MIT" in said[0] and "@misc{toy" in said[0]  # printed before the download
    assert "@misc{toy" in (root / "ABOUT.txt").read_text()
    assert outcome.requests == 1 and outcome.installed == ["questions"]
    assert env.requests == [("GET", f"/owner/toy/archive/{COMMIT}.tar.gz", "")]
    assert verify("toy") == []
    assert not list((root.parent / ".downloads").glob("*"))  # nothing left behind


def test_a_second_get_makes_no_request_and_offline_reports_the_copy(env):
    _quiet_get("toy", env)
    before = len(env.requests)
    again, said = _quiet_get("toy", env)
    offline, _ = _quiet_get("toy", env, offline=True)
    assert again.already and offline.already and said == []
    assert len(env.requests) == before


def test_offline_without_a_copy_touches_no_network_and_says_how_to_get_it(env, monkeypatch):
    with pytest.raises(InputError, match="memegauge data get toy"):
        _quiet_get("toy", env, offline=True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="HF_HUB_OFFLINE"):
        _quiet_get("hubtoy", env)
    assert env.requests == []
    with pytest.raises(InputError, match="memegauge data get toy"):
        installed_dir("toy")


def test_a_truncated_body_installs_nothing_then_the_next_get_resumes_with_a_range_request(env):
    path = f"/owner/toy/archive/{COMMIT}.tar.gz"
    env.faults[path] = "truncate"
    with pytest.raises(DownloadError, match="rerun the same command to resume"):
        _quiet_get("toy", env)
    with pytest.raises(InputError, match="not installed"):
        installed_dir("toy")
    del env.faults[path]
    outcome, _ = _quiet_get("toy", env)
    assert env.requests[-1][2].startswith("bytes=") and env.requests[-1][2] != "bytes=0-", env.requests
    assert installed_dir("toy").is_dir() and verify("toy") == []


def test_a_dropped_connection_is_resumed_within_the_same_get(env):
    path = f"/owner/toy/archive/{COMMIT}.tar.gz"
    env.faults[path] = "drop_once"
    outcome, _ = _quiet_get("toy", env)
    assert outcome.requests == 2
    assert env.requests[0][2] == "" and env.requests[1][2].startswith("bytes=")
    archive_size = len(env.files[path][0])
    assert outcome.received == archive_size  # the resumed request fetched only the rest
    assert verify("toy") == []


def test_a_wrong_checksum_names_the_file_and_both_hashes_and_installs_nothing(env):
    changed = {**FILES, "img/1.png": b"not the picture"}
    env.add_github("owner/toy", COMMIT, changed)
    with pytest.raises(ChecksumError) as caught:
        _quiet_get("toy", env)
    message = str(caught.value)
    assert "img/1.png" in message and hashlib.sha256(FILES["img/1.png"]).hexdigest() in message
    assert hashlib.sha256(b"not the picture").hexdigest() in message and "nothing was installed" in message
    data = Path(installed_dir.__globals__["data_dir"]())
    assert not (data / "toy" / "questions").exists()
    assert not list((data / ".downloads").glob("*.tar.gz"))  # fetched afresh next time


def test_a_404_installs_nothing(env):
    env.faults[f"/owner/toy/archive/{COMMIT}.tar.gz"] = "404"
    with pytest.raises(DownloadError, match="HTTP 404"):
        _quiet_get("toy", env)
    with pytest.raises(InputError):
        installed_dir("toy")


def test_the_mirror_comes_from_the_environment_too(env, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_DATA_MIRROR", env.url)
    get("toy", quiet=True, say=lambda text: None)
    assert env.requests[0][1] == f"/owner/toy/archive/{COMMIT}.tar.gz"


def test_a_hub_source_through_hf_endpoint_is_checked_against_the_hubs_hashes(env):
    outcome, _ = _quiet_get("hubtoy", env)
    root = installed_dir("hubtoy")
    assert (root / "hub" / "data" / "test-00000.parquet").read_bytes() == HUB_FILES["data/test-00000.parquet"]
    assert not (root / "hub" / ".cache").exists()
    state = json.loads((root / "memegauge-data.json").read_text())
    assert state["sources"]["hub"]["commit"] == HUB_COMMIT
    assert any(path.startswith("/datasets/org/toy/resolve/") for _, path, _ in env.requests)
    assert verify("hubtoy") == []


def test_a_hub_file_that_differs_from_the_hubs_sha256_installs_nothing(env):
    data, headers = env.files[f"/datasets/org/toy/resolve/{HUB_COMMIT}/data/test-00000.parquet"]
    env.files[f"/datasets/org/toy/resolve/{HUB_COMMIT}/data/test-00000.parquet"] = (b"X" * len(data), headers)
    with pytest.raises(ChecksumError, match="test-00000.parquet does not match the Hub: expected sha256") as caught:
        _quiet_get("hubtoy", env)
    assert hashlib.sha256(b"X" * len(data)).hexdigest() in str(caught.value)
    with pytest.raises(InputError):
        installed_dir("hubtoy")


def test_a_gated_source_says_where_to_request_it_and_the_exact_import_line_then_imports(env, tmp_path):
    outcome, _ = _quiet_get("gated", env)
    assert outcome.installed == ["questions"]
    assert "ask the authors at example.org" in outcome.gated[0]
    assert "memegauge data import gated PATH" in outcome.gated[0]
    with pytest.raises(InputError, match="memegauge data import gated PATH"):
        installed_dir("gated")
    with pytest.raises(InputError, match="memegauge data import gated PATH"):
        load_memes("gated:train")
    release = tmp_path / "release" / "toy_release"
    (release / "img").mkdir(parents=True)
    (release / "img" / "1.png").write_bytes(_png())
    (release / "train.jsonl").write_text(json.dumps({"id": "1", "img": "img/1.png", "text": "hello"}) + "\n")
    archive = tmp_path / "release.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(release, arcname="toy_release")
    import_copy("gated", archive, say=lambda text: None)
    root = installed_dir("gated")
    assert (root / "copy" / "train.jsonl").is_file()  # the archive's top folder stripped
    memes = load_memes("gated:train")
    assert [(m.id, m.text, m.image) for m in memes] == [("1", "hello", root / "copy" / "img" / "1.png")]
    # a config's `memes: gated:train` arrives resolved from the config's folder
    assert load_memes(tmp_path / "configs" / "gated:train") == memes
    with pytest.raises(InputError, match="gated:nope"):
        load_memes("gated:nope")
    (root / "copy" / "train.jsonl").write_text("changed\n")
    assert verify("gated") and "train.jsonl" in verify("gated")[0]


def test_an_import_that_is_not_the_release_is_refused_and_installs_nothing(env, tmp_path):
    (tmp_path / "wrong").mkdir()
    (tmp_path / "wrong" / "readme.txt").write_text("x")
    with pytest.raises(InputError, match="train.jsonl not found"):
        import_copy("gated", tmp_path / "wrong", say=lambda text: None)
    assert not (Path(installed_dir.__globals__["data_dir"]()) / "gated" / "copy").exists()


def test_remove_deletes_the_copy(env):
    _quiet_get("toy", env)
    assert remove("toy") and not remove("toy")
    with pytest.raises(InputError):
        installed_dir("toy")


def test_two_entries_of_one_name_are_refused(tmp_path):
    first = _entry(tmp_path / "a", [GITHUB])
    with pytest.raises(DuplicateEntry):
        register(first, register(first, {}))


def test_the_commands_list_get_path_verify_and_report_a_gated_set(env, capsys):
    assert main(["data", "get", "toy", "--mirror", env.url]) == 0
    assert main(["data", "path", "toy"]) == 0
    assert main(["data", "verify", "toy"]) == 0
    assert main(["data", "list"]) == 0
    assert main(["data", "get", "gated", "--mirror", env.url]) == 2
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "toy: installed questions" in text and "3 files match" in text
    assert "yes, checked" in text and "memegauge data import gated PATH" in text
    assert main(["data", "get", "toy", "--mirror", env.url]) == 0
    assert "(0 requests)" in capsys.readouterr().out


def test_a_failed_verify_gives_the_fix_is_kept_with_the_copy_and_list_shows_it_not_checked(env, tmp_path, capsys):
    assert main(["data", "get", "toy", "--mirror", env.url]) == 0
    picture = installed_dir("toy") / "questions" / "img" / "1.png"
    picture.write_bytes(picture.read_bytes() + b"x")  # damaged after install
    capsys.readouterr()
    assert main(["data", "verify", "toy"]) == 1
    said = capsys.readouterr()
    assert "img/1.png: expected sha256" in said.err
    assert "fix: replace it:\n    memegauge data remove toy\n    memegauge data get toy\n" in said.err  # one a line
    assert main(["data", "list"]) == 0
    listed = " ".join(capsys.readouterr().out.split())
    assert "NOT checked" in listed and "yes, checked" not in listed
    before = len(env.requests)
    assert main(["data", "get", "toy", "--mirror", env.url]) == 1  # still 0 requests, but says it is damaged
    said = capsys.readouterr()
    assert len(env.requests) == before and "replace it:\n    memegauge data remove toy\n    memegauge data get toy" \
        in said.err
    # a user's copy is replaced by importing it again
    _quiet_get("gated", env)
    release = tmp_path / "release"
    (release / "img").mkdir(parents=True)
    (release / "img" / "1.png").write_bytes(_png())
    (release / "train.jsonl").write_text(json.dumps({"id": "1", "img": "img/1.png", "text": "hello"}) + "\n")
    import_copy("gated", release, say=lambda text: None)
    (installed_dir("gated") / "copy" / "train.jsonl").write_text("changed\n")
    capsys.readouterr()
    assert main(["data", "verify", "gated"]) == 1
    assert "fix: replace it:\n    memegauge data remove gated\n    memegauge data get gated\n    memegauge data " \
        "import gated PATH  # PATH: your copy; " in capsys.readouterr().err
    picture.write_bytes(FILES["img/1.png"])  # repaired: the next verify records the check again
    assert main(["data", "verify", "toy"]) == 0 and main(["data", "list"]) == 0
    assert "yes, checked" in " ".join(capsys.readouterr().out.split())


def test_get_of_a_users_copy_says_so_first_then_where_to_request_it_and_the_import_line_then_the_licence(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "empty"))
    assert main(["data", "get", "fhm"]) == 2
    said = " ".join((lambda c: c.out + c.err)(capsys.readouterr()).split())
    assert said.startswith("your copy: fhm (")
    first = said.index("is your own copy to bring")
    assert first < said.index("Request it: accept the licence at https://hatefulmemeschallenge.com") \
        < said.index("Then run: memegauge data import fhm PATH") < said.index("Licence: Hateful Memes dataset licence")
    assert "cite:" not in said and "@" not in said[:first]  # no citation ahead of what to do


def test_python_dash_m_memegauge_is_the_command_line():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "memegauge", "--version"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("memegauge ")
    bad = subprocess.run([sys.executable, "-m", "memegauge", "data", "get", "no-such-set"], capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "no data set named 'no-such-set'" in bad.stdout + bad.stderr


def test_the_mirror_command_in_the_docs_names_the_entrys_github_sources_and_the_port_the_get_uses():
    import re

    from memegauge.data.catalogue import entry

    text = (Path(__file__).resolve().parents[1] / "docs" / "data.md").read_text()
    [serve] = re.findall(r"^python scripts/data_mirror\.py (.+)$", text, re.M)
    name, *pairs, port_flag, port = serve.split()
    assert port_flag == "--port" and f"memegauge data get {name} --mirror http://127.0.0.1:{port}" in text
    given = dict(pair.split("=", 1) for pair in pairs)
    assert set(given) == {s.id for s in entry(name).sources if s.kind == "github"}
    assert all(path.endswith("/.git") for path in given.values())  # the script runs `git --git-dir`


def test_qa_eval_with_a_data_set_name_that_is_not_installed_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.chdir(tmp_path)
    code = main(["qa", "eval", "--data", "memeqa", "--split", "test", "--model", "x"])
    assert code == 2 and "memegauge data get memeqa" in capsys.readouterr().err


def test_the_catalogue_pins_every_github_file_memeqa_has_all_950_pictures():
    known = catalogue.entries()
    assert {"memeqa", "fhm", "harmeme", "mami", "goat-bench", "ii-bench", "memelens", "adammeme-release"} <= set(known)
    pictures = known["memeqa"].manifest()["pictures"]
    images = "data/datasets/propaganda/defaults/images/"
    assert sum(p.startswith(images) and p.endswith(".png") for p in pictures) == 950
    for described in known.values():
        manifest = described.manifest()
        for source in described.sources:
            if source.kind == "github":
                assert len(source.commit) == 40 and manifest[source.id], (described.name, source.id)


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, format="PNG")
    return buffer.getvalue()


def test_qa_eval_finds_questions_pictures_and_texts_of_an_installed_data_set_by_name(tmp_path, monkeypatch, capsys):
    """`qa eval --data NAME` (as `--data memeqa`) against the test server, on the docs' MemeQA sample
    installed as a catalogue entry from the local server."""
    from helpers.models import served_registry

    from memegauge.testing.server import start_server

    sample = Path(__file__).resolve().parents[1] / "docs" / "examples" / "memeqa"
    files = {p.relative_to(sample).as_posix(): p.read_bytes() for p in sorted(sample.rglob("*")) if p.is_file()}
    folder = tmp_path / "entry"  # not named qatoy: a folder of that name here would be read as the path
    folder.mkdir()
    source = GitHubSource(id="sample", repo="owner/qatoy", commit=COMMIT, licence="MIT", what="sample")
    (folder / "manifest.json").write_text(json.dumps(
        {"sample": {p: [len(d), hashlib.sha256(d).hexdigest()] for p, d in files.items()}}))
    described = Entry(name="qatoy", title="t", size="1 kB", licence="MIT", citation="-", sources=(source,),
                      folder=folder, paths=lambda root: {"data": root / "sample", "images": root / "sample" / "images",
                                                         "texts": root / "sample" / "images" / "memes.jsonl"})
    monkeypatch.setattr(catalogue, "entries", lambda: {"qatoy": described})
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    with DataServer() as mirror:
        mirror.add_github("owner/qatoy", COMMIT, files)
        get("qatoy", mirror=mirror.url, quiet=True, say=lambda text: None)
    with start_server(latency_ms=0) as server:
        served_registry(tmp_path, server.base_url, ["m"])
        code = main(["--models", str(tmp_path / "models.yaml"), "--store", str(tmp_path / "s.db"), "qa", "eval",
                     "--data", "qatoy", "--split", "dev", "--model", "m", "--skip-preflight"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "micro" in printed.out and "qatoy" not in printed.err
    # the same name in an eval config file
    from memegauge.config import load_config
    from memegauge.memeqa.config import EvalConfig

    (tmp_path / "eval.yaml").write_text("data: qatoy\nmodel: m\n")
    config = load_config(tmp_path / "eval.yaml", EvalConfig)
    root = tmp_path / "data" / "qatoy" / "sample"
    assert (config.data, config.images, config.texts) == (root, root / "images", root / "images" / "memes.jsonl")


def test_a_gated_hub_dataset_says_where_to_request_access(env):
    env.faults[f"/api/datasets/org/toy/revision/{HUB_COMMIT}"] = "gated"
    with pytest.raises(InputError, match="request access at https://huggingface.co/datasets/org/toy"):
        _quiet_get("hubtoy", env)


def test_off_a_terminal_the_download_progress_is_plain_lines_with_bytes_and_eta():
    from memegauge.data.download import Meter

    stream = io.StringIO()
    with Meter("toy/questions", stream=stream) as meter:
        meter.update(1_000_000, 4_000_000)
    lines = stream.getvalue().splitlines()
    assert lines and all("\x1b" not in line for line in lines)
    assert "toy/questions: 1.0/4.0 MB" in lines[0] and "ETA" in lines[0]


def test_fhm_and_mami_copies_import_from_a_folder_and_become_meme_sets(tmp_path, monkeypatch):
    """The real catalogue entries, on tiny copies laid out as the releases are."""
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    fhm = tmp_path / "hateful_memes"
    (fhm / "img").mkdir(parents=True)
    (fhm / "img" / "42953.png").write_bytes(_png())
    (fhm / "train.jsonl").write_text('{"id": 42953, "img": "img/42953.png", "label": 1, "text": "a meme"}\n')
    (fhm / "test_unseen.jsonl").write_text('{"id": 42953, "img": "img/42953.png", "text": "a meme"}\n')
    import_copy("fhm", fhm, say=lambda text: None)
    train = load_memes("fhm:train")
    assert [(m.id, m.text, m.labels) for m in train] == [("42953", "a meme", ["hateful"])]
    assert load_memes("fhm:test_unseen")[0].labels == []
    mami = tmp_path / "MAMI" / "TRAINING"
    mami.mkdir(parents=True)
    (mami / "1.jpg").write_bytes(_png())
    header = ["file_name", "misogynous", "shaming", "stereotype", "objectification", "violence", "Text Transcription"]
    row = ["1.jpg", "1", "0", "1", "0", "0", "some text"]
    (mami / "training.csv").write_text("\t".join(header) + "\n" + "\t".join(row) + "\n")
    import_copy("mami", tmp_path / "MAMI", say=lambda text: None)
    memes = load_memes("mami:training")
    assert [(m.id, m.text, m.labels) for m in memes] == [("1", "some text", ["misogynous", "stereotype"])]


SHARED = Path("/work/shared/data")


@pytest.mark.skipif(not (SHARED / "memeqa").is_dir(), reason="the real dev data is not on this machine")
def test_the_memeqa_manifest_matches_real_copies_of_the_released_files():
    """The pinned sha256 agree with independent copies of the release (the dev split and its 190 pictures)."""
    manifest = catalogue.entries()["memeqa"].manifest()
    for version in ("none-minus", "none-plus"):
        # the shared copy is re-serialised; the release is json.dumps(indent=4) of the same questions
        questions = json.loads((SHARED / "memeqa" / version / "dev.json").read_text(encoding="utf-8"))
        released = json.dumps(questions, indent=4).encode()
        assert manifest["memeqa"][f"{version}/dev.json"] == [len(released), hashlib.sha256(released).hexdigest()]
    pictures = sorted((SHARED / "semeval2021-task6" / "images").glob("*.png"))
    assert len(pictures) == 190
    for picture in pictures:
        pinned = manifest["pictures"][f"data/datasets/propaganda/defaults/images/{picture.name}"]
        assert pinned[1] == hashlib.sha256(picture.read_bytes()).hexdigest(), picture.name


def test_harmeme_annotations_and_pictures_become_one_meme_set_per_file(tmp_path):
    from memegauge.data.sets.harmeme.entry import ANNOTATIONS, convert

    for part, stem in (("Harm-C", "test"), ("Harm-P", "test_v1")):
        folder = tmp_path / ANNOTATIONS / part
        folder.mkdir(parents=True)
        row = {"id": f"{part}-1", "image": f"{part}.png", "labels": ["somewhat harmful", "individual"], "text": "t"}
        (folder / f"{stem}.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "pictures" / "images").mkdir(parents=True)  # the user's copy nests them one level deeper
    for part in ("Harm-C", "Harm-P"):
        (tmp_path / "pictures" / "images" / f"{part}.png").write_bytes(_png())
    convert(tmp_path)
    memes = load_memes(tmp_path / "converted" / "harm-p-test.jsonl")
    assert [(m.id, m.labels, m.image) for m in memes] == [
        ("Harm-P-1", ["somewhat harmful", "individual"], tmp_path / "pictures" / "images" / "Harm-P.png")]
    assert (tmp_path / "converted" / "harm-c-test.jsonl").is_file()


def test_an_interrupted_hub_download_installs_nothing_and_the_next_get_completes_it(env):
    path = f"/datasets/org/toy/resolve/{HUB_COMMIT}/data/test-00000.parquet"
    env.faults[path] = "truncate"
    with pytest.raises(MemeGaugeError, match="rerun the command"):
        _quiet_get("hubtoy", env)
    with pytest.raises(InputError):
        installed_dir("hubtoy")
    del env.faults[path]
    _quiet_get("hubtoy", env)
    assert verify("hubtoy") == []


ADAM = Path("/work/shared/data/adammeme-original")


@pytest.mark.skipif(not ADAM.is_dir(), reason="the shared copy of the original AdamMeme results is absent")
def test_import_adammeme_takes_an_installed_data_set_by_name(tmp_path, monkeypatch, capsys):
    files = {p.relative_to(ADAM).as_posix(): p.read_bytes() for p in sorted(ADAM.rglob("*")) if p.is_file()}
    folder = tmp_path / "entry"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(
        {"release": {p: [len(d), hashlib.sha256(d).hexdigest()] for p, d in files.items()}}))
    source = GitHubSource(id="release", repo="owner/adam", commit=COMMIT, licence="-", what="release")
    described = Entry(name="adamtoy", title="t", size="1 MB", licence="-", citation="-", sources=(source,),
                      folder=folder, paths=lambda root: {"data": root / "release"})
    monkeypatch.setattr(catalogue, "entries", lambda: {"adamtoy": described})
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    with DataServer() as mirror:
        mirror.add_github("owner/adam", COMMIT, files)
        get("adamtoy", mirror=mirror.url, quiet=True, say=lambda text: None)
    assert main(["--store", str(tmp_path / "s.db"), "import", "adammeme", "adamtoy"]) == 0
    assert "imported into run" in capsys.readouterr().err


def test_the_real_adammeme_release_entry_is_importable_by_name():
    described = catalogue.entries()["adammeme-release"]
    assert described.paths(Path("/x")) == {"data": Path("/x/release")}
    assert "data/data5k/cls_res_full.json" in described.manifest()["release"]


@pytest.mark.parametrize("width", [80, 100, 200])
def test_data_list_on_a_narrow_terminal_leaves_columns_out_before_it_cuts_what_and_cuts_it_at_a_word(
        width, tmp_path, monkeypatch):
    """Evidence run of issue 43: at 80 columns `what`, the only descriptive column, was cut to 10 characters
    mid-word while `size` kept 19. Size, then benchmark, go first (said in a footer); `what` ends at a word, with …"""
    from rich.console import Console

    from memegauge import clikit

    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data"))
    console = Console(width=width, force_terminal=True, color_system=None, record=True, file=io.StringIO())
    monkeypatch.setattr(clikit, "out", console)
    assert main(["data", "list"]) == 0
    lines = console.export_text().splitlines()
    assert all(len(line) <= width for line in lines[1:]), lines  # the first names the data folder, never cut
    titles = {name: entry.title for name, entry in catalogue.entries().items()}
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in titles}
    assert set(rows) == set(titles)  # one line each, the name whole
    header = lines[1].split()
    for name, line in rows.items():
        what = line[lines[1].index("what"):]
        assert what == titles[name] or (what.endswith("…") and len(what) >= 30), line
        if what != titles[name]:  # cut after a whole word
            kept = what.removesuffix("…")
            assert titles[name].startswith(kept) and titles[name][len(kept)] in " ,;:(", (kept, titles[name])
    if width == 80:
        assert header == ["name", "installed", "what"] and f"left out at {width} columns: size, benchmark" in lines[-2]
    if width == 200:
        assert header == ["name", "installed", "benchmark", "size", "what"] and set(rows.values()) == {
            line for line in lines if any(line.endswith(t) for t in titles.values())}
        assert not any("left out at" in line for line in lines)


def test_cut_at_word_ends_at_a_word_with_an_ellipsis():
    from memegauge.data.cli import _cut_at_word

    assert _cut_at_word("MemeQA (test copy)", 40) == "MemeQA (test copy)"
    assert _cut_at_word("Facebook Hateful Memes: 10,000+ memes", 14) == "Facebook…"
    assert _cut_at_word("Facebook Hateful Memes: 10,000+ memes", 24) == "Facebook Hateful Memes…"
    assert _cut_at_word("Facebook Hateful", 9) == "Facebook…"  # the cut falls just after a word: kept whole
    assert _cut_at_word("Supercalifragilistic", 6) == "Super…"  # a first word longer than the room
