"""HTML report: structure, escaping, self-containment, CSP, images, file writing, `report --format html`
and `memegauge view`. Runs are synthetic (records in each method's kinds, see tests/helpers/synthetic.py), so
the real report builders and renderer run in a second; test_report_pipeline.py uses real method runs."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers.html_page import Page
from helpers.synthetic import PROBE, XSS_IMG, XSS_SCRIPT, adammeme_run, arena_run, memeqa_run
from memegauge.cli import main
from memegauge.engine import Store
from memegauge.report import build_report
from memegauge.report.cli import report_server, serve_report
from memegauge.report.blocks import thumbnail
from memegauge.report.html import report_file_name, script_json, to_html, uses_embedded, write_html_reports
from memegauge.types import InputError

MEMEGAUGE = str(Path(sys.executable).with_name("memegauge"))
PROBE_RUN = 'probe <img src=x onerror="window.__xss=3">'


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    s = Store(root / "store.db")
    adammeme_run(s, "adam", root / "adam", targets=("target-a", "target-b"))
    arena_run(s, "arena")
    memeqa_run(s, "qa-minus", version="none-minus")
    memeqa_run(s, "qa-plus", version="none-plus")
    adammeme_run(s, PROBE_RUN, root / "adam-probe", probe=True, agent="embedded")
    arena_run(s, "arena-probe", probe=True, memes=2)
    memeqa_run(s, "qa-probe", probe=True, questions=8, model="embedded-small")
    yield s
    s.close()


def page(store: Store, name: str) -> tuple[str, Page]:
    html = to_html(store, build_report(store, name))
    return html, Page(html)


def test_adammeme_leaderboard_refinement_table_plots_and_chains(store):
    html, p = page(store, "adam")
    report = build_report(store, "adam")
    board = p.table_with("FR")
    assert [row[0][0] for row in board[1:]] == ["target-a", "target-b"]
    overall = {t: f"{v['overall']['avg_score']:.2f}" for t, v in report["targets"].items()}
    shown = {t: v["intervals"]["overall"]["avg_score"]["ci95"] for t, v in report["targets"].items()}
    assert [row[1][0] for row in board[1:]] == [f"{overall[t]} [{shown[t][0]:.2f}, {shown[t][1]:.2f}]"
                                                for t in ("target-a", "target-b")]  # value [95% interval]
    best = max(report["targets"], key=lambda t: report["targets"][t]["overall"]["avg_score"])
    assert [row[0][0] for row in board[1:] if "best" in row[1][1]] == [best]
    assert p.table_with("score w/o") and p.table_with("steps lowering score")
    plots = [v for tag, k, v in p.attributes if tag == "img" and k == "src"]
    assert len(plots) == 4 and all(v.startswith("data:image/png;base64,") for v in plots)  # iter, FR, 2 topics
    data = p.data()
    chains = {(c["target"], c["category"], c["chain"]) for c in data["chains"]}
    assert len(chains) == len(data["chains"]) == 2 * 3 * 3
    assert all(c["original"]["iteration"] == 0 and c["steps"] for c in data["chains"])
    assert set(data["images"]) and all(u.startswith("data:image/jpeg;base64,") for u in data["images"].values())


def test_arena_leaderboard_dimensions_judges_and_battles(store):
    _, p = page(store, "arena")
    report = build_report(store, "arena")
    board = p.table_with("BT 95% CI")
    assert [row[1][0] for row in board[1:]] == [r["model"] for r in report["ranking"]]
    assert board[1][4][0] == f"{report['ranking'][0]['elo']:.1f}"
    assert p.table_with("Instruction Following") and p.table_with("NDCG")
    battles = [(b, t["answers"]) for m in p.data()["memes"] for t in m["tasks"] for b in t["battles"]]
    assert len(battles) == report["counts"]["battles"]
    assert all(b["joint"] and answers[b["model_a"]]["text"] and answers[b["model_b"]]["text"]
               for b, answers in battles)
    assert not [b for b, _ in battles if "answer_a" in b]  # the page keeps one copy of each answer
    assert "flip rate" in to_html(store, report)


def test_memeqa_accuracy_baseline_and_none_versions(store):
    _, p = page(store, "qa-minus")
    report = build_report(store, "qa-minus")
    table = p.table_with("random baseline")
    rows = {row[0][0]: row for row in table[1:]}
    macro = report["intervals"]["macro"]["ci95"]
    assert rows["macro"][2][0] == f"{100 * report['macro']:.1f}% [{100 * macro[0]:.1f}, {100 * macro[1]:.1f}]"
    assert set(rows) == {*[t for t, n in report["n"].items() if n], "macro", "micro"}
    versions = p.table_with("None+ (95% CI)")
    assert versions[0][1][0] == "None− (95% CI)" and len(versions) == len(rows) + 1  # header, types, micro, macro
    micro = next(row for row in versions[1:] if row[0][0] == "micro")
    assert re.fullmatch(r"-?\d+\.\d% \[-?\d+\.\d, -?\d+\.\d\]", micro[3][0])  # the paired difference, its interval
    assert len(p.data()["questions"]) == 40


def test_memeqa_without_other_version_has_no_versions_table(store):
    _, p = page(store, "qa-probe")
    assert not [t for t in p.tables if t and "None+ (95% CI)" in [c for c, _ in t[0]]]


@pytest.mark.slow
def test_every_payload_is_escaped_and_inert(store):
    for name in (PROBE_RUN, "arena-probe", "qa-probe"):
        html, p = page(store, name)
        for raw in (XSS_IMG, XSS_SCRIPT, "<img src=x", "<script>window", "\u2028"):
            assert raw not in html, (name, raw)
        assert name != PROBE_RUN or "&lt;img src=x onerror=" in html  # the run name, as text
        scripts = [attrs for attrs, _ in p.scripts]
        assert scripts == [{"type": "application/json", "id": "report-data"}, {}]  # no injected script
        assert not [a for a in p.attributes if a[1].startswith("on")]  # no event handler attributes
        blob = json.dumps(p.data())
        assert "window.__xss" in blob and PROBE.split(" ")[0][:4] in json.dumps(p.data(), ensure_ascii=False)


def test_script_json_escapes_script_breakers_and_round_trips():
    value = {"a": PROBE, "b": "x\u2029y", "c": ["</SCRIPT>", "<!--"]}
    encoded = str(script_json(value))
    assert not set("<>&\u2028\u2029") & set(encoded)
    assert json.loads(encoded) == value


def test_page_is_self_contained_and_csp_allows_only_its_script(store):
    html, p = page(store, "arena")
    external = [(t, k, v) for t, k, v in p.attributes if k in ("src", "href") and not v.startswith("data:")]
    assert external == []
    assert "http://" not in html and "https://" not in html
    script = p.scripts[-1][1]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in p.meta_csp and "default-src 'none'" in p.meta_csp
    assert "img-src data:" in p.meta_csp and "unsafe-inline'; script" in p.meta_csp  # inline styles only


def test_header_names_models_and_warns_only_for_embedded(store):
    html, _ = page(store, "arena")
    for fact in ("agent-x", "model-a, model-b, model-c, model-d", "config hash", "package version", "tokens"):
        assert fact in html
    assert 'id="embedded-warning"' not in html
    for name in (PROBE_RUN, "qa-probe"):
        assert 'id="embedded-warning"' in page(store, name)[0]


def test_uses_embedded_reads_names_and_backends():
    assert uses_embedded({"agent": "embedded", "targets": ["x"]})
    assert uses_embedded({"models": {"m": {"backend": "embedded", "model": "qwen"}}})
    assert not uses_embedded({"agent": "gpt-x", "targets": ["my-embedded-copy"]})


def test_missing_or_broken_image_is_a_placeholder_not_an_error(store, tmp_path):
    memes = build_report(store, "arena")["details"]["memes"]
    images = page(store, "arena")[1].data()["images"]
    missing = [m["id"] for m in memes if m["image"] == "/no/such.png"]
    assert missing and not set(missing) & set(images) and set(images)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    assert thumbnail(broken) is None and thumbnail(tmp_path / "gone.png") is None and thumbnail(None) is None


def test_thumbnails_are_small(store):
    from PIL import Image
    import io

    for url in page(store, "adam")[1].data()["images"].values():
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
            assert max(image.size) <= 256


def test_write_html_reports_names_files_safely_and_writes_all_or_nothing(store, tmp_path):
    paths = write_html_reports(store, ["adam", PROBE_RUN, "qa-minus"], tmp_path / "out")
    assert [p.name for p in paths] == [report_file_name(n) for n in ("adam", PROBE_RUN, "qa-minus")]
    assert all(p.is_file() and p.parent == tmp_path / "out" for p in paths)
    assert re.fullmatch(r"probe__img_src_x_onerror__window.__xss_3__-[0-9a-f]{6}\.html", paths[1].name)
    assert report_file_name("a/b") != report_file_name("a_b")
    with pytest.raises(InputError):
        write_html_reports(store, ["adam", "no-such-run"], tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_report_command_writes_html(store, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["--store", str(store.path), "report", "arena", "--format", "html", "--out", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert main(["--store", str(store.path), "report", "nope", "--format", "html"]) == 2


def test_report_server_serves_the_page_on_loopback_only():
    server = report_server("<p>page</p>")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address
        assert host == "127.0.0.1" and port > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as response:
            assert response.read() == b"<p>page</p>"
            assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/favicon.ico")
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def test_serve_report_announces_url_and_stops():
    stop, urls = threading.Event(), []
    thread = threading.Thread(target=serve_report, args=("<p>x</p>",), kwargs={"announce": urls.append, "stop": stop})
    thread.start()
    while not urls:
        thread.join(0.05)
    with urllib.request.urlopen(urls[0]) as response:
        assert response.read() == b"<p>x</p>"
    stop.set()
    thread.join(10)
    assert not thread.is_alive()


def test_busy_port_is_an_input_error():
    server = report_server("x")
    try:
        with pytest.raises(InputError, match="cannot listen"):
            report_server("x", server.server_address[1])
    finally:
        server.server_close()


@pytest.mark.slow
def test_view_command_prints_url_serves_and_stops_on_ctrl_c(store):
    process = subprocess.Popen([MEMEGAUGE, "--store", str(store.path), "view", "qa-minus"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url)
        with urllib.request.urlopen(url) as response:
            assert b"MemeGauge report: qa-minus" in response.read()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()


def test_view_command_unknown_run_exits_2(store):
    result = subprocess.run([MEMEGAUGE, "--store", str(store.path), "view", "nope"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "no run named 'nope'" in result.stderr


def test_warning_follows_calls_to_an_embedded_backend_whatever_its_name(tmp_path):
    from memegauge.models.spec import ModelSpec
    from memegauge.engine.core import cache_key, request_for_store
    from memegauge.types import CallRecord, CallStatus, ChatRequest, Message

    s = Store(tmp_path / "store.db")
    memeqa_run(s, "local", model="local-qwen", questions=4)
    assert 'id="embedded-warning"' not in to_html(s, build_report(s, "local"))
    for backend, warned in (("openai", False), ("embedded", True)):
        spec = ModelSpec(name="local-qwen", backend=backend, model="qwen2.5-coder-1.5b")
        request = ChatRequest(model="local-qwen", messages=[Message.user("Answer: A or B?")], stage="qa")
        record = CallRecord(key=cache_key(spec, request), model="local-qwen",
                            request=request_for_store(spec, request), status=CallStatus.OK, text="A")
        s.put_call(record, s.run_row("local")["id"], None, fresh=True)
        assert ('id="embedded-warning"' in to_html(s, build_report(s, "local"))) is warned, backend
    s.close()


def test_index_links_reports_and_escapes_run_names(store, tmp_path):
    index, *paths = write_html_reports(store, ["arena", PROBE_RUN], tmp_path / "out", index=True)
    assert index.name == "index.html" and index.parent == tmp_path / "out"
    html = index.read_text()
    p = Page(html)
    links = [v for tag, k, v in p.attributes if tag == "a" and k == "href"]
    assert links == [path.name for path in paths]
    assert "<img src=x" not in html and "&lt;img src=x onerror=" in html and p.scripts == []
    assert 'id="embedded-warning"' in html  # the probe run's agent is the embedded model
    assert "script-src" not in p.meta_csp and "default-src 'none'" in p.meta_csp
