"""The original AdamMeme release's data and results (Lbotirx/AdamMeme), for `memegauge import adammeme`.

Installed layout (docs/data.md): ``release/`` the repository's own layout: ``data/base_cat.json``,
``data/data5k/cls_res_full.json`` (``{category: [{text, image, label, task, misbelief, ...}]}``),
``data/data5k/cls_res_full_cat.json``, ``results/llava_5k/info.json``, ``results/llava_5k/log*.json``
and ``log_child`` (refinement logs), README.md. Give ``DATA_DIR/adammeme-release/release`` or the
name itself (`memegauge import adammeme adammeme-release`) to `import adammeme`.
"""

from __future__ import annotations

from pathlib import Path

from memegauge.data.catalogue import Entry, GitHubSource

ENTRY = Entry(
    name="adammeme-release",
    title="AdamMeme's released data (5k memes by category) and LLaVA results, for `import adammeme`",
    size="about 7 MB",
    licence="no licence file in the repository (all rights reserved by default); meme texts from FHM, "
            "HarMeme and MAMI under their own terms",
    citation="""@misc{chen2025adammeme,
  title     = {{AdamMeme}: Adaptively Probe the Reasoning Capacity of Multimodal Large Language Models on Harmfulness},
  author    = {Chen, Zixin and Lin, Hongzhan and Li, Kaixin and Luo, Ziyang and Ye, Zhen and Chen, Guang
               and Huang, Zhiyong and Ma, Jing},
  year      = {2025},
  url       = {https://github.com/Lbotirx/AdamMeme}
}""",
    sources=(GitHubSource(
        id="release", repo="Lbotirx/AdamMeme", commit="00441882a5b6e62c73c1318cfeba3c9704cf1d3f",
        licence="none stated", what="data/ and results/llava_5k/ (without scoring_res.json)",
        include=("data/", "results/llava_5k/info.json", "results/llava_5k/log", "README.md")),),
    folder=Path(__file__).parent,
    paths=lambda root: {"data": root / "release"},
    notes="results/llava_5k/scoring_res.json is not kept: it could not be read from here to pin its sha256 "
          "(a snapshot of the repository at 0044188 lists it as git blob fa672380253c183f8a0d75cc46c1830312220bc9 "
          "but lacks its content: files of 4 MiB and more are not copied here), so an import has no "
          "iteration-0 scores.",
)
