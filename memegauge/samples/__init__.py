"""The project's own sample memes, drawn by `memegauge.samples.render`.

Thirteen 512x512 PNGs with top/bottom meme text — mildly edgy stereotype jokes over AdamMeme's six seed
harm categories plus harmless ones — listed in `memes.jsonl` with their text, a caption of the picture
and gold labels. Load them with `memegauge.memes.load_memes(sample_memes_path())`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_memes_path() -> Path:
    """Path of the bundled `memes.jsonl` (its image paths are relative to it).

    The package ships as plain files (wheel or source tree), so the resource is a real file on disk;
    a zipped install would not give one, and that is said plainly rather than half-working.
    """
    resource = resources.files(__name__).joinpath("memes.jsonl")
    if not isinstance(resource, Path):
        raise RuntimeError(
            "memegauge.samples is not installed as plain files (zipped install?); "
            "reinstall memegauge as a normal wheel or from its source tree"
        )
    return resource
