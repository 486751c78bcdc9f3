"""MemeGauge: measure how well multimodal LLMs understand memes (AdamMeme, MemeArena, MemeQA).

From Python (docs/api.md): `memegauge.run_adammeme`, `memegauge.run_arena`, `memegauge.run_memeqa` (or
`memegauge.run(method, ...)`, `await memegauge.arun(...)`) run a method and return a `memegauge.Result`
with its report, its tables (`to_pandas`) and its run name; `memegauge.load(RUN, store=...)` returns a
stored run's `Result` without running anything. They are imported on first use, so `import memegauge`
stays light.
"""

from __future__ import annotations

from typing import Any

from memegauge._version import __version__

_API = ("Result", "arun", "load", "open_store", "registry_from", "run")
__all__ = ["__version__", *_API, "profile"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from memegauge import api

        return getattr(api, name)
    if name == "profile":  # memegauge.profile(models, store=…): a plain function (memegauge/profiles/__init__.py)
        from memegauge.profiles import profile

        return profile
    if name.startswith("run_"):  # run_<method>: any registered method's entry point (`api.entry_point`)
        from memegauge import api
        from memegauge.methods import method

        if method(name.removeprefix("run_")) is not None:
            return api.entry_point(name.removeprefix("run_"))
    raise AttributeError(f"module 'memegauge' has no attribute {name!r}")
