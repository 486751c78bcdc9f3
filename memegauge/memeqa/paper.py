"""The MemeQA paper's published figures (Tables 2 and 3), shipped as data (`paper_figures.json`,
with its source) and set beside a run's own figures in its report.

The paper reports accuracy on its *test* split, in percent; the report gives them as fractions like
its own figures. A run on another split or on a subset is not the same measurement: the section
says which split the paper used, and the run's own random baseline (computed from the questions it
asked) stays the yardstick for the run. The paper's random macro (10.9) is not the mean of its own
random column (15.5); the data keep the published number and say so.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memegauge.memeqa.dataset import QUESTION_TYPES, VERSIONS

SETTINGS = ("zero-shot", "fine-tuned")
TABLE_OF = {"zero-shot": "Table 2", "fine-tuned": "Table 3"}


class PaperFigures(BaseModel):
    """`paper_figures.json`: every published accuracy, in percent, by question type name (the
    official `specific_type`) and `macro`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="Paper and tables the figures were copied from.")
    split: str = Field(description="The split the paper evaluated on.")
    unit: str
    models: dict[str, str] = Field(description="Column name → the model it stands for.")
    notes: dict[str, str]
    random: dict[str, float] = Field(description="The Rand column (the same in both versions).")
    human: dict[str, dict[str, float]] = Field(description="Version → the Hum column.")
    models_by_setting: dict[str, dict[str, dict[str, dict[str, float]]]] = Field(
        description="zero-shot | fine-tuned → version → model column → type → accuracy.")


@lru_cache(maxsize=1)
def paper_figures() -> PaperFigures:
    raw = files("memegauge.memeqa").joinpath("paper_figures.json").read_text(encoding="utf-8")
    return PaperFigures.model_validate(json.loads(raw))


def _fraction(value: float | None) -> float | None:
    return None if value is None else round(value / 100, 4)


def beside(version: str | None, accuracy: dict[str, float | None] | None = None,
           macro: float | None = None, label: str = "this run") -> dict[str, Any]:
    """The paper's figures for `version` (both versions when None) with the run's own accuracy per
    type (`accuracy`, `macro`; fractions) in a `run` column: one row per type and one for macro."""
    figures = paper_figures()
    versions = [version] if version in VERSIONS else list(VERSIONS)
    out: dict[str, Any] = {"source": figures.source, "split": figures.split, "run_label": label,
                           "models": figures.models, "notes": figures.notes, "versions": {}}
    for v in versions:
        rows = []
        for name in [t.name for t in QUESTION_TYPES] + ["macro"]:
            own = macro if name == "macro" else (accuracy or {}).get(name)
            rows.append({
                "type": name,
                "run": own if v == version else None,
                "random": _fraction(figures.random[name]),
                "human": _fraction(figures.human[v][name]),
                **{setting: {model: _fraction(types.get(name))
                             for model, types in figures.models_by_setting[setting][v].items()}
                   for setting in SETTINGS},
            })
        out["versions"][v] = rows
    return out
