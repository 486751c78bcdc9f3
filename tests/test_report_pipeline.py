"""HTML reports of real method runs: AdamMeme, MemeArena and MemeQA (both versions) run through the
`memegauge` CLI against the local test server once per session (tests/conftest.py `method_runs`,
built by tests/helpers/runs.py), the first meme's text an XSS probe.

Checks every piece of the header against the store and the configs, that the probe is escaped in the
page, and — when headless Chromium is installed — that each report opens with every detail expanded,
shows the probe literally, runs nothing and logs no console error. test_report_html.py covers the
renderer on synthetic runs of any shape; this file keeps it honest about the records real runs write.
"""

from __future__ import annotations

import html
import re

import pytest

from memegauge import __version__
from memegauge.report import build_report
from memegauge.report.formats import render_report
from memegauge.report.html import to_html, write_html_reports
from memegauge.testing.browser import available, start_driver
from helpers.browser import console_errors, open_page
from helpers.runs import JUDGES, QA_MODEL, TARGETS
from helpers.synthetic import XSS_IMG, XSS_SCRIPT

EXPECTED_MODELS = {  # method → (agent, targets, judges) as helpers/runs.py's configs name them
    "adammeme": ("agent", "gpt-x, llava-x", "–"),
    "arena": ("agent", ", ".join(TARGETS), ", ".join(JUDGES)),
    "memeqa": ("–", QA_MODEL, "–"),
}


@pytest.fixture
def real(method_runs):
    """The session's runs (tests/conftest.py `method_runs`): their store and method → run name."""
    return method_runs.store, method_runs.names


def facts(page: str) -> dict[str, str]:
    """The header's (term, value) pairs, unescaped."""
    block = page.split('id="run-facts"', 1)[1].split("</dl>", 1)[0]
    return {html.unescape(k): html.unescape(v) for k, v in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block, re.S)}


@pytest.mark.parametrize("method", ["adammeme", "arena", "memeqa"])
def test_header_shows_every_piece_for_each_method(real, method):
    store, names = real
    name = names[method]
    header = facts(to_html(store, build_report(store, name)))
    summary, row = store.run_summary(name), store.run_row(name)
    agent, targets, judges = EXPECTED_MODELS[method]
    assert (header["run"], header["method"], header["status"]) == (name, method, "done")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", header["date"])
    for role, want in (("agent", agent), ("targets", targets), ("judges", judges)):  # only the roles it has
        assert header.get(role, "–") == want and (role in header) == (want != "–"), role
    assert header["seed"] == str(row["seed"]) and header["package version"] == __version__
    assert header["method version"] == "1"  # made through the run path, which stores it (issue 35)
    assert header["config hash"] == row["config_hash"] and len(row["config_hash"]) >= 12
    assert summary["calls"] > 0 and summary["tokens"] > 0
    assert header["calls"] == f"{summary['calls']} ({summary['calls_made']} made, {summary['cached']} cached)"
    assert header["failed calls"] == str(summary["failed_calls"])
    assert header["tokens"] == str(summary["tokens"]) and header["cost"] == f"${summary['cost']:.4f}"


def test_probe_in_a_real_meme_is_escaped_and_every_format_renders(real):
    store, names = real
    for method in ("adammeme", "arena", "memeqa"):
        page = render_report(store, names[method], "html")
        assert 'id="embedded-warning"' not in page  # the test server is no embedded model
        for raw in (XSS_IMG, XSS_SCRIPT, "<img src=x", "<script>window"):
            assert raw not in page, (method, raw)
        for fmt in ("csv", "md", "json"):
            assert render_report(store, names[method], fmt)
    arena_page = render_report(store, names["arena"], "html")
    assert "\\u003cimg src=x onerror=" in arena_page  # the probe meme travels, escaped, in the data


@pytest.mark.slow
@pytest.mark.skipif(not available(), reason="chromium, chromedriver or selenium not installed")
def test_real_reports_open_expand_and_stay_inert_in_the_browser(real, tmp_path):
    from selenium.webdriver.common.by import By

    store, names = real
    paths = write_html_reports(store, [names[m] for m in ("adammeme", "arena", "memeqa")], tmp_path, index=True)
    driver = start_driver()
    try:
        for path in paths[1:]:
            open_page(driver, path)
            for _ in range(6):  # opening a detail adds nested ones
                driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; });")
                driver.execute_script("return new Promise(r => setTimeout(r, 50));")
            body = driver.find_element(By.TAG_NAME, "body").text
            assert "Loading…" not in body and "no rows" not in body, path.name
            assert driver.execute_script("return typeof window.__xss") == "undefined"
            assert console_errors(driver) == [], path.name
        open_page(driver, paths[2])  # arena: the probe meme is shown literally
        driver.execute_script("document.querySelector('details.meme-item').open = true;"
                              "return new Promise(r => setTimeout(r, 50));")
        assert XSS_IMG in driver.find_element(By.CSS_SELECTOR, "details.meme-item").text
    finally:
        driver.quit()
