"""`memegauge rate` and the report's "People vs judges" section, without a browser: the agreement
statistics against published worked examples and hand computation, the seeded stratified sample, the
JSON API on the real local server (Host, Origin and content-type rules, bad votes stored nowhere),
the blinding of MemeArena items, and the CSV imports read as the same records."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from itertools import combinations

import numpy as np
import pytest

from memegauge.adammeme.records import HumanLabel, HumanScore
from memegauge.arena.records import HumanVoteRecord
from memegauge.engine import Store
from memegauge.rating import stats
from memegauge.rating.items import MODEL_PLACEHOLDER, item_id, run_items, stratified
from memegauge.rating.records import HumanRating
from memegauge.rating.section import people_vs_judges
from memegauge.rating.server import RatingApp
from memegauge.records import read_records, write_records
from memegauge.report import build_report, run_header
from memegauge.localserver import local_server
from memegauge.report.html import to_html
from helpers.synthetic import adammeme_run, arena_run, memeqa_run

ARENA_MODELS = ("model-a", "model-b", "model-c", "model-d")


def run_of(store: Store, name: str) -> dict:
    return {**run_header(store, name).as_dict(), "id": store.run_row(name)["id"]}


# ---- statistics against published worked examples --------------------------------------------------

def test_icc_2_1_matches_shrout_and_fleiss_1979():
    """Shrout & Fleiss (1979), Table 2: 6 targets × 4 judges; ICC(2,1) = 0.29."""
    ratings = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    assert stats.icc_2_1(ratings) == pytest.approx(0.2898, abs=5e-4)


def test_fleiss_kappa_matches_fleiss_1971_worked_example():
    """The worked example of Fleiss' κ (10 subjects, 14 raters, 5 categories): κ = 0.210."""
    counts = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                       [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert stats.fleiss_kappa(counts) == pytest.approx(0.20993, abs=1e-4)
    assert stats.fleiss_kappa(np.array([[2, 0], [2, 0]])) is None  # chance agreement is total


def test_krippendorff_alpha_matches_krippendorff_2011():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units with
    missing values; nominal α = 0.743, interval α = 0.849."""
    nan = np.nan
    data = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])
    assert stats.krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=1e-3)
    assert stats.krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=1e-3)


def test_cohen_kappa_and_the_mean_over_rater_pairs_by_hand():
    """Cohen's κ of a 2×2 table (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no): p_o = .7, p_e = .5, κ = .4;
    AdamMeme Table 8's agreement is the mean of κ over every pair of annotators."""
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert stats.cohen_kappa(a, b) == pytest.approx(0.4)
    labels = np.array([a, b, b[::-1]], dtype=object).T
    pairs = [stats.cohen_kappa(labels[:, i], labels[:, j]) for i, j in combinations(range(3), 2)]
    assert stats.mean_pairwise_kappa(labels) == pytest.approx(sum(pairs) / 3)


def test_bootstrap_interval_is_seeded_and_brackets_the_value():
    hits = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1], dtype=float)
    figure = stats.interval(lambda idx: float(hits[idx].mean()), hits.size, seed=3)
    assert figure["value"] == 0.7 and figure["n"] == 10
    low, high = figure["ci95"]
    assert low < 0.7 < high and figure == stats.interval(lambda idx: float(hits[idx].mean()), 10, seed=3)
    assert stats.interval(lambda idx: 1.0, 1, seed=0)["ci95"] is None  # one item: no interval


# ---- the sample ------------------------------------------------------------------------------------

def test_stratified_sample_takes_strata_in_turn_and_is_prefix_stable():
    import random

    strata = {"a": [f"a{i}" for i in range(5)], "b": ["b0", "b1"], "c": [f"c{i}" for i in range(4)]}
    full = stratified(strata, 11, random.Random(1))
    assert [s for s, _ in full[:6]] == ["a", "b", "c"] * 2 and len(full) == 11
    assert stratified(strata, 4, random.Random(1)) == full[:4]
    assert sorted(k for _, k in full) == sorted(k for keys in strata.values() for k in keys)


def test_every_rater_gets_the_same_items_per_category_and_pair(store, tmp_path):
    adammeme_run(store, "adam", tmp_path / "adam")
    arena_run(store, "arena")
    memeqa_run(store, "qa")
    adam = run_items(store, run_of(store, "adam"), 12, ("score", "labels"))
    assert [i.id for i in adam] == [i.id for i in run_items(store, run_of(store, "adam"), 12, ("score", "labels"))]
    scores = [i for i in adam if i.task == "score"]
    assert len(scores) == 12 and len(adam) == 24
    assert len({i.stratum for i in scores}) == 6  # 3 categories × 2 targets, each twice
    pairs = run_items(store, run_of(store, "arena"), 6, ("pair",))
    assert len({i.stratum for i in pairs}) == 6  # 6 model pairs, one battle each
    qa = run_items(store, run_of(store, "qa"), 8)
    assert sorted({i.stratum for i in qa}) == sorted({i.page["type"] for i in qa}) and len(qa) == 8


def test_the_scorer_items_show_the_question_as_the_run_asked_it(store, tmp_path):
    """A run that asked category-specific questions (`analysis_question: description`) shows the
    category's description in the Scorer's prompt; a run stored before that key asked the bare category."""
    adammeme_run(store, "adam", tmp_path / "adam")
    run = run_of(store, "adam")
    descriptions = store.get_record(run["id"], "taxonomy", "final")["categories"]
    bare = [i for i in run_items(store, run, 4) if i.task == "score"]
    described = [i for i in run_items(store, {**run, "config": {**run["config"], "analysis_question": "description"}},
                                      4) if i.task == "score"]
    assert [i.id for i in bare] == [i.id for i in described]
    for plain, specific in zip(bare, described, strict=True):
        description = descriptions[specific.page["category"]]
        assert description not in plain.page["prompt"] and description in specific.page["prompt"]


# ---- blinding -----------------------------------------------------------------------------------------

def test_arena_items_and_their_requests_name_no_model(store):
    """The page's HTML and every request and response of the API for an Arena item hold no model name."""
    arena_run(store, "arena")
    run = run_of(store, "arena")
    items = run_items(store, run, 6)
    assert any(i.swapped for i in items) and not all(i.swapped for i in items)
    app = RatingApp(store, run, items, "ana")
    with served(app) as base:
        traffic = [get(base + "/").decode()]
        for n in range(len(items)):
            path = f"/api/item/{n}"
            traffic += [path, get(base + path).decode()]
        body = json.dumps({"shown": {q: "A" for q in items[0].page["questions"]}})
        traffic += [body, post(base + "/api/vote/0", body).decode(), get(base + "/api/item/0").decode()]
    everything = "\n".join(traffic).lower()
    for name in ARENA_MODELS:
        assert name not in everything
    assert MODEL_PLACEHOLDER in items[0].page["answer_a"]  # the synthetic answers name their model
    stored = read_records(store, run["id"], HumanRating)[0]
    battle = store.get_record(run["id"], "battle", items[0].source)
    expected = "model_b" if items[0].swapped else "model_a"
    assert stored.choices == {q: expected for q in items[0].page["questions"]} and battle is not None


# ---- the API on the real local server ------------------------------------------------------------------

class served:
    def __init__(self, app: RatingApp) -> None:
        self.server = local_server(app.respond, 0, app.hosts)

    def __enter__(self) -> str:
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def get(url: str, headers: dict | None = None) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
        return r.read()


def post(url: str, body: str, content_type: str = "application/json", headers: dict | None = None) -> bytes:
    request = urllib.request.Request(url, data=body.encode(), method="POST",
                                     headers={"Content-Type": content_type, **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.read()


def status_of(call) -> int:
    try:
        call()
    except urllib.error.HTTPError as exc:
        return exc.code
    return 200


def test_votes_are_stored_as_given_and_the_state_resumes_at_the_first_unrated(store, tmp_path):
    adammeme_run(store, "adam", tmp_path / "adam")
    run = run_of(store, "adam")
    items = run_items(store, run, 4, ("score", "labels"))
    app = RatingApp(store, run, items, "ana")
    with served(app) as base:
        assert json.loads(get(base + "/api/state")) == {"rater": "ana", "method": "adammeme", "total": 8,
                                                       "rated": 0, "next": 0}
        post(base + "/api/vote/0", json.dumps({"score": 7}))
        post(base + "/api/vote/2", json.dumps({"score": 3}))
        state = json.loads(post(base + "/api/vote/1", json.dumps({"score": 10})))
        assert state["rated"] == 3 and state["next"] == 3
        label = next(n for n, i in enumerate(items) if i.task == "labels")
        category = items[label].page["categories"][1]["name"]
        post(base + f"/api/vote/{label}", json.dumps({"categories": [category]}))
        assert json.loads(get(base + f"/api/item/{label}"))["vote"] == {"categories": [category]}
    # a fresh page for the same rater (another process, the tab reopened) resumes where it stopped
    again = RatingApp(Store(store.path), run, run_items(store, run, 4, ("score", "labels")), "ana").state()
    assert again["rated"] == 4 and again["next"] == 3
    assert RatingApp(store, run, items, "ben").state() == {"rater": "ben", "method": "adammeme", "total": 8,
                                                          "rated": 0, "next": 0}
    stored = {(r.source, r.score) for r in read_records(store, run["id"], HumanRating) if r.task == "score"}
    assert stored == {(items[0].source, 7), (items[1].source, 10), (items[2].source, 3)}


@pytest.mark.parametrize("body, why", [
    ('{"score": 11}', "1 to 10"), ('{"score": "7"}', "1 to 10"), ('{"score": true}', "1 to 10"),
    ("[7]", "JSON object"), ("score=7", "not JSON")])
def test_a_bad_vote_is_refused_and_nothing_is_stored(store, tmp_path, body, why):
    adammeme_run(store, "adam", tmp_path / "adam")
    run = run_of(store, "adam")
    app = RatingApp(store, run, run_items(store, run, 2), "ana")
    with served(app) as base:
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(base + "/api/vote/0", body)
        assert refused.value.code == 400 and why in json.loads(refused.value.read())["error"]
    assert read_records(store, run["id"], HumanRating) == []


def test_requests_from_elsewhere_are_refused(store):
    arena_run(store, "arena")
    run = run_of(store, "arena")
    app = RatingApp(store, run, run_items(store, run, 3, ("pair",)), "ana")
    vote = json.dumps({"shown": {q: "tie" for q in app.items[0].page["questions"]}})
    with served(app) as base:
        assert status_of(lambda: get(base + "/api/state", {"Host": "evil.example"})) == 421
        assert status_of(lambda: post(base + "/api/vote/0", vote, "text/plain")) == 415  # a cross-site form
        assert status_of(lambda: post(base + "/api/vote/0", vote, headers={"Origin": "http://evil.example"})) == 403
        assert status_of(lambda: get(base + "/api/item/3")) == 404
        assert status_of(lambda: post(base + "/api/vote/0", vote, headers={"Origin": base})) == 200
    assert len(read_records(store, run["id"], HumanRating)) == 1


# ---- the report section, by hand ------------------------------------------------------------------------

def rate(store: Store, run: dict, rater: str, votes: dict[int, dict]) -> list:
    items = run_items(store, run, 6, ("pair",))
    app = RatingApp(store, run, items, rater)
    for n, vote in votes.items():
        app.vote(n, vote)
    return items


@pytest.mark.slow
def test_arena_section_equals_hand_computed_values(store):
    arena_run(store, "arena")
    run = run_of(store, "arena")
    shown = ["A", "B", "tie", "A", "B", "A"]
    ben = ["A", "B", "A", "A", "tie", "B"]
    items = rate(store, run, "ana", {n: {"shown": {q: v for q in ("Instruction Following", "Correctness",
                                                                  "Redundancy", "Relevance", "Accuracy",
                                                                  "overall")}} for n, v in enumerate(shown)})
    rate(store, run, "ben", {n: {"shown": {q: v for q in items[0].page["questions"]}} for n, v in enumerate(ben)})
    pairs = build_report(store, "arena")["people_vs_judges"]["pairs"]
    flip = {"A": "B", "B": "A", "tie": "tie"}
    ana = [flip[v] if i.swapped else v for v, i in zip(shown, items, strict=True)]
    bens = [flip[v] if i.swapped else v for v, i in zip(ben, items, strict=True)]
    battles = [store.get_record(run["id"], "battle", i.source) for i in items]
    joint = [{"model_a": "A", "model_b": "B"}.get(b["joint"]["overall"], "tie") for b in battles]
    assert pairs["vs_judges"]["ana"]["joint vote"]["value"] == pytest.approx(
        sum(a == j for a, j in zip(ana, joint, strict=True)) / 6)
    # Cohen's κ of ana vs ben by hand: p_o and p_e from the two raters' marginals
    p_o = sum(a == b for a, b in zip(ana, bens, strict=True)) / 6
    p_e = sum(ana.count(c) * bens.count(c) for c in ("A", "B", "tie")) / 36
    between = pairs["between_raters"]
    assert between["mean_pairwise_kappa"]["value"] == pytest.approx((p_o - p_e) / (1 - p_e))
    # Fleiss' κ with two raters, by its definition
    pooled = {c: (ana.count(c) + bens.count(c)) / 12 for c in ("A", "B", "tie")}
    p_bar = sum(1.0 if a == b else 0.0 for a, b in zip(ana, bens, strict=True)) / 6
    p_exp = sum(p ** 2 for p in pooled.values())
    assert between["fleiss_kappa"]["value"] == pytest.approx((p_bar - p_exp) / (1 - p_exp))
    assert between["fleiss_kappa"]["n"] == 6 and between["fleiss_kappa"]["ci95"] is not None
    html = to_html(store, build_report(store, "arena"))
    assert "People vs judges" in html


def test_adam_section_and_the_csv_imports_feed_the_same_records(store, tmp_path):
    adammeme_run(store, "adam", tmp_path / "adam")
    run = run_of(store, "adam")
    items = run_items(store, run, 6)
    scores = [i for i in items if i.task == "score"]
    step = next(r for r in store.records(run["id"], "step") if r["score"] is not None)
    write_records(store, run["id"], [HumanScore(sample=i.source, score=s)
                                     for i, s in zip(scores, (2, 5, 9, 1, 7, 4), strict=True)]
                  + [HumanScore(sample=step["id"], score=6)])
    labels = [i for i in items if i.task == "labels"]
    write_records(store, run["id"], [HumanLabel(meme=labels[0].source, categories=["race"])])
    app = RatingApp(store, run, items, "ana")
    for i, s in zip(scores, (3, 5, 8, 2, 7, 6), strict=True):
        app.vote(items.index(i), {"score": s})
    section = people_vs_judges(store, run)
    assert section["raters"] == {"ana": {"rated": 6, "origin": "page"}, "csv": {"rated": 8, "origin": "csv"}}
    agent = [store.get_record(run["id"], "score", i.source)["score"] for i in scores] + [step["score"]]
    csv = section["scores"]["vs_scorer"]["csv"]
    assert csv["n"] == 7  # the six sampled originals and the refinement step the CSV scored
    assert csv["score_icc"]["value"] == pytest.approx(stats.icc_2_1(np.column_stack([agent, [2, 5, 9, 1, 7, 4, 6]])))
    between = section["scores"]["between_raters"]
    assert between["icc"]["value"] == pytest.approx(stats.icc_2_1(np.array([[3, 2], [5, 5], [8, 9], [2, 1],
                                                                            [7, 7], [6, 4]])))
    vote = store.get_record(run["id"], "mining", labels[0].source)["categories"]
    assert section["labels"]["vs_miners"]["csv"]["accuracy"]["value"] == float(set(vote) == {"race"})


def test_imported_arena_votes_are_ratings_too(store):
    arena_run(store, "arena")
    run = run_of(store, "arena")
    battle = store.records(run["id"], "battle")[0]
    write_records(store, run["id"], [HumanVoteRecord(index=0, task=battle["task"], model_a=battle["model_b"],
                                                     model_b=battle["model_a"], winner="model_a")])
    section = people_vs_judges(store, run)
    ana = section["pairs"]["vs_judges"]["csv"]["joint vote"]
    joint = battle["joint"]["overall"]
    assert ana["n"] == 1 and ana["value"] == float(joint == "model_b")


def test_memeqa_human_accuracy_per_type(store):
    memeqa_run(store, "qa", questions=8)
    run = run_of(store, "qa")
    items = run_items(store, run, 8)
    app = RatingApp(store, run, items, "ana")
    right = {}
    for n, i in enumerate(items):
        gold = store.get_record(run["id"], "question", i.source)["gold"]
        answer = gold if n % 2 == 0 else [(gold[0] + 1) % len(i.page["options"])]
        app.vote(n, {"answer": answer})
        right.setdefault(i.page["type"], []).append(sorted(answer) == sorted(gold))
    accuracy = people_vs_judges(store, run)["answers"]["human_accuracy"]["ana"]
    for kind, hits in right.items():
        assert accuracy[kind]["value"] == pytest.approx(sum(hits) / len(hits)) and accuracy[kind]["n"] == len(hits)


def test_rate_command_refuses_bad_input(store, tmp_path):
    from memegauge.cli import main

    arena_run(store, "arena")
    base = ["--store", str(store.path), "rate"]
    assert main([*base, "arena", "--rater", "a|b"]) == 2
    assert main([*base, "arena", "--rater", "csv"]) == 2  # the name of the CSV imports
    assert main([*base, "no-such-run"]) == 2
    assert main(["--store", str(tmp_path / "none.db"), "rate", "arena"]) == 2
    assert not (tmp_path / "none.db").exists()
    assert read_records(store, run_of(store, "arena")["id"], HumanRating) == []
    assert item_id("pair", "x") != item_id("score", "x")


def test_a_memeqa_eval_run_stores_the_pictures_its_rating_page_shows(store, tmp_path):
    """A real `qa eval` run (scripted model) keeps its memes' thumbnails, and its items show them."""
    import asyncio

    from memegauge.memeqa.runs import eval_run
    from memegauge.memeqa.config import EvalConfig
    from memegauge.models.scripted import register_script
    from helpers.memeqa_data import make_dataset
    from helpers.models import scripted_registry

    data, images = make_dataset(tmp_path)
    register_script("qa-rate-a", lambda request: "A")
    name = asyncio.run(eval_run(store, scripted_registry("qa-rate-a", max_retries=1),
                                EvalConfig(data=data, images=images, version="none-minus", split="dev",
                                           model="qa-rate-a")))
    items = run_items(store, run_of(store, name), 40)
    assert len(items) == 33 and all(i.page["image"].startswith("data:image/jpeg;base64,") for i in items)
    assert len({i.stratum for i in items}) == len({i.page["type"] for i in items}) == 11


def test_rate_command_serves_the_page_and_stops_on_ctrl_c(store, tmp_path):
    """The real command in its own process: prints the URL, answers the API, Ctrl-C stops it (exit 0)."""
    import os
    import signal
    import subprocess
    import sys

    arena_run(store, "arena")
    store.close()
    process = subprocess.Popen([sys.executable, "-m", "memegauge.cli", "--store", str(store.path), "rate", "arena",
                                "--rater", "ana", "--sample", "5", "--task", "pair"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "COLUMNS": "200"})
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert json.loads(get(url + "api/state")) == {"rater": "ana", "method": "arena", "total": 5, "rated": 0,
                                                      "next": 0}
        assert b"Rate arena" in get(url)
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    assert "5 items for 'ana', 0 rated" in process.stderr.read()


def test_rate_command_stopped_by_sigterm_exits_143(store, tmp_path):
    """SIGTERM stops the server as Ctrl-C does, but the exit status says it was terminated (143)."""
    import signal
    import subprocess
    import sys

    arena_run(store, "arena")
    store.close()
    process = subprocess.Popen([sys.executable, "-m", "memegauge.cli", "--store", str(store.path), "rate", "arena",
                                "--rater", "ana", "--sample", "5", "--task", "pair"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout.readline().strip().startswith("http://127.0.0.1:")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 143
    err = process.stderr.read()
    assert "terminated (SIGTERM)" in err and "Traceback" not in err


@pytest.mark.slow
def test_every_report_format_carries_the_section(store):
    from memegauge.report.formats import render_report

    arena_run(store, "arena")
    run = run_of(store, "arena")
    assert "people_vs_judges" not in build_report(store, "arena")  # no ratings: the report is as before
    rate(store, run, "ana", {0: {"shown": {q: "A" for q in ("Instruction Following", "Correctness", "Redundancy",
                                                              "Relevance", "Accuracy", "overall")}}})
    assert json.loads(render_report(store, "arena", "json"))["people_vs_judges"]["raters"] == {
        "ana": {"rated": 1, "origin": "page"}}
    # CSV is the leaderboard (one table); Markdown adds the section below it (issue 25)
    markdown = render_report(store, "arena", "md")
    assert "people_vs_judges.raters.ana.rated" in markdown
    assert "people_vs_judges.pairs.vs_judges.ana.joint vote.value" in markdown
    assert markdown.index("| arena |") < markdown.index("## People vs judges")
