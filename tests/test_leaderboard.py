"""Leaderboards: headline rows with intervals in every report, `report --format csv|md` as the
tables a person pastes, `memegauge compare`, `memegauge view`'s run list / reports / comparison pages,
and plots with error bars, n and data-scaled axes written as PNG, SVG and PDF. Runs are synthetic
(records in each method's kinds, report_synthetic.py), so the real report builders run on them."""

from __future__ import annotations

import io
import re
import json
import threading
import urllib.error
import urllib.request

import pandas as pd
import pytest

from memegauge.cli import main
from memegauge.engine import Store
from memegauge.report import build_report
from memegauge.report.cli import store_server
from memegauge.report.headline import Headline, headline_rows
from memegauge.report.plots import grouped_bars, save_plot
from helpers.synthetic import XSS_IMG, adammeme_run, arena_run, memeqa_run

PROBE_MODEL = 'm<img src=x onerror="window.__xss=1">'


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    root = tmp_path_factory.mktemp("leaderboard")
    s = Store(root / "store.db")
    adammeme_run(s, "adam-1", root / "a1", targets=("t-a", "t-b"))
    adammeme_run(s, "adam-2", root / "a2", targets=("t-c",), seed=1)
    arena_run(s, "arena-1", bootstrap_rounds=30)
    memeqa_run(s, "qa-1", model="m1")
    memeqa_run(s, "qa-2", model="m2", seed=1)
    memeqa_run(s, "qa-3", model=PROBE_MODEL, seed=2, questions=15)
    return s


def cli(store: Store, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store.path), "--quiet", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_method_reports_headline_rows_with_intervals(store):
    for name, groups in (("adam-1", {"overall", "gender", "race", "religion", "overall (originals only)"}),
                         ("arena-1", {"overall"}), ("qa-1", {"overall (macro)", "overall (micro)"})):
        rows = headline_rows(build_report(store, name))
        assert rows and all(isinstance(r, Headline) and r.run == name for r in rows)
        assert groups <= {r.group for r in rows}
        for r in rows:
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r.date)
            assert (r.ci95_lo is None) == (r.note is not None), r  # an interval or the reason for none
            if r.ci95_lo is not None:
                assert r.ci95_lo <= r.value <= r.ci95_hi


def test_headline_fields_are_documented():
    assert all(field.description for field in Headline.model_fields.values())


def test_memeqa_types_from_few_questions_show_their_wide_interval(store):
    report = build_report(store, "qa-3")  # 15 questions over 4 types: 3–4 each
    for kind, figure in report["intervals"]["accuracy"].items():
        assert figure["n"] <= 5
        assert figure["ci95"][1] - figure["ci95"][0] > 0.4, (kind, figure)
    page = main_html(store, "qa-3")
    assert "accuracy (95% CI)" in page and "%" in page


def main_html(store: Store, name: str) -> str:
    from memegauge.report.formats import render_report

    return render_report(store, name, "html")


def test_report_csv_is_a_leaderboard_pandas_reads(store, capsys):
    code, out, _ = cli(store, capsys, "report", "adam-1", "--format", "csv")
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    # one row per target × group: 2 targets × (overall, 3 categories, originals only)
    assert len(frame) == 10 and set(frame["model"]) == {"t-a", "t-b"}
    assert {"failure_rate", "failure_rate_ci95_lo", "failure_rate_ci95_hi", "failure_rate_n", "avg_score"} <= set(frame)
    assert pd.to_datetime(frame["date"], utc=True).notna().all()  # ISO dates, not epoch seconds
    row = frame[(frame["model"] == "t-a") & (frame["group"] == "overall")].iloc[0]
    figure = build_report(store, "adam-1")["targets"]["t-a"]["intervals"]["overall"]["failure_rate"]
    assert (row["failure_rate"], row["failure_rate_ci95_lo"], row["failure_rate_ci95_hi"]) == pytest.approx(
        (figure["value"], *figure["ci95"]))


def test_report_md_is_a_table_with_intervals(store, capsys):
    code, out, _ = cli(store, capsys, "report", "qa-1", "--format", "md")
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("| qa-1 |")]
    assert len(lines) == 2 + 4  # macro, micro and four question types
    assert all("% [" in line for line in lines)
    assert "- date: 20" in out and "1795" not in out


def test_compare_three_runs_in_every_format(store, capsys, tmp_path):
    # the three runs were made with different seeds: ranked together only when asked, differences named
    code, table, _ = cli(store, capsys, "compare", "qa-1", "qa-2", "qa-3", "--allow-different")
    assert code == 0 and "accuracy (95% CI)" in table and "seed: qa-1 0, qa-2 1, qa-3 2" in table
    assert table.count("overall (macro)") == 3
    code, out, _ = cli(store, capsys, "compare", "qa-1", "qa-2", "qa-3", "--format", "json", "--allow-different")
    found = json.loads(out)
    assert found["method"] == "memeqa" and [r["name"] for r in found["runs"]] == ["qa-1", "qa-2", "qa-3"]
    macro = [r for r in found["rows"] if r["group"] == "overall (macro)"]
    assert len(macro) == 3 and all(r["ci95_lo"] is not None for r in macro)
    values = [r["value"] for r in macro]
    assert values == sorted(values, reverse=True)  # best first
    code, out, _ = cli(store, capsys, "compare", "qa-1", "qa-2", "qa-3", "--format", "csv", "--allow-different")
    assert len(pd.read_csv(io.StringIO(out))) == 3 * 6
    out_file = tmp_path / "compare.html"
    code, _, err = cli(store, capsys, "compare", "qa-1", "qa-2", "qa-3", "--format", "html", "--out", str(out_file),
                       "--allow-different")
    page = out_file.read_text()
    assert code == 0 and "comparison written" in err
    assert PROBE_MODEL not in page and "m&lt;img src=x" in page
    assert page.count("<img class=\"plot\" src=\"data:image/png") == 2  # overall, and every type
    code, out, _ = cli(store, capsys, "compare", "qa-1", "qa-2", "qa-3", "--format", "md", "--allow-different")
    assert code == 0 and PROBE_MODEL not in out and "m&lt;img src=x" in out  # markup in a name is text


def test_compare_puts_adammeme_targets_of_different_runs_on_one_leaderboard(store, capsys):
    code, out, _ = cli(store, capsys, "compare", "adam-1", "adam-2", "--format", "csv", "--allow-different")
    frame = pd.read_csv(io.StringIO(out))
    overall = frame[frame["group"] == "overall"]
    assert code == 0 and list(overall["model"].isin(["t-a", "t-b", "t-c"])) == [True] * 3
    assert list(overall["failure_rate"]) == sorted(overall["failure_rate"])  # lowest FR first


def test_compare_refuses_mixed_methods_and_unknown_runs(store, capsys):
    code, _, err = cli(store, capsys, "compare", "qa-1", "arena-1")
    assert code == 2 and "different methods" in err and "qa-1 (memeqa)" in err
    code, _, err = cli(store, capsys, "compare", "qa-1", "nope")
    assert code == 2 and "no run named 'nope'" in err
    code, _, err = cli(store, capsys, "compare", "qa-1", "--format", "xml")
    assert code == 2 and "unknown format" in err


@pytest.fixture(scope="module")
def served(store):
    server = store_server(store)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def test_view_lists_every_run_with_key_figures(store, served):
    status, page = fetch(served + "/")
    assert status == 200
    for name in ("adam-1", "adam-2", "arena-1", "qa-1", "qa-2", "qa-3"):
        assert f'href="/run/{name}"' in page
    assert "overall (macro): m1: accuracy" in page and "% [" in page
    assert PROBE_MODEL not in page and XSS_IMG not in page
    assert 'action="/compare"' in page and 'name="runs" value="qa-1"' in page


def test_view_serves_reports_and_comparisons_and_404s_the_rest(served):
    status, page = fetch(served + "/run/arena-1")
    assert status == 200 and "MemeGauge report:" in page and "arena-1" in page
    status, page = fetch(served + "/compare?runs=qa-1,qa-2&allow_different=1")
    assert status == 200 and "MemeGauge comparison (memeqa)" in page and 'href="/run/qa-1"' in page
    status, page = fetch(served + "/compare?runs=qa-1&runs=qa-2&runs=qa-3&allow_different=1")
    assert status == 200 and page.count('href="/run/qa-') == 3 * 6
    status, text = fetch(served + "/compare?runs=qa-1,arena-1")
    assert status == 400 and "different methods" in text
    assert fetch(served + "/run/nope")[0] == 404
    assert fetch(served + "/favicon.ico")[0] == 404
    request = urllib.request.Request(served + "/", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 405


def test_bar_plot_has_error_bars_and_an_axis_scaled_to_small_rates(tmp_path):
    image = grouped_bars(["a", "b"], {"m<script>": [0.02, 0.08]}, "failure rate", "FR", percent=True,
                         intervals={"m<script>": [(0.005, 0.07), (0.03, 0.18)]}, counts={"m<script>": [40, 50]})
    ax = image.figure.axes[0]
    assert ax.get_ylim()[1] < 30  # 2% and 8% bars are readable, not flattened on 0–100%
    labels = [t.get_text() for t in ax.texts]
    assert "2\nn=40" in labels and "8\nn=50" in labels
    from matplotlib.container import ErrorbarContainer

    errorbar = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))  # each spans its 95% interval (%)
    spans = [sorted(segment[:, 1]) for segment in errorbar.lines[2][0].get_segments()]
    assert spans == [pytest.approx([0.5, 7.0]), pytest.approx([3.0, 18.0])]
    paths = save_plot(image, tmp_path / "fr")
    assert [p.suffix for p in paths] == [".png", ".svg", ".pdf"] and all(p.stat().st_size > 1000 for p in paths)
    assert "<script" not in (tmp_path / "fr.svg").read_text()  # text is drawn as paths
    assert (tmp_path / "fr.pdf").read_bytes().startswith(b"%PDF")


def test_report_plots_option_writes_png_svg_pdf(store, capsys, tmp_path):
    code, _, err = cli(store, capsys, "report", "adam-1", "--format", "json", "--out", str(tmp_path / "r.json"),
                       "--plots", str(tmp_path / "plots"))
    names = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert code == 0 and "plot files written" in err
    assert {f"failure-rate-per-category.{ext}" for ext in ("png", "svg", "pdf")} <= set(names)
    assert len(names) % 3 == 0


def test_a_report_built_before_intervals_still_renders(store):
    report = build_report(store, "qa-1")
    report.pop("intervals")
    assert headline_rows(report) == []
    from memegauge.report.html import to_html

    assert "accuracy" in to_html(store, report)


@pytest.mark.slow  # subprocesses and a browser: seconds each
def test_compare_page_and_run_list_in_a_browser_run_no_injected_script(served):
    from memegauge.testing.browser import available, start_driver

    if not available():
        pytest.skip("chromium, chromedriver or selenium not installed")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    from helpers.browser import console_errors

    driver = start_driver()
    try:
        driver.get(served + "/")
        boxes = driver.find_elements(By.CSS_SELECTOR, 'input[name="runs"]')
        for box in boxes:
            if box.get_attribute("value") in ("qa-1", "qa-3"):
                box.click()
        # the fixture's runs differ in seed: compare refuses them unless the form's box allows it
        driver.find_element(By.CSS_SELECTOR, 'input[name="allow_different"]').click()
        driver.find_element(By.CSS_SELECTOR, "#compare-form button").click()
        WebDriverWait(driver, 60).until(
            lambda d: "/compare?" in d.current_url and d.find_elements(By.CSS_SELECTOR, "img.plot"))
        assert "/compare?runs=qa-1&runs=qa-3&allow_different=1" in driver.current_url
        rows = driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
        assert len(rows) == 2 * 6 and PROBE_MODEL in driver.find_element(By.TAG_NAME, "body").text
        assert driver.find_element(By.CSS_SELECTOR, "img.plot").get_attribute("naturalWidth") != "0"
        assert driver.execute_script("return typeof window.__xss") == "undefined"
        assert console_errors(driver) == []
    finally:
        driver.quit()


def test_view_answers_a_run_it_cannot_report_with_an_error_page_not_a_dropped_connection(tmp_path):
    """A MemeQA run stopped by --budget before its question records were written: its report is refused
    with one message, and the view answered that request with no HTTP response at all."""
    from helpers.memeqa_data import qa_dataset
    from memegauge.testing.server import start_server

    data, images = qa_dataset(tmp_path / "qa")
    with start_server(latency_ms=20) as srv:
        (tmp_path / "models.yaml").write_text(f"m: {{backend: openai, model: m, base_url: {srv.base_url}, "
                                              "max_concurrency: 2, price_in: 2.5, price_out: 10}\n")
        code = main(["--store", str(tmp_path / "s.db"), "--models", str(tmp_path / "models.yaml"), "--quiet",
                     "qa", "eval", "--data", str(data), "--images", str(images), "--version", "none-minus",
                     "--split", "dev", "--model", "m", "--budget", "0.0001", "--run", "qa-stopped"])
    assert code == 1
    out = tmp_path / "questions.csv"  # no question record yet: a header, so pandas reads an empty frame
    assert main(["--store", str(tmp_path / "s.db"), "export", "qa-stopped", "--table", "questions",
                 "--out", str(out)]) == 0
    empty = pd.read_csv(out)
    assert len(empty) == 0 and {"run", "run_created", "id", "correct"} <= set(empty.columns)
    stopped = Store(tmp_path / "s.db")
    server = store_server(stopped)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        status, text = fetch(url + "/run/qa-stopped")
        assert status == 409 and "cannot show this page" in text and "qa-stopped" in text
        assert fetch(url + "/")[0] == 200  # the run list still lists it
    finally:
        server.shutdown()
        server.server_close()
        stopped.close()
