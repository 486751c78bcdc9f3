"""MAMI (SemEval-2022 Task 5, Multimedia Automatic Misogyny Identification): the user's copy.

Installed layout (docs/data.md): ``mami/`` the release as unpacked, top folder stripped; the training
part holds ``TRAINING/training.csv`` (tab-separated: ``file_name, misogynous, shaming, stereotype,
objectification, violence, Text Transcription``) beside the JPGs; the test part ``test/Test.csv``
(``file_name, Text Transcription``) and ``test_labels.txt`` (the gold labels, released after the task)
— the exact folder names vary between the releases and could not be confirmed from here, so the
converter finds ``training.csv`` / ``Test.csv`` anywhere in the copy. ``converted/training.jsonl`` and
``converted/test.jsonl``: meme sets, labels ``misogynous`` plus each sub-type flagged 1.
"""

from __future__ import annotations

import csv
from pathlib import Path

from memegauge.data.catalogue import Entry, UserCopy
from memegauge.data.memesets import converted_splits, write_meme_set

TYPES = ("misogynous", "shaming", "stereotype", "objectification", "violence")


def _rows(table: Path, labels: dict[str, list[str]] | None) -> list[dict]:
    with table.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        return [{"id": Path(row["file_name"]).stem, "image": table.parent / row["file_name"],
                 "text": row.get("Text Transcription", ""), "source": "mami",
                 "labels": labels.get(row["file_name"], []) if labels is not None
                 else [t for t in TYPES if row.get(t) == "1"]} for row in reader]


def _test_labels(copy: Path) -> dict[str, list[str]]:
    found = sorted(copy.rglob("test_labels.txt"))
    if not found:
        return {}
    labels = {}
    for line in found[0].read_text(encoding="utf-8").splitlines():
        cells = line.strip().split("\t")
        if len(cells) == len(TYPES) + 1:
            labels[cells[0]] = [t for t, flag in zip(TYPES, cells[1:], strict=True) if flag == "1"]
    return labels


def convert(root: Path) -> None:
    copy = root / "mami"
    for name, split in (("training.csv", "training"), ("Test.csv", "test")):
        for table in sorted(copy.rglob(name))[:1]:
            write_meme_set(root, split, _rows(table, _test_labels(copy) if split == "test" else None))


ENTRY = Entry(
    name="mami",
    title="MAMI: 11,000 memes labelled misogynous or not, with four sub-types (your copy)",
    size="about 1 GB (training + test)",
    licence="MAMI terms of use: research use only, no redistribution (signed request)",
    citation="""@inproceedings{fersini-etal-2022-semeval,
  title     = {{S}em{E}val-2022 Task 5: Multimedia Automatic Misogyny Identification},
  author    = {Fersini, Elisabetta and Gasparini, Francesca and Rizzi, Giulia and Saibene, Aurora
               and Chulvi, Berta and Rosso, Paolo and Lees, Alyssa and Sorensen, Jeffrey},
  booktitle = {Proceedings of the 16th International Workshop on Semantic Evaluation (SemEval-2022)},
  year      = {2022}
}""",
    sources=(UserCopy(
        id="mami", licence="MAMI terms of use (research only, no redistribution)",
        what="the MAMI training and test folders (CSV + JPG)",
        request="fill in the request form linked from https://github.com/MIND-Lab/SemEval2022-Task-5-Multimedia-"
                "Automatic-Misogyny-Identification-MAMI- ; the organisers send the archive and its password",
        expect=()),),
    folder=Path(__file__).parent,
    notes="No public checksum of the MAMI archives is known: the import records every file's sha256 so "
          "`data verify` detects a later change, but cannot tell a complete release from a partial one "
          "beyond finding training.csv.",
    convert=convert,
    splits=converted_splits,
)
