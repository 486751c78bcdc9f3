"""MemeArena stages and statistics with scripted models: fusion, positions, both orders, votes, NDCG,
sampling, detection, agreement, failures. Deterministic and fast (no network, no real model)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from helpers.arena_scripted import (CALLS, TARGETS, config, make_registry, records, run)
from memegauge.arena.agreement import agreement_summary, read_human_votes
from memegauge.arena.bias import judge_ndcg
from memegauge.arena.common import OVERALL
from memegauge.arena.detection import detection_metrics
from memegauge.arena.fusion import guideline_at, plan_fusion
from memegauge.arena.judging import (battle_records, combine_orders, joint_vote, parse_judgment,
                                    plan_judgments, sample_pairs, to_winner)
from memegauge.arena.tasks import task_schema
from memegauge.arena.ranking import compute_bt, compute_online_elo
from memegauge.engine import Store
from memegauge.prompts import render_prompt
from memegauge.report import build_report
from memegauge.types import InputError

def test_task_prompts_are_capped_to_fit_the_token_budget():
    for budget, expected in ((60, 36), (110, 86), (500, 476), (4000, 600)):
        schema = task_schema(budget)
        assert {p["maxLength"] for p in schema["properties"].values()} == {expected}
        # at 3 characters a token, three longest prompts plus the JSON around them fit the budget
        assert 3 * expected / 3 + 24 <= budget or expected == 600
    assert set(task_schema(16)["required"]) == {"prompt_user1", "prompt_user2", "prompt_user3"}


# --------------------------------------------------------------------------------------------------
# Fusion (Algorithm 1)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_fusion_plan_never_lets_a_judge_merge_its_own_answer(seed):
    judges = ["a", "b", "c"]
    authors = ["a", "b", "c", "d", "e"]
    plan = plan_fusion(f"m{seed}#1", authors, judges, seed)
    assert plan.init_author in judges  # the guideline starts from a judge's own answer
    merged = [r.author for r in plan.rounds]
    assert sorted([plan.init_author, *merged]) == authors  # every answer used exactly once
    assert all(r.judge in judges and r.judge != r.author for r in plan.rounds)
    assert [r.round for r in plan.rounds] == list(range(1, len(authors)))
    assert plan == plan_fusion(f"m{seed}#1", authors, judges, seed)  # seeded


def test_fusion_plan_draws_vary_and_small_panels_work():
    plans = [plan_fusion(f"t{i}", ["a", "b", "c", "d"], ["a", "b", "c"], 0) for i in range(200)]
    assert {p.init_author for p in plans} == {"a", "b", "c"}
    assert {r.judge for p in plans for r in p.rounds} == {"a", "b", "c"}
    slots = Counter(r.guideline_first for p in plans for r in p.rounds)
    assert 0.4 < slots[True] / sum(slots.values()) < 0.6
    solo = plan_fusion("t", ["a", "b"], ["a"], 0)
    assert solo.init_author == "a" and [r.author for r in solo.rounds] == ["b"]
    only_judge_answer = plan_fusion("t", ["b"], ["a", "b"], 0)
    assert only_judge_answer.init_author == "b" and only_judge_answer.rounds == ()


def test_fusion_rounds_stored_unlabelled_and_never_self_merged(tmp_path, store):
    cfg = config(tmp_path, fusion_pool="all")
    run(cfg, store, make_registry())
    rounds = records(store, "arena", "fusion_round")
    merges = [r for r in rounds if r["round"] > 0]
    assert len(merges) == 4 * 3 * (len(TARGETS) - 1)  # tasks × (n − 1) rounds
    assert all(r["judge"] != r["author"] and r["judge"] in cfg.judges for r in merges)
    assert all(r["author"] in cfg.judges for r in rounds if r["round"] == 0)
    assert all(r["guideline"].startswith("[Background Knowledge] merged by") for r in merges)
    # the fusion prompt says "Answer 1/2" and never which one is the guideline, nor who wrote it
    calls = store.run_calls(store.run_row("arena")["id"])
    for call in (c for c in calls if c.stage == "arena.fusion"):
        text = call.request["messages"][0]["content"][-1]["text"]
        assert "[Answer 1]" in text and "[Answer 2]" in text and "guideline" not in text.lower()
    guidelines = records(store, "arena", "guideline")
    assert all(g["ok"] and g["rounds"] == 4 for g in guidelines)


def test_judges_only_pool_needs_k_minus_1_rounds(tmp_path, store):
    run(config(tmp_path, fusion_pool="judges"), store, make_registry())
    rounds = records(store, "arena", "fusion_round")
    assert Counter(r["task"] for r in rounds if r["round"] > 0).most_common(1)[0][1] == 2
    assert {r["author"] for r in rounds} == {"t-best", "t-mid", "t-worst"}


@pytest.mark.parametrize("seed", range(30))
def test_added_targets_are_merged_after_the_unchanged_base_plan(seed):
    judges, base = ["a", "b", "c"], ["a", "b", "c", "d", "e"]
    before = plan_fusion(f"m{seed}#2", base, judges, seed)
    arrivals = {"x": 1, "y": 2}
    after = plan_fusion(f"m{seed}#2", [*base, "x", "y"], judges, seed, arrivals)
    assert after.rounds[:len(before.rounds)] == before.rounds and after.init_author == before.init_author
    extra = after.rounds[len(before.rounds):]
    assert [(r.author, r.arrival, r.round) for r in extra] == [("x", 1, 5), ("y", 2, 6)]
    assert all(r.judge in judges for r in extra)
    # the newcomer's round does not depend on whether another target arrived after it
    assert plan_fusion(f"m{seed}#2", [*base, "x"], judges, seed, arrivals).rounds == after.rounds[:-1]


def test_guideline_versions_by_arrival_stage():
    record = {"versions": {"0": "base", "2": "with y"}}
    assert [guideline_at(record, s) for s in (0, 1, 2, 3)] == ["base", "base", "with y", "with y"]
    assert guideline_at({"versions": {"1": "late"}}, 0) is None


# --------------------------------------------------------------------------------------------------
# Battles, positions, both orders, votes
# --------------------------------------------------------------------------------------------------


def test_sample_pairs_three_answers_three_pairs_and_extension_keeps_pairs():
    for i in range(100):
        base = sample_pairs(f"t{i}", TARGETS, [], set(TARGETS), 3, 0)
        assert len(base) == 3 and len({m for p in base for m in p}) == 3
        grown = sample_pairs(f"t{i}", TARGETS, ["t-new"], set(TARGETS) | {"t-new"}, 3, 0)
        assert set(base) <= set(grown)
        new = set(grown) - set(base)
        assert len(new) in (0, 2) and all("t-new" in p for p in new)
    joined = sum("t-new" in str(sample_pairs(f"t{i}", TARGETS, ["t-new"], set(TARGETS) | {"t-new"}, 3, 0))
                 for i in range(600))
    assert 0.4 < joined / 600 < 0.6  # k / (n + 1) = 3 / 6, as in a fresh draw
    # targets without an answer never battle
    assert all("t-mid" not in p for p in sample_pairs("t0", TARGETS, [], set(TARGETS) - {"t-mid"}, 3, 0))


def test_positions_are_randomised_per_judgment_and_seeded():
    orders = [j.order for i in range(400)
              for j in plan_judgments("fused", f"t{i}", ("a", "b"), ["j1", "j2"], True, False, 0)]
    assert 0.42 < orders.count("ab") / len(orders) < 0.58
    again = [j.order for i in range(400)
             for j in plan_judgments("fused", f"t{i}", ("a", "b"), ["j1", "j2"], True, False, 0)]
    assert orders == again
    assert [j.judge for j in plan_judgments("fused", "t", ("a", "b"), ["a", "j"], False, False, 0)] == ["j"]
    both = plan_judgments("fused", "t", ("a", "b"), ["j"], True, True, 0)
    assert [j.order for j in both] == ["ab", "ba"]


def test_verdicts_map_back_to_the_battle_orientation():
    assert to_winner("A", "ab") == "model_a" and to_winner("A", "ba") == "model_b"
    assert to_winner("B", "ba") == "model_a" and to_winner("B", "ab") == "model_b"
    assert to_winner("Tie (both strong)", "ba") == "tie"
    assert to_winner("Tie (both weak)", "ab") == "tie (bothbad)"


def test_combine_orders_counts_disagreement_as_tie():
    assert combine_orders("model_a", "model_a") == ("model_a", False)
    assert combine_orders("model_a", "model_b") == ("tie", True)
    assert combine_orders("model_a", "tie (bothbad)") == ("tie (bothbad)", True)
    assert combine_orders("tie", "tie (bothbad)") == ("tie", True)
    assert combine_orders("model_b", None) == ("model_b", None)


def test_judge_prompt_asks_a_decision_per_dimension_and_it_parses():
    prompt = render_prompt("arena_judge", task="Explain.", answer_a="x", answer_b="y", reference="ref")
    assert prompt.count("[Your Analysis]\nA/B/Tie (both strong)/Tie (both weak)\n") == 5
    assert "[Reference Answer]" in prompt
    assert "[Reference Answer]" not in render_prompt("arena_judge", task="Explain.", answer_a="x",
                                                     answer_b="y", reference=None)
    reply = "\n\n".join(f"'''[{d}]\nModel A is thorough, but Model B ties it to the meme better.\n"
                        f"{v}\n'''" for d, v in zip(
                            ("Instruction Following", "Correctness", "Redundancy", "Relevance", "Accuracy"),
                            ("B", "A", "Tie (both weak)", "B", "Tie (both strong)"), strict=True))
    parsed = parse_judgment(reply + "\n\n'''[Overall Judge]\nB\n'''")
    assert parsed == {"Instruction Following": "B", "Correctness": "A", "Redundancy": "Tie (both weak)",
                      "Relevance": "B", "Accuracy": "Tie (both strong)", OVERALL: "B"}


def test_joint_vote_majority_and_split_ties():
    assert joint_vote(["model_a", "model_a", "model_b"]) == "model_a"
    assert joint_vote(["model_a", "model_b"]) == "tie"
    assert joint_vote(["model_a", "model_b", "tie (bothbad)"]) == "tie (bothbad)"
    assert joint_vote(["tie (bothbad)", "tie (bothbad)", "model_a"]) == "tie (bothbad)"
    assert joint_vote([]) is None


def test_position_bias_shows_as_flips_with_both_orders(tmp_path, store):
    # "t-mid" always answers A: with both orders every one of its readings disagrees → tie, flip
    registry = make_registry(biased={"t-mid": "A"})
    run(config(tmp_path, both_orders=True), store, registry)
    report = build_report(store, "arena")
    assert report["judges"]["t-mid"]["flip_rate"] == 1.0
    assert report["judges"]["t-best"]["flip_rate"] == 0.0
    battles = records(store, "arena", "battle")
    assert all(b["judges"]["t-mid"][OVERALL] == "tie" for b in battles if "t-mid" in b["judges"])
    flips = report["flip_rate"]
    assert flips["flipped"] == sum(1 for b in battles if b["flips"].get("t-mid"))
    assert flips["rate"] == pytest.approx(flips["flipped"] / flips["pairs"])


def test_one_order_position_bias_is_spread_over_both_sides(tmp_path, store):
    run(config(tmp_path, n_memes=6), store, make_registry(biased={"t-mid": "A"}))
    winners = Counter(j["verdicts"][OVERALL] for j in records(store, "arena", "judgment")
                      if j["judge"] == "t-mid")
    assert winners["model_a"] > 0 and winners["model_b"] > 0  # A is shown on either side


def test_no_self_judging_and_consistent_ranking(tmp_path, store):
    run(config(tmp_path, n_memes=6, bootstrap_rounds=20, self_judging=False), store, make_registry())
    for j in records(store, "arena", "judgment"):
        assert j["judge"] not in (j["model_a"], j["model_b"])
    report = build_report(store, "arena")
    ranked = [r["model"] for r in report["ranking"]]
    assert sorted(ranked) == sorted(TARGETS) and ranked[-1] == "t-worst"
    assert all(abs(ranked.index(t) - i) <= 1 for i, t in enumerate(TARGETS))  # quality order, ±1
    assert set(report["dimensions"]) == {"Instruction Following", "Correctness", "Redundancy",
                                         "Relevance", "Accuracy"}
    row = report["ranking"][0]
    assert set(row) == {"model", "elo", "bt", "bt_ci", "bt_note", "win_rate", "win_rate_ci95", "score", "battles"}
    assert row["bt_note"] is None and row["win_rate_ci95"]["value"] == row["win_rate"]
    assert row["bt_ci"][0] <= row["bt_ci"][1] and row["battles"] > 0
    ndcg = report["bias"]["fused"]["judges"]
    assert set(ndcg) == {"t-best", "t-mid", "t-worst"} and all(0.9 < v <= 1.0 for v in ndcg.values())
    assert report["judges"]["t-mid"]["ndcg"] == ndcg["t-mid"]
    assert "t-mid" not in report["judges"]["t-mid"]["ranking"]  # it never judged its own answer


def test_self_judging_is_the_papers_default(tmp_path, store):
    assert config(tmp_path).self_judging is True
    run(config(tmp_path), store, make_registry())
    judgments = records(store, "arena", "judgment")
    assert any(j["judge"] in (j["model_a"], j["model_b"]) for j in judgments)


def test_bias_settings_use_their_references(tmp_path, store):
    guidelines = tmp_path / "human.jsonl"
    guidelines.write_text('{"meme": "m0", "guideline": "HUMAN REFERENCE"}\n'
                          '{"meme": "m1", "task": 2, "guideline": "HUMAN TASK REFERENCE"}\n')
    cfg = config(tmp_path, settings=["fused", "self", "human", "none"], human_guidelines=guidelines)
    run(cfg, store, make_registry())
    calls = [c for c in store.run_calls(store.run_row("arena")["id"]) if c.stage == "arena.judging"]
    texts = [c.request["messages"][0]["content"][-1]["text"] for c in calls]
    assert sum("HUMAN REFERENCE" in t for t in texts) > 0
    assert sum("[Reference Answer]" not in t for t in texts) > 0  # the "none" setting
    battles = records(store, "arena", "battle")
    human = [b for b in battles if b["setting"] == "human" and b["judged"]]
    assert {b["task"] for b in human} <= {"m0#1", "m0#2", "m0#3", "m1#2"}
    report = build_report(store, "arena")
    assert set(report["bias"]) == {"fused", "self", "human", "none"}


def test_missing_section_is_recorded_not_failed(tmp_path, store):
    run(config(tmp_path), store, make_registry(sloppy={"t-weak"}))
    answers = records(store, "arena", "answer")
    sloppy = [a for a in answers if a["target"] == "t-weak"]
    assert all(a["ok"] and a["missing_sections"] == ["Reasoning"] for a in sloppy)
    assert all(a["missing_sections"] == [] for a in answers if a["target"] != "t-weak")
    assert build_report(store, "arena")["counts"]["answers_missing_sections"] == len(sloppy)


def test_failed_target_recorded_with_class_and_never_ranked(tmp_path, store):
    run(config(tmp_path), store, make_registry(broken={"t-weak"}))
    failed = [a for a in records(store, "arena", "answer") if a["target"] == "t-weak"]
    assert failed and all(not a["ok"] and a["error_class"] == "server" for a in failed)
    report = build_report(store, "arena")
    assert "t-weak" not in [r["model"] for r in report["ranking"]]
    assert report["failures"]["answer"] == {"server": len(failed)}
    assert report["failures"]["detection"] == {"server": 3}  # the three labelled memes


# --------------------------------------------------------------------------------------------------
# Ratings, NDCG, detection, agreement
# --------------------------------------------------------------------------------------------------


def test_ties_count_half_in_elo_and_bt():
    ties = [{"model_a": "x", "model_b": "y", "winner": w} for w in ("tie", "tie (bothbad)")] * 5
    bt = compute_bt(ties)
    assert bt["x"] == pytest.approx(bt["y"]) == pytest.approx(1000)
    elo = compute_online_elo(ties, k=16)
    assert elo["x"] == pytest.approx(1000) and elo["y"] == pytest.approx(1000)
    # 1 win + 2 ties each way → x scores 2 of 3 against y: gap 400·log10(2)
    mixed = [{"model_a": "x", "model_b": "y", "winner": "model_a"},
             {"model_a": "x", "model_b": "y", "winner": "tie"},
             {"model_a": "y", "model_b": "x", "winner": "tie (bothbad)"}]
    bt = compute_bt(mixed)
    assert bt["x"] - bt["y"] == pytest.approx(400 * math.log10(2), abs=1e-3)


def _wins(order: list[str], repeat: int = 3) -> list[dict]:
    """Every earlier model beats every later one, `repeat` times, plus one upset per pair so the
    BT estimate is finite."""
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            out += [{"model_a": a, "model_b": b, "winner": "model_a"}] * repeat
            out.append({"model_a": a, "model_b": b, "winner": "model_b"})
    return out


def test_judge_ndcg_hand_computed():
    joint = _wins(["a", "b", "c", "d"])
    swapped = _wins(["b", "a", "c", "d"])  # judge swaps the top two
    scores = judge_ndcg({"same": joint, "swap": swapped, "partial": _wins(["b", "c", "d"])}, joint)
    assert scores["same"]["ndcg"] == pytest.approx(1.0)
    # rel = P − p: a 3, b 2, c 1, d 0. DCG(b,a,c,d) = 2 + 3/log2 3 + 1/2; IDCG = 3 + 2/log2 3 + 1/2
    expected = (2 + 3 / math.log2(3) + 0.5) / (3 + 2 / math.log2(3) + 0.5)
    assert scores["swap"]["ndcg"] == pytest.approx(expected)
    assert scores["swap"]["ranking"] == ["b", "a", "c", "d"]
    assert scores["partial"]["ndcg"] == pytest.approx(1.0)  # compared on the models it ranked


def test_detection_metrics_hand_computed():
    predicted = [True, True, False, False, True]
    gold = [True, False, False, True, True]
    result = detection_metrics(predicted, gold)
    # harmful: tp 2 fp 1 fn 1 → F1 2/3; harmless: tp 1 fp 1 fn 1 → F1 1/2
    assert result == {"n": 5, "accuracy": pytest.approx(0.6), "macro_f1": pytest.approx((2 / 3 + 0.5) / 2)}
    assert detection_metrics([], [])["accuracy"] is None


def test_detection_stage_scores_only_labelled_memes(tmp_path, store):
    run(config(tmp_path, n_memes=6), store, make_registry())
    detection = build_report(store, "arena")["detection"]
    # memes m0, m3 harmful; m1, m4 harmless; the "gender"-only memes are not scored
    assert {k: v for k, v in detection["t-best"].items() if k != "by_source"} == \
        {"n": 4, "accuracy": 0.5, "macro_f1": pytest.approx(1 / 3), "failed": 0}
    assert list(detection["t-best"]["by_source"]) == [""]  # the memes name no source


def test_detection_is_also_reported_per_source_data_set(tmp_path, store):
    cfg = config(tmp_path, n_memes=6)
    sources = {"m0": "FHM", "m1": "FHM", "m3": "FHM", "m4": "MAMI"}
    rows = [json.loads(line) for line in cfg.memes.read_text().splitlines()]
    cfg.memes.write_text("".join(json.dumps({**r, "source": sources.get(r["id"], "")}) + "\n" for r in rows))
    run(cfg, store, make_registry())
    by_source = build_report(store, "arena")["detection"]["t-best"]["by_source"]
    # every target answers "harmful": FHM gold T, F, T -> accuracy 2/3, F1 harmful 2·2/(2·2+1) = 0.8 and
    # harmless 0 -> macro 0.4; MAMI gold F -> accuracy 0, both F1 0
    assert by_source["FHM"] == {"n": 3, "accuracy": pytest.approx(2 / 3), "macro_f1": pytest.approx(0.4),
                                "failed": 0}
    assert by_source["MAMI"] == {"n": 1, "accuracy": 0.0, "macro_f1": 0.0, "failed": 0}


def test_human_votes_accuracy_and_judges_ablation(tmp_path, store):
    run(config(tmp_path), store, make_registry())
    battles = [b for b in records(store, "arena", "battle") if b["judged"]]
    rows, hits = ["task,model_a,model_b,winner"], 0
    for i, b in enumerate(battles):
        better = min((b["model_a"], b["model_b"]), key=TARGETS.index)
        human = better if i % 4 else "tie"  # quality, except a tie on every fourth battle
        rows.append(f"{b['task']},{b['model_b']},{b['model_a']},{human}")  # written reversed
        panel = b["joint"][OVERALL]
        hits += (human == "tie") if panel.startswith("tie") else (human == b[panel])
    rows.append("m0#1,t-best,t-nobody,t-best")  # never battled: unmatched
    path = tmp_path / "votes.csv"
    path.write_text("\n".join(rows) + "\n")
    votes = read_human_votes(path)
    summary = agreement_summary(votes, battles, ["t-best", "t-mid", "t-worst"])
    assert summary["votes"] == len(battles) + 1 and summary["matched"] == len(battles)
    assert summary["joint"]["accuracy"] == pytest.approx(hits / len(battles))
    assert 0.4 < summary["joint"]["accuracy"] < 0.9
    assert summary["ablation"]["3"]["agreement_with_panel"] == 1.0
    assert set(summary["ablation"]) == {"1", "2", "3"}


@pytest.mark.parametrize("text, message", [
    ("task,model_a,winner\nm0#1,a,a\n", "missing column"),
    ("task,model_a,model_b,winner\nm0#1,a,a,a\n", "same model"),
    ("task,model_a,model_b,winner\nm0#1,a,b,maybe\n", "not understood"),
    ("task,model_a,model_b,winner\n", "no votes"),
])
def test_bad_human_votes_are_one_clear_input_error(tmp_path, text, message):
    path = tmp_path / "votes.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_human_votes(path)


def test_battle_records_follow_battle_order():
    battles = [{"order": 2, "model_a": "a", "model_b": "b", "joint": {OVERALL: "model_b"}, "judges": {}},
               {"order": 1, "model_a": "a", "model_b": "c", "joint": {OVERALL: None}, "judges": {}},
               {"order": 0, "model_a": "b", "model_b": "c", "joint": {OVERALL: "tie"},
                "judges": {"j": {OVERALL: "model_a"}}}]
    assert [r["winner"] for r in battle_records(battles)] == ["tie", "model_b"]
    assert battle_records(battles, judge="j") == [
        {"model_a": "b", "model_b": "c", "winner": "model_a", "judge": "j", "dimension": OVERALL}]


# --------------------------------------------------------------------------------------------------
# Config, reuse, extension
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("overrides, message", [
    ({"judges": ["t-new"]}, "not in targets"),
    ({"targets": ["t-best"]}, "at least 2"),
    ({"settings": ["human"]}, "human_guidelines"),
    ({"settings": ["fused", "fused"]}, "repeat"),
    ({"added_targets": ["t-best"]}, "repeat"),
])
def test_config_validation(tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        config(tmp_path, **overrides)


def test_rerun_replays_everything_from_cache(tmp_path, store):
    cfg = config(tmp_path)
    first = run(cfg, store, make_registry(), "one")
    again = run(cfg, store, make_registry(), "two")
    assert first.calls_made > 0 and again.calls_made == 0
    assert records(store, "one", "battle") == records(store, "two", "battle")


@pytest.mark.parametrize("pool", ["all", "judges"])
def test_adding_a_target_issues_only_the_new_work(tmp_path, store, pool):
    cfg = config(tmp_path, n_memes=6, fusion_pool=pool)
    run(cfg, store, make_registry(), "base")
    CALLS.clear()
    grown = cfg.model_copy(update={"added_targets": ["t-new"]})
    outcome = run(grown, store, make_registry(), "grown")

    def same(b):  # a battle's content, without its position in the (now longer) battle order
        return {k: v for k, v in b.items() if k != "order"}

    base_battles = {b["battle"]: b for b in records(store, "base", "battle")}
    grown_battles = {b["battle"]: b for b in records(store, "grown", "battle")}
    assert all(same(grown_battles[k]) == same(v) for k, v in base_battles.items())  # battles stay
    new = [b for k, b in grown_battles.items() if k not in base_battles]
    assert new and all("t-new" in (b["model_a"], b["model_b"]) for b in new)
    new_judgments = sum(len(b["judges"]) for b in new)
    tasks = 6 * 3
    # nothing target-independent, no old answer, no old fusion round, no old battle is asked again
    answers = {m: v for (m, s), v in CALLS.items() if s == "arena.answers"}
    assert answers == {"t-new": tasks}
    assert sum(v for (m, s), v in CALLS.items() if s == "arena.judging") == new_judgments
    fused = sum(v for (m, s), v in CALLS.items() if s == "arena.fusion")
    assert fused == (tasks if pool == "all" else 0)  # one round per task merges the newcomer
    stages = {s for (_, s) in CALLS}
    assert "arena.contexts" not in stages and "arena.tasks" not in stages
    assert outcome.calls_made == tasks + fused + new_judgments + 4  # + detection of 4 labelled memes
    # old rounds unchanged; the new round merges t-new's answer; old guideline version kept
    old_rounds = {(r["task"], r["round"]): r for r in records(store, "base", "fusion_round")}
    new_rounds = {(r["task"], r["round"]): r for r in records(store, "grown", "fusion_round")}
    assert all(new_rounds[k] == v for k, v in old_rounds.items())
    added = [r for k, r in new_rounds.items() if k not in old_rounds]
    assert all(r["author"] == "t-new" and r["arrival"] == 1 and r["judge"] != "t-new" for r in added)
    base_guides = {g["task"]: g for g in records(store, "base", "guideline")}
    for g in records(store, "grown", "guideline"):
        assert g["versions"]["0"] == base_guides[g["task"]]["text"]
    # a fresh run of the grown config makes exactly the same battles
    fresh = run(grown, Store(tmp_path / "fresh.db"), make_registry(), "fresh")
    fresh_store = Store(tmp_path / "fresh.db")
    fresh_battles = {b["battle"]: same(b) for b in records(fresh_store, "fresh", "battle")}
    fresh_store.close()
    assert fresh.calls_made > outcome.calls_made
    assert fresh_battles == {k: same(b) for k, b in grown_battles.items()}


def test_new_battles_are_judged_against_the_guideline_with_the_newcomer(tmp_path, store):
    run(config(tmp_path, n_memes=3, added_targets=["t-new"]), store, make_registry())
    guides = {g["task"]: g["versions"] for g in records(store, "arena", "guideline")}
    assert all(v["0"] != v["1"] for v in guides.values())  # merging t-new changed every guideline
    calls = [c for c in store.run_calls(store.run_row("arena")["id"]) if c.stage == "arena.judging"]
    assert any("t-new" in _judged_models(c) for c in calls)
    for call in calls:
        text = "\n".join(p["text"] for p in call.request["messages"][0]["content"])
        meme = re.search(r'Meme text: "meme text (\d+)"', text).group(1)
        user = ("one", "two", "three").index(re.search(r"risks to user (\w+)", text).group(1)) + 1
        version = "1" if "t-new" in _judged_models(call) else "0"
        assert f"[Reference Answer]\n{guides[f'm{meme}#{user}'][version]}\n" in text


def _judged_models(call) -> set[str]:
    text = call.request["messages"][0]["content"][-1]["text"]
    return set(re.findall(r"\[Background Knowledge\] (t-[\w-]+) on ", text))


def test_bad_meme_file_fails_before_the_run_opens(tmp_path, store):
    cfg = config(tmp_path)
    Path(cfg.memes).write_text('{"id": "m0", "text": 5}\n')
    with pytest.raises(InputError, match="text"):
        run(cfg, store, make_registry())
    assert store.list_runs() == []
