"""Prompt templates: one Jinja2 file per agent role, named after the paper figure it follows.

Templates are rendered with StrictUndefined so a missing variable is an error, not an empty hole
in a prompt. Each template's first line is a Jinja comment naming its source figure.
"""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, PackageLoader, StrictUndefined


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(loader=PackageLoader("memegauge", "prompts"), undefined=StrictUndefined,
                       keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True,
                       autoescape=False)


def render_prompt(name: str, **variables: object) -> str:
    """Render `prompts/<name>.j2` with the given variables, stripped of outer whitespace."""
    return _environment().get_template(f"{name}.j2").render(**variables).strip()
