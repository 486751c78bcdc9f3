"""What a run will cost before it starts (`--dry-run`): the planned calls per stage and model, their
prompt and completion tokens and cost, and how many the store already has. No model is called.

Each method's planner (`plan_calls` in its ``plan.py``) lists `PlannedCalls`: a stage's call count —
`exact`, or `at most` / `expected` where the count depends on answers still to come (the method says
which) — the model, and what one call's size rests on. The tokens of one call are then:

* **measured** when the store holds answered calls of that stage and model (any run): their mean
  prompt and completion tokens — the estimate of a run like one already made;
* otherwise a **heuristic**: prompt ≈ the prompt's words × `TOKENS_PER_WORD` plus `IMAGE_TOKENS` per
  picture shown to a vision model; completion = the stage's `max_tokens` (an upper bound).

Cost is that of the calls still to pay for (a cached call is replayed at $0: a fully cached rerun costs $0) and
uses the registry's `price_in` / `price_out` (USD per 1M tokens); an API model with neither set
says "price unknown" rather than $0; a local backend, or a server on this machine (loopback) without
prices, costs $0. `cached`: calls the store already answered — this run's (same name), or, where the
planner knows the requests before the run (a benchmark's questions), the same requests answered by any run
(looked up by cache key, as the engine looks them up): a run replays them without paying again.

Beside the cost, which is an upper bound wherever a count or the tokens are, the **expected** cost:
the expected calls (a planner's expectation where its count is a bound, e.g. how long refinement chains
run, else the count) × the expected tokens of one call (measured means when the store has them; otherwise the
heuristic prompt and `EXPECTED_COMPLETION_SHARE` of `max_tokens` for the completion).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any
from collections.abc import Callable

from memegauge.engine.core import cache_key
from memegauge.models.spec import ModelRegistry
from memegauge.engine.store import Store

TOKENS_PER_WORD = 1.33  # English text in BPE tokenizers (GPT-4o, Qwen): ~0.75 words a token
IMAGE_TOKENS = 765  # one 1024×1024 picture at OpenAI's "high" detail; other providers are close
LOCAL_BACKENDS = {"embedded", "hf", "scripted"}  # run here: no price, cost $0
EXPECTED_COMPLETION_SHARE = 1 / 3
"""An answer's expected length as a share of its `max_tokens`, until the store has measured the stage: the
methods set their budgets with room to spare (about two to three times the published example answers, or
10 tokens for a 1–4 letter choice), so a completion at the budget is the bound, and a third of it the
expectation."""


@dataclass(frozen=True)
class PlannedCalls:
    """One stage's planned calls to one model."""

    stage: str
    model: str
    calls: int
    bound: str = "exact"  # exact, "at most" or "expected": how the count is known
    max_tokens: int = 0
    prompt_words: float = 0.0  # one call's prompt, in words (template + meme text), for the heuristic
    images: int = 1  # pictures one call shows
    note: str = ""  # what the count rests on, e.g. "memes × Miners"
    expected: float | None = None  # the expected count where `calls` is a bound (the planner's model); None: calls
    requests: tuple[Any, ...] = ()  # the calls' requests, where known before the run: looked up in the cache


@dataclass
class StageEstimate:
    stage: str
    model: str
    calls: int
    bound: str
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # None: price unknown
    basis: str  # measured (n calls) or heuristic
    note: str
    expected_calls: float = 0.0  # the planner's expected count (the count itself where it is exact)
    expected_cost: float | None = None  # expected calls × expected tokens (see the module docstring)


BOUNDS = ("exact", "at most", "expected")  # weakest last: a merged count takes its weakest part's
"""(a bound added to an expected count is no bound: the sum is expected)"""


def merged(plans: list[PlannedCalls]) -> list[PlannedCalls]:
    """One entry per (stage, model): a stage that a method plans in parts (AdamMeme scores originals,
    then refinement's rewrites, in the same stages) summed, its prompt size weighted by calls."""
    groups: dict[tuple[str, str], list[PlannedCalls]] = {}
    for plan in plans:
        groups.setdefault((plan.stage, plan.model), []).append(plan)
    out = []
    for (stage, model), parts in groups.items():
        calls = sum(p.calls for p in parts)
        out.append(PlannedCalls(
            stage=stage, model=model, calls=calls, bound=max((p.bound for p in parts), key=BOUNDS.index),
            max_tokens=max(p.max_tokens for p in parts),
            prompt_words=sum(p.prompt_words * p.calls for p in parts) / calls if calls else parts[0].prompt_words,
            images=parts[0].images, note="; ".join(dict.fromkeys(p.note for p in parts if p.note)),
            expected=sum(p.calls if p.expected is None else p.expected for p in parts),
            requests=tuple(r for p in parts for r in p.requests)))
    return out


def estimate(plans: list[PlannedCalls], registry: ModelRegistry, store: Store | None,
             run_name: str | None) -> list[StageEstimate]:
    """Every planned stage's tokens, cost and cached calls (see the module docstring)."""
    means = store.token_means() if store else {}
    have = store.answered_calls(run_name) if store and run_name else {}
    rows = []
    for plan in merged(plans):
        spec = registry.get(plan.model)
        measured = means.get((plan.model, plan.stage))
        if measured:
            n, prompt, completion = measured
            basis, expected_completion = f"measured ({n} calls)", completion
        else:
            images = plan.images * IMAGE_TOKENS if spec.vision else 0
            prompt, completion = plan.prompt_words * TOKENS_PER_WORD + images, plan.max_tokens
            basis, expected_completion = "heuristic", plan.max_tokens * EXPECTED_COMPLETION_SHARE
        prompt_tokens, completion_tokens = round(prompt * plan.calls), round(completion * plan.calls)
        expected_calls = min(plan.calls, plan.calls if plan.expected is None else plan.expected)
        cached = min(max(have.get((plan.model, plan.stage), 0), _stored(store, spec, plan.requests)), plan.calls)
        paid, expected_paid = plan.calls - cached, max(expected_calls - cached, 0.0)  # a cached call is replayed: $0
        rows.append(StageEstimate(
            stage=plan.stage, model=plan.model, calls=plan.calls, bound=plan.bound,
            cached=cached, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cost=_cost(spec, round(prompt * paid), round(completion * paid)), basis=basis, note=plan.note,
            expected_calls=expected_calls,
            expected_cost=_cost(spec, round(prompt * expected_paid), round(expected_completion * expected_paid))))
    return rows


def _stored(store: Store | None, spec: Any, requests: tuple[Any, ...]) -> int:
    """How many of these requests the store has answered, by any run: the engine's own cache lookup."""
    if store is None or not requests:
        return 0
    return store.answered_among([cache_key(spec, request) for request in requests])


def _cost(spec: Any, prompt_tokens: int, completion_tokens: int) -> float | None:
    if spec.price_in or spec.price_out or spec.backend in LOCAL_BACKENDS or _on_this_machine(spec.base_url):
        return spec.cost(prompt_tokens, completion_tokens)
    return None  # an API model without prices: unknown, not free


def _on_this_machine(urls: list[str]) -> bool:
    """Every endpoint is on loopback (a vLLM or llama.cpp server here): no bill, unless priced."""
    from urllib.parse import urlparse

    return bool(urls) and all(urlparse(u).hostname in ("127.0.0.1", "localhost", "::1") for u in urls)


def per_model(rows: list[StageEstimate]) -> dict[str, dict[str, Any]]:
    """Totals per model: calls (and whether any stage is a bound), cached, tokens, cost (None: unknown)."""
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        t = totals.setdefault(row.model, {"calls": 0, "bounded": False, "cost_bounded": False, "cached": 0,
                                          "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0,
                                          "expected_cost": 0.0})
        t["calls"] += row.calls
        t["bounded"] |= row.bound != "exact"
        t["cost_bounded"] |= _cost_is_a_bound(row)
        t["cached"] += row.cached
        t["prompt_tokens"] += row.prompt_tokens
        t["completion_tokens"] += row.completion_tokens
        t["cost"] = None if t["cost"] is None or row.cost is None else t["cost"] + row.cost
        t["expected_cost"] = None if t["expected_cost"] is None or row.expected_cost is None \
            else t["expected_cost"] + row.expected_cost
    return totals


def as_dict(rows: list[StageEstimate]) -> dict[str, Any]:
    return {"stages": [asdict(r) for r in rows], "models": per_model(rows)}


DRY_RUN_NOTE = ("dry run: nothing was sent and the store was not changed. Heuristic completion tokens are the "
                "max_tokens bound; measured ones are the store's means for that stage and model. 'expected $' "
                "is the likely cost: expected calls, measured tokens or a third of max_tokens (docs/runs.md).")


def estimate_tables(rows: list[StageEstimate], run_name: str, clean: Callable[[object], str]) -> list[Any]:
    """The dry run's rich tables: per stage and model, then per model; `clean` makes a name fit for
    the terminal (`memegauge.clikit.safe`)."""
    from rich.table import Table

    table = Table(title=f"dry run of {clean(run_name)}: planned calls (no model was called)")
    for column in ("stage", "model", "calls", "cached", "prompt tok", "completion tok", "cost $", "expected $",
                   "tokens from", "count"):
        table.add_column(column, justify="left" if column in ("stage", "model", "tokens from", "count") else "right")
    for r in rows:
        count = r.bound + (f": {r.note}" if r.note else "")
        table.add_row(clean(r.stage), clean(r.model), _calls(r.calls, r.bound), str(r.cached), f"{r.prompt_tokens:,}",
                      f"{r.completion_tokens:,}", _money(r.cost, _cost_is_a_bound(r)),
                      _expected(r.expected_cost, r.cost), r.basis, clean(count))
    models = Table(title="per model")
    for column in ("model", "calls", "cached", "prompt tok", "completion tok", "cost $", "expected $"):
        models.add_column(column, justify="left" if column == "model" else "right")
    for model, t in per_model(rows).items():
        models.add_row(clean(model), _calls(t["calls"], "at most" if t["bounded"] else "exact"), str(t["cached"]),
                       f"{t['prompt_tokens']:,}", f"{t['completion_tokens']:,}",
                       _money(t["cost"], t["cost_bounded"]), _expected(t["expected_cost"], t["cost"]))
    return [table, models]


def _calls(n: int, bound: str) -> str:
    return {"exact": f"{n:,}", "at most": f"≤ {n:,}", "expected": f"~ {n:,}"}.get(bound, f"{n:,}")


def _cost_is_a_bound(row: StageEstimate) -> bool:
    """The cost is an upper bound when the calls are, or when the tokens are the heuristic's (completion at
    max_tokens, every picture billed)."""
    return row.bound == "at most" or row.basis == "heuristic"


def _expected(expected: float | None, cost: float | None) -> str:
    """The expected cost, marked `~` where it differs from the cost column's figure."""
    if expected is None:
        return "price unknown"
    return f"~ {expected:.4f}" if cost is not None and expected < cost else f"{expected:.4f}"


def _money(cost: float | None, upper: bool = False) -> str:
    if cost is None:
        return "price unknown"
    return f"≤ {cost:.4f}" if upper and cost > 0 else f"{cost:.4f}"


def versus_run(rows: list[StageEstimate], store: Store, name: str) -> list[dict[str, Any]]:
    """Each estimated (stage, model) beside what run `name` actually did: its calls, tokens and cost
    (`bench/dry_run_accuracy.py`, tests/test_cost.py)."""
    real = store.call_totals(store.run_row(name)["id"])
    out = []
    for r in rows:
        did = real.get((r.model, r.stage), {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0})
        out.append({"stage": r.stage, "model": r.model, "bound": r.bound, "basis": r.basis,
                    "calls": (r.calls, did["calls"]), "prompt_tokens": (r.prompt_tokens, did["prompt_tokens"]),
                    "completion_tokens": (r.completion_tokens, did["completion_tokens"]),
                    "cost": (r.cost, did["cost"])})
    return out
