"""Unit tests for memegauge.parse on the messy shapes real models write."""

from __future__ import annotations

import pytest

from memegauge.arena.verdicts import TIE, TIE_STRONG, TIE_WEAK, VERDICTS, parse_dimension_verdicts, parse_verdict
from memegauge.engine.content import looks_like_refusal
from memegauge.parse import (
    parse_choice,
    parse_final_response,
    parse_json,
    parse_labelled_lines,
    parse_rating,
    parse_sections,
    parse_sections_partial,
    starts_yes_no,
)
from memegauge.types import ParseFailure


def failed(value: object, reason_part: str = "") -> bool:
    return isinstance(value, ParseFailure) and not value and reason_part in value.reason


# ------------------------------------------------------------------------------------------------
# JSON
# ------------------------------------------------------------------------------------------------

MINER = {"task": ["race", "gender"], "new category": {"body shaming": "mocks appearance"}}

JSON_OK = [
    ('{"a": 1}', {"a": 1}),
    ("  [1, 2, 3]\n", [1, 2, 3]),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```JSON\n{"a": [1, 2]}\n```\nHope this helps!', {"a": [1, 2]}),
    ('```\n{"a": true}\n```', {"a": True}),
    ('Here is the result:\n```json\n{"a": null}\n```', {"a": None}),
    ('Sure! Here is the JSON you asked for: {"a": "b"} Let me know if you need more.', {"a": "b"}),
    ('Output:\n{"task": ["race", "gender"], "new category": {"body shaming": "mocks appearance"}}\nDone.', MINER),
    ('{"text": "a } brace and a { brace inside", "n": 2}', {"text": "a } brace and a { brace inside", "n": 2}),
    ('{"quote": "she said \\"hi\\" [ok]"}', {"quote": 'she said "hi" [ok]'}),
    ("{'a': 'single', 'b': True, 'c': None}", {"a": "single", "b": True, "c": None}),
    ("{'a': true, 'b': null, 'c': false}", {"a": True, "b": None, "c": False}),
    ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
    ("{'name': \"it's fine\", 'n': 3,}", {"name": "it's fine", "n": 3}),
    ('```json\n{"a": 1,\n}\n```', {"a": 1}),
    ('```python\nprint("hi")\n```\n```json\n{"b": 2}\n```', {"b": 2}),
    ('```json\n{"first": 1}\n```\n```json\n{"second": 2}\n```', {"first": 1}),
    ('```json\n{"broken": \n```\n{"fixed": 1}', {"fixed": 1}),
    ('[the user\'s note] then {"a": 1}', {"a": 1}),
    ('[see note] {"a": 1}', {"a": 1}),
    ('{"prompt_user1": "Explain...", "prompt_user2": "Describe...", "prompt_user3": "Tell..."}',
     {"prompt_user1": "Explain...", "prompt_user2": "Describe...", "prompt_user3": "Tell..."}),
    ('[{"a": 1}, {"b": 2}]', [{"a": 1}, {"b": 2}]),
    ("{'pair': (1, 2)}", {"pair": [1, 2]}),
    ('{"unicode": "caf\\u00e9 ✓"}', {"unicode": "café ✓"}),
    ('```{"inline": 1}```', {"inline": 1}),
    ('{"nested": {"deep": {"deeper": [1, {"x": "}"}]}}}', {"nested": {"deep": {"deeper": [1, {"x": "}"}]}}}),
]


@pytest.mark.parametrize("text, expected", JSON_OK)
def test_parse_json_ok(text: str, expected: object) -> None:
    assert parse_json(text) == expected


JSON_BAD = [
    ("", "empty"),
    ("   \n", "empty"),
    ("I could not produce any JSON for this meme.", "no JSON object found"),
    ('{"task": ["race", "gender"], "new category": {"x": "y"', "truncated JSON (unbalanced braces)"),
    ('```json\n{"task": ["race",\n', "truncated"),
    ("{this is not json at all}", "invalid JSON"),
    ("{1, 2, 3}", "invalid JSON"),
    ('"just a string"', "no JSON object found"),
    ("42", "no JSON object found"),
]


@pytest.mark.parametrize("text, reason", JSON_BAD)
def test_parse_json_failures(text: str, reason: str) -> None:
    result = parse_json(text)
    assert failed(result, reason), result


def test_parse_json_failure_keeps_500_chars() -> None:
    result = parse_json("x" * 2000)
    assert failed(result) and len(result.text) == 500


@pytest.mark.parametrize("bad", [None, b'{"a": 1}', 17])
def test_parse_json_never_raises_on_odd_input(bad: object) -> None:
    result = parse_json(bad)  # type: ignore[arg-type]
    assert result == {"a": 1} or isinstance(result, ParseFailure)


def test_parse_json_deep_nesting_does_not_raise() -> None:
    assert isinstance(parse_json("[" * 5000 + "]" * 5000), (list, ParseFailure))


# ------------------------------------------------------------------------------------------------
# Ratings
# ------------------------------------------------------------------------------------------------

RATING_OK = [
    ("The answer misses key points.\n\nRating: [[5]]", 5),
    ("[[7]]", 7),
    ("Rating: 8", 8),
    ("Rating: 6/10", 6),
    ("rating: [[ 9 ]]", 9),
    ("**Rating:** [[7]]", 7),
    ("### Rating: 7", 7),
    ("*Rating*: **[[3]]**", 3),
    ("[Rating: [[4]]", 4),
    ("Explanation...\nRATING: [[10]]", 10),
    ("Rating: [[2]] because of a factual error.", 2),
    ("Initially Rating: [[3]]. On reflection, Rating: [[6]]", 6),
    ("Rating: [[7.0]]", 7),
    ("Rating (1-10): 5", 5),
    ("Rating: **7** out of 10", 7),
    ("Rate on a scale of 1 to 10 using Rating: [[number]].\nRating: [[1]]", 1),
    ("[[8/10]]", 8),
    ("Final Rating:\n\n[[9]]", 9),
    ("Rating: `[[4]]`", 4),
]


@pytest.mark.parametrize("text, expected", RATING_OK)
def test_parse_rating_ok(text: str, expected: int) -> None:
    assert parse_rating(text) == expected


RATING_BAD = [
    ("No score given.", "no rating found"),
    ("", "no rating found"),
    ("Rating: [[number]]", "no rating found"),
    ("Rating: [[7.5]]", "non-integer rating"),
    ("Rating: [[11]]", "out of range"),
    ("Rating: [[0]]", "out of range"),
    ("Rating: [[-2]]", "out of range"),
    ("Rating: [[6]] ... actually Rating: [[12]]", "out of range"),
]


@pytest.mark.parametrize("text, reason", RATING_BAD)
def test_parse_rating_failures(text: str, reason: str) -> None:
    result = parse_rating(text)
    assert failed(result, reason), result


def test_parse_rating_custom_range() -> None:
    assert parse_rating("Rating: [[0]]", low=0, high=5) == 0
    assert failed(parse_rating("Rating: [[6]]", low=0, high=5), "0..5")


# ------------------------------------------------------------------------------------------------
# Verdicts
# ------------------------------------------------------------------------------------------------

FIG15 = """<b>'''[Instruction Following]</b> Both Model A and Model B follow the instructions well.
<b>'''[Correctness]</b> Model B offers a more detailed and accurate background.
<b>'''[Overall Judge]</b> B
"""

VERDICT_OK = [
    ("[Overall Judge] A", "A"),
    ("[Overall Judge]: Tie (both weak)", TIE_WEAK),
    ("[Overall Judge]\nB is better", "B"),
    ("[Overall Judge] Answer A", "A"),
    ("[Overall Judge]\n\nModel B", "B"),
    ("**[Overall Judge]**\n**A**", "A"),
    ("'''[Overall Judge]\n\nTie (both strong)\n'''", TIE_STRONG),
    ("[overall judge] tie (Both Strong)", TIE_STRONG),
    ("[Overall Judge] b", "B"),
    (FIG15, "B"),
    ("[[A]]", "A"),
    ("My verdict: [[B]]", "B"),
    ("[[Tie (both strong)]]", TIE_STRONG),
    ("[[tie (both weak)]]", TIE_WEAK),
    ("B", "B"),
    ("Tie (both weak)", TIE_WEAK),
    ("[Accuracy] A is more logical.\n[Overall Judge]\nA detailed comparison shows that B is better overall.", "B"),
    ("[Overall Judge]\nBoth answers are thin on facts, so this is a Tie (both weak).", TIE_WEAK),
    ("[Overall Judge]\nAfter weighing every criterion:\nVerdict: Model A", "A"),
    ("[Overall Judge] Tie - both strong", TIE_STRONG),
    ("[Overall Judge]\nTie. Both answers are equally weak on the facts.", TIE_WEAK),
    ("Overall Judge: B", "B"),
    ("[Overall Judge] B\n\n[Notes] Model A was close.", "B"),
    ("[Overall Judge] Tie", TIE),  # the prompt's own format line is A/B/Tie: a tie of unknown kind
    ("[[Tie]]", TIE),
    ("[Correctness] [[A]]\n[Overall Judge] Tie", TIE),
    ("[Overall Judge] A/B/Tie\nB", "B"),
    ("[Overall Judge]\nModel A wins on most criteria, and it is more accurate than the other one overall.", "A"),
    ("[Overall Judge]\nConsidering everything, I favor Model B since its reasoning is tighter and it "
     "cites the background knowledge correctly while avoiding redundancy.", "B"),
]


@pytest.mark.parametrize("text, expected", VERDICT_OK)
def test_parse_verdict_ok(text: str, expected: str) -> None:
    assert parse_verdict(text) == expected
    assert expected in VERDICTS


VERDICT_BAD = [
    ("[[C]]", "unknown verdict"),
    ("", "no verdict"),
    ("I think both answers have merit in different ways and the comparison is complicated; "
     "it is hard to say which is better without more context.", "no verdict"),
    ("[Overall Judge]\nA/B/Tie", "template"),
    ("[Overall Judge] Model A or Model B", "ambiguous"),
    ("[Overall Judge]\nModel A is better in correctness, but Model B is better in reasoning, which matters "
     "more to some readers than to others.", "conflicting"),
]


@pytest.mark.parametrize("text, reason", VERDICT_BAD)
def test_parse_verdict_failures(text: str, reason: str) -> None:
    result = parse_verdict(text)
    assert failed(result, reason), result


DIMS = ["Instruction Following", "Correctness", "Redundancy", "Relevance", "Accuracy", "Overall Judge"]


def test_parse_dimension_verdicts_all_present() -> None:
    text = """[Instruction Following] A
[Correctness] Tie (both weak)
[Redundancy]: B
**[Relevance]**
Model A
[Accuracy] Tie (both strong) - both reason soundly.
[Overall Judge] B"""
    assert parse_dimension_verdicts(text, DIMS) == {
        "Instruction Following": "A",
        "Correctness": TIE_WEAK,
        "Redundancy": "B",
        "Relevance": "A",
        "Accuracy": TIE_STRONG,
        "Overall Judge": "B",
    }


def test_parse_dimension_verdicts_missing_and_unreadable() -> None:
    result = parse_dimension_verdicts(FIG15, DIMS)
    assert result["Overall Judge"] == "B"
    assert failed(result["Instruction Following"], "Instruction Following")
    assert failed(result["Redundancy"], "missing section [Redundancy]")
    assert failed(result["Accuracy"], "missing")


def test_parse_dimension_verdicts_analysis_then_verdict_line() -> None:
    text = ("[Correctness]\nModel A gets the dates wrong while Model B is accurate about the history.\nB\n"
            "[Overall Judge]\n[[B]]")
    assert parse_dimension_verdicts(text, ["Correctness", "Overall Judge"]) == {"Correctness": "B",
                                                                                 "Overall Judge": "B"}


def test_parse_dimension_verdicts_plain_tie_is_a_tie() -> None:
    result = parse_dimension_verdicts("[Correctness] Tie\n[Overall Judge] A", ["Correctness", "Overall Judge"])
    assert result == {"Correctness": TIE, "Overall Judge": "A"}


# ------------------------------------------------------------------------------------------------
# Multiple choice
# ------------------------------------------------------------------------------------------------

CHOICE_SINGLE_OK = [
    ("B", (1,)),
    ("(B)", (1,)),
    ("B.", (1,)),
    ("B)", (1,)),
    ("Answer: B", (1,)),
    ("The answer is B", (1,)),
    ("The answer is: (C)", (2,)),
    ("**B**", (1,)),
    ("  D\n", (3,)),
    ("b", (1,)),
    ("(a)", (0,)),
    ("A", (0,)),
    ("A. A person holding a sign", (0,)),
    ("B) Hate speech against women", (1,)),
    ("The correct option is C.", (2,)),
    ("I think the answer is B.", (1,)),
    ("I'd go with B", (1,)),
    ("Answer: A", (0,)),
    ("Option D", (3,)),
    ("'C'", (2,)),
    ("`A`", (0,)),
    ("答案：C", (2,)),
    ("The answer is A, because the meme mocks immigrants.", (0,)),
    ("B is correct", (1,)),
    ("BB", (1,)),
]


@pytest.mark.parametrize("text, expected", CHOICE_SINGLE_OK)
def test_parse_choice_single_ok(text: str, expected: tuple[int, ...]) -> None:
    assert parse_choice(text, multi=False, n_options=4) == expected


CHOICE_MULTI_OK = [
    ("ACD", (0, 2, 3)),
    ("A, C, D", (0, 2, 3)),
    ("A C D", (0, 2, 3)),
    ("A and C", (0, 2)),
    ("Answer: BD", (1, 3)),
    ("The answers are A, B and D.", (0, 1, 3)),
    ("(A) (C)", (0, 2)),
    ("CA", (0, 2)),
    ("AAC", (0, 2)),
    ("**ABCD**", (0, 1, 2, 3)),
    ("B", (1,)),
    ("A/C", (0, 2)),
]


@pytest.mark.parametrize("text, expected", CHOICE_MULTI_OK)
def test_parse_choice_multi_ok(text: str, expected: tuple[int, ...]) -> None:
    assert parse_choice(text, multi=True, n_options=4) == expected


@pytest.mark.parametrize("text", ["N", "None", "none", "None of the above", "Answer: N", "The answer is None.", "n"])
def test_parse_choice_none_answer(text: str) -> None:
    assert parse_choice(text, multi=True, n_options=4, allow_none=True) == ()


CHOICE_BAD = [
    ("", False, 4, False, "empty"),
    ("A person is holding a sign.", False, 4, False, "no answer letter"),
    ("The meme is offensive.", False, 4, False, "no answer letter"),
    ("E", False, 4, False, "out of range"),
    ("Answer: F", False, 4, False, "out of range"),
    ("D", False, 3, False, "out of range"),
    ("AC", False, 4, False, "several options"),
    ("A, C", False, 4, False, "several options"),
    ("N", True, 4, False, "not allowed"),
    ("None of the above", False, 4, False, "not allowed"),
    ("AN", True, 4, True, "combined"),
    ("acx", True, 4, False, "no answer letter"),
    ("Either B or D might fit, hard to say", False, 4, False, "several options"),
]


@pytest.mark.parametrize("text, multi, n, allow_none, reason", CHOICE_BAD)
def test_parse_choice_failures(text: str, multi: bool, n: int, allow_none: bool, reason: str) -> None:
    result = parse_choice(text, multi=multi, n_options=n, allow_none=allow_none)
    assert failed(result, reason), result


def test_parse_choice_never_reads_words_as_letters() -> None:
    assert parse_choice("The answer is D", multi=False, n_options=4) == (3,)
    assert parse_choice("Answer: A person... no wait, Answer: C", multi=False, n_options=4) == (2,)
    assert parse_choice("There is no doubt: B", multi=False, n_options=4) == (1,)


# Replies as real chat models write them (issue 34): a letter written as a label is the answer, and the
# words after it are that option's text, read without the option list too (a reply cut at max_tokens
# quotes only part of it): all capitals, made of option letters, or beginning with "a".
@pytest.mark.parametrize(("text", "multi", "expected"), [
    ("I think the correct option is B) bad.", False, (1,)),
    ("I think the correct option is C) BLM.", False, (2,)),
    ("I think the correct option is B) CNN.", False, (1,)),
    ("I think the correct option is D) a Biden.", False, (3,)),
    ("D) a Biden.", False, (3,)),
    ("D) A Biden.", False, (3,)),
    ("B) CNN.", False, (1,)),
    ("B) bad.", False, (1,)),
    ("B)", False, (1,)),
    ("(b)", False, (1,)),
    ("(b) bad news", False, (1,)),
    ("b) bad news", False, (1,)),
    ("(d) bad", False, (3,)),
    ("The answer is (b) bad.", False, (1,)),
    ("The answer is b. bad", False, (1,)),
    ("B. CNN.", False, (1,)),
    ("I think it is C) BLM.", False, (2,)),
    ("I would go with C) Negative.", False, (2,)),
    ("I would go with D) ACE of the deck", False, (3,)),
    ("A) and C)", True, (0, 2)),
    ("(A), (C)", True, (0, 2)),
    ("The answers are (a) and (c).", True, (0, 2)),
])
def test_parse_choice_a_labelled_letter_is_the_answer_and_the_words_after_it_its_text(text, multi, expected):
    assert parse_choice(text, multi=multi, n_options=4) == expected
    options = ["good", "bad", "BLM", "a Biden"]
    assert parse_choice(text, multi=multi, n_options=4, options=options) == expected


def test_parse_choice_many_options_n_is_a_letter() -> None:
    assert parse_choice("N", multi=False, n_options=14) == (13,)
    assert parse_choice("None", multi=False, n_options=14, allow_none=True) == ()


# ------------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------------

NAMES = ["Background Knowledge", "Reasoning"]

SECTIONS_OK = [
    ("[Background Knowledge] The meme uses a stock photo.\n[Reasoning] It mocks a group.",
     {"Background Knowledge": "The meme uses a stock photo.", "Reasoning": "It mocks a group."}),
    ("**[Background Knowledge]**\nFacts here.\n\n**[Reasoning]**\nLogic here.",
     {"Background Knowledge": "Facts here.", "Reasoning": "Logic here."}),
    ("[Background Knowledge]: Facts.\n[Reasoning]: Logic.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic."}),
    ("**[Background Knowledge]:** Facts.\n**[Reasoning]:** Logic.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic."}),
    ("<b>[Background Knowledge]</b> Facts.\n<b>[Reasoning]</b> Logic.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic."}),
    ("[background knowledge]\nFacts.\n[REASONING]\nLogic.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic."}),
    ("[Background Knowledge] Facts. [Reasoning] Logic on one line.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic on one line."}),
    ("[Background Knowledge]\n1. Point one\n2. Point two\n[Conclusion] extra\n[Reasoning]\nIt builds on "
     "the [Background Knowledge] above.",
     {"Background Knowledge": "1. Point one\n2. Point two\n[Conclusion] extra",
      "Reasoning": "It builds on the [Background Knowledge] above."}),
    ("Background Knowledge: Facts.\nReasoning: Logic.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic."}),
    ("### Background Knowledge\nFacts.\n### Reasoning\nLogic.",
     {"Background Knowledge": "Facts.", "Reasoning": "Logic."}),
    ("[Background Knowledge]: **Bold** facts.\n[Reasoning]: Logic.",
     {"Background Knowledge": "**Bold** facts.", "Reasoning": "Logic."}),
]


@pytest.mark.parametrize("text, expected", SECTIONS_OK)
def test_parse_sections_ok(text: str, expected: dict[str, str]) -> None:
    assert parse_sections(text, NAMES) == expected


def test_parse_sections_missing_reports_names() -> None:
    result = parse_sections("[Background Knowledge] Facts only.", NAMES)
    assert failed(result, "missing sections: Reasoning")
    assert parse_sections_partial("[Background Knowledge] Facts only.", NAMES) == {
        "Background Knowledge": "Facts only."
    }


def test_parse_sections_empty_counts_as_missing() -> None:
    result = parse_sections("[Background Knowledge]\n\n[Reasoning] Logic.", NAMES)
    assert failed(result, "Background Knowledge")
    assert parse_sections_partial("no headers at all", NAMES) == {}


def test_parse_sections_synthesized_answer() -> None:
    text = "Comparing Answer 1 and Answer 2...\n\n[Synthesized Answer]\nThe meme targets ...\nMore lines."
    assert parse_sections(text, ["Synthesized Answer"]) == {"Synthesized Answer": "The meme targets ...\nMore lines."}


# ------------------------------------------------------------------------------------------------
# Final response
# ------------------------------------------------------------------------------------------------

FINAL_OK = [
    ("Analysis...\n## Final Response:\nThe meme is harmful.", "The meme is harmful."),
    ("## Final Response: The meme is harmful.", "The meme is harmful."),
    ("**Final Response:**\nThe meme is harmful.", "The meme is harmful."),
    ("Final Response: Short.", "Short."),
    ("## ``markdown\n\n## ## Final Response:\n\nThe meme raises concerns.\n\n- 1. **Point**",
     "The meme raises concerns.\n\n- 1. **Point**"),
    ("## Final Response:\ndraft\n## Final Response:\nfinal text", "final text"),
    ("### Final Response\n```markdown\nWrapped text\n```", "Wrapped text"),
    ("**Final Response**: Bold then colon.", "Bold then colon."),
]


@pytest.mark.parametrize("text, expected", FINAL_OK)
def test_parse_final_response_ok(text: str, expected: str) -> None:
    assert parse_final_response(text) == expected


@pytest.mark.parametrize("text, reason", [
    ("The best answer is the second one.", "no final response header"),
    ("My final response quality is good", "no final response header"),
    ("## Final Response:\n\n", "empty final response"),
])
def test_parse_final_response_failures(text: str, reason: str) -> None:
    assert failed(parse_final_response(text), reason)


# ------------------------------------------------------------------------------------------------
# Labelled lines
# ------------------------------------------------------------------------------------------------

USERS = """[USER 1]: A person who follows U.S. politics closely.
[USER 2]: A person with a general interest in news.
They read headlines daily.
[USER 3]: A person who meets the meme by chance."""


def test_parse_labelled_lines_basic() -> None:
    assert parse_labelled_lines(USERS, "USER", 3) == [
        "A person who follows U.S. politics closely.",
        "A person with a general interest in news.\nThey read headlines daily.",
        "A person who meets the meme by chance.",
    ]


@pytest.mark.parametrize("text", [
    "**[USER 1]:** One.\n**[USER 2]:** Two.\n**[USER 3]:** Three.",
    "[User 1] One.\n[User 2] Two.\n[User 3] Three.",
    "User 1: One.\nUser 2: Two.\nUser 3: Three.",
    "<p>[USER 1]: One.</p> <p>[USER 2]: Two.</p> <p>[USER 3]: Three.</p>",
    "[USER 3]: Three.\n[USER 1]: One.\n[USER 2]: Two.",
    "[USER 1]: One.\n[USER 2]: Two.\n[USER 3]: Three.\n[TASK 1]: Explain the risks...",
])
def test_parse_labelled_lines_variants(text: str) -> None:
    assert parse_labelled_lines(text, "USER", 3) == ["One.", "Two.", "Three."]


def test_parse_labelled_lines_too_few() -> None:
    result = parse_labelled_lines("[USER 1]: One.\n[USER 2]: Two.", "USER", 3)
    assert failed(result, "missing 3")


# ------------------------------------------------------------------------------------------------
# Yes / No
# ------------------------------------------------------------------------------------------------

YES_NO = [
    ("Yes", True),
    ("yes, the category is unique.", True),
    ("No.", False),
    ("  **No**, it overlaps with race.", False),
    ('"Yes" - this meme carries that risk.', True),
    ("> YES", True),
    ("Answer: No", False),
    ("### Yes\nExplanation", True),
    ("The answer is yes", True),  # a person reads yes
    ("I would say no, it overlaps with politics.", False),
]


@pytest.mark.parametrize("text, expected", YES_NO)
def test_starts_yes_no(text: str, expected: bool) -> None:
    assert starts_yes_no(text) is expected


@pytest.mark.parametrize("text", ["", "Maybe", "Nope", "None of the above", "Yesterday it was", "Yes/No",
                                  "I think no other category covers this, so yes."])
def test_starts_yes_no_failures(text: str) -> None:
    assert failed(starts_yes_no(text))


# ------------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------------

LONG_ANALYSIS = ("The meme juxtaposes a stock photo with a caption about immigration. " * 20
                 + "Some platforms say 'I'm sorry, but I can't help with that' to such requests.")

REFUSALS = [
    ("", True),
    ("   ", True),
    ("I'm sorry, but I can't help with that.", True),
    ("I cannot help with analyzing this content.", True),
    ("I can't assist with that request.", True),
    ("As an AI, I don't share opinions on memes.", True),
    ("Sorry, I cannot provide an evaluation of this meme.", True),
    ("I must respectfully decline to rewrite this meme.", True),
    ("抱歉，我无法回答这个问题。", True),
    ("拒答", True),
    ("I’m unable to provide that.", True),
    ("The meme targets women by reinforcing stereotypes. Rating: [[6]]", False),
    (LONG_ANALYSIS, False),
    ("This meme is harmful because it mocks people with disabilities.", False),
    ("B", False),
]


@pytest.mark.parametrize("text, expected", REFUSALS)
def test_looks_like_refusal(text: str, expected: bool) -> None:
    assert looks_like_refusal(text) is expected


# ------------------------------------------------------------------------------------------------
# Shared contract
# ------------------------------------------------------------------------------------------------

PARSERS = [
    lambda t: parse_json(t),
    lambda t: parse_rating(t),
    lambda t: parse_verdict(t),
    lambda t: parse_choice(t, multi=True, n_options=4, allow_none=True),
    lambda t: parse_sections(t, NAMES),
    lambda t: parse_final_response(t),
    lambda t: parse_labelled_lines(t, "USER", 3),
    lambda t: starts_yes_no(t),
]
NASTY = ["", "\x00\x01", "{" * 300, "[[" * 300, "]]]]", "\u202e\ufeff", "**" * 500, "a" * 100_000, None]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("text", NASTY)
def test_parsers_never_raise(parser, text) -> None:
    result = parser(text)
    if isinstance(result, ParseFailure):
        assert len(result.text) <= 500 and result.reason


def test_explicit_decision_label_beats_the_opening_mention() -> None:
    text = "[Correctness]\nModel A is thorough, but Model B ties it to the meme better.\nDecision: B\n[Overall Judge] B"
    assert parse_dimension_verdicts(text, ["Correctness"]) == {"Correctness": "B"}


@pytest.mark.parametrize("reply", ["A) Biden, C) Trump", "The correct options are A) Biden and C) Trump.",
                                   "(A) Biden, (C) Trump", "A) Biden and C) Trump"])
def test_several_options_labelled_with_their_texts_are_all_read(reply):
    """Each label's words are its option's text, and a separator then another label adds that option:
    A and C on a multi-answer question, and the failure "several options" on a single-answer one."""
    options = ["Biden", "Obama", "Trump", "None of the above"]
    assert parse_choice(reply, multi=True, n_options=4, options=options) == (0, 2)
    assert parse_choice(reply, multi=True, n_options=4) == (0, 2)
    single = parse_choice(reply, multi=False, n_options=4, options=options)
    assert isinstance(single, ParseFailure) and "several options" in single.reason


@pytest.mark.parametrize("reply, expected", [
    ("I think the correct option is B) Obama. Option A) is wrong.", (1,)),
    ("The answer is B) Obama. Option A) is not right.", (1,)),
    ("Option C) is incorrect. The correct option is B) Obama.", (1,)),
    ("B) Obama, not A)", (1,)),
    ("Answer: A person... no wait, Answer: C", (2,)),
])
def test_a_later_sentence_discussing_another_option_does_not_answer(reply, expected):
    """An asserted answer ("correct option is", "Answer:") wins over a bare mention ("Option A)"), and a
    mention framed as wrong names no answer; of several asserted answers the last still wins."""
    options = ["Biden", "Obama", "Trump", "None of the above"]
    assert parse_choice(reply, multi=False, n_options=4, options=options) == expected
