"""Reading a model's answer as the task's answer kind; an answer that cannot be read is `UNREADABLE`, never a class.

The policy (docs/benchmarks.md, "Unreadable answers"): an answer is read only when it says one answer of the
task's kind plainly — yes_no: its first word is yes or no; label: it starts with one of the labels, or names
exactly one of them; letter: it starts with one option's letter (``B``, ``(B)``, ``B.``); labels: ``none``, or
labels of the set separated by commas or "and". Anything else is unreadable: it is counted and shown, and scored
as wrong (it misses its gold class, and is credited to no class).
"""

from __future__ import annotations

import re

from memegauge.benchmarks.kit.spec import Task

UNREADABLE = None
_EDGE = re.compile(r"^[\s\"'*_`>#:\-]+|[\s\"'*_`.!]+$")
_WORD = re.compile(r"[a-z]+")
_LETTER = re.compile(r"^\(?([A-Z])(?:\)|\.|:|,|\s|$)")
_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\n)\s*")


def read_answer(task: Task, text: str, options: int = 0) -> str | list[str] | None:
    """The answer `text` says for `task` (a class, a letter, or a list of classes), or `UNREADABLE`."""
    plain = _EDGE.sub("", text or "")
    if task.answer == "letter":
        return _letter(plain, options)
    low = plain.lower()
    if task.answer == "yes_no":
        first = _WORD.match(low)
        return first.group(0) if first and first.group(0) in ("yes", "no") else UNREADABLE
    if task.answer == "label":
        return _label(low, task.classes)
    return _labels(low, task.classes)


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
