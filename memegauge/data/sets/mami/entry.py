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
from memegauge.files import confined
from memegauge.data.memesets import ReleaseRow, converted_splits, write_rows

TYPES = ("shaming", "stereotype", "objectification", "violence")
TABLES = {"train": "training.csv", "test": "Test.csv"}
"""Split → its table, found by name anywhere in the copy (folder names vary between releases)."""


def rows(folder: Path, split: str) -> list[ReleaseRow]:
    """MAMI's rows as released: a tab-separated table (``file_name, misogynous, shaming, stereotype,
    objectification, violence, Text Transcription``; the test table has only ``file_name, Text Transcription``
    and its labels come from ``test_labels.txt``: file_name and the five 0/1 flags, tab-separated, no header).
    Ids are the file name's stem (``15236``). Labels: ``misogynous`` ("0"/"1", sub-task A) and ``subtypes``
    (the types flagged 1, sub-task B; [] for none).
    A test row without a well-formed line in test_labels.txt has no labels, said ("no line in test_labels.txt",
    "malformed line in test_labels.txt"); never read half."""
    from memegauge.errors import InputError  # light; kept out of the descriptor's import

    name = TABLES[split]
    table = folder / name if (folder / name).is_file() else next(iter(sorted(folder.rglob(name))), None)
    if table is None:
        raise InputError(f"MAMI's {split} table not found: no {name} in {folder}", str(folder),
                         "give the folder holding the release as unpacked (training.csv, Test.csv, test_labels.txt)")
    labels = _test_labels(folder) if split == "test" else None
    out = []
    with table.open(encoding="utf-8", newline="") as handle:
        for n, r in enumerate(csv.DictReader(handle, delimiter="\t"), 2):
            file_name = (r.get("file_name") or "").strip()
            flags = labels.get(file_name, "no line in test_labels.txt") if labels is not None else \
                [(r.get(t) or "").strip() for t in ("misogynous", *TYPES)]
            ok = isinstance(flags, list) and len(flags) == 5 and all(f in ("0", "1") for f in flags)
            why = "" if ok else flags if isinstance(flags, str) else "flags not 0/1"
            out.append(ReleaseRow(
                where=f"{table}:{n}", id=Path(file_name).stem,
                picture=confined(table.parent, file_name, f"{table}:{n}") if file_name else None,
                text=(r.get("Text Transcription") or "").strip(),
                labels={"misogynous": flags[0], "subtypes": [t for t, f in zip(TYPES, flags[1:], strict=True)
                                                             if f == "1"]} if ok else
                {"misogynous": None, "subtypes": None},
                why={} if ok else {"misogynous": why, "subtypes": why}))
    return out


def _test_labels(folder: Path) -> dict[str, list[str] | str]:
    """test_labels.txt: file_name → its five flags, or why its line cannot be read."""
    found = sorted(folder.rglob("test_labels.txt"))
    if not found:
        return {}
    out: dict[str, list[str] | str] = {}
    for line in found[0].read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("\t")]
        if cells[0]:
            out[cells[0]] = cells[1:] if len(cells) == 6 else "malformed line in test_labels.txt"
    return out


def convert(root: Path) -> None:
    for split, name in (("train", "training"), ("test", "test")):
        if next(iter((root / "mami").rglob(TABLES[split])), None) is not None:
            write_rows(root, name, rows(root / "mami", split), "mami",
                       labels=lambda row: (["misogynous"] if row.labels["misogynous"] == "1" else [])
                       + (row.labels["subtypes"] or []))


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
    rows=rows,
)
