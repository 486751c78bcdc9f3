"""MemeLens (QCRI/MemeLens on the Hugging Face Hub): one config per task, language and source data set,
pictures inside the Parquet files.

Installed layout (docs/data.md): ``memelens/`` the dataset repository at the pinned revision as released:
one folder per config (named ``TASK_LANG__SOURCE``, e.g. ``stereotype_en__MAMI``) with its Parquet
files, and ``README.md`` (the card, whose ``configs:`` list names every config's files).
"""

from __future__ import annotations

from pathlib import Path

from memegauge.data.catalogue import Entry, HubSource

ENTRY = Entry(
    name="memelens",
    title="MemeLens: meme tasks (harm, hate, stereotype, sentiment…) across languages and source data sets",
    size="100K–1M rows (download size not confirmed from here)",
    licence="declared MIT on the dataset card — in conflict with the terms of the sets it re-releases "
            "(FHM and MAMI forbid redistribution; others are research-only); use it as those terms allow",
    citation="""@misc{memelens2026,
  title  = {MemeLens},
  author = {{Qatar Computing Research Institute}},
  year   = {2026},
  eprint = {2601.12539},
  archivePrefix = {arXiv}
}""",
    sources=(HubSource(
        id="memelens", repo_id="QCRI/MemeLens", revision="98eac34fc64fad505c98a0cc94aa70cb2e72a449",
        licence="MIT (declared; see the conflict above)", what="every config's Parquet files and README.md"),),
    folder=Path(__file__).parent,
    notes="The paper's title and authors could not be confirmed from here: the citation gives the arXiv id "
          "the dataset card links (2601.12539). "
          "Revision 98eac34 ('Upload stereotype_en__MAMI') is the newest commit seen from here, not "
          "confirmed as the head. The config list, column names and sizes could not be read from here: "
          "the card's `configs:` gives them once installed.",
)
