"""The benchmark kit's stored record: one per (task, item) of a run."""

from __future__ import annotations

from pydantic import Field

from memegauge.records import KeySpelling, Record


class BenchAnswer(Record):
    """One item's answer to one task, as asked, answered and read."""

    KIND = "benchmark.answer"
    KEY = ("task", "item")
    KEYS = KeySpelling("|")

    task: str = Field(description="The task's name in the benchmark's YAML.")
    item: str = Field(description="The item's id in its split.")
    gold: str | list[str] = Field(description="The gold answer: a class, a letter, or a list of classes.")
    ok: bool = Field(description="Whether the call answered (a failed call is never scored).")
    answer: str = Field(description="The model's answer text ('' when the call failed).")
    read: str | list[str] | None = Field(description="The answer read as the task's kind; None when unreadable "
                                                     "or failed.")
    readable: bool = Field(description="Whether the answer could be read (False for a failed call too).")
    p_positive: float | None = Field(default=None, description="P(positive class) from the yes/no tokens' "
                                                               "log-probabilities; None when the backend gave none.")
    groups: dict[str, str] = Field(default_factory=dict, description="The item's group values (language, …).")
    options: int = Field(default=0, description="A letter task's number of options (0 otherwise).")
    classes: list[str] = Field(default_factory=list, description="The item's own classes where the task reads "
                                                                 "them from the data (`labels_from`); [] otherwise.")
    error: str = Field(default="", description="The failed call's error ('' when it answered).")
    prompt: str = Field(description="The exact prompt text sent (the picture, when there is one, goes with it).")
