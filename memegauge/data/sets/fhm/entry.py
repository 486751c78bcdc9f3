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
from memegauge.data.memesets import converted_splits, read_jsonl, write_meme_set

LABELS = {0: "not hateful", 1: "hateful"}


def convert(root: Path) -> None:
    for path in sorted((root / "fhm").glob("*.jsonl")):
        write_meme_set(root, path.stem, [
            {"id": str(row["id"]), "image": root / "fhm" / row["img"], "text": row.get("text", ""),
             "labels": [LABELS[row["label"]]] if row.get("label") in LABELS else [], "source": "fhm"}
            for row in read_jsonl(path)])


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
        expect=("img", "train.jsonl"),
        # The release zips' sha256 that MMF's `mmf_convert_hm` accepts (mmf/mmf_cli/hm_convert.py).
        known={"release zip (MMF checksum 1)": "d8f1073f5fbf1b08a541cc2325fc8645619ab8ed768091fb1317d5c3a6653a77",
               "release zip (MMF checksum 2)": "a424c003b7d4ea3f3b089168b5f5ea73b90a3ff043df4b8ff4d7ed87c51cb572",
               "release zip (MMF checksum 3)": "6e609b8c230faff02426cf462f0c9528957b7884d68c60ebc26ff83846e5f80f"}),
    ),
    folder=Path(__file__).parent,
    notes="The zip is password-protected (the password comes with the licence): unpack it yourself and import "
          "the folder, or import the zip after unpacking it once elsewhere. Which of MMF's three checksums "
          "belongs to which release phase is not stated there, so an archive is reported only as 'known'.",
    convert=convert,
    splits=converted_splits,
)
