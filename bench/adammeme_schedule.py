"""AdamMeme's call schedule: MemeGauge vs a re-creation of the original code's, side by side.

    python bench/adammeme_schedule.py [--memes 200] [--latency-ms 300] [--concurrency 64|auto] [--seed 0]

One protocol — the same synthetic meme set, the same two targets, the same sizes (paper defaults: 3
Miners, 3 reference candidates, cap 200, 10 seeds, N = 10), the same prompts, parsers and decisions
(MemeGauge' own stage functions, so both runs make the same kinds of calls and follow Algorithm 1) —
is run against one local test server of fixed latency (its own process), twice:

* **MemeGauge**: `run_adammeme`, both targets in one run (fresh store, per-model concurrency
  `--concurrency`; `auto`: the registry's default, the bounds then use its ceiling, 256, as C). Run
  once more with the first target alone (fresh store) to count what the
  second target adds.
* **original**: the schedule of the original scripts (Lbotirx/AdamMeme `scripts/`), threads making
  one blocking OpenAI-client call at a time:
  - `mining.py`: 8 threads over contiguous eighths of the memes; per meme 3 Miner calls one after
    another, then per new name the Judge and, if it said yes, the Examiner; one shared taxonomy;
  - `gen_misb.py`: categories one after another; 5 threads per category, each over its share; per
    sample the Narrator, the 3 reference candidates in a thread pool, then the senior agent;
  - `scoring.py`, per target (targets one after another, as the scripts are run per target):
    categories one after another, 3 threads per category; per sample the target, then the Scorer;
  - `refinement.py`, per target: categories in groups of 5 (one thread each); within a category
    Algorithm 1's chains in order, every call blocking (reference candidates in a thread pool).
  The original splits a category into `len // k` sized parts and crashes when a category has fewer
  than k samples; the re-creation uses parts of at least one sample. Text erasure is left out of
  both (the original worked from pre-erased pictures).

Prints each side's wall time and calls, the wall-time ratio, and MemeGauge' calls for the extra
target over its calls for the first, by stage (0 in every target-independent one). Last line:
`floor_ratio: <MemeGauge wall / Algorithm 1 floor>`; `--skip-original` measures MemeGauge alone.

Lower bounds on MemeGauge' wall time, printed before it; `bound_ratio` is the wall over the largest.
Every bound holds for any schedule that makes the protocol's calls in Algorithm 1's order, counted
from MemeGauge' own records, with `L` the latency and `C` the per-model concurrency:

* the **Algorithm 1 floor**: within a (target, category) the chains run in order and every step waits
  for the one before (each reads H and P as the previous left them, and goes on only if s' < s), so
  the category's steps form one sequence of calls: per Refiner try the Refiner and, when it ran, the
  validity check; per scored rewrite the reference (candidates, then senior — the target's answer
  alongside), then the Scorer. The longest such sequence × L is a wall time that no schedule running
  Algorithm 1's steps in its order can beat (only speculative execution, which makes calls whose
  inputs are not yet known and throws away the wrong guesses, could); the original's wall over it is
  the highest ratio an in-order schedule can show on this protocol.
* the **path bound**: that chain cannot start before its category's samples are all scored, and
  scoring cannot start before mining is done (sampling reads every meme's categories). Mining runs
  wave after wave (each wave's Miners see the taxonomy the wave before left): per wave ⌈miners ×
  memes / C⌉ rounds of Miner calls, a round of vetting when a name was vetted, then each re-judgement
  in meme order. After it, a sample needs the Narrator, the reference candidates, the senior and the
  Scorer one after another (4 calls). So: (mining's rounds + 4 + the floor's calls) × L.
* the **throughput bound**: a model serves at most C calls per L, so the busiest model's calls need
  `calls × L / C` (the agent's, at 1,000 memes: 12,892 calls, 100.7 s at 64 × 500 ms).
* the **inputs bound**: the category whose samples are scored last waits for mining (the larger of
  its path and its calls × L / C), then for every agent call that narrates, refers and scores the
  samples of every category (`calls × L / C`: none can start before mining is done), then runs its
  longest chain. Which category that is depends on the schedule, so the bound takes the
  category whose longest chain is shortest. No schedule knows the chains' lengths before they run;
  MemeGauge scores the largest categories first, the best guess (a category's steps are at most its
  sample count).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

import openai

from memegauge.adammeme.config import AdamConfig
from memegauge.adammeme.messages import MemeView
from memegauge.adammeme.mining import STAGE as MINING_STAGE
from memegauge.adammeme.mining import examiner_request, judge_request, majority, miner_request, parse_miner
from memegauge.adammeme.misbelief import narrator_request, parse_misbelief
from memegauge.adammeme.pipeline import run_adammeme
from memegauge.adammeme.records import MiningRecord
from memegauge.adammeme.reference import build_reference
from memegauge.adammeme.refinement import refine_category, validity_checked
from memegauge.adammeme.sampling import plan_samples
from memegauge.adammeme.scoring import Sample, rate, target_request
from memegauge.testing.synthetic_memes import write_meme_set
from memegauge.adammeme.taxonomy import Taxonomy
from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.engine import Store
from memegauge.memes import load_memes
from memegauge.models.openai_backend import OpenAIBackend
from memegauge.parse import starts_yes_no
from memegauge.testing.server import spawn_server
from memegauge.types import ChatRequest, ErrorClass, Meme, ParseFailure

TARGETS = ("target-a", "target-b")


def registry(url: str, concurrency: int | str) -> ModelRegistry:
    fields = {} if concurrency == "auto" else {"max_concurrency": concurrency}  # auto: the key left out
    return ModelRegistry({name: ModelSpec(name=name, backend="openai", model=name, base_url=url,
                                          timeout_s=120, **fields)
                          for name in ("agent", *TARGETS)})


# ---- the original code's schedule ------------------------------------------------------------------


@dataclass
class Answer:
    """What MemeGauge' stage functions read of a call outcome (`ok`, `value`, `text`, `error_class`)."""

    text: str | None
    value: Any

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def error_class(self) -> ErrorClass | None:
        return None if self.ok else ErrorClass.UNPARSEABLE


class BlockingEngine:
    """The original's way of calling a model: the calling thread waits for each answer. Exposes
    the engine's `chat`/`chat_many` so MemeGauge' stage functions run unchanged on top of it;
    `chat_many` uses a thread pool, as the original does for the 3 reference candidates."""

    def __init__(self, models: ModelRegistry, url: str) -> None:
        self.bodies = {name: OpenAIBackend(models.get(name))._body for name in models.names()}
        self.client = openai.OpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=120)
        self.lock = threading.Lock()
        self.calls = 0

    def call(self, request: ChatRequest, parse: Callable[[str], Any] | None = None) -> Answer:
        response = self.client.chat.completions.create(**self.bodies[request.model](request))
        with self.lock:
            self.calls += 1
        text = response.choices[0].message.content or ""
        value = parse(text) if parse else text
        return Answer(text, None if isinstance(value, ParseFailure) else value)

    async def chat(self, request: ChatRequest, parse=None, detect_refusal: bool = True) -> Answer:
        return self.call(request, parse)

    async def chat_many(self, requests: list[ChatRequest], parse=None, detect_refusal: bool = True) -> list[Answer]:
        with ThreadPoolExecutor(len(requests)) as pool:
            return list(pool.map(lambda r: self.call(r, parse), requests))


async def drain(records: Any) -> None:
    """Run a streaming stage to its end; the re-creation keeps no step records."""
    async for _ in records:
        pass


def in_threads(parts: list[Any], work: Callable[[Any], None]) -> None:
    with ThreadPoolExecutor(max(1, len(parts))) as pool:
        list(pool.map(work, parts))


def split(items: list[Any], ways: int) -> list[list[Any]]:
    """The original's `data[i:i + len // ways]` parts, at least one item each."""
    size = max(1, len(items) // ways)
    return [items[i:i + size] for i in range(0, len(items), size)]


def original_mining(memes: list[Meme], cfg: AdamConfig, engine: BlockingEngine) -> tuple[Taxonomy, dict]:
    taxonomy, lock, mined = Taxonomy(), threading.Lock(), {}

    def snapshot() -> Taxonomy:
        with lock:
            return Taxonomy.from_dict(taxonomy.to_dict())

    def mine_one(meme: Meme) -> None:
        answers = [engine.call(miner_request(meme, snapshot(), cfg, i), parse_miner).value
                   for i in range(cfg.miners)]
        seen = snapshot()
        kept, _ = majority(answers, seen, cfg.miners)
        new = {name: text for a in answers if a for name, text in a["new"].items()}
        for name, description in new.items():
            if seen.rejection(name):
                continue
            if engine.call(judge_request(name, description, seen, cfg), starts_yes_no).value and \
                    engine.call(examiner_request(meme, name, description, cfg), starts_yes_no).value:
                with lock:
                    if not taxonomy.rejection(name):
                        kept.append(taxonomy.add(name, description, meme.id))
        mined[meme.id] = MiningRecord(meme=meme.id, status="ok", categories=kept, votes={}, miners=[],
                                      proposals=[], labels=[])

    in_threads(split(memes, 8), lambda part: [mine_one(m) for m in part])
    return taxonomy, mined


def original_schedule(memes: list[Meme], cfg: AdamConfig, engine: BlockingEngine) -> None:
    by_id = {m.id: m for m in memes}
    taxonomy, mined = original_mining(memes, cfg, engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = plan_samples([m.id for m in memes], mined, taxonomy, cfg)
    views = {m: MemeView.original(by_id[m]) for entry in plan.values() for m in entry.sampled}
    misbeliefs: dict[tuple[str, str], str] = {}
    references: dict[tuple[str, str], dict] = {}

    def narrate_and_reference(category: str, part: list[str]) -> None:
        for m in part:
            sentence = engine.call(narrator_request(by_id[m], category, cfg), parse_misbelief).value
            if sentence:
                misbeliefs[(category, m)] = sentence
                references[(category, m)] = asyncio.run(build_reference(views[m], category, engine, cfg, 0))

    for category, entry in plan.items():  # gen_misb.py
        in_threads(split(entry.sampled, 5), lambda part, category=category: narrate_and_reference(category, part))
    for target in TARGETS:
        scored = {c: {} for c in plan}

        def score(category: str, part: list[str], target: str = target, scored: dict = scored) -> None:
            for m in part:
                if (category, m) in references:
                    result = asyncio.run(rate(views[m], category, references[(category, m)],
                                              engine.call(target_request(views[m], category, target, cfg)),
                                              engine, cfg))
                    scored[category][m] = Sample(id=f"{target}/{category}/{m}", category=category, meme_id=m,
                                                 misbelief=misbeliefs[(category, m)], view=views[m],
                                                 iteration=0, score=result["score"])

        for category, entry in plan.items():  # scoring.py
            in_threads(split(entry.sampled, 3), lambda part, category=category: score(category, part))
        categories = list(plan)
        for group in (categories[i:i + 5] for i in range(0, len(categories), 5)):
            in_threads(group, lambda c, target=target, scored=scored: asyncio.run(drain(refine_category(
                target, 0, c, [scored[c][m] for m in plan[c].sampled if m in scored[c]], plan[c].seeds,
                engine, cfg))))  # refinement.py


# ---- MemeGauge ------------------------------------------------------------------------------------


def calls_by_stage(store: Store) -> dict[str, int]:
    counts: dict[str, int] = {}
    for call in store.run_calls(store.run_row("bench")["id"]):
        counts[call.stage] = counts.get(call.stage, 0) + 1
    return counts


def calls_by_model(store: Store) -> dict[str, int]:
    counts: dict[str, int] = {}
    for call in store.run_calls(store.run_row("bench")["id"]):
        counts[call.model] = counts.get(call.model, 0) + 1
    return counts


def memegauge_run(cfg: AdamConfig, models: ModelRegistry, store_path: Path) -> tuple[float, int, Store]:
    store = Store(store_path)
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asyncio.run(run_adammeme(cfg, store, models, "bench", progress=False))
    wall = time.monotonic() - started
    return wall, store.run_summary("bench")["calls_made"], store


def step_path(step: dict[str, Any]) -> int:
    """Calls one refinement step makes one after another (see the module docstring)."""
    tries = sum(2 if validity_checked(a) else 1 for a in step["attempts"])
    return tries + (3 if step["rewrite"] is not None else 0)


def chain_paths(store: Store) -> dict[tuple[str, str], int]:
    """(target, category) → the calls its chains make one after another."""
    paths: dict[tuple[str, str], int] = {}
    for step in store.records(store.run_row("bench")["id"], "step"):
        where = (step["target"], step["category"])
        paths[where] = paths.get(where, 0) + step_path(step)
    return paths


def algorithm1_floor(store: Store) -> tuple[int, str]:
    """The longest in-order call sequence of one (target, category), and which one it is."""
    paths = chain_paths(store)
    where = max(paths, key=paths.get, default=("none", "none"))
    return paths.get(where, 0), "/".join(where)


def mining_rounds(store: Store, cfg: AdamConfig, concurrency: int) -> int:
    """Rounds of calls mining needs one after another (the path bound in the module docstring)."""
    records = store.records(store.run_row("bench")["id"], "mining")  # in meme-set order: wave by wave
    rounds = 0
    for start in range(0, len(records), cfg.mining_batch):
        proposals = [p for r in records[start:start + cfg.mining_batch] for p in r["proposals"]]
        vetted = [p for p in proposals if p["examiner"] is not None]
        vetting = len(vetted) + len({p["name"] for p in vetted})  # Examiners + one Judge per name
        rounds += -(-cfg.miners * min(cfg.mining_batch, len(records) - start) // concurrency)
        rounds += -(-vetting // concurrency) + sum(p.get("judge_first") is not None for p in proposals)
    return rounds


def chain_agent_calls(store: Store, cfg: AdamConfig) -> int:
    """The agent's calls inside the chains (at most: a rewrite counts its full reference and Scorer)."""
    calls = 0
    for step in store.records(store.run_row("bench")["id"], "step"):
        calls += sum(2 if validity_checked(a) else 1 for a in step["attempts"])
        calls += cfg.candidates + 2 if step["rewrite"] is not None else 0
    return calls


def inputs_bound(store: Store, cfg: AdamConfig, latency_s: float, concurrency: int) -> tuple[float, str]:
    """The inputs bound (module docstring), and how it is made up."""
    longest: dict[str, int] = {}
    for (_, category), path in chain_paths(store).items():
        longest[category] = max(longest.get(category, 0), path)
    category = min(longest, key=longest.get)
    agent = [c for c in store.run_calls(store.run_row("bench")["id"]) if c.model == cfg.agent]
    mining_calls = sum(c.stage.startswith(MINING_STAGE) for c in agent)
    mining = max(mining_rounds(store, cfg, concurrency), mining_calls / concurrency)
    after = len(agent) - mining_calls - chain_agent_calls(store, cfg)
    return (mining + after / concurrency + longest[category]) * latency_s, (
        f"mining ({mining_calls} calls, {mining:.0f} rounds), then {after} agent calls to narrate, refer "
        f"and score, then {category}'s longest chain ({longest[category]} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memes", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=300.0)
    parser.add_argument("--concurrency", type=lambda v: v if v == "auto" else int(v), default=64,
                        help="MemeGauge' per-model limit, or auto (the registry's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-original", action="store_true", help="measure MemeGauge alone (no original "
                        "schedule, which takes minutes)")
    args = parser.parse_args()
    limit = 256 if args.concurrency == "auto" else args.concurrency  # the bounds' C: auto's ceiling
    original_wall = None
    server, url = spawn_server(args.latency_ms)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            memes_path = write_meme_set(Path(tmp), args.memes, seed=args.seed)
            models = registry(url, args.concurrency)
            cfg = AdamConfig(memes=memes_path, agent="agent", targets=list(TARGETS), seed=args.seed,
                             erase=False)
            print(f"protocol: {args.memes} memes, targets {', '.join(TARGETS)}, server latency "
                  f"{args.latency_ms:g} ms, MemeGauge concurrency {args.concurrency} per model", flush=True)
            both_wall, both_calls, both_store = memegauge_run(cfg, models, Path(tmp) / "both.db")
            floor_calls, floor_where = algorithm1_floor(both_store)
            by_model = calls_by_model(both_store)
            print(f"MemeGauge, 2 targets: {both_wall:.1f} s, {both_calls} calls", flush=True)
            one_wall, one_calls, one_store = memegauge_run(cfg.model_copy(update={"targets": [TARGETS[0]]}),
                                                          models, Path(tmp) / "one.db")
            print(f"MemeGauge, 1 target:  {one_wall:.1f} s, {one_calls} calls", flush=True)
            both_stages, one_stages = calls_by_stage(both_store), calls_by_stage(one_store)
            originals = [len(s.records(s.run_row("bench")["id"], "reference")) for s in (one_store, both_store)]
            if not args.skip_original:
                engine = BlockingEngine(models, url)
                started = time.monotonic()
                original_schedule(load_memes(memes_path, require_images=True), cfg, engine)
                original_wall = time.monotonic() - started
                print(f"original schedule, 2 targets: {original_wall:.1f} s, {engine.calls} calls")
    finally:
        server.terminate()
        server.wait()
    extra = both_calls - one_calls
    floor = floor_calls * args.latency_ms / 1000
    print(f"Algorithm 1 floor: {floor_calls} calls in sequence ({floor_where}) = {floor:.1f} s")
    latency = args.latency_ms / 1000
    rounds = mining_rounds(both_store, cfg, limit)
    path = (rounds + 4 + floor_calls) * latency
    print(f"path bound: mining's {rounds} rounds + 4 calls to score + the floor's {floor_calls} = {path:.1f} s")
    busiest = max(by_model, key=by_model.get)
    throughput = by_model[busiest] * latency / limit
    print(f"throughput bound: {by_model[busiest]} calls to {busiest} at {limit} in flight "
          f"= {throughput:.1f} s; calls by model: {by_model}")
    inputs, how = inputs_bound(both_store, cfg, latency, limit)
    print(f"inputs bound: {how} = {inputs:.1f} s")
    bound = max(floor, path, throughput, inputs)
    print(f"bound_ratio: {both_wall / bound:.2f} (wall / the largest bound, {bound:.1f} s)")
    print(f"extra target: {extra} calls = {extra / one_calls:.1%} of the first target's {one_calls}; by stage:")
    for stage in sorted(set(both_stages) | set(one_stages)):
        print(f"  {stage:36} {both_stages.get(stage, 0) - one_stages.get(stage, 0):6}")
    print(f"  original references: {originals[0]} with one target, {originals[1]} with two (the same ones)")
    if original_wall is not None:
        print(f"original / floor: {original_wall / floor:.1f} (the highest ratio an in-order schedule can show)")
        print(f"ratio: {original_wall / both_wall:.1f}")
    print(f"floor_ratio: {both_wall / floor:.2f}")


if __name__ == "__main__":
    main()
