"""The config of a MemeQA evaluation (`memegauge qa eval`, or `Method.run` from Python)."""

from __future__ import annotations

from pathlib import Path

from typing import Any

from pydantic import Field, ValidationInfo, model_validator

from memegauge.config import MethodConfig


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
