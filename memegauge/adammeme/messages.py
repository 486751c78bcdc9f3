"""How AdamMeme's agents see a meme: the picture as an image part (its alt text for text-only models)
followed by the prompt, and the request shape every stage shares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memegauge.types import (ChatRequest, ContentPart, ImagePart, Meme, Message, OutputKind, OutputSpec,
                            SamplingParams)


@dataclass(frozen=True)
class MemeView:
    """A meme as one stage shows it: which picture (original or text-erased) and which meme text.

    Scoring shows the erased picture with the original *or rewritten* text, so both are judged against
    the same picture (paper App. A); a text-only model then reads the caption plus that text."""

    meme: Meme
    picture: Path | None
    text: str

    @classmethod
    def original(cls, meme: Meme) -> MemeView:
        return cls(meme=meme, picture=meme.image, text=meme.text)

    def with_text(self, text: str) -> MemeView:
        return MemeView(meme=self.meme, picture=self.picture, text=text)

    def alt_text(self) -> str:
        return self.meme.model_copy(update={"text": self.text}).as_text()

    def parts(self) -> list[ContentPart | str]:
        """The picture part, or the meme as text when it has no picture."""
        if self.picture is None:
            return [self.alt_text()]
        return [ImagePart.of(self.picture, alt_text=self.alt_text())]


def agent_request(model: str, parts: list[Any], *, stage: str, temperature: float, max_tokens: int,
                  sample_index: int = 0, output: OutputSpec | None = None) -> ChatRequest:
    """One user message of `parts` (images first, then the prompt)."""
    return ChatRequest(model=model, messages=[Message.user(*parts)], stage=stage,
                       params=SamplingParams(temperature=temperature, max_tokens=max_tokens),
                       output=output or OutputSpec(kind=OutputKind.TEXT), sample_index=sample_index)


def json_output(schema: dict[str, Any], name: str) -> OutputSpec:
    return OutputSpec(kind=OutputKind.JSON, json_schema=schema, schema_name=name)
