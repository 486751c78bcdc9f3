"""`--dry-run`'s estimate beside the real run, for AdamMeme, MemeArena and MemeQA against the local
test server (tests/helpers/runs.py's small world; every model priced $2.50 / $10 per 1M tokens).

    python bench/dry_run_accuracy.py

Per method, three figures side by side, summed over stages and models — calls, prompt tokens,
completion tokens, cost — as `estimate / real = ratio`:

* `heuristic`: the estimate on a fresh store (prompt words × 1.33 + 765 per picture; completion at
  max_tokens: an upper bound). The test server counts a word as a token and a picture as nothing, so
  the heuristic's prompt figure is high here by design;
* `measured`: the estimate after a smaller run of the same method (its per-stage token means);
* the count's kind: how many stages are exact, expected or upper bounds.

The real run is the full one (AdamMeme 12 memes, Arena 3 memes, MemeQA 22 questions); the smaller
calibration run uses half the items. tests/test_cost.py checks the same relations with margins.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from memegauge.config import load_config, load_registry  # noqa: E402
from memegauge.engine import Store  # noqa: E402
from memegauge.engine.estimate import estimate, versus_run  # noqa: E402
from memegauge.testing.server import start_server  # noqa: E402
from helpers.runs import QA_MODEL, World, world  # noqa: E402

PRICES = "price_in: 2.5, price_out: 10, "
FIGURES = ("calls", "prompt_tokens", "completion_tokens", "cost")


def priced_world(root: Path, base_url: str) -> World:
    w = world(root, base_url)
    w.models.write_text(w.models.read_text().replace("backoff_s", PRICES + "backoff_s"))
    return w


def plans_for(method: str, w: World, limit: int | None) -> list:
    """The planned calls of the method's run on the world (with `limit` items), as --dry-run plans them."""
    registry = load_registry(w.models)
    if method == "adammeme":
        from memegauge.adammeme.config import AdamConfig
        from memegauge.adammeme.pipeline import check_inputs
        from memegauge.adammeme.plan import plan_calls

        cfg = load_config(w.adam, AdamConfig, {"limit": limit} if limit else {})
        return plan_calls(cfg, check_inputs(cfg, registry))
    if method == "arena":
        from memegauge.arena.config import ArenaConfig
        from memegauge.arena.pipeline import read_inputs
        from memegauge.arena.plan import plan_calls

        config = load_config(w.arena, ArenaConfig, {"limit": limit} if limit else {})
        return plan_calls(config, read_inputs(config, registry).memes)
    from memegauge.memeqa.config import EvalConfig
    from memegauge.memeqa.plan import plan_eval
    from memegauge.memeqa.runs import read_eval_inputs

    questions, memes = read_eval_inputs(EvalConfig(data=w.qa_data, images=w.qa_images, version="none-minus",
                                                   split="dev", model=QA_MODEL, limit=limit))
    return plan_eval(questions, memes, model=QA_MODEL, version="none-minus", circular=False)


def run_cli(method: str, w: World, name: str, limit: int | None) -> None:
    more = ["--limit", str(limit)] if limit else []
    if method == "adammeme":
        args = ["adam", "-c", str(w.adam), *more]
    elif method == "arena":
        args = ["arena", "-c", str(w.arena), *more]
    else:
        args = ["qa", "eval", "--data", str(w.qa_data), "--images", str(w.qa_images), "--version", "none-minus",
                "--split", "dev", "--model", QA_MODEL, *more]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):  # the runs' tables: not ours
        warnings.simplefilter("ignore")
        assert w.cli(*args, "--run", name) == 0, f"{method} run {name} failed"


FULL = {"adammeme": None, "arena": None, "memeqa": None}
SMALL = {"adammeme": 6, "arena": 2, "memeqa": 11}


def measure(method: str, root: Path, base_url: str) -> dict:
    """Estimates (heuristic, then measured after a smaller run) and the real full run's figures."""
    w = priced_world(root, base_url)
    registry = load_registry(w.models)
    plans = plans_for(method, w, FULL[method])
    heuristic = estimate(plans, registry, None, "full")
    run_cli(method, w, "small", SMALL[method])
    store = Store(w.store)
    measured = estimate(plans, registry, store, "full")
    run_cli(method, w, "full", FULL[method])
    result = {"heuristic": versus_run(heuristic, store, "full"), "measured": versus_run(measured, store, "full")}
    store.close()
    return result


def totals(rows: list[dict]) -> dict[str, tuple[float, float]]:
    return {f: (sum(r[f][0] or 0 for r in rows), sum(r[f][1] or 0 for r in rows)) for f in FIGURES}


def main() -> None:
    with start_server() as server, tempfile.TemporaryDirectory() as tmp:
        for method in ("adammeme", "arena", "memeqa"):
            result = measure(method, Path(tmp) / method, server.base_url)
            kinds = {}
            for row in result["measured"]:
                kinds[row["bound"]] = kinds.get(row["bound"], 0) + 1
            print(f"== {method}: {len(result['measured'])} (stage, model) rows; counts: "
                  + ", ".join(f"{n} {k}" for k, n in kinds.items()))
            for basis in ("heuristic", "measured"):
                figures = totals(result[basis])
                print(f"  {basis:9s} " + "  ".join(
                    f"{f} {est:,.4g} / {real:,.4g} = {est / real:.2f}" if real else f"{f} {est:,.4g} / 0"
                    for f, (est, real) in figures.items()))
            bad = [r for r in result["measured"] if r["bound"] == "exact" and r["calls"][0] != r["calls"][1]]
            over = [r for r in result["measured"] if r["bound"] == "at most" and r["calls"][0] < r["calls"][1]]
            print(f"  exact stages off: {len(bad)}; upper bounds exceeded: {len(over)}")


if __name__ == "__main__":
    main()
