"""Benchmark MemeArena ranking on a synthetic 100k-battle file, and check BT against FastChat's way.

    python bench/arena_rank.py [--battles 100000] [--rounds 1000] [--seed 0]

1. Writes a seeded Chatbot Arena format JSONL file (8 models with known strengths, both tie
   kinds) to a temporary directory and times the command `memegauge arena rank FILE --rounds 1000`
   (a fresh process: start-up and imports included) and `rank_battle_file` in-process on it.
2. Fits Bradley–Terry the way FastChat's `compute_mle_elo` does — every battle duplicated into a
   design matrix X with +log(base) / −log(base) in the two models' columns, a tie labelled a win for
   model_a in one copy and for model_b in the other (so it weighs half a win each way), an
   unpenalised logistic regression without intercept, ratings = scale·coef + init — here with
   scipy's L-BFGS-B instead of scikit-learn, and the anchor difference removed by matching means.
3. Prints both methods' ratings, times, and the largest rating difference (the command's output
   included); the last line is ``max_abs_diff: X``. Exits 1 when X ≥ 0.01 rating points.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memegauge.arena.battle_file import rank_battle_file  # noqa: E402
from memegauge.arena.battles import battles_from_records  # noqa: E402
from memegauge.arena.ranking import bootstrap_bt, compute_bt, compute_online_elo  # noqa: E402

STRENGTHS = {  # true Elo-scale strengths of the synthetic models
    "gemini-2": 1250.0,
    "qwen2.5-vl-32b": 1180.0,
    "gpt-4o-mini": 1120.0,
    "gpt-4o": 1060.0,
    "qwen-vl-max": 1000.0,
    "pixtral-124b": 940.0,
    "llava-next-34b": 870.0,
    "llava-next-8b": 800.0,
}
TIE_RATE, BOTHBAD_SHARE = 0.2, 0.4  # 20% ties, 40% of them "tie (bothbad)"


def synthetic_records(count: int, seed: int) -> list[dict]:
    """`count` battles between uniformly drawn pairs; outcome by BT on STRENGTHS, ties TIE_RATE."""
    rng = np.random.default_rng(seed)
    names = np.array(list(STRENGTHS))
    strength = np.array(list(STRENGTHS.values()))
    a = rng.integers(0, len(names), count)
    b = (a + rng.integers(1, len(names), count)) % len(names)
    p_a = 1.0 / (1.0 + 10.0 ** ((strength[b] - strength[a]) / 400.0))
    winner = np.where(rng.random(count) < p_a, "model_a", "model_b").astype(object)
    tie = rng.random(count) < TIE_RATE
    winner[tie] = np.where(rng.random(int(tie.sum())) < BOTHBAD_SHARE, "tie (bothbad)", "tie")
    judges = np.array(["judge-1", "judge-2", "judge-3"])[rng.integers(0, 3, count)]
    return [
        {"model_a": str(x), "model_b": str(y), "winner": str(w), "judge": str(j)}
        for x, y, w, j in zip(names[a], names[b], winner, judges, strict=True)
    ]


def fastchat_mle_elo(records: list[dict], scale: float = 400, base: float = 10, init: float = 1000):
    """FastChat `compute_mle_elo`, with scipy in place of sklearn's LogisticRegression(penalty=None,
    fit_intercept=False): duplicate the battles; X[row, a] = +log(base), X[row, b] = −log(base);
    Y = 1 for model_a wins in both copies and for ties in the first copy only."""
    models = sorted({r["model_a"] for r in records} | {r["model_b"] for r in records})
    index = {m: i for i, m in enumerate(models)}
    a = np.array([index[r["model_a"]] for r in records])
    b = np.array([index[r["model_b"]] for r in records])
    winner = np.array([r["winner"] for r in records])
    n_rows, p = 2 * len(records), len(models)
    a2, b2 = np.concatenate([a, a]), np.concatenate([b, b])
    X = np.zeros((n_rows, p))
    X[np.arange(n_rows), a2] = +math.log(base)
    X[np.arange(n_rows), b2] = -math.log(base)
    Y = np.zeros(n_rows)
    Y[np.concatenate([winner == "model_a", winner == "model_a"])] = 1.0
    tie = (winner == "tie") | (winner == "tie (bothbad)")
    Y[: len(records)][tie] = 1.0  # one tie -> one A win (first copy) + one B win (second copy)

    def loss(w):  # mean log-loss of an intercept-free, unpenalised logistic regression
        z = X @ w
        return float(np.mean(np.logaddexp(0.0, z) - Y * z)), X.T @ (expit(z) - Y) / n_rows

    w = minimize(
        loss, np.zeros(p), jac=True, method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000},
    ).x
    return dict(zip(models, scale * w + init, strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    records = synthetic_records(args.battles, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "battles.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        size_mb = path.stat().st_size / 1e6
        command = [sys.executable, "-m", "memegauge.cli", "arena", "rank", str(path),
                   "--rounds", str(args.rounds), "--seed", str(args.seed)]
        start = time.perf_counter()
        cli = subprocess.run(command, capture_output=True, text=True, check=True)
        cli_s = time.perf_counter() - start
        start = time.perf_counter()
        text = rank_battle_file(path, fmt="json", bootstrap_rounds=args.rounds, seed=args.seed)
        file_s = time.perf_counter() - start
        start = time.perf_counter()
        rank_battle_file(path, fmt="md", bootstrap_rounds=args.rounds, seed=args.seed)
        md_s = time.perf_counter() - start
    result = json.loads(text)

    timings = {}
    start = time.perf_counter()
    battles = battles_from_records(records)
    timings["battles_from_records"] = time.perf_counter() - start
    for label, fn in (
        ("compute_online_elo", lambda: compute_online_elo(battles)),
        ("compute_bt", lambda: compute_bt(battles)),
        (
            f"bootstrap_bt ({args.rounds} rounds)",
            lambda: bootstrap_bt(battles, args.rounds, args.seed),
        ),
    ):
        start = time.perf_counter()
        fn()
        timings[label] = time.perf_counter() - start
    start = time.perf_counter()
    theirs = fastchat_mle_elo(records)
    timings["FastChat-style logistic regression (reference)"] = time.perf_counter() - start

    ours = compute_bt(battles)
    file_bt = {row["model"]: row["bt"] for row in result["ranking"]}
    cli_bt = {row["model"]: row["bt"] for row in json.loads(cli.stdout)["ranking"]}
    ci = {row["model"]: row["bt_ci"] for row in result["ranking"]}
    shift = np.mean(list(ours.values())) - np.mean(list(theirs.values()))  # anchors: match means
    theirs = {m: v + shift for m, v in theirs.items()}
    diff = {m: ours[m] - theirs[m] for m in ours}
    diff_file = max(abs(file_bt[m] - theirs[m]) for m in ours)
    diff_cli = max(abs(cli_bt[m] - theirs[m]) for m in ours)

    true_mean = np.mean(list(STRENGTHS.values()))
    print(
        f"synthetic battles: {len(records):,}, {len(STRENGTHS)} models, ties {TIE_RATE:.0%} "
        f"({BOTHBAD_SHARE:.0%} of them 'tie (bothbad)'), seed {args.seed}, JSONL {size_mb:.1f} MB"
    )
    print(f"memegauge arena rank FILE --rounds {args.rounds} (new process): {cli_s:.2f} s")
    print(f"rank_battle_file(fmt='json', bootstrap_rounds={args.rounds}): {file_s:.2f} s")
    print(f"rank_battle_file(fmt='md',   bootstrap_rounds={args.rounds}): {md_s:.2f} s")
    print("parts (in memory):")
    for label, seconds in timings.items():
        print(f"  {label:<48} {seconds:8.3f} s")
    print()
    header = f"{'model':<16} {'true-mean':>9} {'ours BT':>11} {'LR BT':>11} {'ours-LR':>10}"
    print(f"{header}   95% CI (bootstrap)")
    for model in sorted(ours, key=ours.get, reverse=True):
        lo, hi = ci[model]
        print(
            f"{model:<16} {STRENGTHS[model] - true_mean:>+9.1f} {ours[model]:>11.5f} "
            f"{theirs[model]:>11.5f} {diff[model]:>+10.1e}   {lo:.1f} – {hi:.1f}"
        )
    print("(ties count half a win each way, so fitted gaps are narrower than the true ones)")
    print()
    worst = max(abs(v) for v in diff.values())
    print(f"max |compute_bt − LR|        = {worst:.3e} rating points")
    print(f"max |rank_battle_file bt − LR| = {diff_file:.3e} rating points")
    print(f"max |memegauge arena rank bt − LR| = {diff_cli:.3e} rating points")
    worst = max(worst, diff_file, diff_cli)
    print(f"max_abs_diff: {worst:.3e}")
    return 0 if worst < 0.01 else 1


if __name__ == "__main__":
    raise SystemExit(main())
