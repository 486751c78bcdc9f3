"""MemeArena's judgment vocabulary (paper Fig. 11): the verdicts a judge may give, the sections of a judgment,
and the pairwise-verdict parsers (`memegauge.parse.verdict`) bound to those sections."""

from __future__ import annotations

from memegauge.arena.common import DIMENSIONS
from memegauge.parse import verdict
from memegauge.parse.verdict import A, B, OVERALL_JUDGE, TIE, TIE_STRONG, TIE_WEAK
from memegauge.types import ParseFailure

VERDICTS = (A, B, TIE_STRONG, TIE_WEAK, TIE)
"""The verdicts a MemeArena judge may give: Fig. 11 asks for A, B, Tie (both strong) or Tie (both
weak), and its own format line reads ``A/B/Tie``, so a plain ``Tie`` (kind unknown) is a verdict too."""

JUDGE_DIMENSIONS = (*DIMENSIONS, OVERALL_JUDGE)
"""Section headers of a MemeArena judgment, in the order the prompt asks for them."""


def parse_verdict(text: str) -> str | ParseFailure:
    """A MemeArena judgment's overall verdict: one of `VERDICTS` (see `memegauge.parse.verdict.parse_verdict`)."""
    return verdict.parse_verdict(text, JUDGE_DIMENSIONS)


def parse_dimension_verdicts(text: str, dimensions: list[str]) -> dict[str, str | ParseFailure]:
    """The verdict of each of `dimensions` in a MemeArena judgment (a `ParseFailure` where unreadable)."""
    return verdict.parse_dimension_verdicts(text, dimensions, JUDGE_DIMENSIONS)
