"""`memegauge rate` in a real browser (headless Debian Chromium via selenium): two raters rate the same
MemeArena and AdamMeme items through the page, with the keyboard and the mouse; one closes the tab
halfway and reopens the page, which resumes at the first unrated item. The stored votes must equal
the clicks, and the report's "People vs judges" figures must equal values computed here by hand from
those clicks. The Arena page's HTML holds no model name.

With MEMEGAUGE_SHOTS=DIR the test also saves screenshots of each method's rating page and of the
report's new section into DIR. Skipped when chromium, chromedriver or selenium is missing.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from memegauge.engine import Store
from memegauge.rating.items import run_items
from memegauge.rating.records import HumanRating
from memegauge.rating.server import RatingApp
from memegauge.records import read_records
from memegauge.report import build_report, run_header
from memegauge.localserver import local_server, serve
from memegauge.report.html import write_html_reports
from memegauge.testing.browser import available, start_driver
from helpers.synthetic import adammeme_run, arena_run, memeqa_run

pytestmark = [pytest.mark.slow,  # a real browser: seconds each
              pytest.mark.skipif(not available(), reason="chromium, chromedriver or selenium not installed")]
By = pytest.importorskip("selenium.webdriver.common.by").By
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys
WebDriverWait = pytest.importorskip("selenium.webdriver.support.wait").WebDriverWait

QUESTIONS = ("Instruction Following", "Correctness", "Redundancy", "Relevance", "Accuracy", "overall")
SHOTS = Path(os.environ["MEMEGAUGE_SHOTS"]) if os.environ.get("MEMEGAUGE_SHOTS") else None


@pytest.fixture(scope="module")
def driver():
    browser = start_driver(width=1280)
    yield browser
    browser.quit()


class Page:
    """One rater's `memegauge rate` server (as the command runs it) and the browser on its page."""

    def __init__(self, driver, store: Store, run: str, rater: str, sample: int,
                 tasks: tuple[str, ...] = ("score", "labels", "pair", "answer")) -> None:
        self.run = {**run_header(store, run).as_dict(), "id": store.run_row(run)["id"]}
        self.items = [i for i in run_items(store, self.run, sample) if i.task in tasks]
        self.app = RatingApp(store, self.run, self.items, rater)
        self.stop, self.urls = threading.Event(), []
        self.thread = threading.Thread(target=serve, args=(local_server(self.app.respond),),
                                       kwargs={"announce": self.urls.append, "stop": self.stop}, daemon=True)
        self.thread.start()
        WebDriverWait(driver, 10).until(lambda _: self.urls)
        self.driver, self.url = driver, self.urls[0]

    def open(self) -> None:
        self.driver.get(self.url)
        WebDriverWait(self.driver, 10).until(lambda d: "rated" in d.find_element(By.ID, "progress").text)

    def reopen_in_a_new_tab(self) -> None:
        """Close the tab the rater was in and open the page again in a new one."""
        old = self.driver.current_window_handle
        self.driver.switch_to.new_window("tab")
        new = self.driver.current_window_handle
        self.driver.switch_to.window(old)
        self.driver.close()
        self.driver.switch_to.window(new)
        self.open()

    def at(self) -> int | None:
        """The 0-based index of the item shown; None once all are rated and none is shown."""
        text = self.driver.find_element(By.ID, "position").text
        return int(text.split()[1]) - 1 if text.startswith("item ") else None

    def wait_rated(self, rated: int) -> None:
        WebDriverWait(self.driver, 10).until(
            lambda d: d.find_element(By.ID, "progress").text == f"{rated} of {len(self.items)} rated")

    def click(self, css: str) -> None:
        self.driver.find_element(By.CSS_SELECTOR, css).click()

    def keys(self, *keys: str) -> None:
        body = self.driver.find_element(By.TAG_NAME, "body")
        for key in keys:
            body.send_keys(key)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def shoot(driver, name: str) -> None:
    if SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(1280, max(900, driver.execute_script("return document.body.scrollHeight") + 40))
        driver.save_screenshot(str(SHOTS / name))
        driver.set_window_size(1280, 900)


def vote_pair(page: Page, shown: dict[str, str], keyboard: bool) -> None:
    """Give an Arena item's six choices: with the keys a / b / t row by row, or by clicking."""
    if keyboard:
        page.keys(*[{"A": "a", "B": "b", "tie": "t"}[shown[q]] for q in QUESTIONS], Keys.ENTER)
    else:
        for q in QUESTIONS:
            page.click(f'button[data-question="{q}"][data-choice="{shown[q]}"]')
        page.click("#submit")


def hand_kappa(a: list, b: list) -> float:
    """Cohen's κ from its definition: (p_o − p_e) / (1 − p_e), p_e from each rater's marginals."""
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = sum(a.count(c) * b.count(c) for c in set(a) | set(b)) / n ** 2
    return (p_o - p_e) / (1 - p_e)


def hand_icc(x: np.ndarray) -> float:
    """ICC(2,1) from Shrout & Fleiss's mean squares, written out for an n × k table."""
    n, k = x.shape
    grand = x.sum() / (n * k)
    bms = k * sum((row.sum() / k - grand) ** 2 for row in x) / (n - 1)
    jms = n * sum((col.sum() / n - grand) ** 2 for col in x.T) / (k - 1)
    ems = sum((x[i, j] - x[i].mean() - x[:, j].mean() + grand) ** 2 for i in range(n) for j in range(k)) \
        / ((n - 1) * (k - 1))
    return (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)


def test_two_raters_rate_arena_items_one_resumes_and_the_report_agrees(driver, store, tmp_path):
    arena_run(store, "arena")
    def votes(*items: str) -> list[dict[str, str]]:  # one vote per question, per item
        return [dict(zip(QUESTIONS, item.split(), strict=True)) for item in items]

    plans = {"ana": votes("A B tie A B A", "B B B tie B B", "A tie A A A tie", "B A B A B B", "tie tie A B A A",
                          "A A A A A B"),
             "ben": votes("A B A A B A", "B B B B B tie", "A A A A A tie", "A A B A B B", "B tie A B A A",
                          "A B A A A A")}
    for rater, plan in plans.items():
        page = Page(driver, store, "arena", rater, 6)
        try:
            page.open()
            page.wait_rated(0)
            source = driver.page_source.lower()
            for name in ("model-a", "model-b", "model-c", "model-d"):
                assert name not in source  # blinding: the shown page names no model
            if rater == "ana":
                shoot(driver, "rate-arena.png")
            for n, shown in enumerate(plan):
                if rater == "ana" and n == 3:
                    page.reopen_in_a_new_tab()  # closes the tab halfway: the page resumes at item 4
                assert page.at() == n
                vote_pair(page, shown, keyboard=n % 2 == 0)
                page.wait_rated(n + 1)
            assert driver.find_element(By.ID, "done").is_displayed()
        finally:
            page.close()
    items = page.items
    run_id = page.run["id"]
    stored = {(r.rater, r.item): r for r in read_records(store, run_id, HumanRating)}
    assert len(stored) == 12
    flip = {"A": "B", "B": "A", "tie": "tie"}
    oriented = {}
    for rater, plan in plans.items():
        for item, shown in zip(items, plan, strict=True):
            vote = stored[(rater, item.id)]
            assert vote.shown == shown and vote.swapped == item.swapped  # the clicks, as clicked
            assert vote.choices == {q: {"A": "model_a", "B": "model_b", "tie": "tie"}[flip[v] if item.swapped else v]
                                    for q, v in shown.items()}
        oriented[rater] = [flip[s["overall"]] if i.swapped else s["overall"] for i, s in zip(items, plan, strict=True)]
    pairs = build_report(store, "arena")["people_vs_judges"]["pairs"]
    battles = [store.get_record(run_id, "battle", i.source) for i in items]
    for rater in plans:
        for judge in ("model-a", "model-b", "model-c", "joint vote"):
            verdicts = [b["joint"]["overall"] if judge == "joint vote" else b["judges"].get(judge, {}).get("overall")
                        for b in battles]
            pairs_ = [(h, {"model_a": "A", "model_b": "B"}.get(v, "tie"))
                      for h, v in zip(oriented[rater], verdicts, strict=True) if v is not None]
            figure = pairs["vs_judges"][rater][judge]
            assert figure["n"] == len(pairs_)
            assert figure["value"] == pytest.approx(sum(h == v for h, v in pairs_) / len(pairs_) if pairs_ else None)
    assert pairs["between_raters"]["mean_pairwise_kappa"]["value"] == pytest.approx(
        hand_kappa(oriented["ana"], oriented["ben"]))
    show_section(driver, store, "arena", tmp_path, "report-people-vs-judges-arena.png")


def show_section(driver, store: Store, run: str, tmp_path: Path, shot: str) -> None:
    """Open the run's HTML report: its "People vs judges" section is there (and, with SHOTS, shot)."""
    report_path = write_html_reports(store, [run], tmp_path / "html")[0]
    driver.get(report_path.as_uri())
    section = driver.find_element(By.XPATH, "//h2[text()='People vs judges']")
    assert section.is_displayed()
    if SHOTS:
        below = driver.execute_script("return document.documentElement.scrollHeight - "
                                      "arguments[0].getBoundingClientRect().top - window.scrollY", section)
        driver.set_window_size(1280, int(below) + 160)
        driver.execute_script("arguments[0].scrollIntoView()", section)
        driver.save_screenshot(str(SHOTS / shot))
        driver.set_window_size(1280, 900)


def test_two_raters_score_and_label_adammeme_items_one_resumes(driver, store, tmp_path):
    adammeme_run(store, "adam", tmp_path / "adam", categories=("gender", "race", "religion"), memes_per_category=3)
    scores = {"ana": [7, 3, 9, 2], "ben": [6, 3, 10, 4]}
    labels = {"ana": [["race"], [], ["gender", "religion"], ["race"]],
              "ben": [["race"], ["gender"], ["gender"], ["race", "religion"]]}
    for rater in ("ana", "ben"):
        page = Page(driver, store, "adam", rater, 4)
        try:
            page.open()
            assert [i.task for i in page.items] == ["score"] * 4 + ["labels"] * 4
            names = [c["name"] for c in page.items[4].page["categories"]]
            for n, score in enumerate(scores[rater]):
                if rater == "ana" and n == 0:
                    shoot(driver, "rate-adammeme-score.png")
                if rater == "ana" and n == 2:
                    page.reopen_in_a_new_tab()
                assert page.at() == n
                if n % 2 == 0:
                    page.keys("1234567890"[score - 1])
                else:
                    page.click(f'button[data-score="{score}"]')
                page.wait_rated(n + 1)
            for n, chosen in enumerate(labels[rater], start=4):
                assert page.at() == n
                if n % 2 == 0:
                    page.keys(*[str(names.index(c) + 1) for c in chosen], Keys.ENTER)
                else:
                    for c in chosen:
                        page.click(f'button[data-category="{c}"]')
                    if rater == "ana" and n == 5:
                        page.click('button[data-category="gender"]')  # chosen, then unchosen
                        page.click('button[data-category="gender"]')
                    page.click("#submit")
                page.wait_rated(n + 1)
                if rater == "ana" and n == 5:
                    page.keys(Keys.ARROW_LEFT)  # back to the item just rated: it shows the stored vote
                    WebDriverWait(driver, 10).until(lambda _, page=page: page.at() == 5)
                    assert driver.find_elements(By.CSS_SELECTOR, "#categories button.chosen") == []
                    page.keys("u")
                    WebDriverWait(driver, 10).until(lambda _, page=page: page.at() == 6)
            if rater == "ana":
                page.keys(Keys.ARROW_LEFT)
                WebDriverWait(driver, 10).until(lambda _, page=page: page.at() == 7)
                shoot(driver, "rate-adammeme-labels.png")
        finally:
            page.close()
    items, run_id = page.items, page.run["id"]
    stored = {(r.rater, r.item): r for r in read_records(store, run_id, HumanRating)}
    assert len(stored) == 16
    for rater in scores:
        assert [stored[(rater, i.id)].score for i in items[:4]] == scores[rater]
        assert [sorted(stored[(rater, i.id)].categories) for i in items[4:]] == [sorted(c) for c in labels[rater]]
    section = build_report(store, "adam")["people_vs_judges"]
    agent = [store.get_record(run_id, "score", i.source)["score"] for i in items[:4]]
    for rater in scores:
        assert section["scores"]["vs_scorer"][rater]["score_icc"]["value"] == pytest.approx(
            hand_icc(np.array([agent, scores[rater]], dtype=float).T))
    assert section["scores"]["between_raters"]["icc"]["value"] == pytest.approx(
        hand_icc(np.array([scores["ana"], scores["ben"]], dtype=float).T))
    categories = section["labels"]["categories"]
    decisions = {r: [c in chosen for chosen in labels[r] for c in categories] for r in labels}
    assert section["labels"]["between_raters"]["mean_pairwise_kappa"]["value"] == pytest.approx(
        hand_kappa(decisions["ana"], decisions["ben"]))
    votes = [set(store.get_record(run_id, "mining", i.source)["categories"]) for i in items[4:]]
    for rater in labels:
        exact = [set(c) == v for c, v in zip(labels[rater], votes, strict=True)]
        assert section["labels"]["vs_miners"][rater]["accuracy"]["value"] == pytest.approx(sum(exact) / 4)
    show_section(driver, store, "adam", tmp_path, "report-people-vs-judges-adammeme.png")


def test_memeqa_page_takes_keyboard_answers(driver, store, tmp_path):
    memeqa_run(store, "qa", questions=8)
    page = Page(driver, store, "qa", "ana", 4)
    try:
        page.open()
        first = page.items[0]
        shoot(driver, "rate-memeqa.png")
        page.keys("b", Keys.ENTER)
        page.wait_rated(1)
        if page.items[1].page["multi"]:
            page.click('button[data-option="0"]')
            page.click('button[data-option="2"]')
            page.click("#submit")
        else:
            page.keys("c", Keys.ENTER)
        page.wait_rated(2)
    finally:
        page.close()
    stored = {r.item: r.answer for r in read_records(store, page.run["id"], HumanRating)}
    expected_second = [0, 2] if page.items[1].page["multi"] else [2]
    assert stored == {first.id: [1], page.items[1].id: expected_second}
    show_section(driver, store, "qa", tmp_path, "report-people-vs-judges-memeqa.png")


@pytest.mark.parametrize("method", ["arena", "adammeme", "memeqa"])
def test_meme_texts_and_model_outputs_are_shown_as_text_never_run(driver, store, tmp_path, method):
    """Probe runs carry `<img onerror>` and `</script>` payloads in meme texts, every model output and
    option; each item of the page shows them literally and none runs (window.__xss stays undefined)."""
    from helpers.synthetic import XSS_IMG

    {"arena": lambda: arena_run(store, "probe", probe=True, memes=2),
     "adammeme": lambda: adammeme_run(store, "probe", tmp_path / "adam", probe=True, memes_per_category=2),
     "memeqa": lambda: memeqa_run(store, "probe", probe=True, questions=8)}[method]()
    page = Page(driver, store, "probe", "ana", 3)
    try:
        page.open()
        for n in range(len(page.items)):
            WebDriverWait(driver, 10).until(lambda _, n=n: page.at() == n)
            if page.items[n].task != "labels" or XSS_IMG in page.items[n].page["text"]:
                assert XSS_IMG in driver.find_element(By.ID, "item").text
            assert driver.execute_script("return window.__xss") is None
            page.keys(Keys.ARROW_RIGHT)
    finally:
        page.close()


@pytest.mark.parametrize("task, run", [("reference", "adam"), ("refined", "adam"), ("guideline", "arena"),
                                       ("guideline_round", "arena"), ("context", "arena")])
def test_quality_tasks_take_keyboard_and_mouse_votes_and_resume(driver, store, tmp_path, task, run):
    """A quality study's page: one item rated with the keys (1–3 on the highlighted row, Enter saves),
    one with the mouse; the tab reopened resumes at the first unrated item; stored = clicked."""
    if run == "adam":
        adammeme_run(store, "adam", tmp_path / "adam")
    else:
        arena_run(store, "arena")
    page = Page(driver, store, run, "ana", 3, tasks=(task,))
    try:
        page.open()
        names = [c["name"] for c in page.items[0].page["criteria"]]
        shoot(driver, f"rate-{task}.png")
        keyed = {n: (k % 3) + 1 for k, n in enumerate(names)}
        page.keys(*[str(keyed[n]) for n in names], Keys.ENTER)
        page.wait_rated(1)
        page.reopen_in_a_new_tab()
        assert page.at() == 1
        clicked = {n: 3 - (k % 3) for k, n in enumerate(names)}
        for n in names:
            page.click(f'button[data-criterion="{n}"][data-point="{clicked[n]}"]')
        page.click("#submit")
        page.wait_rated(2)
        assert page.at() == 2
        text = driver.find_element(By.ID, "item").text
        assert all(c["definition"] in text for c in page.items[2].page["criteria"])
    finally:
        page.close()
    stored = {r.source: r.criteria for r in read_records(store, page.run["id"], HumanRating)}
    assert stored == {page.items[0].source: keyed, page.items[1].source: clicked}
