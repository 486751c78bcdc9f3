"""GOAT-Bench (HKBU-NLP/GOAT-Bench on the Hugging Face Hub): five meme tasks, one zip each.

Installed layout (docs/data.md): ``goat-bench/`` the dataset repository at the pinned revision:
``test/{harmfulness,hatefulness,misogyny,offensiveness,sarcasm}.zip`` and ``README.md``, kept as
released (the zips are not unpacked: their inner layout could not be read from here). The
hatefulness part (58 kB) holds no pictures: they are FHM's, so it needs ``fhm`` installed too.
"""

from __future__ import annotations

from pathlib import Path

from memegauge.data.catalogue import Entry, HubSource

ENTRY = Entry(
    name="goat-bench",
    title="GOAT-Bench: harmfulness, hatefulness, misogyny, offensiveness and sarcasm of memes (test sets)",
    size="3.6 GB",
    licence="not stated on the dataset card (the parts re-release FHM, MAMI, HarMeme and others under their "
            "own terms)",
    citation="""@article{lin2024goat,
  title   = {{GOAT-Bench}: Safety Insights to Large Multimodal Models through Meme-Based Social Abuse},
  author  = {Lin, Hongzhan and others},
  journal = {arXiv preprint arXiv:2401.01523},
  year    = {2024}
}""",
    sources=(HubSource(
        id="goat-bench", repo_id="HKBU-NLP/GOAT-Bench", revision="c9751c13ca10104896e583aa71efc2796087496c",
        licence="none declared", what="test/*.zip, one per task, and README.md",
        allow=("test/*.zip", "test/README.md", "README.md")),),
    folder=Path(__file__).parent,
    notes="The citation's full author list could not be confirmed from here (arXiv:2401.01523 has it). "
          "Revision c9751c1 ('Update test/README.md') is the newest commit seen from here; whether it is "
          "the repository's head could not be confirmed. The zips' inner layout and fields could not be "
          "read from here.",
    needs=("fhm",),
)
