"""The contract: typed records and protocols every part of MemeGauge speaks.

Data flows one way — memes → stages → store → report — and every hop carries one of these records.
They are pydantic models so that they validate on the way in, serialise canonically for the cache
key and the store, and document themselves. Nothing here does I/O except hashing an image file.
"""

from __future__ import annotations

import enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

# The errors live in `memegauge.errors` (no pydantic: the command line imports them at start-up); they are
# re-exported here, where they always were.
from memegauge.errors import (MAX_PAUSE_S, ActionableError, ErrorClass, InputError, MemeGaugeError,  # noqa: F401
                              ModelCallError, clamp_pause, printable)
from memegauge.files import sha256_file

# --------------------------------------------------------------------------------------------------
# Memes
# --------------------------------------------------------------------------------------------------


class Meme(BaseModel):
    """One meme of a meme set."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Unique id within its meme set.")
    image: Path | None = Field(
        default=None, description="Absolute path of the image file; None for a text-only meme."
    )
    text: str = Field(default="", description="The text written on the meme (OCR or annotation).")
    caption: str = Field(
        default="", description="A short description of the picture, used by text-only models."
    )
    labels: list[str] = Field(
        default_factory=list, description="Optional gold labels (e.g. 'harmful', a category name)."
    )
    source: str = Field(default="", description="Where the meme comes from (data set name, URL).")
    extra: dict[str, Any] = Field(
        default_factory=dict, description="The meme set's other keys, kept as given (FHM's integer `label`, "
        "a data set's `split` or `target`): a reader never drops a label without a word."
    )

    @property
    def image_sha256(self) -> str | None:
        """sha256 of the image bytes, or None when there is no image."""
        return file_sha256(self.image) if self.image else None

    def as_text(self) -> str:
        """How a text-only model sees this meme: its text plus the caption of its picture."""
        parts = [f'Meme text: "{self.text}"']
        if self.caption:
            parts.append(f"Picture: {self.caption}")
        return "\n".join(parts)


@lru_cache(maxsize=65536)
def _sha256_cached(path: str, mtime_ns: int, size: int) -> str:
    return sha256_file(path)


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised on (path, mtime, size) so a run hashes each image once."""
    stat = Path(path).stat()
    return _sha256_cached(str(path), stat.st_mtime_ns, stat.st_size)


# --------------------------------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------------------------------


class TextPart(BaseModel):
    """A piece of text inside a message."""

    model_config = ConfigDict(frozen=True)

    type: Literal["text"] = "text"
    text: str = Field(description="The text.")


class ImagePart(BaseModel):
    """An image inside a message. The bytes stay on disk; only the hash enters the cache key."""

    model_config = ConfigDict(frozen=True)

    type: Literal["image"] = "image"
    path: Path = Field(description="Image file to send (read when the request is sent).")
    sha256: str = Field(description="sha256 of the file's bytes; part of the cache key.")
    alt_text: str = Field(
        default="",
        description="What a text-only model receives instead of the picture (meme text + caption).",
    )

    @classmethod
    def of(cls, path: Path, alt_text: str = "") -> ImagePart:
        return cls(path=Path(path), sha256=file_sha256(Path(path)), alt_text=alt_text)


ContentPart = TextPart | ImagePart


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"] = Field(description="Who speaks.")
    content: list[ContentPart] = Field(description="Text and image parts, in order.")

    @classmethod
    def user(cls, *parts: str | ContentPart) -> Message:
        return cls(role="user", content=[TextPart(text=p) if isinstance(p, str) else p for p in parts])

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", content=[TextPart(text=text)])

    def text(self) -> str:
        """The message's text parts joined, images replaced by their alt text."""
        return "\n".join(p.text if isinstance(p, TextPart) else p.alt_text for p in self.content)


MAX_TOKENS = 131_072  # the largest generation budget a request or a method config may ask for


class SamplingParams(BaseModel):
    """Decoding parameters; all of them are part of the cache key."""

    model_config = ConfigDict(frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="0 = greedy.")
    max_tokens: int = Field(default=512, ge=1, le=MAX_TOKENS,
                            description="Upper bound on generated tokens (at most MAX_TOKENS).")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    seed: int | None = Field(default=None, description="Backend sampling seed, where supported.")


class OutputKind(str, enum.Enum):
    """The shape of answer a stage expects; backends that can constrain decoding use it."""

    TEXT = "text"  # free text
    JSON = "json"  # an object matching `OutputSpec.json_schema`
    RATING = "rating"  # an explanation ending in `Rating: [[n]]`
    VERDICT = "verdict"  # a judgment ending in an `[Overall Judge]` verdict
    CHOICE = "choice"  # multiple-choice letters


class OutputSpec(BaseModel):
    """What the answer must look like. A backend constrains to it where it can (JSON schema, GBNF);
    every backend's answer is still parsed, so unconstrained endpoints work too."""

    model_config = ConfigDict(frozen=True)

    kind: OutputKind = Field(default=OutputKind.TEXT, description="Answer shape.")
    json_schema: dict[str, Any] | None = Field(
        default=None, description="For JSON: the schema (objects, arrays with maxItems, enums)."
    )
    schema_name: str = Field(default="answer", description="Name sent with a json_schema format.")
    rating_range: tuple[int, int] = Field(default=(1, 10), description="For RATING: n's bounds.")
    n_options: int = Field(default=4, ge=1, le=26, description="For CHOICE: number of options.")
    multi: bool = Field(default=False, description="For CHOICE: several letters allowed.")
    allow_none: bool = Field(default=False, description="For CHOICE: 'N' (none) allowed.")
    sections: tuple[str, ...] = Field(
        default=(), description="For TEXT: bracketed section headers the answer must contain."
    )
    logprobs: bool = Field(
        default=False, description="Ask for the first answer token's top log-probabilities (a benchmark's "
        "P(yes)); kept out of the cache key while False, so earlier calls' keys stay as they were."
    )


class ChatRequest(BaseModel):
    """One call to a model, as the engine caches and stores it."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Registry name of the model (not the provider's model id).")
    messages: list[Message] = Field(description="The conversation.")
    params: SamplingParams = Field(default_factory=SamplingParams, description="Decoding.")
    output: OutputSpec = Field(default_factory=OutputSpec, description="Expected answer shape.")
    sample_index: int = Field(
        default=0,
        ge=0,
        description="Distinguishes repeated draws of the same request (e.g. 3 Miners at T=1, "
        "`--repeat K`); part of the cache key.",
    )
    stage: str = Field(default="", description="Which stage asks (accounting only; not in key).")


# --------------------------------------------------------------------------------------------------
# Results and records
# --------------------------------------------------------------------------------------------------


class Usage(BaseModel):
    """Token counts reported by the backend (or counted by it)."""

    prompt_tokens: int = Field(default=0, ge=0, description="Tokens read.")
    completion_tokens: int = Field(default=0, ge=0, description="Tokens written.")

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ChatResult(BaseModel):
    """What a backend returns for one successful HTTP/in-process call."""

    text: str = Field(description="The assistant message's text.")
    usage: Usage = Field(default_factory=Usage, description="Token counts.")
    finish_reason: str = Field(default="stop", description="'stop', 'length', 'content_filter'…")
    reasoning: str = Field(
        default="", description="A reasoning model's thinking (a `reasoning_content` field or "
        "`<think>` blocks): kept, never parsed as the answer.")
    served_model: str = Field(default="", description="Model id the backend says it served.")
    logprobs: dict[str, float] = Field(
        default_factory=dict, description="The first answer token's top alternatives → log-probability, "
        "when asked for (`OutputSpec.logprobs`) and the backend gives them; {} otherwise.")
    replica: str = Field(default="", description="Which base_url replica answered, if several.")
    latency_s: float = Field(default=0.0, ge=0.0, description="Wall time of the call.")


class CallStatus(str, enum.Enum):
    OK = "ok"
    FAILED = "failed"


class CallRecord(BaseModel):
    """One logical model call as stored (the response cache row). Written before its result is used."""

    @property
    def truncated(self) -> bool:
        """The output was cut at max_tokens: flagged and counted, never taken as complete silently."""
        return self.finish_reason == "length"

    key: str = Field(description="sha256 cache key over model, params, messages, images, sample.")
    model: str = Field(description="Registry name.")
    stage: str = Field(default="", description="Stage that first asked for it.")
    request: dict[str, Any] = Field(
        default_factory=dict, description="The request, images as sha256 only; no key. Empty when "
        "read back for a replay (`Store.get_call(key)` without `with_request`).")
    status: CallStatus = Field(description="ok, or failed after the retry bound.")
    text: str | None = Field(default=None, description="Final answer text (None if failed).")
    error_class: ErrorClass | None = Field(default=None, description="Class of the last failure.")
    error: str = Field(default="", description="Last failure's message (never holds a key).")
    attempts: int = Field(default=1, ge=1, description="HTTP / in-process attempts made.")
    finish_reason: str = Field(
        default="", description="Why the last attempt's output ended: 'stop', 'length' (cut at "
        "max_tokens: the output is incomplete), 'content_filter'; '' when no output came.")
    reasoning: str = Field(default="", description="Reasoning output kept apart from `text`.")
    logprobs: dict[str, float] = Field(
        default_factory=dict, description="The first answer token's top log-probabilities, when asked for "
        "and given ({} otherwise): `ChatResult.logprobs`.")
    images_sent: int = Field(
        default=0, ge=0, description="Images the model received as pictures (0 when it was sent "
        "their alt text instead, being text-only).")
    usage: Usage = Field(default_factory=Usage, description="Tokens over all attempts.")
    cost: float = Field(default=0.0, ge=0.0, description="USD from the registry's prices.")
    latency_s: float = Field(default=0.0, ge=0.0, description="Wall time over all attempts.")
    created: float = Field(default=0.0, description="Unix time it was stored.")


class ParseFailure(BaseModel):
    """A typed parse failure: parsers return this instead of raising, with the reason."""

    reason: str = Field(description="Why the text did not parse.")
    text: str = Field(default="", description="The text (possibly truncated) that failed.")

    def __bool__(self) -> bool:  # a failure is falsy, so `if result:` reads naturally
        return False


# --------------------------------------------------------------------------------------------------
# Protocols
# --------------------------------------------------------------------------------------------------


@runtime_checkable
class ModelBackend(Protocol):
    """One async protocol for every backend (openai, embedded, scripted, hf).

    `complete` performs exactly one attempt and raises `ModelCallError` with its class on failure;
    retries, limits, caching and storage are the engine's job, never the backend's.
    """

    vision: bool

    async def complete(self, request: ChatRequest) -> ChatResult: ...

    async def aclose(self) -> None: ...
