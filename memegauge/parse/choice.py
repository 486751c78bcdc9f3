"""Multiple-choice answers: option letters (one or several, or none), read from what models write."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memegauge.parse.text import as_text, fail, strip_reasoning
from memegauge.types import ParseFailure


_NONE_MARK = "-"
_CHOICE_NOISE = re.compile(r"[*`_#>\"“”‘]|(?<![A-Za-z])['’]|['’](?![A-Za-z])|</?[A-Za-z][^<>\n]{0,20}>")
_TOKEN = re.compile(r"([(\[]?)([A-Z]{1,26})([)\]]?\.?)(?![A-Za-z0-9'’])")
_SEPARATOR = re.compile(r"\s*(?:[,;/&+]|\band\b|\bor\b)?\s*")
_TOKEN_START = re.compile(r"(?<![A-Za-z0-9'’])[(\[]?[A-Z]")
_EXPLICIT = re.compile(
    r"(?i:\b(?:final\s+|correct\s+)?(?:answers?|choices?|options?|selections?|letters?)\b|答案)"
    r"(?:\s+(?i:is|are|would\s+be|should\s+be|will\s+be))?\s*[:：=\-]?\s*"
)
_NONE_WHOLE = re.compile(r"(?i)\W*(?:none(?:\s+of\s+(?:the\s+)?(?:above|options|them))?"
                         r"|no\s+(?:correct\s+)?options?)\W*")
_NONE_LEAD = re.compile(r"(?i)\W*none\b")
_LOWER_WHOLE = re.compile(r"\W*[(\[]?([a-z])[)\]]?\W*")
# "A" and "I" are words; followed by a lowercase word they are an article or a pronoun, unless
# that word is one that joins or asserts answer letters.
_CONNECTORS = {"and", "or", "is", "are", "was", "were", "would", "should", "seems", "only", "both", "as",
               "because", "since", "given", "due"}
# ... but "I" before these is the pronoun ("I would go with B)", "I was unsure"), as "A" before them is rare
_PRONOUN_VERBS = {"would", "should", "was", "were"}


def parse_choice(
    text: str, multi: bool, n_options: int, allow_none: bool = False,
    options: Sequence[str] | None = None,
) -> tuple[int, ...] | ParseFailure:
    """Read multiple-choice letters (MemeQA) as sorted 0-based option indexes.

    Accepted: ``B``, ``(B)``, ``B.``, ``B)``, ``**B**``, ``Answer: B``, ``The answer is B``,
    ``Option B``, ``ACD``, ``A, C, D``, ``A C D``, ``A and C``; ``N``/``None``/``None of the above``
    give ``()`` when ``allow_none``, else a failure. Precedence: the last explicit "answer is X" /
    "Answer: X"; else the answer's first token; else, the single distinct letter group that appears
    anywhere (two different groups are ambiguous). Letters must be capitals standing alone or in a
    compact run ("ACD"); "A"/"I" followed by an ordinary lowercase word are read as English. A lone
    lowercase letter ("b") counts when it is the whole answer or opens it as a label ("(b) bad", "b) bad").
    A letter written as a label ("B)", "(B)") is the answer and the words after it are that option's text,
    whatever they look like: "I think the correct option is C) BLM." is C, "D) a Biden." is D; more
    letters follow only as labels too ("A) and C)"), or as labels after an option's text and a separator
    within the sentence ("A) Biden, C) Trump", "(A) Biden and (C) Trump" are A and C). An asserting
    "answer is X" / "Answer: X" / "correct option is X" wins over a bare "Option X", and a mention framed
    as wrong ("Option A) is wrong.") is no answer. Duplicates collapse. Letters
    past ``n_options``, several letters when ``multi`` is False, and "N" mixed with letters are
    failures. With 14 or more options "N" is the 14th letter and only the word "None" means none.

    With ``options`` (the option texts as shown), a reply is also read by what it quotes: the whole
    reply being one option's text ("None of the above" in None+ is that option, not 'N'), or lines
    that each give a letter and that option's text ("A. CDC" is A, not ACDC; "A. Biden is" and
    "C. Trump is" on two lines are AC). Lowercase letters count after an explicit "answer is"
    ("The answer is (b).") and as a whole reply of valid letters ("ac"). ``<think>`` blocks are
    never read.
    """
    text = as_text(text)
    answer, _ = strip_reasoning(text)
    cleaned = _CHOICE_NOISE.sub("", answer).strip()
    if not cleaned:
        return fail("empty answer", text)
    letters = _option_text_letters(cleaned, options, n_options) if options else ""
    letters = letters or _choice_letters(cleaned, n_options)
    if not letters:
        return fail("no answer letter found", text)
    return _validate_choice(letters, multi, n_options, allow_none, text)


def _normal_option(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


_OPTION_LINE = re.compile(r"^\W*?[(\[]?([A-Za-z])[)\].:]\s*(.*)$")


def _option_text_letters(cleaned: str, options: Sequence[str], n_options: int) -> str:
    """Letters read from quoted option texts (see `parse_choice`), or "" when the reply is not so."""
    normal = [_normal_option(o) for o in options[:n_options]]
    if _NONE_WHOLE.fullmatch(cleaned) and normal.count("none of the above") == 1:
        return chr(65 + normal.index("none of the above"))  # None+: "None" is that option
    if re.fullmatch(r"\W*[(\[]?[A-Za-z]{1,4}[)\].]?\W*", cleaned):
        return ""  # a bare letter group is letters, even where an option reads "a" (MemeQA has one)
    whole = _normal_option(re.sub(r"(?i)^\W*(?:the\s+)?(?:final\s+|correct\s+)?answer\s*(?:is|:)\s*", "", cleaned))
    if whole and whole in normal and normal.count(whole) == 1:
        return chr(65 + normal.index(whole))
    lines = [line for line in cleaned.splitlines() if line.strip()]
    while lines and _EXPLICIT.fullmatch(lines[0].strip()):
        lines = lines[1:]  # an "Answer:" line above the option lines
    letters = ""
    for line in lines:
        m = _OPTION_LINE.match(line.strip())
        if not m:
            return ""
        index = ord(m.group(1).upper()) - 65
        if _TEXT_THEN_LABEL.match(m.group(2)):
            return ""  # "A) Biden, C) Trump": several labels on one line, read as letters
        quoted = _normal_option(m.group(2))
        if not 0 <= index < len(normal) or not quoted:
            return ""
        shown = normal[index]
        if not (shown.startswith(quoted) or quoted.startswith(shown)):
            return ""  # the text after the letter is not that option's: not an option line
        letters += m.group(1).upper()
    return letters


def _lower_letters(cleaned: str, n_options: int) -> str:
    """A whole reply of lowercase letters ("b", "ac", "a, c"), all of them valid option letters."""
    tokens = [t for t in re.split(r"[\s,;/&+()\[\].]+|\band\b", cleaned) if t]
    if not tokens or not all(re.fullmatch(r"[a-z]{1,26}", t) for t in tokens):
        return ""
    if len(tokens) > 1 and any(len(t) > 1 for t in tokens):
        return ""  # "(e) bad": a letter and a word (the option's text), not the letters e, b, a, d
    letters = "".join(tokens)
    valid = {chr(97 + i) for i in range(n_options)}
    return letters.upper() if set(letters) <= valid else ""


def _choice_letters(cleaned: str, n_options: int) -> str:
    if _NONE_WHOLE.fullmatch(cleaned):
        return _NONE_MARK
    lower = _LOWER_WHOLE.fullmatch(cleaned)
    if lower:
        return lower.group(1).upper()
    lowers = _lower_letters(cleaned, n_options)
    if lowers:
        return lowers
    letters = _explicit_letters(cleaned, n_options)
    if letters:
        return letters
    if _LOWER_LABEL.match(cleaned):  # "(b) bad news", "b) bad": a lowercase option label opening the reply
        return _letter_group(cleaned, 0, lowercase_ok=True, n_options=n_options)[0]
    return _letter_group(cleaned, 0)[0] or _unique_group(cleaned, n_options)


def _explicit_letters(cleaned: str, n_options: int) -> str:
    """The letters an explicit mention gives: the last one that asserts ("answer is", "Answer:",
    "correct option is") wins over bare mentions ("Option A)"), and a mention framed as wrong
    ("Option A) is wrong", "answer is not B") gives nothing: it discusses an option, it does not answer."""
    found: list[tuple[bool, str]] = []
    for m in _EXPLICIT.finditer(cleaned):
        letters, end = _letter_group(cleaned, m.end(), lowercase_ok=True, n_options=n_options)
        if letters and not _NEGATED.match(cleaned, end):
            found.append((bool(_ASSERTS.search(m.group(0))), letters))
    asserted = [letters for asserts, letters in found if asserts]
    return (asserted or [letters for _, letters in found] or [""])[-1]


# an explicit mention asserts when it has a verb, a colon or "final"/"correct" ("Option B" alone only names)
_ASSERTS = re.compile(r"(?i)\b(?:is|are|be|final|correct)\b|[:：=]|答案")
_NEGATED = re.compile(r"(?i)\W*(?:is|are|was|seems)\s+(?:not\b|wrong\b|incorrect\b|false\b)")


_LOWER_LABEL = re.compile(r"[(\[][a-z][)\]]|[a-z][)\]](?!\S)")


_LOWER_TOKEN = re.compile(r"([(\[]?)([a-z]{1,26})([)\]]?\.?)(?![A-Za-z0-9'’])")


def _letter_group(s: str, pos: int, lowercase_ok: bool = False, n_options: int = 26) -> tuple[str, int]:
    """The letter group at ``s[pos:]`` ("A, C and D" → "ACD") and where it ends; "" if none.

    After an explicit "answer is", lowercase option letters count too ("(b)", "ac"), unless they
    read as a word ("a good one"). A letter the reply marks as its answer is followed by that option's
    text, never by more letters (`_continues`): "B) bad.", "C) BLM.", "D) a Biden." are B, C and D.
    """
    none = _NONE_LEAD.match(s, pos)
    if none:
        return _NONE_MARK, none.end()
    letters, end, previous = "", pos, None
    while True:
        m = _TOKEN.match(s, pos)
        if m is None and lowercase_ok:
            m = _LOWER_TOKEN.match(s, pos)
            if m and (set(m.group(2)) - {chr(97 + i) for i in range(n_options)} or _reads_as_word(m, s)
                      or (len(m.group(2)) == 1 and m.group(2) in "ai" and not (m.group(1) or m.group(3))
                          and re.match(r"\s+[a-z]", s[m.end():]))):
                m = None
        if previous is not None and _bracketed(previous) and (m is None or not _bracketed(m)):
            m = _next_label(s, end)  # "A) Biden, C) Trump": past the option's text to the next label
        if m is None or _reads_as_word(m, s):
            break
        if previous is not None and not _continues(previous, m, s[end:m.start()]):
            break
        letters, end, previous = letters + m.group(2).upper(), m.end(), m
        pos = _SEPARATOR.match(s, m.end()).end()
    return letters, end


# a label's option text (within its sentence: no . ! ? ; or newline), a separator, then the next label
_TEXT_THEN_LABEL = re.compile(r"[^.!?;\n,]*?\s*(?:,\s*(?:and\s+|&\s*)?|\s(?:and|&|\+)\s+)(?=[(\[]?[A-Z][)\]])")


def _next_label(s: str, end: int) -> re.Match | None:
    """The label that follows the option text after the label ending at `end`, or None: "A) Biden and
    C) Trump" and "(A) Biden, (C) Trump" name A and C; the text must stay in its sentence and end at a
    separator, so "B) Obama. Option A) is wrong." names only B."""
    gap = _TEXT_THEN_LABEL.match(s, end)
    if gap is None:
        return None
    m = _TOKEN.match(s, gap.end())
    return m if m and _bracketed(m) and len(m.group(2)) == 1 else None


def _bracketed(m: re.Match) -> bool:
    """The token is written as an option label: "(B)", "B)", "[b]" (a full stop alone is not enough)."""
    return bool(m.group(1)) or any(c in m.group(3) for c in ")]")


def _continues(previous: re.Match, m: re.Match, gap: str) -> bool:
    """Whether token `m` adds letters to the group that `previous` ended, `gap` between them.

    After a bracketed letter ("B)", "(B)") only another bracketed one does ("A) and C)", "(A), (C)"): the
    words after it are the option's text, whatever their case ("B) CNN.", "B) bad.", "D) a Biden.").
    After "A." a lowercase word or a run of capitals with no separator is the text ("A. CDC", "b. bad");
    a single capital is another letter ("A. C").
    """
    if _bracketed(previous):
        return _bracketed(m)
    if not (previous.group(1) or previous.group(3)):
        return True
    if m.group(2).islower():
        return _bracketed(m)
    separated = re.search(r"[,;/&+]|\band\b|\bor\b", gap)
    return bool(separated) or len(m.group(2)) == 1 or _bracketed(m)


def _reads_as_word(m: re.Match, s: str) -> bool:
    if m.group(1) or m.group(3) or m.group(2) not in ("A", "I", "a", "i"):
        return False
    following = re.match(r"\s+([a-z]+)", s[m.end():])
    if following and m.group(2) in "Ii" and following.group(1) in _PRONOUN_VERBS:
        return True  # "I would go with C)": the pronoun, not option I
    return bool(following) and following.group(1) not in _CONNECTORS


def _unique_group(s: str, n_options: int) -> str:
    valid = {chr(65 + i) for i in range(n_options)} | {"N"}
    groups, covered = set(), 0
    for m in _TOKEN_START.finditer(s):
        if m.start() < covered:
            continue
        group, covered = _letter_group(s, m.start())
        if group and s[covered - 1] in ")]":  # a label: the rest of its line is the option's text
            covered = s.find("\n", covered) % (len(s) + 1)
        if group and group != _NONE_MARK and set(group) <= valid:
            groups.add(group)
    return groups.pop() if len(groups) == 1 else ""


def _validate_choice(letters: str, multi: bool, n_options: int, allow_none: bool, text: str):
    if n_options <= 13:  # "N" is not an option letter, so it is the none-answer
        letters = letters.replace("N", _NONE_MARK)
    if _NONE_MARK in letters:
        if not allow_none:
            return fail("'none of the options' answer not allowed here", text)
        if set(letters) != {_NONE_MARK}:
            return fail("'N' (none) combined with option letters", text)
        return ()
    beyond = sorted({c for c in letters if ord(c) - 65 >= n_options})
    if beyond:
        return fail(f"option {', '.join(beyond)} out of range ({n_options} options)", text)
    indexes = tuple(sorted({ord(c) - 65 for c in letters}))
    if not multi and len(indexes) > 1:
        return fail("several options for a single-answer question", text)
    return indexes
