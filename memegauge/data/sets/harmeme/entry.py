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
from memegauge.data.memesets import converted_splits, pictures_by_name, read_jsonl, write_meme_set

ANNOTATIONS = "annotations/HarMeme_V1/Annotations"


def convert(root: Path) -> None:
    pictures = pictures_by_name(root / "pictures")
    for part in ("Harm-C", "Harm-P"):
        for path in sorted((root / ANNOTATIONS / part).glob("*.jsonl")):
            split = f"{part.lower()}-{path.stem.removesuffix('_v1')}"
            write_meme_set(root, split, [
                {"id": row["id"], "image": pictures.get(row["image"], root / "pictures" / row["image"]),
                 "text": row.get("text", ""), "labels": row.get("labels", []), "source": f"harmeme/{part}"}
                for row in read_jsonl(path)])


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
          "their sha256. The picture archive's layout and checksum could not be confirmed from here: the "
          "import keeps it as given and records every file's sha256.",
    convert=convert,
    splits=converted_splits,
)
