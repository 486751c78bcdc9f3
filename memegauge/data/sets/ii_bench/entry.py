"""II-Bench (m-a-p/II-Bench on the Hugging Face Hub): image implication questions.

Installed layout (docs/data.md): ``ii-bench/`` the dataset repository at the pinned revision: ``data/``
(the Parquet files of the dev and test splits; the pictures are inside) and ``README.md``. The same
benchmark on GitHub (II-Bench/II-Bench) holds ``data/dev.json`` / ``data/test.json``, lists of
``{local_path: "images/dev/dev-1.jpg", questions: [{id, question, options, ...}]}`` beside
``images/dev|test/``; that copy is not used because 16 of its files could not be read from here to pin
their sha256.
"""

from __future__ import annotations

from pathlib import Path

from memegauge.data.catalogue import Entry, HubSource
from memegauge.data.memesets import ReleaseRow

GROUPS = ("domain", "emotion", "difficulty")
OPTIONS = tuple(f"option{n}" for n in range(1, 7))


def rows(folder: Path, split: str) -> list[ReleaseRow]:
    """II-Bench's rows (data/SPLIT-*.parquet), with the card's columns (`dataset_info.features`): id, image
    (struct {bytes, path}), question, option1..option6, answer (a letter), correct_option, image_type,
    difficulty, domain, emotion, rhetoric, explanation, local_path. A row without an answer (the test split as
    released for the challenge may carry none) has answer None, said."""
    from memegauge.data.memesets import parquet_rows, picture_file  # lazy: pyarrow when read
    from memegauge.errors import InputError  # light

    files = sorted(folder.glob(f"data/{split}-*.parquet"))
    if not files:
        raise InputError(f"II-Bench's {split} files not found: {folder}/data/{split}-*.parquet", str(folder),
                         "run `memegauge data get ii-bench`, or give --data the folder holding the release's data/")
    out = []
    for path in files:
        for where, r in parquet_rows(path):
            answer = str(r.get("answer") or "").strip() or None
            out.append(ReleaseRow(
                where=where, id=str(r.get("id") if r.get("id") is not None else ""),
                picture=picture_file(r.get("image"), where), text="", labels={"answer": answer},
                why={} if answer else {"answer": "no answer (unlabelled split)"},
                groups={g: str(r[g]) for g in GROUPS if r.get(g) not in (None, "")},
                extra={"question": str(r.get("question") or ""),
                       "options": [r[o] for o in OPTIONS if r.get(o) not in (None, "")]}))
    return out

ENTRY = Entry(
    name="ii-bench",
    title="II-Bench: 1,222 images, 1,434 multiple-choice questions on their implications",
    size="about 140 MB",
    licence="Apache-2.0 (dataset card)",
    citation="""@misc{liu2024iibench,
  title  = {{II-Bench}: An Image Implication Understanding Benchmark for Multimodal Large Language Models},
  author = {Liu, Ziqiang and Fang, Feiteng and Feng, Xi and Du, Xinrun and others},
  year   = {2024},
  eprint = {2406.05862},
  archivePrefix = {arXiv}
}""",
    sources=(HubSource(
        id="ii-bench", repo_id="m-a-p/II-Bench", revision="a1484f3527d7e23faeb05cbd57e32cc5370c695c",
        licence="Apache-2.0", what="data/ (Parquet, pictures inside) and README.md",
        allow=("data/*", "README.md")),),
    folder=Path(__file__).parent,
    notes="Revision a1484f3 ('add claude-3.5-sonnet') is the newest commit seen from here. The Parquet "
          "files' column names are the card's `dataset_info.features` (as the issue quotes them). Test answers: "
          "the authors' GitHub copy (II-Bench/II-Bench at 7cf6187, data/test.json) gives each test question "
          "`id, question, options` and no `answer` or `correct_option`, which every dev question has "
          "(data/dev.json: `\"correct_option\": …, \"answer\": \"E\"`); so the test answers are not public "
          "there, and a test row without one is counted and not asked. Whether the Hub's test Parquet carries "
          "them could not be read from here (its viewer would not load).",
    rows=rows,
)
