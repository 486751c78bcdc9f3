"""Facebook Hateful Memes (FHM): the user's copy (its licence forbids redistribution).

Installed layout (docs/data.md): ``fhm/`` the release as unpacked, top folder stripped: ``img/*.png``
and ``train.jsonl``, ``dev_seen.jsonl``, ``dev_unseen.jsonl``, ``test_seen.jsonl``,
``test_unseen.jsonl`` (the 2020 phase-2 release; phase 1 has ``dev.jsonl`` and ``test.jsonl``), each
line ``{id, img: "img/NNNNN.png", label: 0|1, text}`` (no ``label`` in unlabelled test files);
``converted/SPLIT.jsonl`` one meme set per JSONL file (labels ``hateful`` / ``not hateful``).
"""

from __future__ import annotations

from pathlib import Path

from memegauge.data.catalogue import Entry, UserCopy
from memegauge.files import confined
from memegauge.data.memesets import ReleaseRow, converted_splits, release_jsonl, scalar, write_rows

LABELS = {"0": "not hateful", "1": "hateful"}
CHECKSUMS = ("d8f1073f5fbf1b08a541cc2325fc8645619ab8ed768091fb1317d5c3a6653a77",
             "a424c003b7d4ea3f3b089168b5f5ea73b90a3ff043df4b8ff4d7ed87c51cb572",
             "6e609b8c230faff02426cf462f0c9528957b7884d68c60ebc26ff83846e5f80f",
             "c1363aae9649c79ae4abfdb151b56d3d170187db77757f3daa80856558ac367c")
"""The release zips' sha256 that MMF accepts: `HMConverter.POSSIBLE_CHECKSUMS` in facebookresearch/mmf,
mmf_cli/hm_convert.py (four, read at commit 0432261); which belongs to which release phase is not stated there."""


def pictures(folder: Path) -> Path:
    """The folder holding the release's pictures: ``img/``, or, for a copy that ships ``img.tar.gz`` instead (as
    mmf's hm_convert.py allows: `IMAGE_FILES = ["img.tar.gz", "img"]`), that archive unpacked once into the user
    cache (the installed copy stays as imported, so `data verify` still holds)."""
    if (folder / "img").is_dir() or not (folder / "img.tar.gz").is_file():
        return folder
    import tarfile  # lazy: only a copy shipping img.tar.gz needs it

    from memegauge.files import user_cache_root  # lazy: as above

    archive = folder / "img.tar.gz"
    stat = archive.stat()
    target = user_cache_root() / "fhm-pictures" / f"{stat.st_size}-{stat.st_mtime_ns}"
    if not (target / "done").is_file():
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")  # the "data" filter refuses links and paths out of the target
        (target / "done").write_text("", encoding="utf-8")
    return target


def rows(folder: Path, split: str) -> list[ReleaseRow]:
    """FHM's rows as released: ``{"id": 42953, "img": "img/42953.png", "label": 0, "text": "…"}`` per line of
    SPLIT.jsonl (no `label` in an unlabelled test file: label None, "no label (unlabelled split)")."""
    base = pictures(folder)

    def row(where: str, r: dict) -> ReleaseRow:
        label, img = scalar(r, "label"), scalar(r, "img")
        return ReleaseRow(where=where, id=scalar(r, "id") or "",
                          picture=confined(base, img, where) if img else None, text=scalar(r, "text") or "",
                          labels={"label": label},
                          why={} if label is not None else {"label": "no label (unlabelled split)"})
    return release_jsonl(folder / f"{split}.jsonl", ("label",), row)


def convert(root: Path) -> None:
    for path in sorted((root / "fhm").glob("*.jsonl")):
        released = rows(root / "fhm", path.stem)
        if released and not str(released[0].picture or "").startswith(str(root)):
            continue  # pictures in the user cache (img.tar.gz): no meme set inside the copy
        write_rows(root, path.stem, released, "fhm",
                   labels=lambda row: [LABELS[row.labels["label"]]] if row.labels["label"] in LABELS else [])


ENTRY = Entry(
    name="fhm",
    title="Facebook Hateful Memes: 10,000+ memes labelled hateful or not (your copy)",
    size="3.9 GB (the release zip)",
    licence="Hateful Memes dataset licence (Meta): research use, no redistribution",
    citation="""@inproceedings{kiela2020hateful,
  title     = {The Hateful Memes Challenge: Detecting Hate Speech in Multimodal Memes},
  author    = {Kiela, Douwe and Firooz, Hamed and Mohan, Aravind and Goswami, Vedanuj and Singh, Amanpreet
               and Ringshia, Pratik and Testuggine, Davide},
  booktitle = {Advances in Neural Information Processing Systems},
  year      = {2020}
}""",
    sources=(UserCopy(
        id="fhm", licence="Hateful Memes dataset licence (research use, no redistribution)",
        what="img/ and the JSONL splits of the Hateful Memes release",
        request="accept the licence at https://hatefulmemeschallenge.com (or the DrivenData competition page) "
                "and download the release zip",
        expect=("train.jsonl",),  # and img/ or img.tar.gz (`pictures`)
        known={f"release zip (MMF checksum {n})": sha for n, sha in enumerate(CHECKSUMS, 1)}),
    ),
    folder=Path(__file__).parent,
    notes="The zip is password-protected (the password comes with the licence): unpack it yourself and import "
          "the folder, or import the zip after unpacking it once elsewhere. Which of MMF's four checksums "
          "belongs to which release phase is not stated there, so an archive is reported only as 'known'.",
    convert=convert,
    splits=converted_splits,
    rows=rows,
)
