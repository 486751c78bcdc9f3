"""A catalogue of real-shaped replies, each with the reading a person gives it (None = a person could
not read it unambiguously either: the parser must fail, never guess). It includes the papers' own
appendix examples (MemeArena Fig. 15, AdamMeme Fig. 17–18, in tests/data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memegauge.arena.verdicts import TIE, TIE_STRONG, TIE_WEAK, parse_dimension_verdicts, parse_verdict
from memegauge.engine.content import check_content
from memegauge.parse import parse_choice, parse_final_response, parse_rating
from memegauge.parse.text import strip_reasoning
from memegauge.types import ChatResult, ErrorClass, ModelCallError, ParseFailure

DATA = Path(__file__).parent / "data"
OPTIONS = ["Biden is", "Obama is", "Trump is", "None of the above"]
CDC = ["CDC", "WHO", "FDA", "NIH"]
REFUSAL = "I'm sorry, but I can't help with that."

# (reply, multi, options, allow_none, reading as letters; None = unreadable)
CHOICES = [
    ("The answer is (b).", False, CDC, False, "B"),
    ("A because the text mocks the agency.", False, CDC, False, "A"),
    ("B because the caption names it", False, CDC, False, "B"),
    ("ac", True, CDC, False, "AC"),
    ("a, c", True, CDC, False, "AC"),
    ("None of the above", True, OPTIONS, False, "D"),
    ("D. None of the above", True, OPTIONS, False, "D"),
    ("None of the above", True, CDC, True, ""),
    ("A. CDC", True, CDC, False, "A"),
    ("A. Biden is\nC. Trump is", True, OPTIONS, False, "AC"),
    ("Answer:\nA. Biden is\nC. Trump is", True, OPTIONS, False, "AC"),
    ("<think>The picture shows the CDC logo, so A fits.</think>\nA", False, CDC, False, "A"),
    ("<think>Options B and C look plausible.</think>\n\nC", False, CDC, False, "C"),
    ("**Answer:** C", False, CDC, False, "C"),
    ("I would choose option (d).", False, CDC, False, "D"),
    ("The correct answers are (A) and (C).", True, CDC, False, "AC"),
    ("A and C are correct.", True, CDC, False, "AC"),
    ("Answer: b", False, CDC, False, "B"),
    ("B", False, CDC, False, "B"),
    ("ACD", True, CDC, False, "ACD"),
    ("N", True, CDC, True, ""),
    ("A", True, ["the woman", "a trump critic", "a", "a woman"], False, "A"),  # option C reads "a"
    ("None", True, OPTIONS, False, "D"),
    ("B - the meme mocks the agency", False, CDC, False, "B"),
    ("I can't tell which option is right from this meme.", False, CDC, False, None),
    ("A person is shown next to a logo.", False, CDC, False, None),
    ("Either B or D might fit.", False, CDC, False, None),
    ("The answer is a good question.", False, CDC, False, None),
    ("<think>Maybe A, maybe B, I need more", False, CDC, False, None),
]


@pytest.mark.parametrize("reply, multi, options, allow_none, reading", CHOICES)
def test_choice_replies_read_as_a_person_reads_them(reply, multi, options, allow_none, reading):
    value = parse_choice(reply, multi=multi, n_options=len(options), allow_none=allow_none, options=options)
    if reading is None:
        assert isinstance(value, ParseFailure), value
    else:
        assert value == tuple(ord(c) - 65 for c in reading), value


FIG15 = (DATA / "memearena_fig15_judgment.txt").read_text()

# (judgment, {dimension: reading}); None = no reading a person would commit to
VERDICTS = [
    ("Tie", {"Overall Judge": TIE}),
    ("[Overall Judge]\nTie", {"Overall Judge": TIE}),
    ("[Overall Judge] A/B/Tie\nB", {"Overall Judge": "B"}),
    ("[Overall Judge]\nTie (both weak)", {"Overall Judge": TIE_WEAK}),
    ("**[Overall Judge]**: Model A", {"Overall Judge": "A"}),
    ("'''[Overall Judge]\n\nB\n'''", {"Overall Judge": "B"}),
    ("[Overall Judge]\n**Tie** — both answers are similar.", {"Overall Judge": TIE}),
    ("[Overall Judge] Tie. Both answers are equally weak on the facts.", {"Overall Judge": TIE_WEAK}),
    ("[Correctness]\nModel A discusses X, while Model B spends more words on Y.\nVerdict: Model B\n"
     "[Overall Judge] B", {"Correctness": "B", "Overall Judge": "B"}),
    ("**[Correctness]**: Model A and Model B each cover part of it.\n**Decision:** A\n[Overall Judge] A",
     {"Correctness": "A", "Overall Judge": "A"}),
    ("[Correctness] Tie — Model A discusses strong points, Model B too.\n[Overall Judge] A",
     {"Correctness": TIE, "Overall Judge": "A"}),
    ("### Correctness\nBoth mention the history.\nWinner: Tie (both strong)\n[Overall Judge] Tie",
     {"Correctness": TIE_STRONG, "Overall Judge": TIE}),
    ("[Correctness]\nModel A provides X, while Model B is more accurate.\nB is better.\n[Overall Judge] B",
     {"Correctness": "B", "Overall Judge": "B"}),
    ("[Correctness]\nModel B replied 'I'm sorry, but I can't help with that.', which ignores the task.\n"
     "Verdict: A\n[Overall Judge] A", {"Correctness": "A", "Overall Judge": "A"}),
    ("[Correctness]\nModel A is weaker.\n[Overall Judge] B", {"Correctness": None, "Overall Judge": "B"}),
    ("[Correctness]\nModel A is thorough. Model B misses facts.\n[Overall Judge] A",
     {"Correctness": None, "Overall Judge": "A"}),
    ("<think>A seems better on facts.</think>\n[Correctness] B\n[Overall Judge] B",
     {"Correctness": "B", "Overall Judge": "B"}),
    ("[Overall Judge] A/B/Tie", {"Overall Judge": None}),
    ("[Overall Judge] Model A or Model B", {"Overall Judge": None}),
    # MemeArena Fig. 15: every block is analysis with no decision line; four state plainly which answer
    # is better. Redundancy says B is more detailed, then that its details "might be" excessive: a
    # reader leans A, but the text never decides, so no reading is taken (not A, never B).
    (FIG15, {"Instruction Following": "B", "Correctness": "B", "Redundancy": None, "Relevance": "B",
             "Accuracy": "B", "Overall Judge": "B"}),
]


@pytest.mark.parametrize("text, readings", VERDICTS)
def test_judgments_read_as_a_person_reads_them(text, readings):
    answer, _ = strip_reasoning(text)
    dims = parse_dimension_verdicts(answer, [d for d in readings if d != "Overall Judge"])
    got = {d: (None if isinstance(v, ParseFailure) else v) for d, v in dims.items()}
    overall = parse_verdict(answer)
    got["Overall Judge"] = None if isinstance(overall, ParseFailure) else overall
    assert got == readings


RATINGS = [
    ((DATA / "adammeme_fig18_scoring.txt").read_text(), 5),  # AdamMeme Fig. 18
    (f"The assistant replied '{REFUSAL}' and gave no analysis.\nRating: [[1]]", 1),
    ("Good coverage of the reference.\n\n**Rating:** [[7]]", 7),
    ("Covers the main point. Rating: 6/10", 6),
    ("Misses the history.\n### Rating: 3", 3),
    ("Rating: [[7.5]]", None),
    ("A fair answer overall.", None),
]


@pytest.mark.parametrize("text, reading", RATINGS)
def test_ratings_read_as_a_person_reads_them(text, reading):
    value = parse_rating(strip_reasoning(text)[0])
    assert (None if isinstance(value, ParseFailure) else value) == reading


def test_papers_senior_agent_final_response_fig17():
    body = parse_final_response((DATA / "adammeme_fig17_senior.txt").read_text())
    assert body.startswith("The meme featuring the text") and body.endswith("equitable discourse.")


def test_a_scorer_quoting_a_refusal_is_not_a_refusal_but_an_agent_refusing_is():
    quoting = ChatResult(text=f"The assistant replied '{REFUSAL}' Rating: [[1]]")
    check_content(quoting, parse_rating, lambda t: True)  # parses: used, whatever it quotes
    with pytest.raises(ModelCallError) as refused:
        check_content(ChatResult(text=REFUSAL), parse_rating, lambda t: "sorry" in t)
    assert refused.value.error_class is ErrorClass.REFUSAL
    with pytest.raises(ModelCallError) as cut:
        check_content(ChatResult(text="The answer covers", finish_reason="length"), parse_rating, None)
    assert cut.value.error_class is ErrorClass.TRUNCATED


def test_catalogue_size():
    assert len(CHOICES) + len(VERDICTS) + len(RATINGS) + 1 >= 50
