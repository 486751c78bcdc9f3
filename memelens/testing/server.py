"""A local OpenAI-compatible chat server for tests and benchmarks: fixed latency, deterministic
answers in the formats MemeLens' prompts ask for, and seeded fault injection.

Command line (binds 127.0.0.1 only; port 0 picks a free port)::

    python -m memelens.testing.server --port 0 --latency-ms 200 --fault-rate 0.1 --seed 7 \
        [--hang-s 30] [--retry-after 0.1] [--faults 429,500,timeout,truncated,garbage] [--models a,b] \
        [--style strict|realistic] [--text-only a,b] [--refusers a,b]

It prints exactly one line, ``listening on http://127.0.0.1:PORT/v1``, flushes stdout, and serves until
SIGINT/SIGTERM. From Python::

    with start_server(latency_ms=0, fault_rate=0.0, seed=0) as server:      # background thread
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        server.stats                                                           # a snapshot dict

    async with AsyncTestServer(latency_ms=50) as server:                     # inside a running loop
        ...

Endpoints
---------
``POST /v1/chat/completions``
    OpenAI request/response shape (``id``, ``object``, ``created``, ``model``, ``choices[i].message
    .content``, ``finish_reason``, ``usage``). Message content may be a string or a list of parts
    (``{"type": "text"}`` / ``{"type": "image_url", "image_url": {"url": ...}}``); images are counted in
    the stats. ``n`` choices, ``max_tokens`` / ``max_completion_tokens`` (cut at that many words,
    ``finish_reason="length"``), ``stop`` strings and ``stream`` (server-sent events, with
    ``stream_options.include_usage``) are honoured. The ``Authorization`` header is ignored and never
    logged (the access log is off).
``GET /v1/models``
    The configured model ids plus every model name requested so far (any name is accepted).
``GET /health``  → ``{"status": "ok"}``;  ``GET /stats`` → the stats snapshot (see `Stats`).

Tokens are counted as whitespace-separated words (images count 0).

Answers
-------
Deterministic: a function of (server seed, model, every message's text and image URL, the request's
``seed``, whether temperature > 0, and the sample hints: the choice index when temperature > 0 plus the
optional body fields ``sample_index``/``user``/``metadata``). The same request always gets the same
answer; a different ``model`` gets a different one. Each model name also has a hash-derived *quality*
in [0, 1): better models write more "insight" sentences (starting ``Notably,`` / ``Crucially,`` /
``In context,``), and the rating and verdict generators reward those sentences in the answers they
are shown, so rankings of targets are consistent across judges instead of pure noise.

``response_format`` ``json_schema`` → a JSON document valid against the schema (see `schema_instance`);
``json_object`` → a JSON object. Otherwise the prompt (system + user text) is matched against `RULES`,
a small table of cue → generator, first match wins, with ``## Final Response:`` acting as a wrapper
around whatever body applies:

=========================  ==========================================================================
cue in the prompt          answer
=========================  ==========================================================================
``[Overall Judge]``        reason + ``[Instruction Following] X`` … ``[Overall Judge] X``, X in A, B,
                           Tie (both strong), Tie (both weak)
``Rating: [[``             1–3 sentences, then ``Rating: [[n]]`` (1..10)
``[USER 1]``               ``[USER 1]: A person …`` ×3
``[Synthesized Answer]``   ``[Synthesized Answer]`` + ``[Background Knowledge]``/``[Reasoning]`` body
``## Final Response:``     short analysis, then ``## Final Response:`` + the body the rest asks for
``[Background Knowledge]`` ``[Background Knowledge] …`` newline ``[Reasoning] …``
option lines + letters     ``B`` (single) / ``ACD`` (select all; ``N`` when allowed and nothing fits)
"JSON" + quoted keys       a JSON object with those keys (list/object/string values as sketched)
``Yes or No`` / ``Yes/No`` ``Yes. …`` or ``No. …``
(anything else)            a few sentences of prose built from the prompt's words
=========================  ==========================================================================

Styles
------
``strict`` (default) answers exactly in the requested format. ``realistic`` (``--style realistic``)
decides the same meaning and writes it the way real chat models do (`memelens.testing.realistic`):
"The answer is (b).", option-text lines, lowercase letters, ``<think>`` blocks, judgment blocks ending
"Verdict: Model B", a plain "Tie", ratings as "7/10", JSON fenced in prose, and — for the models named
in ``refusers`` — refusals to analysis prompts, which a Scorer then quotes. What each reply means is
recorded by the sha256 of its text in the stats' ``truths`` (with ``requests_with_image`` per model),
so tests compare reports with it. Models named in ``text_only`` answer any image with HTTP 500 "image
input is not supported", as llama.cpp's server does for a model without a vision projector.

Faults
------
A ``random.Random(seed)`` is drawn exactly once per incoming chat request, in arrival order (so a
retry can succeed). With probability ``fault_rate`` the request gets one of the enabled faults, chosen
uniformly (the same single draw decides both): ``429`` (OpenAI-style error, ``Retry-After`` seconds
and ``retry-after-ms`` headers), ``500`` (error JSON), ``timeout`` (sleep ``hang_s`` before answering;
clients time out first), ``truncated`` (200 OK, the valid answer cut in half — invalid JSON for JSON
answers — with ``finish_reason="length"``), ``garbage`` (200 OK, junk symbols that match no format).
Invalid requests (non-JSON body, missing model/messages, bad fields) get 400 and no fault.
Every valid request (faulted or not) is answered ``latency_ms`` after it arrived (``asyncio.sleep``, so
hundreds can be in flight; the server's own work happens inside that time); a 400 comes at once.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Iterable

from aiohttp import web

from memelens.testing import realistic

__all__ = [
    "FAULT_KINDS",
    "ServerConfig",
    "Stats",
    "TestServer",
    "AsyncTestServer",
    "start_server",
    "schema_instance",
    "model_quality",
    "RULES",
    "main",
]

HOST = "127.0.0.1"
FAULT_KINDS: tuple[str, ...] = ("429", "500", "timeout", "truncated", "garbage")
DEFAULT_MODELS: tuple[str, ...] = ("memelens-test",)
MAX_BODY_BYTES = 64 * 1024 * 1024  # base64 images make big bodies


# --------------------------------------------------------------------------------------------------
# Configuration and statistics
# --------------------------------------------------------------------------------------------------


@dataclass
class ServerConfig:
    """How the server behaves. Fields may be changed while it runs (they are read per request)."""

    latency_ms: float = 0.0
    fault_rate: float = 0.0
    seed: int = 0
    faults: tuple[str, ...] = FAULT_KINDS
    hang_s: float = 30.0
    retry_after: float = 0.1
    models: tuple[str, ...] = DEFAULT_MODELS
    shutdown_timeout: float = 0.5  # stop() waits this long for in-flight (e.g. hanging) requests
    style: str = "strict"  # "realistic": replies shaped like real models' (memelens.testing.realistic)
    text_only: tuple[str, ...] = ()  # models that answer an image with HTTP 500, as llama.cpp does
    refusers: tuple[str, ...] = ()  # realistic style: models that refuse 30% of analysis prompts

    def __post_init__(self) -> None:
        if isinstance(self.faults, str):
            self.faults = tuple(f.strip() for f in self.faults.split(",") if f.strip())
        self.faults = tuple(self.faults)
        self.text_only, self.refusers = tuple(self.text_only), tuple(self.refusers)
        if self.style not in ("strict", "realistic"):
            raise ValueError(f"unknown style {self.style!r}; choose strict or realistic")
        self.models = tuple(self.models)
        unknown = [f for f in self.faults if f not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; choose from {','.join(FAULT_KINDS)}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be in [0, 1], got {self.fault_rate}")
        if self.latency_ms < 0 or self.hang_s < 0 or self.retry_after < 0:
            raise ValueError("latency_ms, hang_s and retry_after must be >= 0")


class Stats:
    """Counters, mutated on the server's loop and read (as a snapshot) from any thread.

    Snapshot keys: ``requests`` (chat requests received), ``completed`` (chat answers sent with 200,
    including truncated/garbage/late ones), ``bad_requests``, ``faults`` ({kind: n} for all five
    kinds), ``models`` ({model: n}), ``images``, ``formats`` ({answer generator: n}),
    ``prompt_tokens``, ``completion_tokens``, ``in_flight``, ``max_in_flight``, ``cancelled``
    (handlers ended because the client went away), ``streamed``.
    """

    _INTS = (
        "requests",
        "completed",
        "bad_requests",
        "images",
        "prompt_tokens",
        "completion_tokens",
        "in_flight",
        "max_in_flight",
        "cancelled",
        "streamed",
        "image_mime_mismatch",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            for name in self._INTS:
                setattr(self, name, 0)
            self.faults: dict[str, int] = {kind: 0 for kind in FAULT_KINDS}
            self.models: dict[str, int] = {}
            self.formats: dict[str, int] = {}
            self.requests_with_image: dict[str, int] = {}
            self.truths: dict[str, dict[str, Any]] = {}

    def record_truth(self, key: str, truth: dict[str, Any]) -> None:
        with self._lock:
            self.truths[key] = truth

    def add(self, name: str, value: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + value)

    def count(self, table: str, key: str) -> None:
        with self._lock:
            counts = getattr(self, table)
            counts[key] = counts.get(key, 0) + 1

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            if self.in_flight > self.max_in_flight:
                self.max_in_flight = self.in_flight

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {name: getattr(self, name) for name in self._INTS}
            out["faults"] = dict(self.faults)
            out["models"] = dict(self.models)
            out["formats"] = dict(self.formats)
            out["requests_with_image"] = dict(self.requests_with_image)
            out["truths"] = dict(self.truths)
            return out


# --------------------------------------------------------------------------------------------------
# Hashing helpers
# --------------------------------------------------------------------------------------------------


def _h64(*parts: str) -> int:
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


def model_quality(model: str) -> float:
    """A stable per-model quality in [0, 1), from the model name only (independent of the seed)."""
    return (_h64("quality", model) % 10_000) / 10_000


# --------------------------------------------------------------------------------------------------
# Text generation
# --------------------------------------------------------------------------------------------------

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

    __slots__ = ("rng", "model", "quality", "text", "low", "last_user", "_words")

    def __init__(self, rng: random.Random, model: str, text: str, last_user: str) -> None:
        self.rng = rng
        self.model = model
        self.quality = model_quality(model)
        self.text = text
        self.low = text.lower()  # for cheap case-insensitive literal checks
        self.last_user = last_user
        self._words: list[str] | None = None

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


# --------------------------------------------------------------------------------------------------
# JSON-schema instances
# --------------------------------------------------------------------------------------------------


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _merge_all_of(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for sub in schema["allOf"]:
        if isinstance(sub, dict) and "$ref" in sub:
            sub = _resolve(sub["$ref"], root)
        if not isinstance(sub, dict):
            continue
        for key, value in sub.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _bounds(schema: dict[str, Any], integer: bool) -> tuple[float, float]:
    step = 1 if integer else 1e-3
    lo: float | None = schema.get("minimum")
    hi: float | None = schema.get("maximum")
    xmin, xmax = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(xmin, bool):  # draft 4: a flag on minimum
        xmin = lo + step if xmin and lo is not None else None  # type: ignore[operator]
        lo = xmin if xmin is not None else lo
    elif xmin is not None:
        lo = max(lo, xmin + step) if lo is not None else xmin + step
    if isinstance(xmax, bool):
        xmax = hi - step if xmax and hi is not None else None  # type: ignore[operator]
        hi = xmax if xmax is not None else hi
    elif xmax is not None:
        hi = min(hi, xmax - step) if hi is not None else xmax - step
    if lo is None and hi is None:
        lo, hi = 0, 10
    elif lo is None:
        lo = hi - 10  # type: ignore[operator]
    elif hi is None:
        hi = lo + 10
    if integer:
        lo, hi = int(-(-lo // 1)), int(hi // 1)  # ceil, floor
    return lo, hi  # type: ignore[return-value]


def _gen_number(schema: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    lo, hi = _bounds(schema, integer)
    if hi < lo:
        hi = lo
    multiple = schema.get("multipleOf")
    if multiple:
        first = -(-lo // multiple) * multiple
        count = int((hi - first) // multiple) + 1
        value = first + multiple * rng.randrange(max(count, 1))
        return int(value) if integer else value
    if integer:
        return rng.randint(int(lo), int(hi))
    value = round(rng.uniform(lo, hi), 3)
    return min(max(value, lo), hi)


_FORMATS = {
    "date-time": "2024-05-17T12:00:00Z",
    "date": "2024-05-17",
    "time": "12:00:00Z",
    "email": "someone@example.com",
    "uri": "https://example.com/meme",
    "url": "https://example.com/meme",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
}


def _gen_string(schema: dict[str, Any], ctx: _Ctx) -> str:
    fmt = schema.get("format")
    if fmt == "uuid":
        value = "%08x-0000-4000-8000-%012x" % (ctx.rng.getrandbits(32), ctx.rng.getrandbits(48))
    elif fmt in _FORMATS:
        value = _FORMATS[fmt]
    else:
        value = ctx.phrase(2, 5)
    min_len, max_len = schema.get("minLength", 0), schema.get("maxLength")
    while len(value) < min_len:
        value += " " + ctx.rng.choice(ctx.words)
    if max_len is not None and len(value) > max_len:
        value = value[:max_len].rstrip() or value[:max_len]
        while len(value) < min_len:  # rstrip may have made it too short
            value += "x"
    return value


def _first_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        return non_null[0] if non_null else "null"
    if kind:
        return kind
    if "properties" in schema or "additionalProperties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return "string"


def _instance(schema: Any, root: dict[str, Any], ctx: _Ctx, depth: int) -> Any:
    if schema is True or schema is None or schema == {}:
        return ctx.phrase()
    if schema is False:
        raise ValueError("schema 'false' has no valid instance")
    if depth > 32:
        raise ValueError("schema nests too deeply (recursive $ref without a base case?)")
    if "$ref" in schema:
        return _instance(_resolve(schema["$ref"], root), root, ctx, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return ctx.rng.choice(schema["enum"])
    if "allOf" in schema:
        return _instance(_merge_all_of(schema, root), root, ctx, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema and schema[key]:
            branches = schema[key]
            # the first branch that is not just null, else the first
            is_null = [isinstance(b, dict) and b.get("type") == "null" for b in branches]
            branch = branches[is_null.index(False)] if False in is_null else branches[0]
            return _instance(branch, root, ctx, depth + 1)
    kind = _first_type(schema)
    if kind == "object":
        return _gen_object(schema, root, ctx, depth)
    if kind == "array":
        return _gen_array(schema, root, ctx, depth)
    if kind == "integer":
        return _gen_number(schema, ctx.rng, integer=True)
    if kind == "number":
        return _gen_number(schema, ctx.rng, integer=False)
    if kind == "boolean":
        return ctx.rng.random() < 0.5
    if kind == "null":
        return None
    return _gen_string(schema, ctx)


def _gen_object(schema: dict[str, Any], root: dict[str, Any], ctx: _Ctx, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    deep = depth > 8  # recursion guard: only required properties deep down
    out: dict[str, Any] = {}
    for key, sub in props.items():
        if deep and key not in required:
            continue
        out[key] = _instance(sub, root, ctx, depth + 1)
    extra_schema = schema.get("additionalProperties", True)
    for key in required:
        if key not in out:
            sub = extra_schema if isinstance(extra_schema, dict) else True
            out[key] = _instance(sub, root, ctx, depth + 1)
    max_props = schema.get("maxProperties")
    wanted = schema.get("minProperties", 0)
    if isinstance(extra_schema, dict) and not props:
        wanted = max(wanted, 2)  # a map: give it a couple of keys
    if extra_schema is not False and len(out) < wanted:
        for word in [*ctx.words, *_FALLBACK_WORDS, *(f"key{i}" for i in range(wanted + 2))]:
            if len(out) >= wanted or (max_props is not None and len(out) >= max_props):
                break
            if word not in out and word not in props:
                sub = extra_schema if isinstance(extra_schema, dict) else True
                out[word] = _instance(sub, root, ctx, depth + 1)
    return out


def _gen_array(schema: dict[str, Any], root: dict[str, Any], ctx: _Ctx, depth: int) -> list[Any]:
    prefix = schema.get("prefixItems") or []
    items = schema.get("items", True)
    if isinstance(items, list):  # draft-4 tuple form
        prefix, items = items, schema.get("additionalItems", True)
    lo = int(schema.get("minItems", 0))
    hi = schema.get("maxItems")
    hi = int(hi) if hi is not None else max(lo, 3)
    if items is False:
        hi = min(hi, len(prefix))
    start = max(lo, 1) if hi >= 1 else 0
    n = ctx.rng.randint(start, max(start, min(hi, start + 2)))
    if depth > 8:
        n = lo
    out: list[Any] = []
    unique = schema.get("uniqueItems", False)
    attempts = 0
    while len(out) < n and attempts < n * 10 + 10:
        attempts += 1
        sub = prefix[len(out)] if len(out) < len(prefix) else items
        value = _instance(sub, root, ctx, depth + 1)
        if unique and value in out:
            continue
        out.append(value)
    return out


def schema_instance(schema: dict[str, Any], seed: int | str = 0, words: Iterable[str] = ()) -> Any:
    """A deterministic instance of `schema` (a JSON Schema subset: type, properties, required,
    additionalProperties, min/maxProperties, items/prefixItems, min/maxItems, uniqueItems, enum,
    const, anyOf/oneOf (first non-null branch), allOf (merged), local $ref/$defs, string
    min/maxLength and common formats (patterns are not supported), integer/number bounds incl.
    exclusive ones and multipleOf, boolean, null). `words` seeds the phrases used for strings."""
    text = " ".join(words)
    ctx = _Ctx(random.Random(_h64("schema", str(seed))), "schema", text, text)
    return _instance(schema, schema, ctx, 0)


# --------------------------------------------------------------------------------------------------
# Request parsing and validation
# --------------------------------------------------------------------------------------------------


class BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


@dataclass
class _Parsed:
    model: str
    texts: list[tuple[str, str]]  # (role, text)
    image_urls: list[str]
    n: int = 1
    temperature: float = 1.0
    seed: Any = None
    max_tokens: int | None = None
    stop: list[str] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    response_format: dict[str, Any] | None = None
    hints: str = ""


def _number(body: dict[str, Any], key: str, lo: float, hi: float, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise BadRequest(f"'{key}' must be a number in [{lo}, {hi}], got {value!r}", key)
    return float(value)


def _int(body: dict[str, Any], key: str, lo: int, hi: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        raise BadRequest(f"'{key}' must be an integer >= {lo}" + (f" and <= {hi}" if hi else ""), key)
    return value


def _parse_request(body: Any) -> _Parsed:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required and must be a non-empty string", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' is required and must be a non-empty array", "messages")
    texts: list[tuple[str, str]] = []
    images: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"{where} must be an object", where)
        role = message.get("role")
        if role not in _ROLES:
            raise BadRequest(f"{where}.role must be one of {sorted(_ROLES)}, got {role!r}", f"{where}.role")
        content = message.get("content")
        if isinstance(content, str):
            texts.append((role, content))
        elif content is None and role in ("assistant", "tool", "function"):
            texts.append((role, ""))
        elif isinstance(content, list):
            parts: list[str] = []
            for j, part in enumerate(content):
                pwhere = f"{where}.content[{j}]"
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif kind == "image_url":
                    image = part.get("image_url")
                    url = image.get("url") if isinstance(image, dict) else image
                    if not isinstance(url, str) or not url:
                        raise BadRequest(f"{pwhere}.image_url.url must be a non-empty string", pwhere)
                    images.append(url)
                else:
                    raise BadRequest(
                        f"{pwhere} must be {{'type': 'text', 'text': str}} or "
                        "{'type': 'image_url', 'image_url': {'url': str}}",
                        pwhere,
                    )
            texts.append((role, "\n".join(parts)))
        else:
            raise BadRequest(f"{where}.content must be a string or an array of parts", f"{where}.content")
    parsed = _Parsed(model=model, texts=texts, image_urls=images)
    parsed.temperature = _number(body, "temperature", 0.0, 2.0, 1.0)
    _number(body, "top_p", 0.0, 1.0, 1.0)
    parsed.n = _int(body, "n", 1, 128) or 1
    parsed.max_tokens = _int(body, "max_completion_tokens", 1, None) or _int(body, "max_tokens", 1, None)
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadRequest("'seed' must be an integer", "seed")
    parsed.seed = seed
    stop = body.get("stop")
    if isinstance(stop, str):
        parsed.stop = [stop] if stop else []
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        parsed.stop = [s for s in stop if s]
    elif stop is not None:
        raise BadRequest("'stop' must be a string or an array of strings", "stop")
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise BadRequest("'stream' must be a boolean", "stream")
    parsed.stream = bool(stream)
    options = body.get("stream_options") or {}
    parsed.include_usage = bool(isinstance(options, dict) and options.get("include_usage"))
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in ("text", "json_object", "json_schema"):
            raise BadRequest(
                "'response_format.type' must be 'text', 'json_object' or 'json_schema'",
                "response_format",
            )
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
                raise BadRequest(
                    "'response_format.json_schema.schema' must be a JSON Schema object",
                    "response_format.json_schema",
                )
        parsed.response_format = fmt if kind != "text" else None
    hints = {k: body[k] for k in ("sample_index", "user", "metadata") if body.get(k) is not None}
    parsed.hints = json.dumps(hints, sort_keys=True, default=str) if hints else ""
    return parsed


def _request_key(config: ServerConfig, req: _Parsed) -> int:
    """The answer's hash: server seed, model, messages (text and image URLs), seed param,
    temperature > 0, sample hints."""
    digest = hashlib.blake2b(digest_size=16)
    head = f"{config.seed}\x1f{req.model}\x1f{req.seed}\x1f{req.temperature > 0}\x1f{req.hints}"
    digest.update(head.encode())
    for role, text in req.texts:
        digest.update(f"\x1e{role}\x1f".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
    for url in req.image_urls:
        digest.update(b"\x1dimg\x1f")
        digest.update(url.encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest(), "big")


def _realistic(ctx: _Ctx, rule: str, text: str, config: ServerConfig,
               budget: int | None) -> tuple[str, dict[str, Any] | None]:
    """`--style realistic`: the same meaning, written the way real models write it, + ground truth."""
    rng = ctx.rng
    if rule == "choice":
        return realistic.choice_reply(rng, _choice_meaning(ctx), realistic.option_texts(ctx.text), budget)
    if rule == "verdict":
        dims, overall = _verdict_meaning(ctx)
        return realistic.judgment_reply(rng, dims, overall, ctx.pair(), realistic.REFUSAL in ctx.text)
    if rule == "rating":
        n, refused = _rating_meaning(ctx)
        return realistic.rating_reply(rng, n, text.rsplit("\n", 1)[0], refused)
    if rule == "prose" and ctx.model in config.refusers and rng.random() < 0.3:
        return realistic.REFUSAL, {"kind": "refusal", "readable": True}
    return realistic.restyle(rng, rule, text), None


def _answer(config: ServerConfig, req: _Parsed, key: int, index: int) -> tuple[str, str, dict[str, Any] | None]:
    """(content, generator name, ground truth of a realistic reply) for choice `index`."""
    sample = index if req.temperature > 0 else 0
    rng = random.Random(key * 131 + sample)
    prompt = "\n".join(text for role, text in req.texts if role in ("system", "developer", "user"))
    last_user = next((text for role, text in reversed(req.texts) if role == "user"), prompt)
    ctx = _Ctx(rng, req.model, prompt, last_user)
    fmt = req.response_format
    if fmt is not None and fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        return json.dumps(_instance(schema, schema, ctx, 0), ensure_ascii=False), "json_schema", None
    if fmt is not None and fmt.get("type") == "json_object":
        if _is_json_text(ctx):
            return _gen_json_text(ctx), "json_object", None
        return json.dumps({"answer": _prose(ctx, 2)}, ensure_ascii=False), "json_object", None
    text, rule = _generate_text(ctx)
    if config.style != "realistic":
        return text, rule, None
    text, truth = _realistic(ctx, rule, text, config, req.max_tokens)
    return text, rule, truth


# The server sniffs on its own rather than with the client's `image_mime`: a check that shared the code it
# checks would agree with it even when both were wrong.
_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def _mime_mismatch(url: str) -> bool:
    """A data URL whose declared type is not what its bytes are (a JPEG sent as image/png): strict
    providers reject it, lenient ones may decode it wrongly."""
    head, _, data = url.partition(",")
    if not head.startswith("data:") or ";base64" not in head:
        return False
    import base64

    try:
        magic = base64.b64decode(data[:24])
    except ValueError:
        return True
    actual = next((mime for sig, mime in _MAGIC if magic.startswith(sig)), None)
    return actual is not None and head[5:].split(";")[0] != actual


def _word_count(text: str) -> int:
    return len(text.split())


def _cut_words(text: str, limit: int) -> str:
    for i, match in enumerate(re.finditer(r"\S+", text)):
        if i + 1 == limit:
            return text[: match.end()]
    return text


def _garbage(key: int, index: int) -> str:
    rng = random.Random(key ^ 0x9E3779B97F4A7C15 ^ index)
    return "".join(rng.choice(_GARBAGE_CHARS) for _ in range(rng.randint(24, 80))).strip() or "~#~"


# --------------------------------------------------------------------------------------------------
# The aiohttp application
# --------------------------------------------------------------------------------------------------


def _error(status: int, message: str, kind: str, code: str | None = None, param: str | None = None,
           headers: dict[str, str] | None = None) -> web.Response:  # fmt: skip
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


class _App:
    """The server's state on its event loop: config, stats, fault RNG, the aiohttp runner."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.stats = Stats()
        self.fault_rng = random.Random(config.seed)
        self.seen_models: dict[str, None] = {}
        self.runner: web.AppRunner | None = None
        self.port: int | None = None

    def draw_fault(self) -> str | None:
        """One draw per request, in arrival order: a fault kind with probability fault_rate."""
        r = self.fault_rng.random()
        faults, rate = self.config.faults, self.config.fault_rate
        if not faults or r >= rate:
            return None
        return faults[min(int(r / rate * len(faults)), len(faults) - 1)]

    def reset(self) -> None:
        """Zero the stats and restart the fault sequence from the seed."""
        self.stats.reset()
        self.fault_rng = random.Random(self.config.seed)

    # ---- handlers ---------------------------------------------------------------------------

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def stats_handler(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.snapshot())

    async def models(self, request: web.Request) -> web.Response:
        names = list(dict.fromkeys([*self.config.models, *self.seen_models]))
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "memelens-testing"} for m in names]
        return web.json_response({"object": "list", "data": data})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """Latency is counted from the request's arrival and the server's own work happens inside
        it: a burst of requests is parsed and answered while they wait, so ``latency_ms`` stays the
        response time under load instead of growing with the queue."""
        stats, config = self.stats, self.config
        loop = asyncio.get_running_loop()
        arrived = loop.time()
        fault = self.draw_fault()  # before any await: arrival order
        stats.add("requests")
        stats.enter()
        try:
            await asyncio.sleep(0)  # let the rest of a burst register its arrival time first
            try:
                body = json.loads(await request.read())
            except (ValueError, UnicodeDecodeError):
                stats.add("bad_requests")
                return _error(400, "the request body is not valid JSON", "invalid_request_error")
            try:
                req = _parse_request(body)
            except BadRequest as exc:
                stats.add("bad_requests")
                return _error(400, str(exc), "invalid_request_error", param=exc.param)
            stats.count("models", req.model)
            self.seen_models.setdefault(req.model, None)
            if req.image_urls:
                stats.add("images", len(req.image_urls))
                stats.count("requests_with_image", req.model)
                stats.add("image_mime_mismatch", sum(_mime_mismatch(url) for url in req.image_urls))
                if req.model in config.text_only:  # llama.cpp serving a text-only model
                    return _error(500, "image input is not supported - hint: if this is unexpected, you "
                                  "may need to provide the mmproj", "server_error")
            if fault is not None:
                stats.count("faults", fault)
            response: web.StreamResponse | None = None
            if fault == "429":
                wait = config.retry_after
                response = _error(
                    429,
                    "Rate limit reached for requests (injected fault). Please retry shortly.",
                    "requests",
                    code="rate_limit_exceeded",
                    headers={"Retry-After": f"{wait:g}", "retry-after-ms": str(int(round(wait * 1000)))},
                )
            elif fault == "500":
                response = _error(
                    500,
                    "The server had an error while processing your request (injected fault).",
                    "server_error",
                )
            else:
                payload = self._completion(req, fault)
                if not req.stream:
                    response = web.json_response(payload)
            delay = arrived + config.latency_ms / 1000 - loop.time()
            if fault == "timeout":
                delay += config.hang_s
            if delay > 0:
                await asyncio.sleep(delay)
            if response is None:
                response = await self._stream(request, req, payload)
            if fault not in ("429", "500"):
                stats.add("completed")
            return response
        except asyncio.CancelledError:
            stats.add("cancelled")
            raise
        finally:
            stats.leave()

    def _completion(self, req: _Parsed, fault: str | None) -> dict[str, Any]:
        """The chat.completion object for `req`, with a 'truncated'/'garbage' fault applied."""
        key = _request_key(self.config, req)
        choices = []
        completion_tokens = 0
        for index in range(req.n):
            content, rule, truth = _answer(self.config, req, key, index)
            self.stats.count("formats", rule)
            finish = "stop"
            for stop in req.stop:
                cut = content.find(stop)
                if cut >= 0:
                    content = content[:cut]
            if req.max_tokens is not None and _word_count(content) > req.max_tokens:
                content, finish = _cut_words(content, req.max_tokens), "length"
            if fault == "truncated":
                content, finish = content[: len(content) // 2], "length"
            elif fault == "garbage":
                content = _garbage(key, index)
            if truth is not None:
                if finish == "length" or fault == "garbage":
                    truth = {"kind": truth["kind"], "readable": False, "truncated": finish == "length"}
                for text in realistic.stored_forms(content):
                    self.stats.record_truth(realistic.truth_key(text), truth)
            completion_tokens += _word_count(content)
            choices.append(
                {
                    "index": index,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish,
                }
            )
        prompt_tokens = sum(_word_count(text) for _, text in req.texts)
        self.stats.add("prompt_tokens", prompt_tokens)
        self.stats.add("completion_tokens", completion_tokens)
        return {
            "id": f"chatcmpl-{key:032x}"[:33],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "system_fingerprint": "memelens-testing",
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    async def _stream(self, request: web.Request, req: _Parsed, payload: dict[str, Any]) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        base = {k: payload[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        choices, usage = payload["choices"], payload["usage"]

        async def send(choice_list: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {**base, "choices": choice_list, **extra}
            await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

        for choice in choices:
            index, content = choice["index"], choice["message"]["content"]
            opening = {"role": "assistant", "content": ""}
            await send([{"index": index, "delta": opening, "finish_reason": None}])
            pieces = re.findall(r"\S+\s*|\s+", content)
            step = max(1, len(pieces) // 4)
            for i in range(0, len(pieces), step):
                delta = {"content": "".join(pieces[i : i + step])}
                await send([{"index": index, "delta": delta, "finish_reason": None}])
            await send([{"index": index, "delta": {}, "finish_reason": choice["finish_reason"]}])
        if req.include_usage:
            await send([], usage=usage)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        self.stats.add("streamed")
        return response

    # ---- lifecycle --------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/health", self.health)
        app.router.add_get("/v1/health", self.health)
        app.router.add_get("/stats", self.stats_handler)
        return app

    async def start(self, port: int = 0) -> int:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        self.runner = web.AppRunner(
            self.make_app(),
            access_log=None,  # never log requests (they carry Authorization headers)
            handler_cancellation=True,  # a client that gives up (timeout fault) ends its handler
            shutdown_timeout=self.config.shutdown_timeout,
        )
        await self.runner.setup()
        site = web.SockSite(self.runner, sock, backlog=4096)
        await site.start()
        self.port = sock.getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self.runner is not None:
            runner, self.runner = self.runner, None
            await runner.cleanup()


class _ServerBase:
    """What the thread and the async variants share."""

    _app: _App

    @property
    def config(self) -> ServerConfig:
        """The live configuration; changing a field (e.g. ``fault_rate``) affects later requests."""
        return self._app.config

    @property
    def port(self) -> int:
        if self._app.port is None:
            raise RuntimeError("the server is not started")
        return self._app.port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return f"{self.url}/v1"

    @property
    def stats(self) -> dict[str, Any]:
        """A snapshot of the counters (see `Stats`)."""
        return self._app.stats.snapshot()


class TestServer(_ServerBase):
    """The server on a background thread with its own event loop; usable as a context manager.

    ``TestServer(latency_ms=..., fault_rate=..., seed=..., faults=..., hang_s=..., retry_after=...,
    models=..., port=0).start()`` → the object with ``.base_url``, ``.stats``, ``.reset()``,
    ``.stop()``.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, latency_ms: float = 0.0, fault_rate: float = 0.0, seed: int = 0, *,
                 faults: Iterable[str] | str = FAULT_KINDS, hang_s: float = 30.0,
                 retry_after: float = 0.1, models: Iterable[str] = DEFAULT_MODELS, port: int = 0,
                 shutdown_timeout: float = 0.5, style: str = "strict", text_only: Iterable[str] = (),
                 refusers: Iterable[str] = ()) -> None:  # fmt: skip
        config = ServerConfig(
            latency_ms=latency_ms,
            fault_rate=fault_rate,
            seed=seed,
            faults=faults if isinstance(faults, str) else tuple(faults),
            hang_s=hang_s,
            retry_after=retry_after,
            models=tuple(models),
            shutdown_timeout=shutdown_timeout,
            style=style,
            text_only=tuple(text_only),
            refusers=tuple(refusers),
        )
        self._app = _App(config)
        self._requested_port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> "TestServer":
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="memelens-test-server", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._error is not None:
            self._thread.join(timeout=5)
            self._thread = None
            raise RuntimeError(f"test server failed to start: {self._error}") from self._error
        if not self._ready.is_set():
            raise RuntimeError("test server did not start within 30 s")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(self._app.start(self._requested_port))
            except BaseException as exc:  # reported to start()
                self._error = exc
                return
            finally:
                self._ready.set()
            loop.run_forever()
            loop.run_until_complete(self._app.stop())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            loop.close()

    def reset(self) -> None:
        """Zero the stats and restart the fault sequence (safe from any thread)."""
        if self._loop is not None and self._loop.is_running():
            done = threading.Event()

            def _do() -> None:
                self._app.reset()
                done.set()

            self._loop.call_soon_threadsafe(_do)
            done.wait(timeout=10)
        else:
            self._app.reset()

    def stop(self) -> None:
        """Stop serving (in-flight requests get `shutdown_timeout` to finish) and join the thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._thread = None

    def __enter__(self) -> "TestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class AsyncTestServer(_ServerBase):
    """The server on the current event loop: ``async with AsyncTestServer(latency_ms=50) as s:``.
    Same arguments as `TestServer`."""

    def __init__(self, latency_ms: float = 0.0, fault_rate: float = 0.0, seed: int = 0, *,
                 faults: Iterable[str] | str = FAULT_KINDS, hang_s: float = 30.0,
                 retry_after: float = 0.1, models: Iterable[str] = DEFAULT_MODELS, port: int = 0,
                 shutdown_timeout: float = 0.5, style: str = "strict", text_only: Iterable[str] = (),
                 refusers: Iterable[str] = ()) -> None:  # fmt: skip
        config = ServerConfig(
            latency_ms=latency_ms,
            fault_rate=fault_rate,
            seed=seed,
            faults=faults if isinstance(faults, str) else tuple(faults),
            hang_s=hang_s,
            retry_after=retry_after,
            models=tuple(models),
            shutdown_timeout=shutdown_timeout,
            style=style,
            text_only=tuple(text_only),
            refusers=tuple(refusers),
        )
        self._app = _App(config)
        self._requested_port = port

    async def start(self) -> "AsyncTestServer":
        await self._app.start(self._requested_port)
        return self

    async def stop(self) -> None:
        await self._app.stop()

    def reset(self) -> None:
        self._app.reset()

    async def __aenter__(self) -> "AsyncTestServer":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()


def start_server(latency_ms: float = 0.0, fault_rate: float = 0.0, seed: int = 0, **kwargs: Any) -> TestServer:
    """Start a `TestServer` on a background thread and return it (also a context manager)."""
    return TestServer(latency_ms=latency_ms, fault_rate=fault_rate, seed=seed, **kwargs).start()


def spawn_server(latency_ms: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    """Start the server in its own process (so its CPU is not the caller's, as benchmarks need);
    return the process and its base URL. The caller terminates it."""
    server = subprocess.Popen([sys.executable, "-m", "memelens.testing.server", "--port", "0",
                               "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE, text=True)
    line = (server.stdout.readline() if server.stdout else "").strip()
    if not line.startswith("listening on "):
        server.kill()
        raise RuntimeError(f"test server did not start: {line!r}")
    return server, line.removeprefix("listening on ")


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m memelens.testing.server",
        description="Local OpenAI-compatible test server (127.0.0.1 only): fixed latency, "
        "deterministic format-aware answers, seeded fault injection.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind on 127.0.0.1 (0 = a free one)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="fixed delay per request")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="probability of a fault per request")
    parser.add_argument("--seed", type=int, default=0, help="seeds answers and the fault sequence")
    parser.add_argument("--hang-s", type=float, default=30.0, help="delay of a 'timeout' fault")
    parser.add_argument("--retry-after", type=float, default=0.1, help="Retry-After seconds of a 429")
    parser.add_argument(
        "--faults",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated enabled fault kinds (default {','.join(FAULT_KINDS)})",
    )
    parser.add_argument(
        "--models", default=",".join(DEFAULT_MODELS), help="model ids listed by /v1/models (any is accepted)"
    )
    parser.add_argument("--style", choices=("strict", "realistic"), default="strict",
                        help="strict: always the requested format; realistic: shaped like real models' "
                        "replies, with ground truth at /stats (memelens.testing.realistic)")
    parser.add_argument("--text-only", default="", help="models that answer an image with HTTP 500")
    parser.add_argument("--refusers", default="", help="realistic: models that refuse 30%% of analyses")
    return parser.parse_args(argv)


async def _serve(config: ServerConfig, port: int) -> None:
    app = _App(config)
    bound = await app.start(port)
    print(f"listening on http://{HOST}:{bound}/v1", flush=True)
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, done.set)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
    try:
        await done.wait()
    finally:
        await app.stop()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        config = ServerConfig(
            latency_ms=args.latency_ms,
            fault_rate=args.fault_rate,
            seed=args.seed,
            faults=args.faults,
            hang_s=args.hang_s,
            retry_after=args.retry_after,
            models=tuple(m.strip() for m in args.models.split(",") if m.strip()),
            style=args.style,
            text_only=tuple(m.strip() for m in args.text_only.split(",") if m.strip()),
            refusers=tuple(m.strip() for m in args.refusers.split(",") if m.strip()),
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(config, args.port))
    except OSError as exc:
        print(f"error: cannot listen on {HOST}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # pragma: no cover
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
