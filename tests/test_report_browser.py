"""The HTML reports in a real browser: headless Debian Chromium driven by selenium (chromedriver).

Each method's report (synthetic runs, see tests/helpers/synthetic.py) is opened from file://, its leaderboard
rows are checked against the report dict, a chain / battle / question detail is opened, and the page
logs no console error. The XSS probe opens pages whose meme texts, model outputs, options and run name
carry `<img src=x onerror=...>` and `</script><script>...` payloads, opens every detail, and asserts
that nothing ran (`window.__xss` stays undefined) and that the payloads are shown literally — once with
the page's Content-Security-Policy and once with it removed, so escaping alone is shown to suffice.

Skipped cleanly when chromium, chromedriver or selenium is missing (`scripts/setup.sh --test` installs
them).
"""

from __future__ import annotations

import re
import threading

import pytest

from memegauge.engine import Store
from memegauge.report import build_report
from memegauge.report.cli import serve_report
from memegauge.report.intervals import shown
from memegauge.report.html import to_html, write_html_reports
from memegauge.testing.browser import available, start_driver
from helpers.browser import console_errors, open_page
from helpers.synthetic import XSS_IMG, XSS_SCRIPT, adammeme_run, arena_run, memeqa_run

pytestmark = [pytest.mark.slow,  # a real browser: seconds each
              pytest.mark.skipif(not available(), reason="chromium, chromedriver or selenium not installed")]
By = pytest.importorskip("selenium.webdriver.common.by").By
WebDriverWait = pytest.importorskip("selenium.webdriver.support.wait").WebDriverWait

PROBE_RUN = 'probe <img src=x onerror="window.__xss=3"></script><script>window.__xss=4</script>'


@pytest.fixture(scope="module")
def driver():
    browser = start_driver()
    yield browser
    browser.quit()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Synthetic runs of every method (and probe runs), each written as an HTML file."""
    root = tmp_path_factory.mktemp("browser")
    store = Store(root / "store.db")
    names = [adammeme_run(store, "adam", root / "adam"), arena_run(store, "arena"),
             memeqa_run(store, "qa-minus", version="none-minus"), memeqa_run(store, "qa-plus", version="none-plus"),
             adammeme_run(store, PROBE_RUN, root / "adam-probe", probe=True, agent="embedded"),
             arena_run(store, "arena-probe", probe=True, memes=2),
             memeqa_run(store, "qa-probe", probe=True, questions=8)]
    paths = write_html_reports(store, names, root / "html", index=True)
    yield store, {"index": paths[0], **dict(zip(names, paths[1:], strict=True))}
    store.close()


def table_rows(driver, header: str) -> list[list[str]]:
    """Rows (cell texts) of the first sortable table that has a column named `header`."""
    for element in driver.find_elements(By.CSS_SELECTOR, "table.sortable"):
        columns = [th.text.strip(" ▲▼") for th in element.find_elements(By.CSS_SELECTOR, "thead th")]
        if header in columns:
            return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                    for tr in element.find_elements(By.CSS_SELECTOR, "tbody tr")]
    raise AssertionError(f"no table with column {header!r}")


def open_first(driver, selector: str, within=None):
    """Click the summary of the first `details` matching `selector` and return it (now open).

    Waits for the box and for its content: both are rendered by `toggle` handlers, which the browser
    fires after the click returns."""
    box = WebDriverWait(driver, 10).until(
        lambda _: ((within or driver).find_elements(By.CSS_SELECTOR, selector) or [None])[0])
    box.find_element(By.CSS_SELECTOR, ":scope > summary").click()
    assert box.get_attribute("open") is not None
    WebDriverWait(driver, 10).until(lambda _: box.find_elements(By.CSS_SELECTOR, ":scope > :not(summary)"))
    return box


def test_adammeme_report_leaderboard_and_a_chain(driver, runs):
    store, paths = runs
    report = build_report(store, "adam")
    open_page(driver, paths["adam"])
    rows = table_rows(driver, "FR")
    assert [r[0] for r in rows] == list(report["targets"])
    assert [r[1] for r in rows] == [shown(t["intervals"]["overall"]["avg_score"]) for t in report["targets"].values()]
    assert len(driver.find_elements(By.CSS_SELECTOR, "img.plot")) == 4
    status = driver.find_element(By.CSS_SELECTOR, "[data-browser=adammeme] .page-status").text
    assert status.startswith("18 shown of 18")  # 2 targets × 3 categories × 3 chains
    chain = open_first(driver, "details.chain")
    steps = chain.find_elements(By.CSS_SELECTOR, ".step")
    assert steps and all("scorer comment" in s.text.lower() and "reference answer" in s.text.lower()
                         for s in steps)  # labels are shown in capitals
    assert chain.find_element(By.CSS_SELECTOR, ".meme img").get_attribute("src").startswith("data:image/jpeg")
    assert console_errors(driver) == []


def test_arena_report_leaderboard_and_a_battle(driver, runs):
    store, paths = runs
    report = build_report(store, "arena")
    open_page(driver, paths["arena"])
    rows = table_rows(driver, "BT 95% CI")
    assert [r[1] for r in rows] == [r["model"] for r in report["ranking"]]
    assert [r[5] for r in rows] == [shown(r["win_rate_ci95"], percent=True) for r in report["ranking"]]  # ties: no win
    assert all(r[5].startswith(f"{100 * x['win_rate']:.1f}% [") for r, x in zip(rows, report["ranking"], strict=True))
    assert [r[6] for r in rows] == [f"{100 * r['score']:.1f}%" for r in report["ranking"]]  # ties: half
    assert [r[7] for r in rows] == [str(r["battles"]) for r in report["ranking"]]
    meme = open_first(driver, "details.meme-item")
    task = open_first(driver, "details.task-item", meme)
    battle = open_first(driver, "details.battle-item", task)
    verdicts = battle.find_element(By.CSS_SELECTOR, "table.verdicts")
    header = [th.text for th in verdicts.find_elements(By.CSS_SELECTOR, "thead th")]
    assert header == ["judge", "Instruction Following", "Correctness", "Redundancy", "Relevance", "Accuracy",
                      "overall"]
    judges = [tr.find_element(By.TAG_NAME, "td").text for tr in verdicts.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert judges[-1] == "panel (joint)" and len(judges) >= 2
    assert "[Background Knowledge]" in battle.find_element(By.CSS_SELECTOR, ".two").text  # both answers
    assert console_errors(driver) == []


def test_memeqa_report_accuracy_filter_and_a_question(driver, runs):
    store, paths = runs
    report = build_report(store, "qa-minus")
    open_page(driver, paths["qa-minus"])
    rows = {r[0]: r for r in table_rows(driver, "random baseline")}
    assert rows["macro"][2] == shown(report["intervals"]["macro"], percent=True)
    assert rows["macro"][2].startswith(f"{100 * report['macro']:.1f}% [")
    assert set(rows) == {*[t for t, n in report["n"].items() if n], "macro", "micro"}
    assert table_rows(driver, "None+ (95% CI)")  # the none-plus run of the same evaluation is in the store
    root = driver.find_element(By.CSS_SELECTOR, "[data-browser=memeqa]")
    outcome = root.find_element(By.CSS_SELECTOR, "select[aria-label=outcome] option[value=correct]")
    outcome.click()
    correct = sum(q["correct"] is True for q in report["details"])
    assert root.find_element(By.CSS_SELECTOR, ".page-status").text.startswith(f"{correct} shown of 40")
    question = open_first(driver, "details.question-item", root)
    assert "✓ gold" in question.text and "raw output" in question.text.lower()
    assert all("correct" in tag.text for tag in root.find_elements(By.CSS_SELECTOR, "summary .tag.ok"))
    assert console_errors(driver) == []


def test_tables_sort_on_click(driver, runs):
    _, paths = runs
    open_page(driver, paths["arena"])
    header = next(th for th in driver.find_elements(By.CSS_SELECTOR, "table.sortable thead th") if th.text == "Elo")
    table = header.find_element(By.XPATH, "ancestor::table")
    elo = lambda: [float(r.find_elements(By.TAG_NAME, "td")[4].text)  # noqa: E731
                   for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    header.click()
    assert elo() == sorted(elo())
    header.click()
    assert elo() == sorted(elo(), reverse=True)


def expand_everything(driver) -> None:
    """Open every `details` on every page of every browser (opening one adds nested ones)."""
    for _ in range(6):
        driver.execute_script("document.querySelectorAll('details:not([open])').forEach(d => { d.open = true; });")
        driver.execute_script("return new Promise(r => setTimeout(r, 50));")


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_xss_probe_renders_as_text_and_runs_nothing(driver, runs, tmp_path, csp):
    _, paths = runs
    for name in (PROBE_RUN, "arena-probe", "qa-probe"):
        path = paths[name]
        if not csp:  # the same page without its Content-Security-Policy: escaping must hold on its own
            html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", path.read_text())
            assert "Content-Security-Policy" not in html
            path = tmp_path / path.name
            path.write_text(html)
        open_page(driver, path)
        expand_everything(driver)
        assert driver.find_elements(By.CSS_SELECTOR, "details:not([open])") == []
        text = driver.find_element(By.TAG_NAME, "body").text
        assert XSS_IMG in text and XSS_SCRIPT in text, name  # shown literally
        assert driver.execute_script("return typeof window.__xss") == "undefined", name
        assert driver.find_elements(By.CSS_SELECTOR, "img[src=x], img[onerror]") == []
        assert len(driver.find_elements(By.TAG_NAME, "script")) == 2  # the data element and our script
        assert console_errors(driver) == [], name
    open_page(driver, paths[PROBE_RUN])
    assert driver.title == f"MemeGauge report: {PROBE_RUN} (adammeme)"
    assert driver.find_element(By.ID, "embedded-warning").is_displayed()


def test_index_links_every_report(driver, runs):
    _, paths = runs
    driver.get(paths["index"].as_uri())
    links = driver.find_elements(By.CSS_SELECTOR, "td a")
    assert [a.text for a in links] == [n for n in paths if n != "index"]
    assert driver.find_element(By.ID, "embedded-warning").is_displayed()  # one run used the embedded model
    links[1].click()
    assert driver.title == "MemeGauge report: arena (arena)"
    assert console_errors(driver) == []


def test_view_serves_a_report_the_browser_opens(driver, runs):
    store, _ = runs
    stop, urls = threading.Event(), []
    thread = threading.Thread(target=serve_report, args=(to_html(store, build_report(store, "qa-plus")),),
                              kwargs={"announce": urls.append, "stop": stop})
    thread.start()
    try:
        while not urls:
            thread.join(0.05)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", urls[0])
        open_page(driver, urls[0])
        assert driver.title == "MemeGauge report: qa-plus (memeqa)"
        assert console_errors(driver) == []
    finally:
        stop.set()
        thread.join(10)
