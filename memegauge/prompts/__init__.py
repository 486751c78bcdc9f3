"""Prompt templates: one Jinja2 file per agent role, named after the paper figure it follows.

Templates are rendered with StrictUndefined so a missing variable is an error, not an empty hole
in a prompt. Each template's first line is a Jinja comment naming its source figure.

Bring your own wording: a method config's `prompts: DIR` replaces shipped templates role by role (a file
in DIR with a shipped template's name, e.g. `adammeme_scorer.j2`; roles without a file keep the shipped
wording). `check_prompt_dir` refuses a file whose variables differ from the shipped template's (listing
both sets) or whose name is no template of the method, and returns each file's hash for the run's
config. `using_prompts(DIR)` makes `render_prompt` read DIR first for everything the run renders (a
context variable: the asyncio tasks the run starts inherit it).
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any
from collections.abc import Iterator

from jinja2 import (ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined,
                    TemplateSyntaxError, meta)

from pydantic import AfterValidator, ValidationInfo

from memegauge.config import resolve_from_base
from memegauge.types import InputError

_CUSTOM_DIR: ContextVar[Path | None] = ContextVar("memegauge_prompt_dir", default=None)


@lru_cache(maxsize=8)
def _environment(custom: Path | None = None) -> Environment:
    shipped = PackageLoader("memegauge", "prompts")
    loader = ChoiceLoader([FileSystemLoader(str(custom)), shipped]) if custom else shipped
    return Environment(loader=loader, undefined=StrictUndefined, keep_trailing_newline=False,
                       trim_blocks=True, lstrip_blocks=True, autoescape=False)


def render_prompt(name: str, **variables: object) -> str:
    """Render `prompts/<name>.j2` (or the run's custom file of that name) with the given variables,
    stripped of outer whitespace."""
    return _environment(_CUSTOM_DIR.get()).get_template(f"{name}.j2").render(**variables).strip()


def shipped_templates(prefix: str) -> list[str]:
    """The shipped template names (without `.j2`) of one method, e.g. prefix `adammeme_`."""
    files = resources.files("memegauge") / "prompts"
    return sorted(f.name[:-3] for f in files.iterdir() if f.name.startswith(prefix) and f.name.endswith(".j2"))


def template_variables(source: str) -> set[str]:
    """The variables a template reads (those its caller must give)."""
    return set(meta.find_undeclared_variables(_environment().parse(source)))


def _shipped_source(name: str) -> str:
    return (resources.files("memegauge") / "prompts" / f"{name}.j2").read_text(encoding="utf-8")


def check_prompt_dir(directory: Path, prefix: str, key: str = "prompts") -> dict[str, str]:
    """`{template name: sha256 of the file}` for every custom template in `directory`, after checking
    that each replaces a shipped template of the method (`prefix`) and reads exactly its variables."""
    where = f"config: {key}"
    if not directory.is_dir():
        raise InputError("prompts folder not found", f"{where} ({directory})", "give a folder of .j2 files")
    known = shipped_templates(prefix)
    files = sorted(directory.glob("*.j2"))
    if not files:
        raise InputError("no .j2 templates in the prompts folder", f"{where} ({directory})",
                         f"add files named as the shipped templates: {', '.join(n + '.j2' for n in known)}")
    hashes = {}
    for path in files:
        name = path.stem
        if name not in known:
            raise InputError(f"{path.name} replaces no template of this method", str(path),
                             f"name it as one of: {', '.join(n + '.j2' for n in known)}")
        source = _read_template(path)
        try:
            custom = template_variables(source)
        except TemplateSyntaxError as exc:
            raise InputError(f"template syntax error: {exc.message}", f"{path}:{exc.lineno}",
                             "fix the Jinja2 syntax") from None
        expected = template_variables(_shipped_source(name))
        if custom != expected:
            raise InputError(
                f"{path.name} uses the variables {{{', '.join(sorted(custom)) or '–'}}}; the shipped template "
                f"uses {{{', '.join(sorted(expected))}}} (missing: {', '.join(sorted(expected - custom)) or '–'}; "
                f"unknown: {', '.join(sorted(custom - expected)) or '–'})", str(path),
                "use exactly the shipped template's variables (the caller gives those, and only those)")
        hashes[name] = hashlib.sha256(source.encode("utf-8")).hexdigest()
    return hashes


def _read_template(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", str(path), "save the template as UTF-8") from None


def stored_prompts(directory: Path | None, prefix: str) -> dict[str, object]:
    """What a run's config records of its custom prompts (nothing when it has none): the folder and
    each file's hash, so a changed template is a different config (never a silent resume)."""
    if directory is None:
        return {}
    return {"prompts": str(directory), "prompt_hashes": check_prompt_dir(directory, prefix)}


def prompt_folder(prefix: str) -> Any:
    """The type of a method config's `prompts:` key: a folder, relative to the config file, checked
    against the method's shipped templates when the config is read (a bad one is refused then)."""
    def checked(value: Path | None, info: ValidationInfo) -> Path | None:
        folder = resolve_from_base(value, info)
        stored_prompts(folder, prefix)
        return folder
    return Annotated[Path | None, AfterValidator(checked)]


@contextmanager
def using_prompts(directory: Path | None) -> Iterator[None]:
    """Render from `directory` first (None: the shipped templates only) until the block ends."""
    token = _CUSTOM_DIR.set(Path(directory).resolve() if directory else None)
    try:
        yield
    finally:
        _CUSTOM_DIR.reset(token)
