"""A scripted MemeArena world (no network, deterministic): five targets of known quality that answer
every MemeArena prompt in its format, judges that prefer the better answer (one pair in four a tie),
and the configs and registries test_arena.py and test_scale.py run it with. `CALLS` counts each
model's calls per stage."""

from __future__ import annotations

import asyncio
import re
import zlib
from collections import Counter
from pathlib import Path

from memegauge.arena.config import ArenaConfig
from memegauge.arena.pipeline import run_arena
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.engine import Store
from memegauge.models.scripted import prompt_text, register_script
from memegauge.types import ChatRequest, ErrorClass, ModelCallError

TARGETS = ["t-best", "t-good", "t-mid", "t-weak", "t-worst"]
QUALITY = {"t-best": 9, "t-good": 7, "t-mid": 5, "t-weak": 3, "t-worst": 1}
SECTION = re.compile(r"'''\[Analysis of Model ([AB])\]\n(.*?)\n'''", re.S)
CALLS: Counter = Counter()


def _quality_of(text: str) -> int:
    found = re.findall(r"QUALITY=(\d+)", text)
    return int(found[0]) if found else 0


def _judge(prompt: str, bias: str | None) -> str:
    """Prefers the answer of higher quality; one pair of answers in four (by a hash of the two answers,
    whatever their order) is a tie, so the ratings have a finite maximum-likelihood estimate as real
    data does."""
    shown = dict(SECTION.findall(prompt))
    qa, qb = _quality_of(shown["A"]), _quality_of(shown["B"])
    verdict = "A" if qa > qb else "B" if qb > qa else "Tie (both strong)"
    if zlib.crc32("".join(sorted(shown.values())).encode()) % 4 == 0:
        verdict = "Tie (both weak)"
    verdict = bias or verdict
    lines = [f"[{d}] {verdict}" for d in ("Instruction Following", "Correctness", "Redundancy",
                                          "Relevance", "Accuracy")]
    return "Compared both.\n" + "\n".join(lines) + f"\n[Overall Judge] {verdict}"


def responder(name: str, judge_bias: str | None = None, drop_reasoning: bool = False):
    """The model's answer per stage (`register_script` dispatches on `request.stage`)."""
    def counted(answer):
        def respond(request: ChatRequest) -> str:
            CALLS[(name, request.stage)] += 1
            return answer(prompt_text(request))
        return respond

    def fuse(prompt: str) -> str:
        digest = zlib.crc32(prompt.encode()) % 10_000  # the merge depends on what it merged
        return (f"[Comparison]\n- fine\n[Synthesized Answer]\n[Background Knowledge] merged by {name}"
                f" #{digest}\n[Reasoning] merged reasoning")

    def answer(prompt: str) -> str:
        task = prompt.split("[Instruction]\n", 1)[1].split("\n", 1)[0]
        body = f"[Background Knowledge] {name} on {task} QUALITY={QUALITY.get(name, 5)}"
        return body if drop_reasoning else body + "\n[Reasoning] because of the context."

    return {
        "arena.contexts": counted(lambda p: "\n".join(f"[USER {i}]: A person of kind {i} who reads memes."
                                                      for i in (1, 2, 3))),
        "arena.tasks": counted(lambda p: '{"prompt_user1": "Explain the risks to user one.", "prompt_user2": '
                                         '"Explain the risks to user two.", "prompt_user3": "Explain the '
                                         'risks to user three."}'),
        "arena.answers": counted(answer),
        "arena.fusion": counted(fuse),
        "arena.judging": counted(lambda p: _judge(p, judge_bias)),
        "arena.detection": counted(lambda p: '{"harmful": true}'),
    }


def make_registry(biased: dict[str, str] | None = None, broken: set[str] = frozenset(),
                  sloppy: set[str] = frozenset()) -> ModelRegistry:
    specs = {}
    for name in ["agent", *TARGETS, "t-new"]:
        specs[name] = ModelSpec(name=name, backend="scripted", model=f"arena-test-{name}",
                                backoff_s=0.001, backoff_max_s=0.002, max_retries=1)
        if name in broken:
            def fail(request: ChatRequest) -> str:
                raise ModelCallError(ErrorClass.SERVER, "scripted 500")
            register_script(f"arena-test-{name}", fail)
        else:
            register_script(f"arena-test-{name}", responder(name, (biased or {}).get(name),
                                                            drop_reasoning=name in sloppy))
    return ModelRegistry(specs)


def write_memes(tmp_path: Path, n: int) -> Path:
    labels = ['["harmful"]', '["harmless"]', '["gender"]']
    lines = [f'{{"id": "m{i}", "text": "meme text {i}", "caption": "a picture", "labels": {labels[i % 3]}}}'
             for i in range(n)]
    path = tmp_path / "memes.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def config(tmp_path: Path, n_memes: int = 4, **overrides) -> ArenaConfig:
    fields = {"memes": write_memes(tmp_path, n_memes), "require_images": False, "agent": "agent",
              "targets": TARGETS, "judges": ["t-best", "t-mid", "t-worst"], "bootstrap_rounds": 0,
              **overrides}
    return ArenaConfig.model_validate(fields)


def run(cfg: ArenaConfig, store: Store, registry: ModelRegistry, name: str = "arena"):
    return asyncio.run(run_arena(cfg, store, registry, name, progress=False))


def records(store: Store, name: str, kind: str) -> list[dict]:
    return store.records(store.run_row(name)["id"], kind)
