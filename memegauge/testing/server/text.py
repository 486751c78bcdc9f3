"""The server's answers: rules that recognise what a prompt asks and write an answer in that format."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from itertools import islice
from typing import Any
from collections.abc import Callable

from memegauge.testing import realistic
from memegauge.testing.server.config import model_quality


_WORD_RE = re.compile(r"[a-z][a-z'\-]{2,}[a-z]")  # on lowercased text
_STOPWORDS = frozenset(
    """
    about above after again against also among another answer answers any anything are around
    because been before being below between both cannot could does doing down during each either
    else even every following format from further given have having here however into itself just
    like make many meme memes might more most much must need never only other others ought over
    own please provide rather response responses same should since some such than that their
    theirs them themselves then there these they this those through under until upon very want
    were what when where which while whom whose will with within without would your yours
    yourself text image images user users model models question task output following below
    background knowledge reasoning synthesized final rating number overall judge instruction
    instructions correctness redundancy relevance accuracy analysis analyse analyze compare explain
    describe notably crucially assistant assistant's reference return json description select
    letter letters option options alphabetical order first best three respond start strictly
    evaluate evaluation based potential write given
    """.split()
)
_QUOTED_RE = re.compile(r'"([^"\n]{3,300})"|“([^”\n]{3,300})”')
_FALLBACK_WORDS = (
    "humour", "audience", "stereotype", "context", "culture", "irony", "caption", "picture",
    "community", "history", "satire", "identity",
)  # fmt: skip
_HOBBIES = ("gardening", "cycling", "baking", "chess", "birdwatching", "woodworking", "astronomy")

_PROSE = (
    "The meme links {a} with {b}, and the joke depends on that connection.",
    "Readers who know about {a} will likely take it as a comment on {b}.",
    "Its wording frames {a} in a way that invites a reaction about {b}.",
    "The picture and the caption together point to {a} more than to {b}.",
    "Taken at face value it is about {a}, but the subtext concerns {b}.",
    "The message relies on shared assumptions about {a} and {b}.",
    "Someone unfamiliar with {a} could easily misread what it says about {b}.",
)
#: "Insight" sentences. Better models (by `model_quality`) write more of them; the rating and verdict
#: generators count them in the answers they judge.
MARKER_PREFIXES = ("Notably,", "Crucially,", "In context,")
_MARKERS = (
    "Notably, the framing of {a} shapes how {b} is perceived.",
    "Crucially, the context around {a} changes what {b} means here.",
    "In context, the reference to {a} draws on background knowledge about {b}.",
)
_GARBAGE_CHARS = "~!@#$%^&*_+=|;:,.?/<>-fghjklmpqrstvwxz "


class _Ctx:
    """Everything a generator needs: a request-seeded RNG, the prompt text and its content words."""

    __slots__ = ("rng", "model", "quality", "text", "low", "last_user", "_words", "truth")

    def __init__(self, rng: random.Random, model: str, text: str, last_user: str) -> None:
        self.rng = rng
        self.model = model
        self.quality = model_quality(model)
        self.text = text
        self.low = text.lower()  # for cheap case-insensitive literal checks
        self.last_user = last_user
        self._words: list[str] | None = None
        self.truth: dict[str, Any] | None = None  # what a benchmark answer means (`_gen_benchmark`)

    @property
    def words(self) -> list[str]:
        """Content words for the generators: those of the first quoted passages (a meme's text is
        usually quoted), else of the last 600 characters of the last user message. Python's `re` is
        slow, so only small windows are scanned: per-request work must stay tiny."""
        if self._words is None:
            source = self.last_user or self.text
            quoted = [m.group(1) or m.group(2) for m in islice(_QUOTED_RE.finditer(source[:3000]), 3)]
            words: dict[str, None] = {}
            for chunk in (" ".join(quoted)[:600], source[-600:]):
                words.update(dict.fromkeys(w for w in _WORD_RE.findall(chunk.lower()) if w not in _STOPWORDS))
                if len(words) >= 3:
                    break
            found = list(words)[:60]
            if len(found) < 2:
                found += [w for w in _FALLBACK_WORDS if w not in found]
            self._words = found
        return self._words

    def pair(self) -> tuple[str, str]:
        words, randrange = self.words, self.rng.randrange
        i, j = randrange(len(words)), randrange(len(words) - 1)
        return words[i], words[j + (j >= i)]

    def fill(self, template: str) -> str:
        a, b = self.pair()
        return template.format(a=a, b=b)

    def phrase(self, lo: int = 2, hi: int = 4) -> str:
        n = self.rng.randint(lo, hi)
        words = [self.rng.choice(self.words) for _ in range(n)]
        return " ".join(words).capitalize()


def _prose(ctx: _Ctx, n: int = 3, markers: bool = True) -> str:
    sentences = [ctx.fill(t) for t in ctx.rng.sample(_PROSE, min(n, len(_PROSE)))]
    if markers:
        k = int(ctx.quality * 3.999)  # 0..3 insight sentences, by model quality
        for template in _MARKERS[:k]:
            sentences.insert(ctx.rng.randint(0, len(sentences)), ctx.fill(template))
    return " ".join(sentences)


def _count_markers(text: str) -> int:
    return sum(text.count(prefix) for prefix in MARKER_PREFIXES)


def _gen_prose(ctx: _Ctx) -> str:
    return _prose(ctx, ctx.rng.randint(2, 4))


def _gen_background(ctx: _Ctx) -> str:
    return (
        f"[Background Knowledge] {_prose(ctx, 2, markers=False)}\n"
        f"[Reasoning] {_prose(ctx, ctx.rng.randint(2, 3))}"
    )


def _gen_synthesized(ctx: _Ctx) -> str:
    return "[Synthesized Answer]\n" + _gen_background(ctx)


_ANSWER_START = re.compile(r"start of (?:the )?assistant'?s? answer")  # on lowercased text
_ANSWER_END = re.compile(r"end of (?:the )?assistant")


def _assistant_answer(ctx: _Ctx) -> str:
    """The part of a scorer prompt that holds the judged answer (or the whole text)."""
    start = _ANSWER_START.search(ctx.low)
    if start is None:
        return ctx.text
    end = _ANSWER_END.search(ctx.low, start.end())
    return ctx.text[start.end() : end.start() if end else len(ctx.text)]


def _rating_meaning(ctx: _Ctx) -> tuple[int, bool]:
    """(rating, whether the judged answer is a refusal: rated 1)."""
    shown = _assistant_answer(ctx)
    if realistic.REFUSAL in shown:
        return 1, True
    merit = min(_count_markers(shown), 4) / 4
    x = 0.45 * ctx.rng.random() + 0.25 * ctx.quality + 0.30 * merit
    return max(1, min(10, 1 + int(x * 10))), False


def _gen_rating(ctx: _Ctx) -> str:
    n, _ = _rating_meaning(ctx)
    a, b = ctx.pair()
    if n >= 7:
        first = f"The assistant's answer covers the reference's main points about {a} and {b}."
    elif n >= 4:
        first = f"The answer mentions {a} but misses part of the reference's point about {b}."
    else:
        first = f"The answer misreads the role of {a} and leaves out what the reference says about {b}."
    extra = ctx.rng.randint(0, 2)
    rest = [ctx.fill(t) for t in ctx.rng.sample(_PROSE, extra)]
    return " ".join([first, *rest]) + f"\nRating: [[{n}]]"


_AB_RE = re.compile(r"[AB]\b")
_LABEL_WORDS = ("answer", "assistant", "response", "model")
#: Headings that end an answer's region: the reference/guideline a judge is shown must not count for
#: the answer printed before it.
_NEUTRAL_WORDS = ("reference", "guideline", "end of", "evaluation")


def _answer_labels(text: str, low: str) -> list[tuple[int, int, str]]:
    """(start, end, "A" | "B" | "") for every answer label ("Model A", "Answer B", ...) and neutral
    heading in the prompt, in order. Scans with a character-class regex and literal finds only."""
    found: list[tuple[int, int, str]] = []
    for match in _AB_RE.finditer(text):
        start = match.start()
        before = low[max(0, start - 14) : start].rstrip(" ([")
        if start and low[start - 1] in " ([" and before.endswith(_LABEL_WORDS):
            found.append((start, match.end(), match.group(0)))
    for word in _NEUTRAL_WORDS:
        at = low.find(word)
        while at >= 0:
            found.append((at, at + len(word), ""))
            at = low.find(word, at + 1)
    found.sort()
    return found


_DIMENSIONS = (
    ("Instruction Following", "follows the task about {a} more closely"),
    ("Correctness", "gives more accurate background on {a}"),
    ("Redundancy", "stays more concise when discussing {a}"),
    ("Relevance", "ties its reasoning about {b} to its background more tightly"),
    ("Accuracy", "reasons about {b} more soundly"),
)
TIE_STRONG, TIE_WEAK = "Tie (both strong)", "Tie (both weak)"


def _verdict_meaning(ctx: _Ctx) -> tuple[list[tuple[str, str]], str]:
    """([(dimension, verdict)], overall) a judge means; realistic judges sometimes give a plain Tie."""
    text = _gen_verdict(ctx)
    dims = re.findall(r"(?m)^\[([A-Za-z ]+)\] (.+)$", text)
    overall = dict(dims).pop("Overall Judge")
    dims = [(n, v) for n, v in dims if n != "Overall Judge"]
    if overall.startswith("Tie") and ctx.rng.random() < 0.5:
        overall = "Tie"  # Fig. 11's own format line is A/B/Tie
    dims = [(n, "Tie" if v.startswith("Tie") and ctx.rng.random() < 0.3 else v) for n, v in dims]
    return dims, overall


def _gen_verdict(ctx: _Ctx) -> str:
    # Credit each "insight" sentence to the answer label (A/B) that precedes it.
    merit = {"A": 0, "B": 0}
    labels = _answer_labels(ctx.text, ctx.low)
    for i, (_, label_end, label) in enumerate(labels):
        end = labels[i + 1][0] if i + 1 < len(labels) else len(ctx.text)
        if label:
            merit[label] += _count_markers(ctx.text[label_end:end])
    p_a = min(0.9, max(0.1, 0.5 + 0.2 * (merit["A"] - merit["B"])))
    strong = merit["A"] + merit["B"] >= 3
    lines, votes = [], {"A": 0, "B": 0}
    for name, phrase in _DIMENSIONS:
        a, b = ctx.pair()
        if ctx.rng.random() < 0.2:
            both = strong if ctx.rng.random() < 0.8 else not strong
            verdict = TIE_STRONG if both else TIE_WEAK
            reason = f"Both answers handle {a} {'well' if both else 'poorly'} on this point."
        else:
            verdict = "A" if ctx.rng.random() < p_a else "B"
            votes[verdict] += 1
            reason = f"Model {verdict} " + phrase.format(a=a, b=b) + "."
        lines += [reason, f"[{name}] {verdict}"]
    if votes["A"] != votes["B"]:
        overall = "A" if votes["A"] > votes["B"] else "B"
        reason = f"Weighing the points above, Model {overall} gives the better analysis overall."
    else:
        overall = TIE_STRONG if strong else TIE_WEAK
        reason = "Weighing the points above, neither answer is clearly better."
    lines += [reason, f"[Overall Judge] {overall}"]
    return "\n".join(lines)


def _gen_users(ctx: _Ctx) -> str:
    a, b = ctx.pair()
    hobby = ctx.rng.choice(_HOBBIES)
    return "\n".join(
        [
            f"[USER 1]: A person who follows {a} closely and often discusses {b} online; "
            "they would recognise the reference immediately.",
            f"[USER 2]: A person with a general interest in {b} who sees posts about {a} now and "
            "then; they get the joke on a surface level.",
            f"[USER 3]: A person who mostly posts about {hobby} and comes across the meme by chance; "
            f"they may miss the reference to {a}.",
        ]
    )


_OPTION_RE = re.compile(r"(?m)^[ \t]*(?:\(([A-Z])\)|([A-Z])[.):])[ \t]+\S")
_CHOICE_CUES = ("letter", "select all", "which of the following", "which option")
_MULTI_CUES = (
    "select all", "all that apply", "one or more", "more than one", "multiple answers",
    "multiple options", "multiple letters", "alphabetical order", "all correct", "all the correct",
)  # fmt: skip
_NONE_CUE = re.compile(r"""(?:["'“‘`]N["'”’`])|\b(?:answer|output|respond with|write)\s+N\b""")


def _options(text: str) -> list[str]:
    letters: list[str] = []
    for match in _OPTION_RE.finditer(text):
        letter = match.group(1) or match.group(2)
        expected = chr(ord("A") + len(letters))
        if letter == expected:
            letters.append(letter)
        elif letter == "A":  # a new option list starts: keep the latest one
            letters = ["A"]
    return letters if len(letters) >= 2 else []


def _is_choice(ctx: _Ctx) -> bool:
    return any(cue in ctx.low for cue in _CHOICE_CUES) and bool(_options(ctx.text))


def _gen_choice(ctx: _Ctx) -> str:
    return _choice_meaning(ctx) or "N"


def _choice_meaning(ctx: _Ctx) -> str:
    """The letters a model means ("" = none of the options)."""
    letters = _options(ctx.text)
    if not any(cue in ctx.low for cue in _MULTI_CUES):
        return ctx.rng.choice(letters)
    picked = [letter for letter in letters if ctx.rng.random() < 0.4]
    if not picked:
        if _NONE_CUE.search(ctx.text):
            return ""
        picked = [ctx.rng.choice(letters)]
    return "".join(picked)


_JSON_KEY_RE = re.compile(r'"([A-Za-z_][^"\n]{0,40})"\s*:\s*(\[|\{|"|-?\d|true|false)?')


def _is_json_text(ctx: _Ctx) -> bool:
    return "json" in ctx.low and bool(_JSON_KEY_RE.search(ctx.text))


def _gen_json_text(ctx: _Ctx) -> str:
    out: dict[str, Any] = {}
    for match in _JSON_KEY_RE.finditer(ctx.text):
        key, opener = match.group(1), match.group(2) or '"'
        if key in out:
            continue
        if opener == "[":
            out[key] = [ctx.phrase() for _ in range(ctx.rng.randint(1, 3))]
        elif opener == "{":
            out[key] = {ctx.rng.choice(ctx.words): _prose(ctx, 1, markers=False)}
        elif opener in ("true", "false"):
            out[key] = ctx.rng.random() < 0.5
        elif opener[-1].isdigit():
            out[key] = ctx.rng.randint(1, 10)
        else:
            out[key] = _prose(ctx, 1, markers=False)
        if len(out) >= 12:
            break
    return json.dumps(out, ensure_ascii=False)


def _gen_yes_no(ctx: _Ctx) -> str:
    word = "Yes" if ctx.rng.random() < 0.5 else "No"
    return f"{word}. {_prose(ctx, ctx.rng.randint(1, 2), markers=False)}"


BENCHMARK_CUE = "Answer format:"
"""The benchmark kit's last prompt line (`memegauge.benchmarks.kit.run.ANSWER_FORMATS`): yes or no; one of:
L1, L2, …; the letter of one option; every label that applies, separated by commas, from: L1, L2, …; or none."""
UNREADABLE_SHARE = 0.1  # of benchmark answers written so that no reader can take a class from them
_FORMAT_LINE = re.compile(r"Answer format: ([^\n]*)")


def _gen_benchmark(ctx: _Ctx) -> str:
    """A benchmark answer in the asked format, and its meaning as the truth of the prompt: `answer` (a class,
    a letter or a list of classes; None for an unreadable reply), `p_yes` for yes/no (what the logprobs say)."""
    line = _FORMAT_LINE.findall(ctx.text)[-1]
    answer: Any
    p_yes = None
    if ctx.rng.random() < UNREADABLE_SHARE:
        answer, text = None, "I cannot tell from this picture alone."
    elif line.startswith("yes or no"):
        p_yes = round(ctx.rng.random(), 4)
        answer = "yes" if p_yes >= 0.5 else "no"
        text = f"{answer.capitalize()}."
    elif line.startswith("the letter"):
        answer = ctx.rng.choice(_options(ctx.text) or ["A"])
        text = f"{answer}"
    else:
        listed = line.split("from:" if "from:" in line else "one of:", 1)[1].split(";")[0]
        labels = [label.strip().rstrip(".") for label in listed.split(",") if label.strip()]
        if line.startswith("every"):
            answer = [label for label in labels if ctx.rng.random() < 0.4]
            text = ", ".join(answer) or "none"
        else:
            answer = ctx.rng.choice(labels)
            text = f"{answer}."
    ctx.truth = {"kind": "benchmark", "key": realistic.truth_key(f"{ctx.model}\x1f{ctx.last_user}"), "answer": answer,
                 "p_yes": p_yes}
    return text


@dataclass(frozen=True)
class Rule:
    """One output-format rule: when `cue(ctx)` holds (ctx.text is the system + user text, ctx.low
    its lowercase), `generate(ctx)` writes the answer. Keep cues cheap: literal checks first."""

    name: str
    cue: Callable[[_Ctx], bool]
    generate: Callable[[_Ctx], str]


def _contains(*needles: str) -> Callable[[_Ctx], bool]:
    return lambda ctx: any(needle in ctx.text for needle in needles)


_YES_NO = re.compile(r"yes\s*(?:or|/)\s*no\b")  # on lowercased text


def _is_yes_no(ctx: _Ctx) -> bool:
    return "yes" in ctx.low and bool(_YES_NO.search(ctx.low))


#: First matching rule wins; answers embedded in judge/scorer prompts may contain later cues, so the
#: "terminal" formats (verdict, rating) come first. ``## Final Response:`` wraps the body (see
#: `_FINAL_RESPONSE`). Extend by inserting a Rule.
RULES: list[Rule] = [
    Rule("benchmark", _contains(BENCHMARK_CUE), lambda ctx: _gen_benchmark(ctx)),
    Rule("verdict", _contains("[Overall Judge]"), _gen_verdict),
    Rule("rating", _contains("Rating: [["), _gen_rating),
    Rule("users", _contains("[USER 1]"), _gen_users),
    Rule("synthesized", _contains("[Synthesized Answer]"), _gen_synthesized),
    Rule("background", _contains("[Background Knowledge]"), _gen_background),
    Rule("choice", _is_choice, _gen_choice),
    Rule("json_text", _is_json_text, _gen_json_text),
    Rule("yes_no", _is_yes_no, _gen_yes_no),
    Rule("prose", lambda ctx: True, _gen_prose),
]
_FINAL_RESPONSE = "## Final Response:"


def _generate_text(ctx: _Ctx) -> tuple[str, str]:
    """(answer, rule name) for a prompt without a response_format."""
    rule = next(r for r in RULES if r.cue(ctx))
    if _FINAL_RESPONSE in ctx.text and rule.name not in ("verdict", "rating", "choice"):
        k = ctx.rng.randint(1, 3)
        a = ctx.rng.choice(ctx.words)
        analysis = (
            f"Response {k} is the most complete of the three, although it could say more about {a}."
        )
        return f"{analysis}\n\n{_FINAL_RESPONSE}\n{rule.generate(ctx)}", f"final_response+{rule.name}"
    return rule.generate(ctx), rule.name
