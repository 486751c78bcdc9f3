"""Prompt templates: one Jinja2 file per agent role, named after the paper figure it follows.

Each method ships its templates in its own folder (`<method folder>/prompts/*.j2`, the folder its
descriptor names: `memegauge.methods.Method.folder`); a template is found by its file name, which
starts with the method's prefix (``adammeme_scorer.j2``), in the folders of every registered method.

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
import re
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any
from collections.abc import Iterator

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, TemplateSyntaxError, meta

from pydantic import AfterValidator, ValidationInfo

from memegauge.config import resolve_from_base
from memegauge.methods import BENCHMARKS, METHODS, methods
from memegauge.errors import InputError

_CUSTOM_DIR: ContextVar[Path | None] = ContextVar("memegauge_prompt_dir", default=None)


def shipped_folders() -> tuple[Path, ...]:
    """Every registered method's prompt folder (those that have one), in method name order; listed again only
    when a method or benchmark was registered since (`Registry.generation`), not for every prompt rendered."""
    if _FOLDERS and _FOLDERS[0] == _registered():
        return _FOLDERS[1]
    folders = _prompt_folders(tuple(m.folder for m in methods() if m.folder))
    _FOLDERS[:] = [_registered(), folders]  # after `methods()`, which loads what was declared
    return folders


_FOLDERS: list = []


def _registered() -> tuple[int, int]:
    return METHODS.generation, BENCHMARKS.generation


@lru_cache(maxsize=8)
def _prompt_folders(method_folders: tuple[Path, ...]) -> tuple[Path, ...]:
    # looked up once per set of registered methods, not on every prompt rendered: a stat per method folder
    # per call was most of `render_prompt`'s cost
    return tuple(folder / "prompts" for folder in method_folders if (folder / "prompts").is_dir())


@lru_cache(maxsize=8)
def _environment(custom: Path | None, shipped: tuple[Path, ...]) -> Environment:
    folders = [*([custom] if custom else []), *shipped]
    return Environment(loader=ChoiceLoader([FileSystemLoader(str(f)) for f in folders]), undefined=StrictUndefined,
                       keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True, autoescape=False)


def _shipped_environment() -> Environment:
    return _environment(None, shipped_folders())


def render_prompt(name: str, **variables: object) -> str:
    """Render the template `<name>.j2` (the run's custom file of that name, else the shipped one) with the
    given variables, stripped of outer whitespace."""
    environment = _environment(_CUSTOM_DIR.get(), shipped_folders())
    return environment.get_template(f"{name}.j2").render(**variables).strip()


def shipped_templates(prefix: str) -> list[str]:
    """The shipped template names (without `.j2`) of one method, e.g. prefix `adammeme_`."""
    return sorted(f.stem for folder in shipped_folders() for f in folder.glob(f"{prefix}*.j2"))


def template_variables(source: str) -> set[str]:
    """The variables a template reads (those its caller must give)."""
    return set(meta.find_undeclared_variables(_shipped_environment().parse(source)))


def _shipped_source(name: str) -> str:
    environment = _shipped_environment()
    return environment.loader.get_source(environment, f"{name}.j2")[0]


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


def template_words(name: str) -> int:
    """Words of the shipped template `name` without its Jinja tags: the fixed part of a prompt's size,
    for `--dry-run`'s token estimate."""
    text = re.sub(r"\{[{%#].*?[}%#]\}", " ", _shipped_source(name), flags=re.S)
    return len(text.split())
