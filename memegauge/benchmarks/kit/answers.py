"""Reading a model's answer as the task's answer kind; an answer that cannot be read is `UNREADABLE`, never a class.

The policy (docs/benchmarks.md, "Unreadable answers"): an answer is read only when it says one answer of the
task's kind plainly — yes_no: its first word is yes or no; label: it starts with one of the labels, or names
exactly one of them; letter: it starts with one option's letter (``B``, ``(B)``, ``B.``); labels: ``none``, or
labels of the set separated by commas or "and". Anything else is unreadable: it is counted and shown, and scored
as wrong (it misses its gold class, and is credited to no class).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memegauge.benchmarks.kit.spec import Task
from memegauge.registry import Registry, code_source

Reader = Callable[[str, list[str], int], Any]
"""An answer kind's reader: (answer text with its edges stripped, the task's classes, the item's number of
options) → the answer read (a class, a letter, a list of classes), or `UNREADABLE`."""

UNREADABLE = None
_EDGE = re.compile(r"^[\s\"'*_`>#:\-]+|[\s\"'*_`.!]+$")
_WORD = re.compile(r"[a-z]+")
_LETTER = re.compile(r"^\(?([A-Z])(?:\)|\.|:|,|\s|$)")
_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\n)\s*")


def read_answer(task: Task, text: str, options: int = 0, classes: list[str] | None = None) -> Any:
    """The answer `text` says for `task` (a class, a letter, or a list of classes), or `UNREADABLE`; `classes`:
    the item's own classes where the task reads them from the data (`labels_from`)."""
    return answer_kind(task.answer)(_EDGE.sub("", text or ""), classes or task.classes, options)


ANSWER_KINDS: Registry[Reader] = Registry("answer kind", "memegauge.answers", Callable, name_of=None)
"""Every answer kind by name (`memegauge.registry`: a function, one per name): the four below, any a benchmark's
module registers (`register_answer`), and any an installed package declares as an entry point of group
``memegauge.answers`` named after it (loaded when a task names it)."""


def register_answer(name: str, reader: Reader) -> Reader:
    """Register an answer kind (a benchmark's module may bring its own); a second kind of one name is refused
    (`DuplicatePlugin`, naming both functions)."""
    return ANSWER_KINDS.register(reader, code_source(reader), name)


def answer_kind(name: str) -> Reader:
    """The reader of answer kind `name`; an unknown kind is one `InputError` naming the known ones."""
    return ANSWER_KINDS.require(name, "answer", "or register it in the benchmark's module: answers.register_answer")


def _yes_no(plain: str, classes: list[str], options: int) -> str | None:
    first = _WORD.match(plain.lower())
    return first.group(0) if first and first.group(0) in ("yes", "no") else UNREADABLE


register_answer("yes_no", _yes_no)
register_answer("label", lambda plain, classes, options: _label(plain.lower(), classes))
register_answer("letter", lambda plain, classes, options: _letter(plain, options))
register_answer("labels", lambda plain, classes, options: _labels(plain.lower(), classes))


def _letter(plain: str, options: int) -> str | None:
    found = _LETTER.match(plain)
    if not found:
        return UNREADABLE
    letter = found.group(1)
    return letter if options == 0 or ord(letter) - ord("A") < options else UNREADABLE


def _label(low: str, labels: list[str]) -> str | None:
    by_length = sorted(labels, key=len, reverse=True)  # "not harmful" before "harmful"
    start = next((label for label in by_length if re.match(rf"{re.escape(label)}\b", low)), None)
    if start is not None:
        return start
    named, rest = [], low
    for label in by_length:
        if re.search(rf"\b{re.escape(label)}\b", rest):
            named.append(label)
            rest = re.sub(rf"\b{re.escape(label)}\b", " ", rest)
    return named[0] if len(named) == 1 else UNREADABLE


def _labels(low: str, labels: list[str]) -> list[str] | None:
    if re.match(r"none\b", low):
        return []
    parts = [p for p in _SPLIT.split(low.split("\n\n")[0]) if p]
    return sorted(set(parts), key=labels.index) if parts and all(p in labels for p in parts) else UNREADABLE
