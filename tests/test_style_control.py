"""Style control in the arena's ranking (FastChat's contextual Bradley–Terry): the style counts and their
normalisation by hand, the fit against a plain L-BFGS fit of FastChat's loss, and the synthetic
style-bias study: a panel that prefers the longer answer on top of quality crowns the long-winded
target without control; with control the ranking is the hidden quality order."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from memegauge.arena.battles import as_battles
from memegauge.arena.ranking import compute_bt, style_control, style_counts, style_features, style_ranking

QUALITY = {"sage": 1.2, "steady": 0.8, "plain": 0.4, "windbag": 0.0}  # hidden, best first
MEAN_WORDS = {"sage": 150, "steady": 150, "plain": 150, "windbag": 600}


def test_style_counts_follow_fastchats_patterns():
    text = ("# Title\n## Part\nSome **bold** and __more__ words.\n- one\n* two\n  3. three\n"
            "```\n# not a header\n- not a list\n```\n####### seven hashes is no header")
    words, headers, lists, bold = style_counts(text)
    assert (headers, lists, bold) == (2, 3, 2)
    assert words == len(("# Title ## Part Some **bold** and __more__ words. - one * two 3. three "
                         "####### seven hashes is no header").split())
    assert style_counts(None) == [0, 0, 0, 0]


def test_features_are_the_normalised_ratio_z_scored_and_constant_ones_dropped():
    a = np.array([[10, 0, 1, 0], [30, 0, 0, 0], [5, 0, 2, 0]])
    b = np.array([[20, 0, 0, 0], [10, 0, 1, 0], [5, 0, 0, 0]])
    features, kept = style_features(a, b)
    assert kept.tolist() == [True, False, True, False]  # no answer has a header or bold: no information
    ratio = np.array([-10 / 31, 20 / 41, 0.0])
    assert features[:, 0] == pytest.approx((ratio - ratio.mean()) / ratio.std())
    lists = np.array([1 / 2, -1 / 2, 2 / 3])
    assert features[:, 1] == pytest.approx((lists - lists.mean()) / lists.std())


def synthetic_panel(battles: int, seed: int, preference: float = 6.0):
    """Battles among four targets judged by a panel: P(a wins) = σ(q_a − q_b + preference·ratio), ratio
    the normalised length difference of the two answers; the windbag writes four times as much."""
    rng = np.random.default_rng(seed)
    models = list(QUALITY)
    rows, counts_a, counts_b = [], [], []
    for _ in range(battles):
        a, b = rng.choice(models, 2, replace=False)
        la, lb = (max(10, int(rng.normal(MEAN_WORDS[m], 60))) for m in (a, b))
        p = expit(QUALITY[a] - QUALITY[b] + preference * (la - lb) / (la + lb + 1))
        rows.append({"model_a": a, "model_b": b, "winner": "model_a" if rng.random() < p else "model_b"})
        counts_a.append([la, 0, 0, 0])
        counts_b.append([lb, 0, 0, 0])
    return rows, np.array(counts_a), np.array(counts_b)


def test_a_panel_that_prefers_length_crowns_the_windbag_unless_style_is_controlled():
    rows, counts_a, counts_b = synthetic_panel(2000, seed=7)
    plain = compute_bt(rows)
    assert max(plain, key=plain.get) == "windbag"
    control = style_control(rows, counts_a, counts_b, bootstrap_rounds=200, seed=3)
    assert style_ranking(control) == list(QUALITY)  # the hidden quality order
    length = control["coefficients"]["length"]
    low, high = length["ci95"]
    assert 0 < low < length["value"] < high and length["n"] == 2000
    assert control["coefficients"]["headers"] is None  # constant: left out
    low, high = control["ratings_ci"]["windbag"]
    assert low < control["ratings"]["windbag"] < high
    assert np.mean(list(control["ratings"].values())) == pytest.approx(1000)
    again = style_control(rows, counts_a, counts_b, bootstrap_rounds=200, seed=3)
    assert again == control  # seeded


def test_the_fit_is_fastchats_optimum():
    """The same problem fitted with scipy's L-BFGS on FastChat's loss (`contextual_bt_loss_and_grad`:
    Σ logloss + ½·reg·‖params‖², reg 0.5) gives the same ratings and coefficient."""
    rows, counts_a, counts_b = synthetic_panel(400, seed=1)
    rows[0]["winner"] = rows[5]["winner"] = "tie"
    control = style_control(rows, counts_a, counts_b, bootstrap_rounds=0)
    table = as_battles(rows)
    features, _ = style_features(counts_a, counts_b)
    n, models = len(rows), len(table.models)
    x = np.zeros((n, models))
    x[np.arange(n), table.model_a] = math.log(10)
    x[np.arange(n), table.model_b] = -math.log(10)
    x = np.concatenate([x, features], axis=1)
    y = table.score_a

    def loss(p):
        z = x @ p
        return (np.logaddexp(0, z) - y * z).sum() + 0.25 * p @ p, -(y - expit(z)) @ x + 0.5 * p

    best = minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10}).x
    for i, m in enumerate(table.models):
        assert control["ratings"][m] == pytest.approx(400 * best[i] + 1000, abs=0.05)
    assert control["coefficients"]["length"]["value"] == pytest.approx(best[models], abs=1e-4)


def test_no_battles_no_ratings():
    empty = np.zeros((0, 4))
    assert style_control([], empty, empty)["ratings"] == {}


def test_the_arena_report_shows_both_leaderboards_per_dimension_and_the_bias_study(store):
    from helpers.synthetic import arena_run
    from memegauge.report import build_report
    from memegauge.report.html import to_html

    arena_run(store, "arena")
    run_id = store.run_row("arena")["id"]
    answers = store.records(run_id, "answer")
    rng = np.random.default_rng(0)
    store.put_records(run_id, "answer", [(f"{a['task']}|{a['target']}", {
        **a, "text": a["text"] + " word" * int(rng.integers(0, 400 if a["target"] == "model-c" else 50))})
        for a in answers])
    report = build_report(store, "arena")
    style = report["style_control"]
    assert [r["model"] for r in style["overall"]["rows"]] == [r["model"] for r in report["ranking"]]
    assert {r["style_rank"] for r in style["overall"]["rows"]} == {1, 2, 3, 4}
    assert style["overall"]["coefficients"]["length"]["ci95"] is not None
    assert set(style["dimensions"]) == set(report["dimensions"])
    assert set(style["bias"]["fused"]["judges"]) == set(report["bias"]["fused"]["judges"])
    from memegauge.arena.report import tables

    flat = tables(report)["style_control"]
    assert len(flat) == 4 * (1 + len(report["dimensions"]))
    assert {r["dimension"] for r in flat} == {"overall", *report["dimensions"]}
    html = to_html(store, report)
    for title in ("Leaderboard without and with style control", "Style coefficients",
                  "Rank per dimension: without → with style control", "Bias study with style control"):
        assert title in html
