"""GOAT-Bench (HKBU-NLP/GOAT-Bench on the Hugging Face Hub): five meme tasks, one zip each.

Installed layout (docs/data.md): ``goat-bench/`` the dataset repository at the pinned revision:
``test/{harmfulness,hatefulness,misogyny,offensiveness,sarcasm}.zip`` and ``README.md``, kept as
released. The hatefulness part (58 kB) holds no pictures: they are FHM's, so it needs ``fhm`` installed too.

Each task's listing, as the public copy in oops343/MemeAgent (goat_dataset/TASK/test.jsonl, commit 32d7e5d)
shows it: one JSON object a line, ``{"id": "15740", "img": "15740.png", "label": "1", "text": "…"}`` (ids and
labels as strings; picture names bare: ``covid_memes_5425.png``, ``15591.jpg``, ``Qj9x2wz.png``,
``823315070423797760.jpg``). The authors' script (DanielLin97/GOAT-Bench, Script/LMM_infer.py) reads ``text``
or else ``org_sent``, ``img`` or else ``image``, and the id from the picture's name (``img.replace('.png', '')``)
when ``id`` is missing; this reader does the same. MemeAgent's loader (load_dataset.py, commit 32d7e5d) lays
each task out as ``TASK/test.jsonl`` with its pictures in ``TASK/images/IMG``, and its scorer (summary.py, commit
9eead8f) sets ``pred_label = 1 if 'yes' in …`` against the listing's label: label ``1`` is "the trait is present",
as this reader reads it (and as in the source sets: FHM's 1 = hateful). What could not be read from here: the
inside of the Hub zips (a listing anywhere inside is read, pictures found by their bare name anywhere inside) and
the card's test/README.md (only its commit pages, 335 bytes at e7a9491, could be seen).
"""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from memegauge.data.catalogue import Entry, HubSource
from memegauge.files import confined, parse_json
from memegauge.data.memesets import ReleaseRow, Unreadable, release_jsonl, scalar, unreadable_row

TASKS = ("hatefulness", "misogyny", "offensiveness", "sarcasm", "harmfulness")


def rows(folder: Path, split: str) -> list[ReleaseRow]:
    """Every task's rows (ids ``TASK/ID``), each carrying its own task's label only: from ``TASK/SPLIT.jsonl``
    unpacked beside its pictures, else from ``SPLIT/TASK.zip`` as the Hub keeps it. A hatefulness picture not in
    the part is FHM's, found by its bare name in the installed ``fhm`` (img/NAME)."""
    out = []
    for task in TASKS:
        unpacked = folder / task / f"{split}.jsonl"
        if unpacked.is_file():
            part = unpacked.parent
            out += release_jsonl(unpacked, (task,), lambda where, r, part=part, task=task:
                                 _row(task, where, r, lambda img: _local(part, img)))
        else:
            out += _zipped(folder / split / f"{task}.zip", task, folder)
    return out


def _row(task: str, where: str, r: dict[str, Any], picture: Any) -> ReleaseRow:
    """A listing's row; a field of the wrong type (a list for `img`, an object for `label`) is `Unreadable`."""
    img = scalar(r, "img") or scalar(r, "image") or ""
    found = scalar(r, "id") or img.replace(".png", "")  # as LMM_infer.py
    label = scalar(r, "label")
    text = scalar(r, "text")
    return ReleaseRow(where=where, id=f"{task}/{found}" if found else "", picture=picture(img) if img else None,
                      text=text if text is not None else scalar(r, "org_sent") or "",
                      labels={task: label or None}, why={} if label else {task: "no label"})


def _local(part: Path, img: str) -> str:
    """The picture beside the unpacked listing (as named, or by its bare name anywhere below), else FHM's."""
    direct = confined(part, img, f"{part} (picture {img!r})")  # a listing's `../` stays inside the release
    if direct.is_file():
        return str(direct)
    nested = next(iter(sorted(part.rglob(PurePosixPath(img).name))), None)
    return str(nested) if nested else fhm_picture(img)


def _zipped(archive: Path, task: str, folder: Path) -> list[ReleaseRow]:
    from memegauge.errors import InputError  # light; kept out of the descriptor's import

    if not archive.is_file():
        raise InputError(f"GOAT-Bench's {task} part not found: {archive}", str(folder),
                         "run `memegauge data get goat-bench`, or give --data the folder holding test/TASK.zip "
                         "(or TASK/test.jsonl unpacked)")

    out = []
    with zipfile.ZipFile(archive) as z:
        members = [n for n in z.namelist() if not n.endswith("/") and not n.startswith("__MACOSX")]
        listings = sorted(n for n in members if n.endswith((".jsonl", ".json")))
        if not listings:
            raise InputError("no JSON or JSONL listing inside the zip", str(archive),
                             "give the zip as the Hub serves it, or unpack it: --data holding TASK/test.jsonl")
        by_name = {PurePosixPath(n).name: n for n in members}
        for listing in listings:
            text = z.read(listing).decode("utf-8")
            if not text.lstrip().startswith("["):  # JSONL: a bad line is counted, the others read
                out += release_jsonl(Path(f"{archive}!{listing}"), (task,), lambda where, r, task=task:
                                     _row(task, where, r, _zip_picture(z, members, by_name, where)), text=text)
                continue
            records = parse_json(text, f"{archive}!{listing}", "give the zip as the Hub serves it")
            if not isinstance(records, list):
                raise InputError("the listing is not a JSON list of rows", f"{archive}!{listing}",
                                 "give the zip as the Hub serves it")
            for n, r in enumerate(records):
                where = f"{archive}!{listing}[{n}]"

                if not isinstance(r, dict):
                    out.append(unreadable_row(where, f"the row is {type(r).__name__}, not a JSON object", (task,)))
                    continue
                try:
                    out.append(_row(task, where, r, _zip_picture(z, members, by_name, where)))
                except Unreadable as exc:
                    out.append(unreadable_row(where, str(exc), (task,)))
    return out


def _zip_picture(z: zipfile.ZipFile, members: list[str], by_name: dict[str, str], where: str) -> Any:
    """The function giving a zipped listing's picture: the zip's member written out, else FHM's by bare name."""
    from memegauge.data.memesets import picture_file  # lazy: pictures written out of the zip when read

    def picture(img: str) -> str:
        member = img if img in members else by_name.get(PurePosixPath(img).name)
        return picture_file(z.read(member), where) or "" if member else fhm_picture(img)
    return picture


def fhm_picture(img: str) -> str:
    """A hatefulness meme's picture, by its bare name in the installed FHM (``img/15740.png``); the path where it
    would be when FHM is not installed or lacks it (the kit counts the row as "picture not found")."""
    from memegauge.data import installed_dir  # lazy: only the hatefulness part needs FHM
    from memegauge.data.sets.fhm.entry import pictures  # lazy: as above (img/ or img.tar.gz)

    release = installed_dir("fhm") / "fhm"
    name = PurePosixPath(img).name  # by its bare name: a listing's path never leaves FHM's img/
    return str(pictures(release) / "img" / name) if release.is_dir() else str(release / "img" / name)

ENTRY = Entry(
    name="goat-bench",
    title="GOAT-Bench: harmfulness, hatefulness, misogyny, offensiveness and sarcasm of memes (test sets)",
    size="3.6 GB",
    licence="not stated on the dataset card (the parts re-release FHM, MAMI, HarMeme and others under their "
            "own terms)",
    citation="""@article{lin2024goat,
  title   = {{GOAT-Bench}: Safety Insights to Large Multimodal Models through Meme-Based Social Abuse},
  author  = {Lin, Hongzhan and Luo, Ziyang and Wang, Bo and Yang, Ruichao and Ma, Jing},
  journal = {arXiv preprint arXiv:2401.01523},
  year    = {2024}
}""",
    sources=(HubSource(
        id="goat-bench", repo_id="HKBU-NLP/GOAT-Bench", revision="e7a94912601d40251b3cd59c21ef623cefd4a99a",
        licence="none declared", what="test/*.zip, one per task, and README.md",
        allow=("test/*.zip", "test/README.md", "README.md")),),
    folder=Path(__file__).parent,
    notes="Revision e7a9491 ('Update test/README.md', 21 commits; after c9751c1, 20) is the newest commit seen "
          "from here (huggingface.co/datasets/HKBU-NLP/GOAT-Bench/tree/e7a94912601d40251b3cd59c21ef623cefd4a99a); "
          "whether it is the head could not be confirmed. The zips' inside and test/README.md could not be read from "
          "here (only their commit pages); each task's listing follows the public copy in oops343/MemeAgent "
          "(goat_dataset/TASK/test.jsonl), whose loader keeps pictures in TASK/images/ and whose scorer reads "
          "label 1 as yes (load_dataset.py, summary.py).",
    needs=("fhm",),
    rows=rows,
)
