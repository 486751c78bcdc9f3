"""HarMeme V1 (Harm-C: COVID-19, Harm-P: US politics): annotations from LCS2-IIITD/MOMENTA, pictures
from the user's copy.

Installed layout (docs/data.md): ``annotations/`` the MOMENTA repository's ``HarMeme_V1/Annotations/
Harm-C/{train,val,test}.jsonl`` and ``Harm-P/{train_v1,val_v1,test_v1}.jsonl`` (lines ``{id, image,
labels, text}``; ``labels`` e.g. ``["somewhat harmful", "organization"]``), its README files and
LICENSE; ``pictures/`` the user's image folder as given; ``converted/harm-c-train.jsonl`` … one meme
set per annotation file (images found by file name anywhere under ``pictures/``).
"""

from __future__ import annotations

from pathlib import Path

from memegauge.data.catalogue import Entry, GitHubSource, UserCopy
from memegauge.files import confined, printable
from memegauge.data.memesets import (ReleaseRow, converted_splits, pictures_by_name, release_jsonl, scalar, texts,
                                     write_rows)

ANNOTATIONS = "annotations/HarMeme_V1/Annotations"
HARM = ("not harmful", "somewhat harmful", "very harmful")
SPLITS = {f"{part.lower()}/{name}": f"{ANNOTATIONS}/{part}/{name}{suffix}.jsonl"
          for part, suffix in (("Harm-C", ""), ("Harm-P", "_v1")) for name in ("train", "val", "test")}
"""Split name → annotation file, as LCS2-IIITD/MOMENTA lays them out (HarMeme_V1/Annotations/Harm-C/test.jsonl,
Harm-P/train_v1.jsonl …; read at commit 11722ec, the pinned one)."""


def rows(root: Path, split: str) -> list[ReleaseRow]:
    """HarMeme's rows as released: ``{"id", "image", "labels": [harm, target…], "text"}`` per line. `labels`
    holds the harmfulness first and, for a harmful meme, its target(s). The rules (docs/data.md):

    - a row without a harm label (Harm-P train_v1.jsonl:1706, ``["", "individual", "organization"]``) has
      harmfulness None, said as "no harm label"; a first label that is not one of the three harm levels
      (``"extremely harmful"``) has harmfulness None, said as "unknown harm label 'extremely harmful'" (and
      is no target);
    - the target is asked of harmful memes only: a not-harmful row has target None, said (12 rows of Harm-P
      train carry a target anyway: "not harmful (carries a target)");
    - a harmful row's target is its one target, or the list of every target it names (18 rows of Harm-P
      train name two): an answer naming any one of them is right;
    - a harmful row naming no target has target None ("harmful, no target given");
    - a line that is not a JSON object, or whose ``labels`` is not a list of texts, is counted as an unreadable
      line (`release_jsonl`)."""
    pictures = pictures_by_name(root / "pictures")

    def row(where: str, r: dict) -> ReleaseRow:
        labels = [label.strip().lower() for label in texts(r, "labels")]
        first = labels[0] if labels else ""
        harm = first if first in HARM else None
        targets = [x for x in labels[1:] if x and x not in HARM]
        why = {}
        if harm is None:
            said = f"unknown harm label {printable(first)!r}" if first else "no harm label"
            why = {"harmfulness": said, "target": said}
        elif harm == "not harmful":
            why = {"target": "not harmful (carries a target)" if targets else "not harmful"}
        elif not targets:
            why = {"target": "harmful, no target given"}
        image = scalar(r, "image") or ""
        return ReleaseRow(where=where, id=scalar(r, "id") or "", text=scalar(r, "text") or "",
                          picture=(pictures.get(image) or confined(root / "pictures", image, where)) if image else None,
                          labels={"harmfulness": harm, "target": None if harm in (None, "not harmful") or not
                                  targets else targets[0] if len(targets) == 1 else targets},
                          why=why)
    return release_jsonl(root / SPLITS[split], ("harmfulness", "target"), row)


def convert(root: Path) -> None:
    for split in SPLITS:
        if (root / SPLITS[split]).is_file():
            write_rows(root, split.replace("/", "-"), rows(root, split), f"harmeme/{split.split('/')[0]}")


ENTRY = Entry(
    name="harmeme",
    title="HarMeme V1: Harm-C (COVID-19) and Harm-P (US politics) memes labelled by harmfulness and target",
    size="1.5 MB annotations + your pictures (about 7,000 PNGs)",
    licence="annotations: MIT (LCS2-IIITD/MOMENTA); pictures: as the authors give them (research use)",
    citation="""@inproceedings{pramanick-etal-2021-momenta,
  title     = {{MOMENTA}: A Multimodal Framework for Detecting Harmful Memes and Their Targets},
  author    = {Pramanick, Shraman and Sharma, Shivam and Dimitrov, Dimitar and Akhtar, Md. Shad
               and Nakov, Preslav and Chakraborty, Tanmoy},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2021},
  year      = {2021}
}""",
    sources=(
        GitHubSource(id="annotations", repo="LCS2-IIITD/MOMENTA", commit="11722ec01a6a61e8c368698da8edf610a32c360b",
                     licence="MIT", what="Harm-C and Harm-P annotations (JSONL)",
                     include=("HarMeme_V1/Annotations/", "HarMeme_V1/README.md", "LICENSE", "README.md")),
        UserCopy(id="pictures", licence="research use, as the HarMeme authors give them",
                 what="the HarMeme images (PNG files named as the annotations' `image`)",
                 request="the 'HarMeme Images' link of https://github.com/LCS2-IIITD/MOMENTA (a Google Drive file)",
                 expect=()),
    ),
    folder=Path(__file__).parent,
    notes="MOMENTA's HarMeme_V1/MetaInfo/*.json files are not kept: they could not be read from here to pin "
          "their sha256 (a snapshot of the repository at 11722ec lists them as git blobs "
          "acdb94c55d155bb7ac2bed3a351c348842cdf895, HarMeme_COVID_GCVwBB_3544.json, and "
          "276f298814eccc1077422720bc5767f80a706bd5, HarMeme_USPOL_GCVwBB_3552.json, but lacks their content: "
          "files of 4 MiB and more are not copied here). The picture archive's layout and checksum could not "
          "be confirmed from here: the import keeps it as given and records every file's sha256.",
    convert=convert,
    splits=converted_splits,
    rows=rows,
)
