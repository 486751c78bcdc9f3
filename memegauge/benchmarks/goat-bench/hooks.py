"""GOAT-Bench as `memegauge data get goat-bench` installs it: the Hub release HKBU-NLP/GOAT-Bench keeps one zip
per task, test/{hatefulness,misogyny,offensiveness,sarcasm,harmfulness}.zip, read here without unpacking. The
hatefulness zip holds no pictures (FHM's licence): they come from the installed `fhm` (`memegauge data import
fhm DIR`). A --data folder may instead hold the zips unpacked, TASK/test.jsonl beside the pictures.

The zips' inner layout could not be read from here: this reader ASSUMES a JSON or JSONL listing inside each
zip whose records hold `id`, `img` (the picture's path in the zip, or FHM's `img/NNNNN.png`), `text` and
`label` (1 = the trait is present). A zip without such a listing is one message saying so."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from memegauge.benchmarks.kit.items import picture_file, rows
from memegauge.files import confined
from memegauge.types import InputError

ASSUMED = ("GOAT-Bench's zip layout is assumed, not confirmed (docs/benchmarks.md): unpack it and give --data "
           "a folder holding TASK/test.jsonl of {id, img, text, label} beside the pictures")


def items(source: Path, split: str, spec: Any) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for task in spec.tasks:
        unpacked = source / task / f"{split}.jsonl"
        if unpacked.is_file():
            found += [(where, _item(task, r, str(confined(unpacked.parent, str(r.get("img")), where))))
                      for where, r in rows(unpacked, "jsonl")]
        else:
            found += _zipped(source / split / f"{task}.zip", task, source)
    return found


def _item(task: str, r: dict[str, Any], image: str | None) -> dict[str, Any]:
    return {"id": f"{task}/{r.get('id')}", "text": r.get("text"), "image": image, "gold": {task: r.get("label")}}


def _zipped(archive: Path, task: str, source: Path) -> list[tuple[str, dict[str, Any]]]:
    if not archive.is_file():
        raise InputError(f"GOAT-Bench's {task} part not found: {archive}", str(source),
                         "run `memegauge data get goat-bench`, or give --data the folder holding test/TASK.zip")
    with zipfile.ZipFile(archive) as z:
        members = [n for n in z.namelist() if not n.endswith("/") and not n.startswith("__MACOSX")]
        listings = [n for n in members if n.endswith((".jsonl", ".json"))]
        if not listings:
            raise InputError("no JSON or JSONL listing inside the zip", str(archive), ASSUMED)
        by_name = {PurePosixPath(n).name: n for n in members}
        found = []
        for listing in sorted(listings):
            for n, r in enumerate(_records(z.read(listing).decode("utf-8"), f"{archive}!{listing}")):
                where = f"{archive}!{listing}[{n}]"
                img = str(r.get("img") or "")
                member = img if img in members else by_name.get(PurePosixPath(img).name)
                image = picture_file(z.read(member), where) if member else _fhm_picture(img, where)
                found.append((where, _item(task, r, image)))
    return found


def _records(text: str, where: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text) if text.lstrip().startswith("[") else [json.loads(x) for x in text.splitlines()
                                                                       if x.strip()]
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", where, ASSUMED) from None
    if not all(isinstance(r, dict) for r in data):
        raise InputError("the listing holds no records", where, ASSUMED)
    return data


def _fhm_picture(img: str, where: str) -> str:
    """A hatefulness meme's picture, from the installed FHM (GOAT-Bench ships its text only)."""
    from memegauge.data import installed_dir  # lazy: only the hatefulness part needs the catalogue

    path = confined(installed_dir("fhm") / "fhm", img, where)
    if not path.is_file():
        raise InputError(f"picture not found in the zip nor in the installed FHM: {img}", where,
                         "import FHM (`memegauge data import fhm DIR`), then run again")
    return str(path)
