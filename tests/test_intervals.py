"""The 95% intervals of `memegauge.report.intervals`, checked by hand against published formulas and
values, and where they land in the reports: MemeQA's per-type accuracy from a few questions shows its
wide interval, a 1-battle Arena run shows "too few items" instead of a zero-width BT range."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from memegauge.arena.headline import annotate
from memegauge.arena.ranking import rank_table
from memegauge.report import intervals as ci


@pytest.mark.parametrize("k,n,lo,hi", [
    # Wilson (1927) score interval, z = 1.959964; the same values as R's prop.test(correct=FALSE) and
    # statsmodels' proportion_confint(method="wilson"): 5/10, 0/10, 4/5 worked by hand
    (5, 10, 0.236593, 0.763407), (0, 10, 0.0, 0.277533), (4, 5, 0.375535, 0.963776), (10, 10, 0.722467, 1.0),
])
def test_wilson_matches_the_published_formula(k, n, lo, hi):
    low, high = ci.wilson(k, n)
    assert (float(low), float(high)) == pytest.approx((lo, hi), abs=1e-6)


def test_z95_is_scipys_normal_quantile_to_the_last_bit():
    from scipy.stats import norm

    assert ci.Z95 == float(norm.ppf(0.975))  # a constant, so that reporting does not import scipy.stats


def test_wilson_ends_are_exact_at_none_and_all():
    low, high = ci.wilson(np.array([0, 7]), np.array([7, 7]))
    assert low[0] == 0.0 and high[1] == 1.0


def test_wilson_is_vectorised_and_agrees_with_scipy():
    k = np.array([0, 1, 3, 7, 12, 20])
    n = np.array([4, 5, 9, 10, 30, 20])
    low, high = ci.wilson(k, n)
    for i in range(k.size):
        expected = binomtest(int(k[i]), int(n[i])).proportion_ci(confidence_level=0.95, method="wilson")
        assert (low[i], high[i]) == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_a_rate_on_one_item_or_one_meme_still_has_its_wilson_interval_and_n():
    """Every figure with its 95% interval and n, even at n = 1 (issue 43): Wilson's interval holds there."""
    one = ci.rate([1.0])
    low, high = ci.wilson(1, 1)
    assert one["value"] == 1.0 and one["ci95"] == pytest.approx([float(low), 1.0]) and one["n"] == 1
    assert one["note"] is None and one["ci95"][0] == pytest.approx(0.2065, abs=1e-4)
    assert ci.shown(one, percent=True) == "100.0% [20.7, 100.0]"
    assert ci.rate([0.0])["ci95"] == pytest.approx([0.0, 0.7935], abs=1e-4)
    assert ci.rate([])["value"] is None and ci.rate([])["ci95"] is None and ci.rate([])["note"] == ci.TOO_FEW
    # two items from one meme: one effective item (the meme), so the same width as n = 1, never narrower
    pair = ci.rate([1.0, 0.0], clusters=["m", "m"])
    lo, hi = ci.wilson(0.5, 1)
    assert pair["ci95"] == pytest.approx([float(lo), float(hi)]) and pair["n"] == 2 and pair["clusters"] == 1
    assert ci.macro_rate([1], ["a"])["ci95"] == pytest.approx([float(low), 1.0])
    # a mean cannot be bounded from one item: it says so
    assert ci.shown(ci.mean([6.2]), digits=2) == "6.20 (too few items, n=1)"


def test_an_all_correct_rate_still_has_a_nonzero_width():
    figure = ci.rate([1.0] * 5)
    assert figure["method"] == "wilson" and figure["ci95"][1] == 1.0
    assert figure["ci95"][0] == pytest.approx(0.565518, abs=1e-6)


def test_clustered_rate_uses_kish_design_effect_worked_by_hand():
    # memes a: [1, 0], b: [1, 1], c: [0, 0]; p = 0.5, totals 1, 2, 0 of 2 each.
    # var_cluster = k/(k-1) · Σ(t − p·m)² / n² = 1.5 · (0 + 1 + 1) / 36 = 1/12; var_srs = 0.25/6 = 1/24
    # deff = 2, n_eff = 3: the Wilson interval of 1.5 successes in 3
    figure = ci.rate([1, 0, 1, 1, 0, 0], clusters=["a", "a", "b", "b", "c", "c"])
    low, high = ci.wilson(1.5, 3)
    assert figure["method"] == "wilson-clustered" and figure["clusters"] == 3
    assert figure["ci95"] == pytest.approx([float(low), float(high)])
    assert figure["ci95"] == pytest.approx([0.125334, 0.874666], abs=1e-6)
    # the same items taken as independent give a narrower, overconfident interval
    independent = ci.rate([1, 0, 1, 1, 0, 0])
    assert independent["ci95"][1] - independent["ci95"][0] < figure["ci95"][1] - figure["ci95"][0]


def test_clustered_rate_without_variance_uses_the_number_of_memes():
    figure = ci.rate([0.0] * 6, clusters=["a", "a", "b", "b", "c", "c"])
    low, high = ci.wilson(0, 3)
    assert figure["ci95"] == pytest.approx([float(low), float(high)])


def test_mean_bootstrap_is_seeded_and_says_when_there_is_no_spread():
    values = [3, 5, 6, 2, 8, 7, 4, 5]
    first, again = ci.mean(values, seed=3), ci.mean(values, seed=3)
    assert first == again and first["value"] == pytest.approx(5.0)
    assert first["ci95"][0] < 5.0 < first["ci95"][1]
    varied = list(np.random.default_rng(0).normal(5, 2, size=30))
    assert ci.mean(varied, seed=4)["ci95"] != ci.mean(varied, seed=3)["ci95"]  # the seed is used
    flat = ci.mean([7, 7, 7])
    assert flat["ci95"] is None and flat["note"] == ci.NO_SPREAD
    assert ci.mean([7])["note"] == ci.TOO_FEW


def test_mean_bootstrap_resamples_memes_not_items():
    # every meme scored twice with the same score: resampling memes is resampling the single scores
    single = [2, 9, 4, 7, 5, 1, 8]
    doubled = [v for v in single for _ in range(2)]
    memes = [f"m{i}" for i in range(len(single)) for _ in range(2)]
    clustered = ci.mean(doubled, memes, seed=1)
    assert clustered["ci95"] == ci.mean(single, seed=1)["ci95"] and clustered["clusters"] == 7
    naive = ci.mean(doubled, seed=1)  # the 14 items taken as independent: too narrow
    assert naive["ci95"][1] - naive["ci95"][0] < clustered["ci95"][1] - clustered["ci95"][0]


def test_macro_rate_is_the_mean_of_group_rates_with_an_interval():
    outcomes = [1, 1, 1, 0, 0, 0, 1, 0]
    groups = ["a", "a", "a", "a", "b", "b", "b", "b"]  # a: 3/4, b: 1/4 → macro 0.5
    figure = ci.macro_rate(outcomes, groups, seed=0)
    assert figure["value"] == pytest.approx(0.5) and figure["ci95"][0] < 0.5 < figure["ci95"][1]


def test_a_macro_whose_resamples_cannot_differ_takes_wilson_on_its_memes():
    # two memes with one right answer each, in different types: every resample of the 2 memes gives
    # the same macro accuracy, so the percentile range would be zero-width: Wilson(1/3 · 2, 2) instead
    outcomes = [1, 0, 0, 0, 1, 0]
    groups = ["a", "b", "c", "a", "b", "c"]
    figure = ci.macro_rate(outcomes, groups, clusters=["m1"] * 3 + ["m2"] * 3)
    assert figure["value"] == pytest.approx(1 / 3) and figure["method"] == "wilson-clustered"
    lo, hi = ci.wilson(2 / 3, 2)
    assert figure["ci95"] == pytest.approx([float(lo), float(hi)], rel=1e-9) and lo < 1 / 3 < hi


def test_a_macro_at_0_of_n_has_the_micro_rates_interval_computed_by_hand():
    """0 of 22 on 2 memes (every type wrong): Wilson with the 2 memes as sample size, upper bound
    z²/(2 + z²) = 3.8415/5.8415 = 0.6576, as the micro rate of the same items; 22 of 22: [0.3424, 1]."""
    groups = [f"t{i % 11}" for i in range(22)]
    memes = ["m1"] * 11 + ["m2"] * 11
    zero = ci.macro_rate([0] * 22, groups, memes)
    assert zero["value"] == 0 and zero["n"] == 22 and zero["clusters"] == 2 and zero["note"] is None
    assert zero["ci95"] == pytest.approx([0.0, 0.657620], abs=1e-6)
    assert zero["ci95"] == pytest.approx(ci.rate([0] * 22, memes)["ci95"], rel=1e-9)
    assert ci.macro_rate([1] * 22, groups, memes)["ci95"] == pytest.approx([0.342380, 1.0], abs=1e-6)
    assert ci.shown(zero, percent=True) == "0.0% [0.0, 65.8]"


def test_a_one_battle_arena_ranking_shows_too_few_items_not_a_zero_width_range():
    battle = {"model_a": "m1", "model_b": "m2", "meme": "x", "joint": {"overall": "model_a"}, "order": 0}
    ranking = rank_table([{"model_a": "m1", "model_b": "m2", "winner": "model_a"}], bootstrap_rounds=50)
    rows = annotate(ranking, [battle], "overall")
    assert all(r["bt_ci"] is None and r["bt_note"] == ci.TOO_FEW for r in rows)
    # the win rate, a rate, keeps its Wilson interval on its one battle (1 of 1: [20.7%, 100%]; 0 of 1)
    assert all(r["win_rate_ci95"]["ci95"] is not None and r["win_rate_ci95"]["n"] == 1 for r in rows)


def test_arena_win_rate_interval_is_clustered_by_meme():
    battles = [{"model_a": "m1", "model_b": "m2", "meme": f"meme{i // 3}", "order": i,
                "joint": {"overall": "model_a" if i % 2 else "model_b"}} for i in range(12)]
    ranking = rank_table([{"model_a": b["model_a"], "model_b": b["model_b"], "winner": b["joint"]["overall"]}
                          for b in battles], bootstrap_rounds=50)
    row = next(r for r in annotate(ranking, battles) if r["model"] == "m1")
    assert row["win_rate_ci95"]["n"] == 12 and row["win_rate_ci95"]["clusters"] == 4
    assert row["win_rate_ci95"]["value"] == pytest.approx(0.5) and row["bt_ci"] is not None
