"""MemeQA (npnkhoi/memeqa) with the 950 SemEval-2021 Task 6 memes its questions ask about.

Installed layout (docs/data.md): ``memeqa/`` the question repository as released
(``none-minus|none-plus/{train,dev,test}.json``); ``pictures/`` the SemEval-2021 Task 6 corpus of
di-dimitrov/propaganda-techniques-in-memes (``data/datasets/propaganda/defaults/images/*.png``, the
950 PNGs named as MemeQA's ``img``, and ``.../annotations/{train,val,test}.jsonl`` with each meme's
text); ``converted/memes.jsonl`` the ``{image, text}`` file `qa eval` reads, one line per picture.
"""

from __future__ import annotations

import json
from pathlib import Path

from memegauge.data.catalogue import Entry, GitHubSource

PICTURES = "pictures/data/datasets/propaganda/defaults"


def convert(root: Path) -> None:
    """``converted/memes.jsonl``: every annotated meme's picture and text (train, val and test), sorted."""
    from memegauge.files import write_text_atomic  # light, but kept out of the descriptor's import

    rows = []
    for split in ("train", "val", "test"):
        for line in (root / PICTURES / "annotations" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                rows.append({"image": item["image"], "text": item["text"]})
    rows.sort(key=lambda row: row["image"])
    write_text_atomic(root / "converted" / "memes.jsonl",
                      "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def paths(root: Path) -> dict[str, Path]:
    """What `qa eval --data memeqa` reads: the question folder, the pictures and their texts."""
    return {"data": root / "memeqa", "images": root / PICTURES / "images",
            "texts": root / "converted" / "memes.jsonl"}


ENTRY = Entry(
    name="memeqa",
    title="MemeQA: 9,031 multiple-choice questions on 950 memes (None− and None+), with the pictures",
    size="71 MB",
    licence="questions: MIT; pictures: SemEval-2021 Task 6 corpus, research use (repository code BSD-3-Clause)",
    citation="""@misc{nguyen2025memeqa,
  title  = {MemeQA: Holistic Evaluation for Meme Understanding},
  author = {Nguyen, Kh{\\^o}i P. N. and Li, Terrence and Zhou, Derek Lou and Xiong, Gabriel and others},
  year   = {2025},
  url    = {https://github.com/npnkhoi/memeqa}
}
@inproceedings{dimitrov-etal-2021-detecting,
  title     = {Detecting Propaganda Techniques in Memes},
  author    = {Dimitrov, Dimitar and Bin Ali, Bishr and Shaar, Shaden and Alam, Firoj and Silvestri, Fabrizio
               and Firooz, Hamed and Nakov, Preslav and Da San Martino, Giovanni},
  booktitle = {Proceedings of ACL-IJCNLP 2021 (Volume 1: Long Papers)},
  year      = {2021},
  pages     = {6603--6617},
  doi       = {10.18653/v1/2021.acl-long.516}
}""",
    sources=(
        GitHubSource(id="memeqa", repo="npnkhoi/memeqa", commit="b209609d04ff53e0218fb7a51766dd35e8a7246a",
                     licence="MIT", what="the questions: none-minus/ and none-plus/, train/dev/test JSON"),
        GitHubSource(id="pictures", repo="di-dimitrov/propaganda-techniques-in-memes",
                     commit="9190894ecc2553ff10eea2baf91c36af9ed7579b",
                     licence="research use (SemEval-2021 Task 6); code BSD-3-Clause",
                     what="the 950 meme PNGs and their texts (annotations/*.jsonl)",
                     include=("data/datasets/propaganda/defaults/images/",
                              "data/datasets/propaganda/defaults/annotations/", "LICENSE", "README.md")),
    ),
    folder=Path(__file__).parent,
    notes="The GitHub archive of the pictures' repository is the whole MMF fork (about 67 MB of it pictures); "
          "only the pictures, their annotations, LICENSE and README.md are kept.",
    convert=convert,
    paths=paths,
)
