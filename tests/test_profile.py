"""`memegauge profile`: two models measured every way against the test server in its realistic style (MemeQA both
versions, AdamMeme, an arena, three field benchmarks: tests/helpers/profile_world.py). Every figure on the profile
must be the figure of the run's own report; paired differences are recomputed here from the runs' exported items;
published figures appear only beside a run on the same split."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

import memegauge
from memegauge.cli import main
from memegauge.engine import Store
from memegauge.profiles import paired as pairs
from memegauge.profiles.gather import build_profile
from memegauge.profiles.part import ProfilePart, part_of, register_part, DuplicateProfilePart
from memegauge.profiles.records import Profile
from memegauge.profiles.render import render, to_markdown
from memegauge.report import build_report
from memegauge.report.headline import headline_rows
from memegauge.report.leaderboard import cell
from memegauge.testing.server import start_server

from helpers.profile_world import BENCHMARKS, MODELS, XSS, XSS_SCRIPT, build, copy

A, B = MODELS


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("profile")
    with start_server(seed=4, style="realistic") as server:
        yield build(root, server.base_url)


@pytest.fixture(scope="module")
def found(world) -> Profile:
    return memegauge.profile(list(MODELS), store=world.store, models_file=world.models)


def cli(world, capsys, *args: str) -> tuple[int, str, str]:
    code = world.cli(*args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _kind_of(found: Profile, model: str, run: str) -> str:
    return next(r.kind for p in found.models if p.model == model for r in p.runs if r.run == run)


# ---- gathering ------------------------------------------------------------------------------------------------

def test_each_model_gathers_every_method_and_benchmark(found):
    for page in found.models:
        kinds = [r.kind for r in page.runs]
        assert len(kinds) == len(set(kinds)) == 4 + len(BENCHMARKS), kinds  # MemeQA ×2, AdamMeme, arena, 3 benchmarks
        assert sum(k.startswith("MemeQA none-minus · test") for k in kinds) == 1
        assert sum(k.startswith("MemeQA none-plus · test") for k in kinds) == 1
        assert {r.method for r in page.runs} == {"memeqa", "adammeme", "arena", *BENCHMARKS}
        assert page.missing == []
        assert all(r.status == "done" and r.calls > 0 and re.fullmatch(r"[0-9a-f]{16,64}", r.config_hash)
                   for r in page.runs)
        assert page.endpoint is not None and page.endpoint.model == page.model and page.endpoint.base_url


def test_every_figure_on_the_profile_is_its_runs_own_report(world, found):
    """Headline, groups, strengths and weaknesses: each row is a row of the run's own headline (the rows
    `memegauge report --format csv` prints), the same value, interval and n."""
    store = Store(world.store)
    own = {}
    for page in found.models:
        for r in page.runs:
            own[(page.model, r.run)] = {(h.group, h.figure): h for h in headline_rows(build_report(store, r.run))
                                        if h.model == page.model}
        rows = page.headline + page.groups + page.strengths + page.weaknesses
        assert len(page.headline) >= 7 and len(page.groups) >= 20
        for row in rows:
            theirs = own[(page.model, row.run)][(row.group, row.figure)]
            assert row == theirs
    page = render(found, "html")
    md = to_markdown(found)
    for p in found.models:
        for row in p.headline + p.groups:
            assert cell(row) in md
            assert cell(row) in page


def test_the_figures_are_the_reports_numbers_not_recomputed(world, found, capsys):
    """The MemeQA macro and a benchmark's accuracy as `memegauge report RUN --format json` prints them."""
    for page in found.models:
        for run in page.runs:
            code, out, _ = cli(world, capsys, "report", run.run, "--format", "json")
            report = json.loads(out)
            mine = {(h.group, h.figure): h for h in page.headline if h.run == run.run}
            if run.method == "memeqa":
                macro = report["intervals"]["macro"]
                assert mine[("overall (macro)", "accuracy")].value == pytest.approx(macro["value"], rel=1e-12)
                shown = mine[("overall (macro)", "accuracy")]
                assert [shown.ci95_lo, shown.ci95_hi] == pytest.approx(macro["ci95"])
            if run.method in BENCHMARKS:
                for task, figures in report["tasks"].items():
                    assert mine[(f"overall ({task})", "accuracy")].value == pytest.approx(figures["accuracy"]["value"])
                    assert mine[(f"overall ({task})", "accuracy")].n == figures["accuracy"]["n"]
            if run.method == "adammeme":
                overall = report["targets"][page.model]["intervals"]["overall"]["failure_rate"]
                assert mine[("overall", "failure_rate")].value == pytest.approx(overall["value"])


def test_published_figures_sit_only_beside_the_same_split(found):
    for page in found.models:
        kinds = {r.kind: r for r in page.runs}
        memeqa = [f for f in page.published if f.kind.startswith("MemeQA")]
        assert {f.split for f in memeqa} == {"test"}  # the paper's split, which these runs used
        gpt4o = [f for f in memeqa if f.system == "GPT-4o (zero-shot)" and f.group == "overall (macro)"]
        assert {round(f.value, 3) for f in gpt4o} == {0.596, 0.616}  # Table 2's macro, None− and None+
        assert all(f.kind in kinds for f in page.published)
        fhm = {(f.group, f.metric, f.system, f.value) for f in page.published if f.kind.startswith("Facebook")}
        assert fhm == {("overall (hateful)", "accuracy", "human annotators", 0.847),
                       ("overall (hateful)", "accuracy", "the paper's best baseline", 0.6473)}
        assert {f.split for f in page.published if f.kind.startswith("Facebook")} == {"test_seen"}


def test_a_run_on_another_split_gets_no_published_figure(world, tmp_path):
    """MemeQA on dev and FHM on dev_seen: the papers publish test and test_seen figures only."""
    w = copy(world, tmp_path / "w")
    with start_server(seed=4, style="realistic") as server:
        w.models.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, w.models.read_text()))
        assert w.cli("qa", "eval", "--data", str(w.root / "qa" / "data"), "--images", str(w.root / "qa" / "images"),
                     "--version", "none-minus", "--split", "dev", "--model", A, "--run", "qa-dev") == 0
        assert w.cli("eval", "fhm", "--model", A, "--split", "dev_seen", "--data", str(w.root / "bench" / "fhm")) == 0
    found = build_profile(Store(w.store), [A])
    kinds = {r.kind for r in found.models[0].runs}
    assert {"MemeQA none-minus · dev", "Facebook Hateful Memes · dev_seen"} <= kinds
    assert not [f for f in found.models[0].published if f.kind in ("MemeQA none-minus · dev",
                                                                    "Facebook Hateful Memes · dev_seen")]
    assert [f for f in found.models[0].published if f.kind == "Facebook Hateful Memes · test_seen"]


def test_the_newest_run_of_a_kind_is_shown_and_the_older_named(world, tmp_path):
    w = copy(world, tmp_path / "w")
    with start_server(seed=9, style="realistic") as server:
        w.models.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, w.models.read_text()))
        qa = ["qa", "eval", "--data", str(w.root / "qa" / "data"), "--images", str(w.root / "qa" / "images"),
              "--version", "none-plus", "--split", "test", "--model", A]
        assert w.cli(*qa, "--run", "qa-again") == 0
        assert w.cli(*qa, "--run", "qa-sample", "--limit", "5") == 0
    page = build_profile(Store(w.store), [A]).models[0]
    by_kind = {r.kind: r for r in page.runs}
    assert by_kind["MemeQA none-plus · test"].run == "qa-again"
    assert by_kind["MemeQA none-plus · test"].older == [f"qa-none-plus-{A}"]
    assert by_kind["MemeQA none-plus · test · first 5 questions (seed 0)"].run == "qa-sample"  # another kind


def test_a_newer_run_that_did_not_finish_does_not_replace_the_done_one(world, tmp_path):
    w = copy(world, tmp_path / "w")
    with start_server(seed=9, style="realistic", latency_ms=20) as server:
        w.models.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, w.models.read_text())
                            .replace("max_concurrency: 8", "max_concurrency: 1")
                            .replace("backoff_s", "price_in: 2.5, price_out: 10, backoff_s")
                            .replace(f"model: {A},", f"model: {A}-v2,"))  # a new served id: nothing cached
        qa = ["qa", "eval", "--data", str(w.root / "qa" / "data"), "--images", str(w.root / "qa" / "images"),
              "--version", "none-plus", "--split", "test", "--model", A]
        assert w.cli(*qa, "--run", "qa-stopped", "--budget", "0.0005") == 1
    store = Store(w.store)
    assert store.run_summary("qa-stopped")["status"] == "stopped"
    found = build_profile(store, [A])
    shown = next(r for r in found.models[0].runs if r.kind == "MemeQA none-plus · test")
    assert shown.run == f"qa-none-plus-{A}" and shown.status == "done"
    # a stopped run is named: among the other runs of its kind, or (no figures yet) in the profile's notes
    assert "qa-stopped" in shown.older or any("qa-stopped" in note and "stopped" in note for note in found.notes)


# ---- strengths, weaknesses and their examples -----------------------------------------------------------------

def test_weaknesses_are_the_lowest_groups_with_wrong_answers_the_runs_stored(world, found):
    store = Store(world.store)
    for page in found.models:
        assert page.weaknesses and page.strengths and page.examples
        for weak in page.weaknesses:
            same = [g for g in page.groups if g.run == weak.run and g.value is not None]
            better = (lambda x, y: x >= y) if weak.higher_is_better else (lambda x, y: x <= y)
            assert sum(better(weak.value, g.value) for g in same) >= 1
            assert all(better(s.value, weak.value) for s in page.strengths if s.run == weak.run)
        for example in page.examples:
            run = next(r for r in page.runs if r.run == example.run)
            if run.method == "memeqa":
                rows = [json.loads(x) for x in _export(store, example.run, "questions")]
                assert any(r["img"] == example.meme and r["raw"] == example.answer and r["type"] == example.group
                           and r["correct"] is False for r in rows)
                assert example.picture and example.picture.startswith("data:image/")
            if run.method in BENCHMARKS:
                rows = [json.loads(x) for x in _export(store, example.run, "answers")]
                row = next(r for r in rows if r["item"] == example.meme and r["answer"] == example.answer)
                assert row["correct"] is False
            if run.method == "adammeme":
                assert example.expected.startswith("score ") and int(example.expected.split()[1].split("/")[0]) <= 4
        kinds = {e.kind for e in page.examples}
        assert any(k.startswith("MemeQA") for k in kinds) and any(k.startswith("AdamMeme") for k in kinds)


def _export(store: Store, run: str, table: str) -> list[str]:
    from memegauge.export import export

    _, text = export(store, run, table, "jsonl", None)
    return text.splitlines()


# ---- paired differences ---------------------------------------------------------------------------------------

def test_paired_differences_equal_a_recount_of_the_exported_items(world, found):
    store = Store(world.store)
    for version in ("none-minus", "none-plus"):
        a = {r["id"]: r for r in map(json.loads, _export(store, f"qa-{version}-{A}", "questions"))}
        b = {r["id"]: r for r in map(json.loads, _export(store, f"qa-{version}-{B}", "questions"))}
        common = [k for k in a if k in b and a[k]["correct"] is not None and b[k]["correct"] is not None]
        d = next(x for x in found.paired if x.kind == f"MemeQA {version} · test" and x.group == "overall")
        x = np.array([a[k]["correct"] for k in common])
        y = np.array([b[k]["correct"] for k in common])
        assert (d.model_a, d.model_b, d.n) == (A, B, len(common))
        assert d.a_rate == pytest.approx(x.mean()) and d.b_rate == pytest.approx(y.mean())
        assert (d.a_only, d.b_only) == (int((x & ~y).sum()), int((~x & y).sum()))
        if d.a_only + d.b_only:
            assert d.mcnemar_p == pytest.approx(stats.binomtest(d.a_only, d.a_only + d.b_only, 0.5).pvalue)
        assert d.ci95_lo is not None and d.ci95_lo <= d.difference <= d.ci95_hi
        # the profile's own MemeQA micro accuracy is the same share when every question was scored by both
        micro = {h.model: h.value for p in found.models for h in p.headline
                 if h.group == "overall (micro)" and h.run.startswith(f"qa-{version}")}
        assert d.a_rate == pytest.approx(micro[A]) and d.b_rate == pytest.approx(micro[B])


def test_the_arenas_paired_difference_is_the_head_to_head_record(world, found):
    store = Store(world.store)
    battles = [json.loads(x) for x in _export(store, "arena", "battles")]
    mine = [b for b in battles if {b["model_a"], b["model_b"]} == {A, B} and b["joint"].get("overall") is not None
            and b["setting"] == "fused"]
    won = {m: sum(b["winner"] in ("model_a", "model_b") and b[b["winner"]] == m for b in mine) for m in (A, B)}
    d = next(x for x in found.paired if x.kind.startswith("MemeArena") and x.group == "overall")
    assert (d.n, d.a_only, d.b_only) == (len(mine), won[A], won[B])


def test_mcnemar_exact_and_the_bootstrap_by_hand():
    assert pairs.mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)  # 2·P(X ≤ 1), X ~ Bin(10, 1/2)
    assert pairs.mcnemar_exact(0, 0) is None and pairs.mcnemar_exact(3, 3) == pytest.approx(1.0)
    a = [True] * 30 + [False] * 10
    b = [True] * 20 + [False] * 20
    memes = [f"m{i}" for i in range(40)]
    first, second = pairs.paired(a, b, memes), pairs.paired(a, b, memes)
    assert first == second  # seeded
    assert first["difference"] == pytest.approx(0.25) and first["method"].startswith("paired cluster bootstrap")
    lo, hi = first["ci95"]
    assert 0.1 < lo < 0.25 < hi < 0.4
    agree = pairs.paired([True, False] * 10, [True, False] * 10, memes[:20])  # no discordant item: no zero width
    assert agree["difference"] == 0 and agree["method"].startswith("Newcombe")
    assert agree["ci95"][0] < 0 < agree["ci95"][1] and agree["mcnemar_p"] is None
    # clustered: 40 items on 4 memes resample 4 clusters, a wider interval than 40 independent memes
    clustered = pairs.paired(a, b, [f"m{i // 10}" for i in range(40)])
    assert clustered["ci95"][1] - clustered["ci95"][0] > hi - lo


# ---- formats --------------------------------------------------------------------------------------------------

def test_json_markdown_and_pandas_carry_the_same_figures(found):
    again = Profile.model_validate_json(render(found, "json"))
    assert again == found
    frames = found.to_pandas()
    assert set(frames) == {"headline", "groups", "strengths", "weaknesses", "published", "paired", "runs", "examples"}
    head = frames["headline"]
    assert len(head) == sum(len(p.headline) for p in found.models)
    for p in found.models:
        for h in p.headline:
            line = head[(head.model == h.model) & (head.run == h.run) & (head.group == h.group)
                        & (head.figure == h.figure)]
            assert line["value"].iloc[0] == pytest.approx(h.value) and line["n"].iloc[0] == h.n
    assert len(frames["paired"]) == len(found.paired) and set(frames["runs"].model) == set(MODELS)


def test_meme_texts_and_answers_are_escaped_in_every_format(found):
    assert any(XSS in (e.text or "") + (e.answer or "") for p in found.models for e in p.examples)
    page = render(found, "html")
    assert XSS not in page and XSS_SCRIPT not in page and "&lt;img src=x" in page
    assert "<script" not in page  # a model page has no script at all
    md = to_markdown(found)
    assert XSS not in md and "<script>" not in md


def test_the_cli_writes_each_format_and_refuses_bad_input(world, capsys, tmp_path):
    for fmt in ("html", "md", "json"):
        code, _, _ = cli(world, capsys, "profile", A, B, "--format", fmt, "--out", str(tmp_path / f"p.{fmt}"))
        assert code == 0 and (tmp_path / f"p.{fmt}").stat().st_size > 1000
    assert json.loads((tmp_path / "p.json").read_text())["models"][0]["model"] == A
    code, out, err = cli(world, capsys, "profile", A, "--format", "pdf")
    assert code == 2 and "unknown format" in out + err
    code, out, err = cli(world, capsys, "profile")
    assert code == 2 and "no model named" in out + err
    code, out, err = cli(world, capsys, "profile", "nobody", "--format", "md")
    assert code == 0 and "no stored run evaluated nobody" in out + err
    assert main(["--store", str(tmp_path / "none.db"), "profile", A]) == 2
    assert not (tmp_path / "none.db").exists()


def test_parts_are_registered_by_entry_point_and_refused_twice():
    assert part_of("memeqa") is not None and part_of("fhm") is not None and part_of("mami") is not None
    assert part_of("no-such-method") is None
    with pytest.raises(DuplicateProfilePart):
        register_part("memeqa", ProfilePart(kind=lambda report: "x"))


# ---- the static site in headless Chromium, network off ---------------------------------------------------------

RECORD_VIOLATIONS = """window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) { window.__violations.push(e.blockedURI); });"""


@pytest.fixture(scope="module")
def site(world, tmp_path_factory):
    folder = tmp_path_factory.mktemp("site") / "site"
    assert world.cli("profile", "--site", str(folder)) == 0
    return folder


def test_the_site_has_an_index_a_page_per_model_and_the_comparison(site):
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert "index.html" in pages and "compare.html" in pages
    assert sum(p.startswith("models/") for p in pages) == 3  # qwen-x, gpt-x and the arena's reference, llava-x
    for page in site.rglob("*.html"):
        html = page.read_text()
        for url in re.findall(r'(?:src|href)="([^"]*)"', html):
            assert url.startswith(("data:", "#", "models/", "../index.html", "index.html", "compare.html")), (page, url)
    index = (site / "index.html").read_text()
    order = re.findall(r'<td data-v="([^"]+)"><a href="models/', index)
    assert set(order) == {A, B, "llava-x"}


@pytest.mark.slow  # headless Chromium
@pytest.mark.skipif(not __import__("memegauge.testing.browser", fromlist=["available"]).available(),
                    reason="needs Debian's chromium and chromedriver and selenium")
def test_the_site_offline_in_chromium_requests_nothing_outside_and_runs_no_payload(site):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    from memegauge.testing.browser import start_driver

    driver = start_driver()
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
                                                                    "downloadThroughput": 0, "uploadThroughput": 0})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_VIOLATIONS})
        for page in sorted(site.rglob("*.html")):
            driver.get(page.as_uri())
            resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
            assert all(r.startswith((site.as_uri(), "data:")) for r in resources), (page, resources)
            assert driver.execute_script("return window.__violations") == [], page  # nothing was even attempted
            assert driver.execute_script("return window.__xss === undefined"), page
            with pytest.raises(NoAlertPresentException):
                driver.switch_to.alert.text  # noqa: B018
            text = driver.find_element(By.TAG_NAME, "body").text
            if page.parent.name == "models" or page.name == "compare.html":
                assert "Headline" in text and "Reproducibility" in text
        # a model page shows the payloads as text
        qwen = next(p for p in (site / "models").iterdir() if p.name.startswith("qwen-x"))
        driver.get(qwen.as_uri())
        assert "onerror" in driver.find_element(By.TAG_NAME, "body").text
        # the index sorts with its inline script (allowed by hash only) and reads the same without it
        driver.get((site / "index.html").as_uri())
        assert driver.execute_script("return document.body.getAttribute('data-ready')") == "1"
        header = driver.find_elements(By.CSS_SELECTOR, "#leaderboard th")[0]
        names = lambda: [r.find_elements(By.TAG_NAME, "td")[0].text  # noqa: E731
                         for r in driver.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")]
        header.click()
        assert names() == sorted(names())
        header.click()
        assert names() == sorted(names(), reverse=True)
    finally:
        driver.quit()


def test_the_profile_package_names_no_method():
    """Shared code: what only a method knows comes from its profile part (entry points), never from a list here."""
    from helpers.imports import PACKAGE
    from test_structure import _method_words, names_of_methods

    words = _method_words()
    for path in sorted((PACKAGE / "profile").rglob("*.py")):
        assert names_of_methods(path, words) == [], path


def test_view_serves_the_sites_pages(world, site):
    import threading
    import urllib.error
    import urllib.request

    from memegauge.report.cli import store_server

    server = store_server(Store(world.store))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/profiles/"

    def undated(html: str) -> str:  # the build time, and the endpoints (from --models, which view is not given)
        return re.sub(r"built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|<p>Served by .*?</p>"
                      r"|<p><span class=\"note\">Endpoint: .*?</p>", "", html)
    try:
        for page in ("index.html", "compare.html", *(f"models/{p.name}" for p in (site / "models").iterdir())):
            with urllib.request.urlopen(url + page) as response:
                assert response.status == 200
                assert undated(response.read().decode()) == undated((site / page).read_text()), page
        with urllib.request.urlopen(url) as response:  # the folder's address is its index
            assert undated(response.read().decode()) == undated((site / "index.html").read_text())
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(url + "models/nobody.html")
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
