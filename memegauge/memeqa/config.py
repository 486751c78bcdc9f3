"""The config of a MemeQA evaluation (`memegauge qa eval`, or `Method.run` from Python)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from typing import Any

from pydantic import Field, ValidationInfo, model_validator

from memegauge.config import MethodConfig
from memegauge.memeqa.dataset import resolve_types


class EvalConfig(MethodConfig):
    """Which questions to ask which model: the fields of `memegauge qa eval`. Paths resolve from the
    config file (`MethodConfig`)."""

    data: Path = Field(description="The MemeQA data folder (the split files).")
    images: Path = Field(description="The folder of the meme pictures.")
    model: str = Field(description="The registry name of the model evaluated.")
    version: str = Field(default="none-minus", description="none-minus or none-plus.")
    split: str = Field(default="dev")
    texts: Path | None = Field(default=None, description="Meme texts (JSONL), for text-only models.")
    limit: int | None = Field(default=None, ge=1, description="Ask at most this many questions.")
    types: list[str] | None = Field(default=None, description="Question types (default: all 11).")
    seed: int = 0
    circular: bool = Field(default=False, description="Ask every rotation of the options.")

    @model_validator(mode="before")
    @classmethod
    def _data_set_name(cls, raw: Any, info: ValidationInfo) -> Any:
        """`data: memeqa` (an installed data set's name, docs/data.md): its questions, and its pictures and
        texts unless `images` / `texts` are given. A folder of that name beside the config wins."""
        if not isinstance(raw, dict) or not isinstance(raw.get("data"), str):
            return raw
        from memegauge.data import data_paths, is_data_name  # the catalogue: only for a name, not a path

        base = Path((info.context or {}).get("base_dir") or ".")
        if not is_data_name(raw["data"]) or (base / raw["data"]).exists():
            return raw
        named = data_paths(raw["data"], "data")
        return {**raw, "data": named["data"], "images": raw.get("images") or named.get("images"),
                "texts": raw.get("texts") or named.get("texts")}

    def roles(self) -> dict[str, list[str]]:
        """The model evaluated."""
        return {"targets": [self.model]}

    def default_name(self) -> str:
        """The run's name when none is given (`default_run_name` of an evaluation)."""
        return default_run_name("eval", self.version, self.split, self.model, self.limit,
                                resolve_types(self.types), self.circular, self.seed)


class ScoreConfig(MethodConfig):
    """`memegauge qa score`: answers made elsewhere, scored against one split (one file per run)."""

    data: Path = Field(description="The MemeQA data folder (the split files).")
    version: str = Field(description="none-minus or none-plus.")
    split: str = Field(description="train, dev or test.")
    predictions: Path = Field(description='JSONL of {"id", "prediction"} lines.')
    limit: int | None = Field(default=None, ge=1, description="Score the same sample as eval --limit N.")
    types: list[str] | None = Field(default=None, description="Question types (default: all 11).")
    seed: int = Field(default=0, description="Seed of the --limit sample.")


def default_run_name(task: str, version: str, split: str, who: str, limit: int | None,
                     types: list[str], circular: bool = False, seed: int = 0) -> str:
    """`memeqa-<task>-<who>-<version>-<split>`, then what differs from the defaults: the sample size,
    its seed, the types, circular."""
    parts = ["memeqa", task, who, version, split]
    if limit:
        parts.append(f"n{limit}")
    if seed:
        parts.append(f"s{seed}")
    if len(types) != 11:
        parts.append("t" + hashlib.sha256("|".join(types).encode()).hexdigest()[:6])
    if circular:
        parts.append("circular")
    return "-".join(parts)
