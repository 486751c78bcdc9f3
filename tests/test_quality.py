"""The papers' quality studies in `memegauge rate` (AdamMeme Tables 9-10, MemeArena Tables 3-4 and
Figure 6): per task, two raters vote through the page's own JSON API on the real local server, one
stops halfway and resumes, and the report's section equals the means and ICC(2,1) computed here by
hand from those votes, with the paper's published values quoted beside."""

from __future__ import annotations

import json
import re
import urllib.error
from pathlib import Path

import numpy as np
import pytest

from memegauge.adammeme.rating import STUDIES as ADAM_STUDIES
from memegauge.arena.rating import STUDIES as ARENA_STUDIES
from memegauge.engine import Store
from memegauge.rating.items import MODEL_PLACEHOLDER, run_items
from memegauge.rating.records import HumanRating
from memegauge.rating.server import RatingApp
from memegauge.records import read_records
from memegauge.report import build_report
from memegauge.report.html import to_html
from helpers.synthetic import adammeme_run, arena_run
from test_rating import get, post, run_of, served

RUN_OF_TASK = {"reference": "adam", "refined": "adam", "guideline": "arena", "guideline_round": "arena",
               "context": "arena"}
PAPERS = Path("/work/shared/papers")


def make_run(store: Store, task: str, tmp_path: Path) -> dict:
    if RUN_OF_TASK[task] == "adam":
        adammeme_run(store, "adam", tmp_path / "adam", agent="agent-x")
    else:
        arena_run(store, "arena")
    return run_of(store, RUN_OF_TASK[task])


def hand_icc(x: np.ndarray) -> float:
    """ICC(2,1) from Shrout & Fleiss's mean squares, written out for an n × k table."""
    n, k = x.shape
    grand = x.sum() / (n * k)
    bms = k * sum((row.sum() / k - grand) ** 2 for row in x) / (n - 1)
    jms = n * sum((col.sum() / n - grand) ** 2 for col in x.T) / (k - 1)
    ems = sum((x[i, j] - x[i].mean() - x[:, j].mean() + grand) ** 2 for i in range(n) for j in range(k)) \
        / ((n - 1) * (k - 1))
    return (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)


def plan(items: list, rater: int) -> list[dict[str, int]]:
    """A fixed small table of votes: rater 0 gives (n + k) mod 3 + 1; rater 1 agrees except on a few."""
    votes = []
    for n, item in enumerate(items):
        names = [c["name"] for c in item.page["criteria"]]
        votes.append({c: ((n + k) % 3 + 1) if rater == 0 or (n * 7 + k) % 4 else ((n + k + 1) % 3 + 1)
                      for k, c in enumerate(names)})
    return votes


@pytest.mark.parametrize("task", list(RUN_OF_TASK))
def test_votes_are_stored_resumed_and_reported_with_agreement_by_hand(store, tmp_path, task):
    run = make_run(store, task, tmp_path)
    items = run_items(store, run, 4, (task,))
    assert len(items) == 4 and {i.task for i in items} == {task}
    assert [i.id for i in items] == [i.id for i in run_items(store, run, 4, (task,))]  # every rater the same
    ana, ben = plan(items, 0), plan(items, 1)
    with served(RatingApp(store, run, items, "ana")) as base:
        for n in (0, 1):
            post(f"{base}/api/vote/{n}", json.dumps({"criteria": ana[n]}))
    # the tab closed; a fresh page for ana resumes at the first unrated item and shows her earlier votes
    again = RatingApp(Store(store.path), run, run_items(store, run, 4, (task,)), "ana")
    with served(again) as base:
        assert json.loads(get(base + "/api/state"))["next"] == 2
        assert json.loads(get(base + "/api/item/1"))["vote"] == {"criteria": ana[1]}
        for n in (2, 3):
            state = json.loads(post(f"{base}/api/vote/{n}", json.dumps({"criteria": ana[n]})))
        assert state["rated"] == 4
    with served(RatingApp(store, run, items, "ben")) as base:
        for n, vote in enumerate(ben):
            post(f"{base}/api/vote/{n}", json.dumps({"criteria": vote}))
    stored = {(r.rater, r.source): r.criteria for r in read_records(store, run["id"], HumanRating)}
    assert stored == {**{("ana", i.source): v for i, v in zip(items, ana, strict=True)},
                      **{("ben", i.source): v for i, v in zip(items, ben, strict=True)}}

    report = build_report(store, RUN_OF_TASK[task])
    section = report["people_vs_judges"]["quality"][task]
    order = sorted(range(4), key=lambda n: items[n].source)  # the section's items in source order
    names = [c["name"] for c in items[0].page["criteria"]]
    for name in names:
        table = np.array([[ana[n][name], ben[n][name]] for n in order], dtype=float)
        figures = section["criteria"][name]
        assert figures["mean"]["value"] == pytest.approx(table.mean()) and figures["mean"]["n"] == 4
        assert figures["mean"]["ratings"] == 8
        if table.std() > 0 and np.ptp(table.mean(axis=1)) > 0:
            assert figures["icc"]["value"] == pytest.approx(hand_icc(table))
        assert figures["krippendorff_alpha_ordinal"]["n"] == 4
    every = np.array([[ana[n][c], ben[n][c]] for n in order for c in names], dtype=float)
    assert section["overall"]["icc"]["value"] == pytest.approx(hand_icc(every))
    study = {**ADAM_STUDIES, **ARENA_STUDIES}[task]
    for criterion in study.criteria:
        published = section["criteria"][criterion.name]["published_mean"]
        assert (published is None) == (criterion.mean is None)
    if task == "guideline_round":  # Figure 6: the means per discussion round, by hand
        rounds = {i.source: i.source.rsplit("|", 1)[1].lstrip("0") or "0" for i in items}
        for r in set(rounds.values()):
            members = [n for n in range(4) if rounds[items[n].source] == r]
            mean = np.mean([[ana[n]["Conciseness"], ben[n]["Conciseness"]] for n in members])
            assert section["groups"][r]["Conciseness"]["value"] == pytest.approx(mean)
    html = to_html(store, report)
    assert study.title in html and study.paper in html


@pytest.mark.parametrize("task", list(RUN_OF_TASK))
def test_an_incomplete_or_out_of_scale_vote_is_refused_and_nothing_is_stored(store, tmp_path, task):
    run = make_run(store, task, tmp_path)
    items = run_items(store, run, 2, (task,))
    names = [c["name"] for c in items[0].page["criteria"]]
    bad = [{n: 2 for n in names[1:]}, {**{n: 2 for n in names}, names[0]: 4}, {**{n: 2 for n in names}, "x": 1},
           {n: True for n in names}]
    with served(RatingApp(store, run, items, "ana")) as base:
        for vote in bad:
            with pytest.raises(urllib.error.HTTPError) as refused:
                post(base + "/api/vote/0", json.dumps({"criteria": vote}))
            assert refused.value.code == 400 and "1 to 3" in json.loads(refused.value.read())["error"]
    assert read_records(store, run["id"], HumanRating) == []


def test_quality_items_are_stratified_as_the_papers_balance_them(store, tmp_path):
    """Table 10 takes 15 per harm category (here: in turn), Figure 6 10 per discussion round."""
    adammeme_run(store, "adam", tmp_path / "adam")
    arena_run(store, "arena")
    refined = run_items(store, run_of(store, "adam"), 6, ("refined",))
    assert [i.stratum for i in refined] == ["gender", "race", "religion"] * 2
    rounds = run_items(store, run_of(store, "arena"), 6, ("guideline_round",))
    assert [i.stratum for i in rounds] == ["0", "1", "2"] * 2
    references = run_items(store, run_of(store, "adam"), 6, ("reference",))
    assert sorted(i.stratum for i in references) == sorted(["gender", "race", "religion"] * 2)


def test_quality_items_name_no_model(store, tmp_path):
    """Every text a quality item shows has the run's model names replaced."""
    arena_run(store, "arena", probe=False)
    run = run_of(store, "arena")
    store_records = store.records(run["id"], "guideline")
    store.put_records(run["id"], "guideline", [(g["task"], {**g, "text": g["text"] + " as model-b wrote"})
                                               for g in store_records])
    items = run_items(store, run, 4, ("guideline",))
    page = json.dumps([i.page for i in items]).lower()
    assert all(name not in page for name in ("model-a", "model-b", "model-c", "model-d"))
    assert MODEL_PLACEHOLDER in page


def test_rate_task_option_refuses_a_task_the_run_does_not_offer(store, tmp_path):
    from memegauge.cli import main

    arena_run(store, "arena")
    assert main(["--store", str(store.path), "rate", "arena", "--task", "refined"]) == 2


@pytest.mark.skipif(not PAPERS.exists(), reason="the papers' texts are not on this machine")
def test_the_published_values_are_the_papers_own():
    """Every quoted mean and agreement appears in its paper's text, on its criterion's table row (MemeArena
    Table 3 puts criteria in columns: its values are checked on the rows of the table)."""
    for paper, studies in (("adammeme.txt", ADAM_STUDIES), ("memearena.txt", ARENA_STUDIES)):
        text = (PAPERS / paper).read_text(encoding="utf-8")
        for study in studies.values():
            for c in study.criteria:
                for published in (c.mean, c.agreement):
                    if published is not None:
                        label = published.where.rsplit("row ", 1)[1].split(",")[0] if "column" in published.where \
                            else c.name
                        number = re.match(r"Table (\d+)", published.where)[1]
                        lines = text.splitlines()
                        caption = next(i for i, line in enumerate(lines) if line.startswith(f"Table {number}:"))
                        row = next(line for line in lines[caption - 12:caption]  # the table sits above its caption
                                   if label in line and re.search(r"\d\.\d{3}", line))
                        assert str(published.value) in row, (c.name, published, row)
            if study.overall is not None:
                assert f"{study.overall.value}" in text
