"""The harm taxonomy of AdamMeme (§2.2): six seed categories, grown during mining, saved with the run.

A category name is normalised (lower case, runs of spaces, `_` and `-` collapsed to one space) before it
is compared or stored, so "Child_Exploitation" and "child  exploitation" are one category. A proposal is
rejected *before any agent is asked* when its normalised name equals an existing one, or when either
name contains the other as whole words ("racism" is not rejected by "race", but "race relations" is).
That guard is cheap and keeps the Judge for the judgement calls the paper gives it (granularity,
overlap of meaning).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# Descriptions in our own words, covering what the paper's Fig. 13 says of each seed category.
SEED_CATEGORIES: dict[str, str] = {
    "race": "Harm or bias aimed at people because of their race or ethnicity, for example memes that "
            "spread racial stereotypes or entrench racial inequality.",
    "gender": "Harm or discrimination based on gender, for example memes that spread gender "
              "stereotypes, objectify people, or push certain gender identities to the margins.",
    "religion": "Harm aimed at people because of their faith or religious practice, for example memes "
                "that spread intolerance, distort religious practice, or stir hatred of a community.",
    "nationality": "Harm aimed at people because of their nationality or citizenship, for example "
                   "memes that trade on national stereotypes, xenophobia or contempt for a nation.",
    "disability": "Harm aimed at people with physical or mental disabilities, for example memes that "
                  "mock, belittle or stereotype them and so reinforce stigma.",
    "animal": "Harm to or mistreatment of animals, for example memes that promote cruelty, objectify "
              "animals or make light of their suffering, dulling concern for animal welfare.",
}

_SEPARATORS = re.compile(r"[\s_\-]+")


def normalise_name(name: str) -> str:
    """Lower-case, trimmed, with spaces, underscores and hyphens collapsed to single spaces."""
    return _SEPARATORS.sub(" ", str(name)).strip().lower()


def _contains_words(longer: str, shorter: str) -> bool:
    return f" {shorter} " in f" {longer} "


@dataclass
class Taxonomy:
    """Ordered categories `{name: description}`; `added` records which meme raised each new one."""

    categories: dict[str, str] = field(default_factory=lambda: dict(SEED_CATEGORIES))
    added: dict[str, str] = field(default_factory=dict)  # category -> meme id that raised it

    def names(self) -> list[str]:
        return list(self.categories)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalise_name(name) in self.categories

    def rejection(self, name: str) -> str | None:
        """Why a proposed name cannot be added without asking an agent, or None when it may be."""
        proposed = normalise_name(name)
        if not proposed:
            return "empty name"
        for existing in self.categories:
            if proposed == existing:
                return f"duplicate of {existing!r}"
            if _contains_words(proposed, existing) or _contains_words(existing, proposed):
                return f"sub-name of {existing!r}"
        return None

    def add(self, name: str, description: str, raised_by: str) -> str:
        """Add a category (already vetted) and return its normalised name."""
        normalised = normalise_name(name)
        self.categories[normalised] = description.strip()
        self.added[normalised] = raised_by
        return normalised

    def as_prompt(self) -> str:
        """The taxonomy as agents read it: a JSON object of name → description."""
        return json.dumps(self.categories, indent=1, ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        return {"categories": dict(self.categories), "added": dict(self.added)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Taxonomy:
        return cls(categories=dict(data["categories"]), added=dict(data.get("added", {})))
