"""Robust extraction of structured answers from free-form model text.

Every stage asks a model for an answer in a fixed shape (a JSON object, ``Rating: [[n]]``, an
``[Overall Judge]`` verdict, multiple-choice letters, bracketed sections, ``## Final Response:``,
``[USER n]:`` lines). Models follow those shapes loosely, so these parsers accept the messy variants
real models write and reject what cannot be read with confidence.

Rules shared by every parser:

* **Never raise on bad text.** Each returns its value or ``ParseFailure(reason=..., text=text[:500])``
  (a falsy record), so the engine can classify the call as *unparseable*, retry it and store why.
  ``None``/bytes input is coerced to text rather than raising.
* **Markdown is noise.** Bold/italic markers, ``#`` headers, code spans, ``'''`` quotes and simple
  HTML tags (``<b>``, ``<p>``) around the interesting part are tolerated.
* **The final statement wins** where a text may hold several answers: the last rating, the last
  ``[Overall Judge]`` section, the last ``[[verdict]]``, the last explicit ``Answer: X``, the last
  ``Final Response`` header. Two exceptions, because there the first occurrence is the content:
  JSON (the first candidate that parses) and named sections (the first header of each name).
* **Ambiguity is a failure, not a guess.** An out-of-range rating, ``[[7.5]]``, a plain "Tie" with no
  strong/weak, two letters for a single-answer question, or both A and B with nothing to choose
  between them all return a failure with a reason a person can act on.
* **Case-insensitive keywords, case-sensitive letters.** ``rating``, ``tie``, ``answer`` match in any
  case, but an answer letter must be a capital (``"A person"`` is not option A, the ``T`` of
  ``"The"`` is never a letter); a lone lowercase letter is accepted only when it is the whole answer.

Only the standard library is used (``json``, ``re``, ``ast``). One module per answer shape (`json_answer`,
`rating`, `sections`, `verdict`, `choice`, `final_response`, `labelled`, `yes_no`; shared helpers in `text`),
re-exported here. The engine's own checks of an answer (``<think>`` blocks, refusals) are
`memegauge.engine.content`; a method's vocabulary (MemeArena's judgment sections) is in its folder.
"""

from __future__ import annotations

from memegauge.parse.choice import parse_choice
from memegauge.parse.final_response import parse_final_response
from memegauge.parse.json_answer import parse_json
from memegauge.parse.labelled import parse_labelled_lines
from memegauge.parse.rating import parse_rating
from memegauge.parse.sections import parse_sections, parse_sections_partial
from memegauge.parse.verdict import (A, B, OVERALL_JUDGE, TIE, TIE_STRONG, TIE_WEAK, parse_dimension_verdicts,
                                     parse_verdict)
from memegauge.parse.yes_no import starts_yes_no
from memegauge.types import ParseFailure

__all__ = [
    "A",
    "B",
    "OVERALL_JUDGE",
    "ParseFailure",
    "TIE",
    "TIE_STRONG",
    "TIE_WEAK",
    "parse_choice",
    "parse_dimension_verdicts",
    "parse_final_response",
    "parse_json",
    "parse_labelled_lines",
    "parse_rating",
    "parse_sections",
    "parse_sections_partial",
    "parse_verdict",
    "starts_yes_no",
]
