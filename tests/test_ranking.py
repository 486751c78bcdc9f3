"""MemeArena ranking (Elo, Bradley–Terry, bootstrap, tables, files) and NDCG; all deterministic."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from memegauge.arena.bias import ndcg_at_n
from memegauge.arena.battle_file import rank_battle_file
from memegauge.arena.battles import BattleRecordError, Battles, battles_from_records
from memegauge.arena.ranking import (
    battle_counts,
    bootstrap_bt,
    bootstrap_bt_samples,
    compute_bt,
    compute_online_elo,
    pairwise_wins,
    predicted_win_matrix,
    rank_by,
    rank_by_dimension,
    rank_table,
    win_rates,
    scores,
)
from memegauge.types import InputError


def rec(a: str, b: str, winner: str, **extra) -> dict:
    return {"model_a": a, "model_b": b, "winner": winner, **extra}


# --------------------------------------------------------------------------------------------------
# Battles table
# --------------------------------------------------------------------------------------------------


def test_battles_from_records_builds_sorted_compact_arrays():
    battles = battles_from_records(
        [rec("zeta", "alpha", "model_a", judge="j1"), rec("alpha", "mid", "tie (bothbad)")]
    )
    assert battles.models == ("alpha", "mid", "zeta")
    assert battles.model_a.tolist() == [2, 0]
    assert battles.model_b.tolist() == [0, 1]
    assert battles.outcome.tolist() == [0, 3]
    assert battles.judge.tolist() == ["j1", None]
    assert battles.dimension is None
    assert len(battles) == 2
    with pytest.raises(ValueError):  # frozen, read-only arrays
        battles.model_a[0] = 1


def test_from_arrays_accepts_indices_and_drops_unused_models():
    battles = Battles.from_arrays([0, 2], [2, 0], ["model_a", "tie"], models=["a", "unused", "c"])
    assert battles.models == ("a", "c")
    assert battles.model_a.tolist() == [0, 1]
    assert battles.score_a.tolist() == [1.0, 0.5]


@pytest.mark.parametrize(
    "bad, message",
    [
        (rec("a", "b", "draw"), "row 2: winner 'draw' is not one of"),
        (rec("a", "b", "Model_A"), "row 2: winner 'Model_A'"),
        ({"model_a": "a", "winner": "tie"}, "row 2: missing field 'model_b'"),
        (rec("a", "a", "tie"), "row 2: model_a and model_b are the same model 'a'"),
        (rec("a", "", "tie"), "row 2: model_b must be a non-empty string"),
        (rec("a", "b", "tie", dimension=3), "row 2: dimension must be a non-empty string or null"),
        (["a", "b", "tie"], "row 2: expected an object"),
    ],
)
def test_invalid_records_name_the_row(bad, message):
    records = [rec("a", "b", "model_a"), rec("b", "c", "tie"), bad]
    with pytest.raises(BattleRecordError) as info:
        battles_from_records(records)
    assert info.value.index == 2
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ValueError)


# --------------------------------------------------------------------------------------------------
# Online Elo
# --------------------------------------------------------------------------------------------------


def test_elo_hand_computed_and_order_sensitive():
    # A beats B from 1000/1000: E = 0.5, A += 4·0.5 -> A 1002, B 998.
    # Then B beats A: E_A = 1/(1 + 10^((998 − 1002)/400)) = 1/(1 + 10^−0.01) = 0.5057562084,
    # A += 4·(0 − 0.5057562084) = −2.0230248 -> A 999.9769752, B 1000.0230248.
    forward = compute_online_elo([rec("A", "B", "model_a"), rec("A", "B", "model_b")])
    assert forward["A"] == pytest.approx(999.9769751663554, abs=1e-9)
    assert forward["B"] == pytest.approx(1000.0230248336446, abs=1e-9)
    # Same two results in the other order: B wins first, so A ends 0.046 above B instead.
    backward = compute_online_elo([rec("A", "B", "model_b"), rec("A", "B", "model_a")])
    assert backward["A"] == pytest.approx(1000.0230248336446, abs=1e-9)
    assert backward["B"] == pytest.approx(999.9769751663554, abs=1e-9)
    # Rating mass is conserved.
    assert sum(forward.values()) == pytest.approx(2000.0)


def test_elo_ties_count_half_and_both_kinds_alike():
    # Tie from equal ratings: S = E = 0.5, no change.
    assert compute_online_elo([rec("A", "B", "tie")]) == {"A": 1000.0, "B": 1000.0}
    # A 1002 / B 998 after a win, then a tie: A += 4·(0.5 − 0.5057562084) = −0.0230248.
    for kind in ("tie", "tie (bothbad)"):
        ratings = compute_online_elo([rec("A", "B", "model_a"), rec("B", "A", kind)])
        assert ratings["A"] == pytest.approx(1001.9769751663554, abs=1e-9)
        assert ratings["B"] == pytest.approx(998.0230248336446, abs=1e-9)


def test_elo_three_models_hand_computed():
    # 1) A beats B: A 1002, B 998.
    # 2) B beats C: E_B = 1/(1 + 10^((1000 − 998)/400)) = 0.4971218, B += 4·0.5028782 = 2.0115128
    #    -> B 1000.0115128, C 997.9884872.
    # 3) C ties A: E_C = 1/(1 + 10^((1002 − 997.9884872)/400)) = 0.4942272,
    #    C += 4·(0.5 − 0.4942272) = 0.0230911 -> C 998.0115783, A 1001.9769089.
    ratings = compute_online_elo(
        [rec("A", "B", "model_a"), rec("B", "C", "model_a"), rec("C", "A", "tie")], k=4.0
    )
    assert ratings["A"] == pytest.approx(1001.97690890217, abs=1e-7)
    assert ratings["B"] == pytest.approx(1000.0115127982992, abs=1e-7)
    assert ratings["C"] == pytest.approx(998.0115782995308, abs=1e-7)


def test_elo_k_and_init():
    ratings = compute_online_elo([rec("A", "B", "model_a")], k=32, init=1500)
    assert ratings == {"A": 1516.0, "B": 1484.0}


# --------------------------------------------------------------------------------------------------
# Bradley–Terry
# --------------------------------------------------------------------------------------------------


def test_bt_analytic_three_of_four():
    # P(A beats B) = 3/4 = 1/(1 + 10^(−gap/400))  =>  10^(gap/400) = 3  =>  gap = 400·log10(3).
    battles = [rec("A", "B", "model_a")] * 3 + [rec("A", "B", "model_b")]
    ratings = compute_bt(battles)
    gap = 400 * math.log10(3)
    assert gap == pytest.approx(190.85, abs=0.01)
    assert ratings["A"] - ratings["B"] == pytest.approx(gap, abs=0.01)
    assert ratings["A"] - ratings["B"] == pytest.approx(gap, abs=1e-6)
    # Anchor: mean rating = init.
    assert (ratings["A"] + ratings["B"]) / 2 == pytest.approx(1000.0, abs=1e-9)
    assert ratings["A"] == pytest.approx(1000 + gap / 2, abs=1e-6)
    shifted = compute_bt(battles, init=1500)
    assert shifted["A"] == pytest.approx(1500 + gap / 2, abs=1e-6)


def test_bt_ties_are_half_wins():
    # 1 win each + 2 ties: W_AB = W_BA = 1 + 1 = 2 -> equal ratings.
    battles = [
        rec("A", "B", "model_a"),
        rec("A", "B", "model_b"),
        rec("A", "B", "tie"),
        rec("B", "A", "tie"),
    ]
    ratings = compute_bt(battles)
    assert ratings["A"] == pytest.approx(1000.0, abs=1e-6)
    assert ratings["B"] == pytest.approx(1000.0, abs=1e-6)
    # 1 win + 2 ties: W_AB = 2, W_BA = 1 -> gap 400·log10(2).
    ratings = compute_bt(
        [rec("A", "B", "model_a"), rec("A", "B", "tie"), rec("B", "A", "tie (bothbad)")]
    )
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(2), abs=1e-6)


def test_both_tie_kinds_count_the_same():
    base = [
        rec("A", "B", "model_a"),
        rec("B", "C", "model_a"),
        rec("C", "A", "model_a"),
        rec("A", "C", "model_a"),
    ]
    plain = base + [rec("A", "B", "tie"), rec("C", "B", "tie")]
    bothbad = base + [rec("A", "B", "tie (bothbad)"), rec("C", "B", "tie (bothbad)")]
    assert compute_bt(plain) == pytest.approx(compute_bt(bothbad), abs=1e-9)
    assert compute_online_elo(plain) == compute_online_elo(bothbad)
    assert win_rates(plain) == win_rates(bothbad) and scores(plain) == scores(bothbad)
    np.testing.assert_array_equal(pairwise_wins(plain), pairwise_wins(bothbad))


def _row_level_bt(records):
    """Reference fit straight from the rows: minimise −Σ [S log p + (1 − S) log(1 − p)]."""
    battles = battles_from_records(records)
    n = len(battles.models)
    a, b, s = battles.model_a, battles.model_b, battles.score_a

    def nll(x):
        z = math.log(10) * (x[a] - x[b])
        return np.sum(s * np.logaddexp(0, -z) + (1 - s) * np.logaddexp(0, z))

    x = minimize(nll, np.zeros(n), method="BFGS", options={"gtol": 1e-10}).x
    x = 400 * (x - x.mean()) + 1000
    return dict(zip(battles.models, x, strict=True))


def test_bt_matches_row_level_likelihood_and_ignores_order():
    rng = np.random.default_rng(7)
    names = ["a", "b", "c", "d"]
    records = []
    for _ in range(300):
        i, j = rng.choice(4, size=2, replace=False)
        winner = rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"], p=[0.4, 0.3, 0.2, 0.1])
        records.append(rec(names[i], names[j], str(winner)))
    ours = compute_bt(records)
    reference = _row_level_bt(records)
    for model in names:
        assert ours[model] == pytest.approx(reference[model], abs=1e-3)
    shuffled = [records[i] for i in rng.permutation(len(records))]
    assert compute_bt(shuffled) == pytest.approx(ours, abs=1e-6)


def test_bt_without_finite_mle():
    battles = [rec("A", "B", "model_a"), rec("A", "B", "model_a"), rec("B", "C", "tie")]
    with pytest.raises(ValueError, match="'A'"):
        compute_bt(battles, reg=0)
    ratings = compute_bt(battles)  # reg=None: small L2 fallback, finite and ordered
    assert all(math.isfinite(v) for v in ratings.values())
    assert ratings["A"] > ratings["B"] > 0
    assert sum(ratings.values()) / 3 == pytest.approx(1000.0, abs=1e-6)
    assert compute_bt([]) == {}


def test_predicted_win_matrix():
    matrix = predicted_win_matrix({"A": 1400.0, "B": 1000.0})
    assert matrix["A"]["B"] == pytest.approx(1 / (1 + 10 ** -1))  # 10/11
    assert matrix["B"]["A"] == pytest.approx(1 / 11)
    assert matrix["A"]["A"] == 0.5
    # Fitted BT ratings reproduce the observed 3/4.
    bt = compute_bt([rec("A", "B", "model_a")] * 3 + [rec("A", "B", "model_b")])
    assert predicted_win_matrix(bt)["A"]["B"] == pytest.approx(0.75, abs=1e-9)


# --------------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------------


def _synthetic_records(seed: int = 3, count: int = 600) -> list[dict]:
    rng = np.random.default_rng(seed)
    strengths = {"m1": 1200.0, "m2": 1100.0, "m3": 1000.0, "m4": 900.0}
    names = list(strengths)
    records = []
    for _ in range(count):
        i, j = rng.choice(4, size=2, replace=False)
        p = 1 / (1 + 10 ** ((strengths[names[j]] - strengths[names[i]]) / 400))
        u = rng.random()
        if u < 0.15:
            winner = "tie" if u < 0.1 else "tie (bothbad)"
        else:
            winner = "model_a" if rng.random() < p else "model_b"
        dimension = str(rng.choice(["Correctness", "Overall"]))
        records.append(rec(names[i], names[j], winner, dimension=dimension))
    return records


def test_bootstrap_is_seeded_and_ci_holds_the_estimate():
    records = _synthetic_records()
    median1, ci1 = bootstrap_bt(records, rounds=200, seed=11)
    median2, ci2 = bootstrap_bt(records, rounds=200, seed=11)
    assert median1 == median2 and ci1 == ci2
    median3, _ = bootstrap_bt(records, rounds=200, seed=12)
    assert median3 != median1
    point = compute_bt(records)
    for model, (lo, hi) in ci1.items():
        assert lo < point[model] < hi
        assert lo < median1[model] < hi
        assert hi - lo < 150  # 600 battles: intervals of tens of points
    samples = bootstrap_bt_samples(records, rounds=50, seed=1)
    assert samples.shape == (50, 4)
    np.testing.assert_allclose(samples.mean(axis=1), 1000.0, atol=1e-6)  # every round anchored
    with pytest.raises(ValueError):
        bootstrap_bt(records, rounds=0)


# --------------------------------------------------------------------------------------------------
# Win rates, counts, tables
# --------------------------------------------------------------------------------------------------


def test_win_rates_and_counts_hand_computed():
    battles = [
        rec("A", "B", "model_a"),
        rec("A", "B", "model_a"),
        rec("B", "A", "model_a"),
        rec("A", "B", "tie"),
        rec("C", "A", "model_b"),
        rec("B", "C", "tie (bothbad)"),
    ]
    # score (a tie is half a win): A: 5 battles, 1 + 1 + 0 + 0.5 + 1 = 3.5 -> 0.7
    # B: 5 battles, 0 + 0 + 1 + 0.5 + 0.5 = 2 -> 0.4;  C: 2 battles, 0 + 0.5 = 0.5 -> 0.25
    assert scores(battles) == pytest.approx({"A": 0.7, "B": 0.4, "C": 0.25})
    # win rate (a tie is no win, the paper's): A 3 of 5, B 1 of 5, C 0 of 2
    assert win_rates(battles) == pytest.approx({"A": 0.6, "B": 0.2, "C": 0.0})
    assert battle_counts(battles) == {"A": 5, "B": 5, "C": 2}


def test_rank_table_rows_sorted_by_bt():
    records = _synthetic_records()
    rows = rank_table(records, bootstrap_rounds=100, seed=0)
    assert [row["model"] for row in rows] == ["m1", "m2", "m3", "m4"]
    assert set(rows[0]) == {"model", "elo", "bt", "bt_ci", "win_rate", "score", "battles"}
    assert [r["bt"] for r in rows] == sorted((r["bt"] for r in rows), reverse=True)
    assert sum(r["battles"] for r in rows) == 2 * len(records)
    for row in rows:
        lo, hi = row["bt_ci"]
        assert lo < row["bt"] < hi
        assert 0.0 <= row["win_rate"] <= 1.0
    assert rank_table(records, bootstrap_rounds=0)[0]["bt_ci"] is None
    json.dumps(rows)  # plain Python types


def test_rank_by_dimension_and_judge():
    records = [
        rec("A", "B", "model_a", dimension="Correctness", judge="j1"),
        rec("A", "B", "model_b", dimension="Correctness", judge="j2"),
        rec("A", "C", "model_a", dimension="Redundancy", judge="j1"),
        rec("C", "A", "tie", judge="j1"),
    ]
    by_dim = rank_by_dimension(records, bootstrap_rounds=0)
    assert list(by_dim) == ["Correctness", "Redundancy"]
    assert {r["model"] for r in by_dim["Correctness"]} == {"A", "B"}
    assert by_dim["Correctness"][0]["bt"] == pytest.approx(1000.0, abs=1e-6)
    assert {r["model"] for r in by_dim["Redundancy"]} == {"A", "C"}
    by_judge = rank_by(records, "judge", bootstrap_rounds=0)
    assert list(by_judge) == ["j1", "j2"]
    assert sum(r["battles"] for r in by_judge["j1"]) == 6


# --------------------------------------------------------------------------------------------------
# Battle files
# --------------------------------------------------------------------------------------------------


def _write_jsonl(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")


def test_rank_battle_file_json_and_markdown(tmp_path):
    records = [
        rec("gpt", "llava", "model_a", dimension="Overall"),
        rec("gpt", "llava", "model_a", dimension="Overall"),
        rec("llava", "gpt", "model_a", dimension="Overall"),
        rec("gpt", "qwen", "tie", dimension="Overall"),
        rec("qwen", "llava", "model_a", dimension="Overall"),
        rec("gpt", "qwen", "model_a", dimension="overall"),
        rec("gpt", "llava", "model_b", dimension="Correctness"),
        rec("qwen", "llava", "tie (bothbad)", dimension="Correctness"),
        rec("llava", "gpt", "model_b", dimension="Correctness"),
    ]
    path = tmp_path / "battles.jsonl"
    _write_jsonl(path, records)
    result = json.loads(rank_battle_file(path, fmt="json", bootstrap_rounds=50, seed=0))
    assert set(result) == {"ranking", "dimensions"}
    assert [r["model"] for r in result["ranking"]] == ["gpt", "qwen", "llava"]
    assert sum(r["battles"] for r in result["ranking"]) == 12  # the 6 Overall/overall battles
    assert list(result["dimensions"]) == ["Correctness"]
    assert {r["model"] for r in result["dimensions"]["Correctness"]} == {"gpt", "llava", "qwen"}
    first = result["ranking"][0]
    assert set(first) == {"model", "elo", "bt", "bt_ci", "win_rate", "score", "battles", "bt_note", "win_rate_ci95"}
    assert first["score"] == pytest.approx((1 + 1 + 0 + 0.5 + 1) / 5)
    assert first["win_rate"] == pytest.approx((1 + 1 + 0 + 0 + 1) / 5)
    # Same seed, same text.
    again = rank_battle_file(path, bootstrap_rounds=50, seed=0)
    assert again == rank_battle_file(path, bootstrap_rounds=50, seed=0)

    markdown = rank_battle_file(path, fmt="md", bootstrap_rounds=50, seed=0)
    assert "| # | Model | BT | BT 95% CI | Elo | Win rate [95% CI] | Score | Battles (n) |" in markdown
    assert "## Overall" in markdown and "## Correctness" in markdown
    assert "| 1 | gpt |" in markdown

    # A JSON array of the same records gives the same ranking; no dimension at all -> {} dimensions.
    array_path = tmp_path / "battles.json"
    array_path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    assert json.loads(rank_battle_file(array_path, bootstrap_rounds=50)) == result
    plain = tmp_path / "plain.jsonl"
    _write_jsonl(plain, [{k: v for k, v in r.items() if k != "dimension"} for r in records])
    assert json.loads(rank_battle_file(plain, bootstrap_rounds=0))["dimensions"] == {}


def test_rank_battle_file_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps(rec("a", "b", "model_a")) + "\n\n" + json.dumps(rec("a", "b", "draw")) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        rank_battle_file(path)
    assert info.value.where == f"{path}:3"  # the blank line 2 is skipped but counted
    assert "winner 'draw'" in info.value.what
    assert info.value.exit_code == 2

    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(rec("a", "b", "tie")) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        rank_battle_file(broken)
    assert info.value.where == f"{broken}:2"

    array = tmp_path / "bad.json"
    array.write_text(
        '[\n  {"model_a": "a", "model_b": "b", "winner": "tie"},\n  {"model_a": "a"}\n]\n'
    )
    with pytest.raises(InputError) as info:
        rank_battle_file(array)
    assert info.value.where == f"{array}:3"
    assert "missing field 'model_b'" in info.value.what

    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no battles"):
        rank_battle_file(empty)
    with pytest.raises(InputError, match="not found"):
        rank_battle_file(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="unknown format"):
        rank_battle_file(path, fmt="csv")


# --------------------------------------------------------------------------------------------------
# NDCG (bias study)
# --------------------------------------------------------------------------------------------------


def test_ndcg_identical_is_one():
    ranking = ["A", "B", "C", "D", "E"]
    assert ndcg_at_n(ranking, ranking) == 1.0
    assert ndcg_at_n(ranking, ranking, n=2) == 1.0
    assert ndcg_at_n(["A"], ["A"]) == 1.0


def test_ndcg_reversed_three_models_hand_computed():
    # Reference A, B, C -> rel = P − p: A 2, B 1, C 0.
    # Judge C, B, A: DCG = 0/log2(2) + 1/log2(3) + 2/log2(4) = 0.6309298 + 1 = 1.6309298
    # Ideal A, B, C: IDCG = 2/log2(2) + 1/log2(3) + 0/log2(4) = 2 + 0.6309298 = 2.6309298
    # NDCG = 1.6309298 / 2.6309298 = 0.6199062
    reversed_ndcg = ndcg_at_n(["C", "B", "A"], ["A", "B", "C"])
    assert reversed_ndcg == pytest.approx(0.6199062332840657, abs=1e-12)
    # @1: the judge's top (C) has relevance 0 -> 0.
    assert ndcg_at_n(["C", "B", "A"], ["A", "B", "C"], n=1) == 0.0
    # Swapping the top two: DCG = 1 + 2/log2(3) = 2.2618595; / 2.6309298 = 0.8597186
    assert ndcg_at_n(["B", "A", "C"], ["A", "B", "C"]) == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)), abs=1e-12
    )


def test_ndcg_validates_inputs():
    with pytest.raises(ValueError, match="same models"):
        ndcg_at_n(["A", "B"], ["A", "C"])
    with pytest.raises(ValueError, match="more than once"):
        ndcg_at_n(["A", "A"], ["A", "B"])
    with pytest.raises(ValueError, match="n must be"):
        ndcg_at_n(["A", "B"], ["A", "B"], n=3)
