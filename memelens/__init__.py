"""MemeLens: measure how well multimodal LLMs understand memes (AdamMeme, MemeArena, MemeQA).

From Python (docs/api.md): `memelens.run_adammeme`, `memelens.run_arena`, `memelens.run_memeqa` (or
`memelens.run(method, ...)`, `await memelens.arun(...)`) run a method and return a `memelens.Result`
with its report, its tables (`to_pandas`) and its run name. They are imported on first use, so
`import memelens` stays light.
"""

from __future__ import annotations

from typing import Any

from memelens._version import __version__

_API = ("Result", "arun", "open_store", "registry_from", "run", "run_adammeme", "run_arena", "run_memeqa")
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from memelens import api

        return getattr(api, name)
    raise AttributeError(f"module 'memelens' has no attribute {name!r}")
