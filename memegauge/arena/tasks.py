"""Task formulation (paper §2.2, Fig. 8): the same agent turns each meme's three user profiles into three
context-specific task prompts, returned as JSON ``prompt_user1..3``. Target-independent."""

from __future__ import annotations

from typing import Any

from memegauge.arena.common import failure_fields, meme_part, task_key
from memegauge.arena.contexts import USERS
from memegauge.engine import Engine
from memegauge.parse import parse_json
from memegauge.prompts import render_prompt
from memegauge.types import (ChatRequest, Meme, Message, OutputKind, OutputSpec, ParseFailure,
                            SamplingParams)

STAGE = "arena.tasks"
KEYS = tuple(f"prompt_user{i}" for i in range(1, USERS + 1))
_MAX_TASK_CHARS = 600
_JSON_OVERHEAD_TOKENS = 24  # braces, keys, quotes of the three-prompt object
_CHARS_PER_TOKEN = 3  # a cautious rate for English prose, so the object closes within the budget


def task_schema(max_tokens: int) -> dict[str, Any]:
    """The three prompts as a JSON object. Each prompt's length is capped so that the whole object
    fits in `max_tokens`: a constraining backend then closes the JSON instead of being cut mid-string
    (which no retry could fix, the request being the same)."""
    share = (max_tokens - _JSON_OVERHEAD_TOKENS) * _CHARS_PER_TOKEN // USERS
    longest = max(20, min(_MAX_TASK_CHARS, share))
    return {"type": "object", "additionalProperties": False, "required": list(KEYS),
            "properties": {k: {"type": "string", "minLength": 10, "maxLength": longest} for k in KEYS}}


def task_request(meme: Meme, personas: list[str], agent: str, max_tokens: int) -> ChatRequest:
    profiles = "\n".join(f"[USER {i}]: {p}" for i, p in enumerate(personas, start=1))
    prompt = render_prompt("arena_task", personas=profiles)
    return ChatRequest(
        model=agent, messages=[Message.user(meme_part(meme), prompt)],
        params=SamplingParams(temperature=1.0, max_tokens=max_tokens),
        output=OutputSpec(kind=OutputKind.JSON, json_schema=task_schema(max_tokens), schema_name="tasks"),
        stage=STAGE)


def parse_tasks(text: str) -> list[str] | ParseFailure:
    """The three task prompts in user order; each must be a non-empty string."""
    value = parse_json(text)
    if isinstance(value, ParseFailure):
        return value
    if not isinstance(value, dict):
        return ParseFailure(reason="expected a JSON object with prompt_user1..3", text=text[:500])
    bad = [k for k in KEYS if not isinstance(value.get(k), str) or not value[k].strip()]
    if bad:
        return ParseFailure(reason=f"missing or empty {', '.join(bad)}", text=text[:500])
    return [value[k].strip() for k in KEYS]


async def formulate_tasks(memes: list[Meme], contexts: dict[str, dict[str, Any]], agent: str,
                          max_tokens: int, tasks_per_meme: int,
                          engine: Engine) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """`tasks` records by meme ({meme, ok, prompts, error...}, `TasksRecord`) and one `task` record per
    task in use ({task, meme, index, persona, prompt}, `TaskRecord`): the first `tasks_per_meme` of
    each meme, in meme order."""
    ready = [m for m in memes if contexts[m.id]["ok"]]
    outcomes = await engine.chat_many(
        [task_request(m, contexts[m.id]["personas"], agent, max_tokens) for m in ready],
        parse=parse_tasks)
    per_meme = {m.id: {"meme": m.id, "prompts": o.value or [], **failure_fields(o)}
                for m, o in zip(ready, outcomes, strict=True)}
    tasks = []
    for meme in ready:
        if not per_meme[meme.id]["ok"]:
            continue
        for i in range(1, tasks_per_meme + 1):
            tasks.append({"task": task_key(meme.id, i), "meme": meme.id, "index": i,
                          "persona": contexts[meme.id]["personas"][i - 1],
                          "prompt": per_meme[meme.id]["prompts"][i - 1]})
    return per_meme, tasks
