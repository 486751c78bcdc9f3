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
          "files' column names could not be read from here.",
)
