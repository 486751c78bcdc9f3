"""The test server's ``--style realistic``: answers shaped the way real chat models write them.

The strict style always answers in the requested format. Real models do not: they say "The answer is
(b).", quote an option's text, give a plain "Tie", put a ``<think>`` block first, end a judgment block
with "Verdict: Model B", write "Rating: 7/10", refuse, or wrap JSON in prose. This module decides what
the model *means* first (the same choice the strict style makes) and then writes it in one of those
shapes, picked by the request's own RNG, so every reply is deterministic per request.

Every reply a person can read is recorded as **ground truth**: what it means, keyed by the sha256 of
the reply text (`truth_key`). Tests look up each stored answer there and compare the report's
figures with what the server meant. A reply no person could read either ("I can't tell from the
picture.") is recorded as ``{"kind": ..., "readable": False}``: the report must count it as a parse
failure, never as an answer.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

REFUSAL = "I'm sorry, but I can't help with analysing this content."
_THINK_OPENERS = ("Let me look at the options.", "The picture and text matter here.", "Checking each option.")


def truth_key(text: str) -> str:
    """The key of a reply in the ground-truth table: sha256 of its exact text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_THINK_PREFIX = re.compile(r"^<think>.*?</think>\n?", re.S)


def stored_forms(reply: str) -> list[str]:
    """The reply as sent, and as a client stores its answer when it keeps the leading ``<think>``
    block apart (this module's replies put reasoning only there)."""
    answer = _THINK_PREFIX.sub("", reply, count=1).strip()
    return [reply] if answer == reply else [reply, answer]


# --------------------------------------------------------------------------------------------------
# Multiple choice (MemeQA)
# --------------------------------------------------------------------------------------------------

_OPTION_TEXT = re.compile(r"(?m)^[ \t]*\(([A-Z])\)[ \t]+(.*\S)[ \t]*$")


def option_texts(prompt: str) -> dict[str, str]:
    """{letter: option text} of the last option list in the prompt."""
    found: dict[str, str] = {}
    for m in _OPTION_TEXT.finditer(prompt):
        if m.group(1) == "A":
            found = {}
        found[m.group(1)] = m.group(2)
    return found


def choice_reply(rng, letters: str, options: dict[str, str], budget: int | None) -> tuple[str, dict[str, Any]]:
    """A reply meaning `letters` ("" = none, written 'N' where the prompt allows it), in a real shape
    that fits in `budget` words; 1 in 20 replies is one no person could read."""
    if rng.random() < 0.05:
        return "I can't tell which option is right from this meme.", {"kind": "choice", "readable": False}
    shapes = [_plain, _sentence, _because, _lower, _option_lines, _think, _bold, _none_text, _label_sentence,
              _label_first, _lower_label, _lower_labels, _labels_with_texts, _label_then_ruled_out]
    rng.shuffle(shapes)
    for shape in shapes:
        text = shape(rng, letters, options)
        if text and budget is not None and shape in _CUT_AT_BUDGET:
            text = " ".join(text.split()[:budget])  # cut at max_tokens, as a model's reply is
        if text and (budget is None or len(text.split()) <= budget):
            return text, {"kind": "choice", "readable": True, "letters": letters or "N"}
    return letters or "N", {"kind": "choice", "readable": True, "letters": letters or "N"}


def _plain(rng, letters, options):
    return letters or "N"


def _sentence(rng, letters, options):
    if len(letters) != 1:
        return None
    return rng.choice(("The answer is ({}).", "Answer: {}", "I would choose option ({}).")).format(letters.lower())


def _because(rng, letters, options):
    if not letters:
        return None
    return f"{letters} because the text and picture point to it."


def _lower(rng, letters, options):
    return letters.lower() if len(letters) >= 1 else None


def _option_lines(rng, letters, options):
    if not letters or any(c not in options for c in letters):
        return None
    return "\n".join(f"{c}. {options[c]}" for c in letters)


def _think(rng, letters, options):
    return f"<think>{rng.choice(_THINK_OPENERS)}</think>\n{letters or 'N'}"


def _bold(rng, letters, options):
    return f"**Answer:** {letters or 'N'}"


def _none_text(rng, letters, options):
    """"None of the above" when the meant option is that option (None+), or the 'N' answer."""
    if len(letters) == 1 and options.get(letters, "").lower() == "none of the above":
        return "None of the above"
    return None


def _label_sentence(rng, letters, options):
    """The letter written as a label, then the option's own text (which may be all capitals, made of option
    letters, or start with "a"): "I think the correct option is C) BLM."."""
    if len(letters) != 1 or letters not in options:
        return None
    opener = rng.choice(("I think the correct option is", "The correct answer is", "I would go with"))
    return f"{opener} {letters}) {options[letters]}."


def _label_first(rng, letters, options):
    """"B) CNN.": the label opens the reply."""
    if len(letters) != 1 or letters not in options:
        return None
    return f"{letters}) {options[letters]}."


def _lower_label(rng, letters, options):
    """"(b) bad news": a lowercase label opening the reply, then the option's text."""
    if len(letters) != 1 or letters not in options:
        return None
    return f"({letters.lower()}) {options[letters]}"


def _lower_labels(rng, letters, options):
    """"The correct options are (a) and (c).": several letters, each written as a label."""
    if len(letters) < 2:
        return None
    return "The correct options are " + " and ".join(f"({c.lower()})" for c in letters) + "."


def _plain_text(text: str) -> bool:
    """An option text the parser reads past to the next label: one clause (no sentence or list mark)."""
    return bool(text) and not re.search(r"[.!?;,\n]|\b(?:and)\b|&|\+|[(\[][A-Z][)\]]|\b[A-Z][)\]]", text)


def _labels_with_texts(rng, letters, options):
    """"The correct options are A) Biden and C) Trump.", "(A) Biden, (C) Trump": several labels, each
    followed by its option's text."""
    if len(letters) < 2 or any(c not in options or not _plain_text(options[c]) for c in letters):
        return None
    bracket = rng.choice(("{c}) {t}", "({c}) {t}"))
    labelled = [bracket.format(c=c, t=options[c]) for c in letters]
    return rng.choice(("{}", "The correct options are {}.")).format(
        rng.choice((", ", " and ")).join(labelled))


def _label_then_ruled_out(rng, letters, options):
    """"I think the correct option is B) Obama. Option A) is wrong.": a later sentence discussing
    another option does not answer."""
    others = [c for c in options if c != letters]
    if len(letters) != 1 or letters not in options or not others:
        return None
    ruled_out = f"Option {rng.choice(others)}) is {rng.choice(('wrong', 'not right', 'incorrect'))}."
    if rng.random() < 0.5:  # short enough for a small max_tokens
        return f"The correct option is {letters}). {ruled_out}"
    return f"I think the correct option is {letters}) {options[letters]}. {ruled_out}"


# shapes whose reply is cut at the word budget (max_tokens) rather than left out: the label survives the cut
_CUT_AT_BUDGET = {_label_sentence, _label_first, _lower_label}


# --------------------------------------------------------------------------------------------------
# MemeArena judgments
# --------------------------------------------------------------------------------------------------

def _named(verdict: str) -> str:
    return {"A": "Model A", "B": "Model B"}.get(verdict, verdict)


def verdict_block(rng, name: str, verdict: str, analysis: str) -> str:
    """One dimension's block: analysis, then its decision in one of the shapes judges use."""
    word = _named(verdict)
    shapes = [
        f"[{name}]\n{analysis}\nVerdict: {word}",
        f"**[{name}]**: {analysis}\n**Decision:** {verdict}",
        f"[{name}] {verdict} — {analysis}",
        f"'''[{name}]\n\n{analysis}\n{verdict}\n'''",
        f"### {name}\n{analysis}\nWinner: {word}",
        f"[{name}]: {analysis}\n→ {verdict}",
    ]
    if verdict in ("A", "B"):  # praise for the other answer first: the decision must still win
        other = "Model B" if verdict == "A" else "Model A"
        shapes += [f"[{name}]\n{other} is more detailed, but {word} is more accurate. Overall, {word} is "
                   "better here.",
                   f"[{name}]\n{analysis} {other} is more verbose on this point.\nJudgment: {verdict}"]
    return rng.choice(shapes)


def overall_block(rng, verdict: str) -> str:
    """The overall verdict; one shape echoes the prompt's own "A/B/Tie" line before answering."""
    shapes = (
        f"[Overall Judge]\n{verdict}",
        f"**[Overall Judge]**: {_named(verdict)}",
        f"'''[Overall Judge]\n\n{verdict}\n'''",
        f"[Overall Judge] A/B/Tie\n{verdict}",
    )
    return rng.choice(shapes)


def judge_analysis(rng, verdict: str, a: str, b: str, quote_refusal: bool) -> str:
    """Analysis that names both answers without deciding (the decision line decides)."""
    text = rng.choice((
        f"Model A discusses {a}, while Model B spends more words on {b}.",
        f"Both answers mention {a}; they differ in how they treat {b}.",
        f"The reference stresses {a}. Model A and Model B each cover part of it.",
    ))
    if quote_refusal:
        text += f" One answer only says '{REFUSAL}', which ignores the task."
    return text


def judgment_reply(rng, dims: list[tuple[str, str]], overall: str, pair_words: tuple[str, str],
                   quote_refusal: bool) -> tuple[str, dict[str, Any]]:
    """A full judgment meaning `dims` ([(name, verdict)]) and `overall`, optionally thinking first."""
    a, b = pair_words
    blocks = [verdict_block(rng, name, v, judge_analysis(rng, v, a, b, quote_refusal and i == 0))
              for i, (name, v) in enumerate(dims)]
    text = "\n\n".join([*blocks, overall_block(rng, overall)])
    if rng.random() < 0.2:
        text = f"<think>Compare both answers against the reference on {a}.</think>\n{text}"
    return text, {"kind": "verdict", "readable": True, "dimensions": dict(dims), "overall": overall}


# --------------------------------------------------------------------------------------------------
# AdamMeme ratings
# --------------------------------------------------------------------------------------------------

def rating_reply(rng, n: int, first: str, refused: bool) -> tuple[str, dict[str, Any]]:
    """A Scorer's comment and its rating `n` in one of the shapes scorers write; when the judged
    answer is a refusal the comment quotes it (which must not make the Scorer a refuser)."""
    if refused:
        first = (f"The assistant replied '{REFUSAL}' and gave no analysis of the meme, so it misses "
                 "every point of the reference.")
    shapes = (f"{first}\nRating: [[{n}]]", f"{first}\n\n**Rating:** [[{n}]]", f"{first} Rating: {n}/10",
              f"{first}\n### Rating: {n}", f"<think>Compare with the reference.</think>\n{first}\nRating: [[{n}]]")
    return rng.choice(shapes), {"kind": "rating", "readable": True, "rating": n}


# --------------------------------------------------------------------------------------------------
# Other formats: same content, the headers and openings real models vary
# --------------------------------------------------------------------------------------------------

_FINAL_HEADERS = ("## Final Response:", "**Final Response:**", "### Final Response", "Final Response:")


def restyle(rng, rule: str, text: str) -> str:
    """JSON in prose, bold section headers, Yes/No answers, ``## Final Response:`` headers and
    ``[USER n]:`` labels as real models write them."""
    if rule == "json_text":
        return f"Here is the JSON you asked for:\n```json\n{text}\n```\nLet me know if you need more."
    if rule == "background" and rng.random() < 0.5:
        return "**" + text.replace("[Reasoning]", "\n**[Reasoning]**").replace("] ", "]**\n", 1)
    if rule == "yes_no":
        word, _, rest = text.partition(". ")
        return rng.choice((f"**{word}** — {rest}", f"Answer: {word}. {rest}",
                           f"I would say {word.lower()}, {rest[:1].lower()}{rest[1:]}", text))
    if rule.startswith("final_response+"):
        return text.replace("## Final Response:", rng.choice(_FINAL_HEADERS), 1)
    if rule == "users":
        return rng.choice((text, re.sub(r"\[USER (\d)\]:", r"**[USER \1]:**", text),
                           re.sub(r"\[USER (\d)\]:", r"User \1:", text)))
    return text
