"""`memegauge profile`: two models measured every way against the test server in its realistic style (MemeQA both
versions, AdamMeme, an arena, three field benchmarks: tests/helpers/profile_world.py). Every figure on the profile
must be the figure of the run's own report; paired differences are recomputed here from the runs' exported items;
published figures appear only beside a run on the same split."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
from markupsafe import escape
import pytest
from scipy import stats

import memegauge
from memegauge.cli import main
from memegauge.engine import Store
from memegauge.profiles import paired as pairs
from memegauge.profiles import gather
from memegauge.profiles.gather import build_profile
from memegauge.profiles.part import ProfilePart, part_of, register_part, DuplicateProfilePart
from memegauge.profiles.records import Profile
from memegauge.profiles.render import render, to_markdown
from memegauge.report import build_report
from memegauge.report.headline import Headline, headline_rows
from memegauge.report.leaderboard import cell
from memegauge.testing.server import start_server

from helpers.profile_world import BENCHMARKS, MODELS, REFERENCE, XSS, XSS_SCRIPT, build, copy

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


def test_a_cut_down_run_has_its_full_runs_kind_and_the_newest_full_run_is_shown(world, tmp_path):
    w = copy(world, tmp_path / "w")
    with start_server(seed=9, style="realistic") as server:
        w.models.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, w.models.read_text()))
        qa = ["qa", "eval", "--data", str(w.root / "qa" / "data"), "--images", str(w.root / "qa" / "images"),
              "--version", "none-plus", "--split", "test", "--model", A]
        assert w.cli(*qa, "--run", "qa-again") == 0
        assert w.cli(*qa, "--run", "qa-sample", "--limit", "5") == 0
    page = build_profile(Store(w.store), [A]).models[0]
    by_kind = {r.kind: r for r in page.runs}
    assert not [k for k in by_kind if "first 5" in k]  # a cut-down run is no kind (no column) of its own
    shown = by_kind["MemeQA none-plus · test"]
    assert shown.run == "qa-again" and shown.sample is None and shown.chosen.startswith("a full run; done")
    reasons = {o.run: o.reason for o in shown.others}
    assert reasons["qa-sample"] == "cut down (first 5 questions (seed 0)) while a full run exists"
    assert reasons[f"qa-none-plus-{A}"] == "older"
    assert shown.items == 33 and re.fullmatch(r"[0-9a-f]{16}", shown.data_fingerprint)


def _scratch(w, change_first: bool = True) -> Path:
    """A user's scratch copy of the MemeQA data: the same ids, the first None− test question reworded."""
    scratch = w.root / "scratch"
    shutil.copytree(w.root / "qa" / "data", scratch)
    path = scratch / "none-minus" / "test.json"
    items = json.loads(path.read_text())
    items[0]["question"] = items[0]["question"] + " (reworded in my test copy)"
    path.write_text(json.dumps(items))
    return scratch


def test_a_scratch_copy_of_the_data_is_neither_shown_nor_paired_with_the_real_one(world, tmp_path):
    w = copy(world, tmp_path / "w")
    scratch = _scratch(w)
    with start_server(seed=9, style="realistic") as server:
        w.models.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, w.models.read_text()))
        for model, run in ((A, "qa-scratch"), (REFERENCE, "qa-scratch-ref")):
            assert w.cli("qa", "eval", "--data", str(scratch), "--images", str(w.root / "qa" / "images"),
                         "--version", "none-minus", "--split", "test", "--model", model, "--run", run) == 0
    store = Store(w.store)
    kind = "MemeQA none-minus · test"
    # A's newest run is on the scratch copy; B's only run on the real data: both are shown on the real data
    found = build_profile(store, [A, B])
    shown = {p.model: next(r for r in p.runs if r.kind == kind) for p in found.models}
    assert shown[A].run == f"qa-none-minus-{A}" and shown[A].data_fingerprint == shown[B].data_fingerprint
    assert "asked the same items as the runs shown for 1 other model(s)" in shown[A].chosen
    why = {o.run: o.reason for o in shown[A].others}["qa-scratch"]
    assert why.startswith("asked other items (data fingerprint ") and "not comparable" in why
    paired = next(d for d in found.paired if d.kind == kind and d.group == "overall")
    assert paired.n == shown[A].items and paired.unlike == 0
    # a model measured only on the scratch copy beside one measured only on the real data: never one kind, never
    # paired, and the page says why
    found = build_profile(store, [B, REFERENCE])
    kinds = {p.model: [r.kind for r in p.runs if r.kind.startswith(kind)] for p in found.models}
    assert len(kinds[B]) == len(kinds[REFERENCE]) == 1 and kinds[B] != kinds[REFERENCE]
    apart = next(r for p in found.models for r in p.runs if r.kind.startswith(kind + " · other items ("))
    assert "no run of this model asked the items the other models' runs asked" in apart.chosen
    assert not [d for d in found.paired if d.kind.startswith(kind)]
    assert apart.kind in render(found, "html")
    # A has runs on both; REFERENCE only on the scratch copy: both shown on the scratch copy, paired on it
    found = build_profile(store, [A, REFERENCE])
    shown = {p.model: next(r for r in p.runs if r.kind == kind) for p in found.models}
    assert (shown[A].run, shown[REFERENCE].run) == ("qa-scratch", "qa-scratch-ref")
    assert next(d for d in found.paired if d.kind == kind and d.group == "overall").n == shown[A].items


def test_only_the_same_item_is_paired_same_key_and_same_content(world, found):
    """Every paired item has one key and one content in both runs: recounted from the runs' outcomes."""
    from memegauge.profiles.part import part_of

    store = Store(world.store)
    d = next(x for x in found.paired if x.kind == "MemeQA none-minus · test" and x.group == "overall")
    part = part_of("memeqa")
    mine = {o.key: o.content for o in part.outcomes(store, build_report(store, f"qa-none-minus-{A}"), A)}
    theirs = {o.key: o.content for o in part.outcomes(store, build_report(store, f"qa-none-minus-{B}"), B)}
    assert all(c and len(c) == 64 for c in mine.values())
    assert d.n == sum(1 for k in mine if theirs.get(k) == mine[k]) and d.unlike == 0


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
    assert any(o.run == "qa-stopped" and o.reason.startswith(("not done", "asked fewer")) for o in shown.others) \
        or any("qa-stopped" in note and "stopped" in note for note in found.notes)


# ---- strengths, weaknesses and their examples -----------------------------------------------------------------

def test_strengths_and_weaknesses_follow_the_stated_rule_with_wrong_answers_the_runs_stored(world, found):
    store = Store(world.store)
    for page in found.models:
        assert page.examples
        for named, side in [(r, 1) for r in page.strengths] + [(r, -1) for r in page.weaknesses]:
            lead = [h for h in page.headline if h.run == named.run and h.figure == named.figure]
            ref = gather._reference(named, lead)
            sign = side if named.higher_is_better else -side
            assert named.n >= gather.MIN_N and named.ci95_lo is not None
            assert (named.ci95_lo > ref.value) if sign > 0 else (named.ci95_hi < ref.value)
        for example in page.examples:
            run = next(r for r in page.runs if r.run == example.run)
            assert example.group == gather.WRONG or example.group in {w.group for w in page.weaknesses}
            if run.method == "memeqa":
                rows = [json.loads(x) for x in _export(store, example.run, "questions")]
                assert any(r["img"] == example.meme and r["raw"] == example.answer and r["correct"] is False
                           and (example.group == gather.WRONG or r["type"] == example.group) for r in rows)
                assert example.picture and example.picture.startswith("data:image/")
            if run.method in BENCHMARKS:
                rows = [json.loads(x) for x in _export(store, example.run, "answers")]
                row = next(r for r in rows if r["item"] == example.meme and r["answer"] == example.answer)
                assert row["correct"] is False
            if run.method == "adammeme":
                assert example.expected.startswith("score ") and int(example.expected.split()[1].split("/")[0]) <= 4
        kinds = {e.kind for e in page.examples}
        assert any(k.startswith("MemeQA") for k in kinds) and any(k.startswith("AdamMeme") for k in kinds)
    assert str(escape(gather.RULE)) in render(found, "html") and gather.RULE in to_markdown(found)


def test_a_group_at_zero_or_with_few_items_or_an_overlapping_interval_is_never_named():
    """Ranked by the figure, named only with n ≥ MIN_N and an interval clear of the overall figure."""
    def row(group, value, lo, hi, n):
        return Headline(method="memeqa", run="r", date="2026-01-01T00:00:00Z", model="m", group=group,
                        figure="accuracy", value=value, ci95_lo=lo, ci95_hi=hi, n=n, memes=n, unit="rate",
                        interval="wilson", note=None, higher_is_better=True)

    overall = row("overall (micro)", 0.5, 0.45, 0.55, 400)
    groups = [row("zero, 3 items", 0.0, 0.0, 0.56, 3),          # 0% but n too small: not a weakness
              row("zero, no interval", 0.0, None, None, 40),     # no interval: not named
              row("wide", 0.2, 0.05, 0.6, 12),                   # its interval reaches the overall: neither
              row("low", 0.2, 0.1, 0.35, 40), row("lower", 0.1, 0.04, 0.23, 40),
              row("high", 0.9, 0.77, 0.96, 40), row("ordinary", 0.52, 0.4, 0.64, 60)]
    best, worst = gather.strengths_weaknesses(groups, [overall])
    assert [r.group for r in best] == ["high"]
    assert [r.group for r in worst] == ["lower", "low"]  # weakest first
    assert gather.strengths_weaknesses(groups[:3], [overall]) == ([], [])


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
    assert main(["--store", str(tmp_path / "none.db"), "profile", A]) == 2
    assert not (tmp_path / "none.db").exists()


def test_a_model_no_run_evaluated_is_one_error_naming_the_fix(world, capsys, tmp_path):
    for extra in ([], ["--format", "md"], ["--out", str(tmp_path / "nobody.html")]):
        code, out, err = cli(world, capsys, "profile", "nobody", *extra)
        assert code == 2 and out == "", (extra, out)
        said = " ".join(err.split())
        assert "no stored run evaluated nobody" in said and str(world.store) in said
        assert "profile nobody --run-missing" in said and "memegauge runs" in said
        assert "<html" not in err.lower() and "<!doctype" not in err.lower()
    assert not (tmp_path / "nobody.html").exists()
    code, out, err = cli(world, capsys, "profile", A, "nobody")  # one of two: still an error, nothing written
    assert code == 2 and "nobody" in err and out == ""
    from memegauge.types import InputError

    with pytest.raises(InputError, match="no stored run evaluated nobody"):
        memegauge.profile(["nobody"], store=world.store)
    # the site and `memegauge view` list every model the store evaluated: one that measured nothing is left out
    assert [p.model for p in build_profile(Store(world.store), [A, "nobody"], named=False).models] == [A]


def test_without_out_the_terminal_gets_a_text_summary_never_html(world, found, capsys):
    code, out, _ = cli(world, capsys, "profile", A, B)
    assert code == 0
    assert XSS not in out and XSS_SCRIPT not in out  # the summary shows figures, not meme texts
    assert "<!DOCTYPE" not in out and "<html" not in out and "<table" not in out
    assert "\x1b" not in out
    assert f"MemeGauge profile: {A} vs {B}" in out and "Headline (figure [95% CI], n):" in out
    for page in found.models:  # every headline figure, with its interval and n, as the page shows it
        for row in page.headline:
            assert f"{page.model}: {cell(row)}, n={row.n}" in out
    assert "Paired differences" in out and "--out FILE.html" in out
    code, out, err = cli(world, capsys, "profile", A, "--format", "html")
    assert code == 2 and "--out" in err and "<html" not in out
    code, out, _ = cli(world, capsys, "profile", A, "--format", "json")
    assert code == 0 and json.loads(out)["models"][0]["model"] == A
    code, out, _ = cli(world, capsys, "profile", A, "--format", "md")
    assert code == 0 and out.startswith(f"# MemeGauge profile: {A}")


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


def test_the_site_has_an_index_a_page_per_model_and_the_comparison(site, found):
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
    for page in found.models:  # the leaderboard's figures are the runs' own (the headline rows, as `cell` shows them)
        for row in page.headline:
            assert f'{cell(row)}<br><span class="note">n={row.n}' in index


def test_a_cut_down_run_gets_no_column_of_its_own_and_every_cell_shows_its_n(world, tmp_path):
    from memegauge.profiles.site import index_columns, site_pages

    w = copy(world, tmp_path / "w")
    with start_server(seed=9, style="realistic") as server:
        w.models.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, w.models.read_text()))
        assert w.cli("eval", "fhm", "--model", REFERENCE, "--split", "test_seen", "--data",
                     str(w.root / "bench" / "fhm"), "--limit", "4") == 0
    found = build_profile(Store(w.store), [A, B, REFERENCE])
    columns = index_columns(found)
    assert not [c for c in columns if "first" in c[0] or "cut" in c[0]]
    assert columns == index_columns(build_profile(Store(world.store), [A, B]))  # the same columns as without it
    index = site_pages(found)["index.html"]
    cells = re.findall(r'<td class="num" data-v="([^"]*)" title="([^"]*)">(.*?)</td>', index, flags=re.S)
    assert len(cells) == 3 * len(columns)
    for value, title, text in cells:
        if value:  # a figure: its interval and n in the cell and in its title
            assert re.search(r"\[[0-9.]+, [0-9.]+\]", text) and re.search(r"n=\d+", text) and "n=" in title
        else:
            assert text == "–"
    ref = next(p for p in found.models if p.model == REFERENCE)
    fhm = next(r for r in ref.runs if r.kind.startswith("Facebook Hateful Memes"))
    assert fhm.kind == "Facebook Hateful Memes · test_seen" and fhm.sample == "first 4 items"
    assert "n=4, cut down: first 4 items" in index
    assert "cut down: first 4 items" in render(found, "html") and "(cut down: first 4 items)" in to_markdown(found)


def test_memeqa_macro_on_three_memes_has_a_real_interval(found):
    from memegauge.memeqa.headline import MIN_MEMES, macro
    from memegauge.report import intervals as ci

    for page in found.models:  # the world's MemeQA runs are on 3 memes
        for row in (r for r in page.headline if r.group == "overall (macro)"):
            assert row.memes == 3 and row.interval in ("wilson-pooled", "wilson-clustered")  # never a bootstrap
            assert row.ci95_hi - row.ci95_lo > 0.1 and row.ci95_lo <= row.value <= row.ci95_hi
    rng = np.random.default_rng(1)
    types = [f"t{i % 11}" for i in range(33)]
    for _ in range(50):
        x = list((rng.random(33) < 0.3).astype(float))
        few = macro(x, types, [f"m{i % 3}" for i in range(33)])
        lo, hi = few["ci95"]
        assert few["method"] in ("wilson-pooled", "wilson-clustered") and lo <= few["value"] <= hi and hi - lo > 0.15
        pooled = ci.rate(x, [f"m{i % 3}" for i in range(33)])  # the same effective n as the micro's interval
        if few["method"] == "wilson-pooled":  # (else macro_rate's Wilson on the 3 memes: wider still)
            assert hi - lo == pytest.approx(pooled["ci95"][1] - pooled["ci95"][0], abs=0.08)
    many = macro(list((rng.random(330) < 0.3).astype(float)), [f"t{i % 11}" for i in range(330)],
                 [f"m{i % 30}" for i in range(330)])
    assert many["method"] == "bootstrap" and MIN_MEMES <= 30
    assert macro([0.0] * 33, types, [f"m{i % 3}" for i in range(33)])["ci95"][1] > 0.5  # 0 of 33 on 3 memes


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
    paths = sorted((PACKAGE / "profiles").rglob("*.py"))
    assert len(paths) >= 8
    for path in paths:
        assert names_of_methods(path, words) == [], path


def test_memegauge_profile_is_a_plain_function_even_after_the_package_is_imported():
    import sys
    import types

    import memegauge.profiles.gather  # noqa: F401  (importing the package must not replace the function)

    assert isinstance(memegauge.profile, types.FunctionType) and memegauge.profile.__module__ == "memegauge.profiles"
    assert type(sys.modules["memegauge.profiles"]) is types.ModuleType  # no callable-module class
    assert "profile" in memegauge.__all__


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


# ---- examples, the radar and the terminal summary (the evidence run of issue 45: F5–F8) ----------------------

def test_a_benchmark_without_a_clear_weakness_shows_the_first_memes_it_got_wrong(world, found):
    """docs/profile.md: where no group is a clear weakness, the first memes it got wrong are shown: for the field
    benchmarks too (their items count in `overall (TASK)`, not in the kind's pooled overall)."""
    store = Store(world.store)
    html = render(found, "html")
    seen = 0
    for page in found.models:
        for run in (r for r in page.runs if r.method in BENCHMARKS):
            if any(w.run == run.run for w in page.weaknesses):
                continue
            rows = [json.loads(x) for x in _export(store, run.run, "answers")]
            wrong = list(dict.fromkeys(r["item"] for r in rows if r["correct"] is False))[:gather.TOP]
            shown = [e for e in page.examples if e.run == run.run]
            assert [e.meme for e in shown] == wrong, run.run  # the first wrong memes, one each, in the run's order
            for e in shown:
                row = next(r for r in rows if r["item"] == e.meme and r["correct"] is False)
                assert e.group == gather.WRONG and e.verdict == "got it wrong"
                assert (e.text, e.answer) == (row["prompt"], row["answer"] if row["ok"] else None)
                assert str(escape(e.expected)) in html and str(escape(e.text)) in html
            seen += len(shown)
    assert seen > 0  # the world's FHM run alone has 4 wrong of 10
    assert "Memes it got wrong (no group is a clear weakness" in to_markdown(found)


def test_examples_are_distinct_memes_and_an_arena_tie_is_called_a_tie(found):
    html = render(found, "html")
    for page in found.models:
        by_group: dict[tuple[str, str], list] = {}
        for e in page.examples:
            by_group.setdefault((e.run, e.group), []).append(e)
        for (run, group), shown in by_group.items():
            assert len({e.meme for e in shown}) == len(shown) <= gather.TOP, (run, group)
            verdicts = [e.verdict for e in shown]
            assert verdicts == sorted(verdicts, key=lambda v: v != "got it wrong")  # losses before ties
        for e in (e for e in page.examples if e.kind.startswith("MemeArena")):
            assert e.verdict == ("a tie" if e.expected.endswith(": a tie") else "got it wrong"), e
            assert e.verdict == "a tie" or "the panel preferred" in e.expected
            assert f"meme {escape(e.meme)} — {e.verdict}</summary>" in html
    assert any(e.kind.startswith("MemeArena") for p in found.models for e in p.examples)


def test_distinct_keeps_one_outcome_per_meme_losses_first():
    from memegauge.profiles.records import Outcome

    def o(key, meme, miss="got it wrong"):
        return Outcome(key=key, meme=meme, groups=["g"], correct=False, miss=miss)

    got = gather._distinct([o("1", "m1", "a tie"), o("2", "m1"), o("3", "m1"), o("4", "m2", "a tie"), o("5", "m3"),
                            o("6", "m4")])
    assert [(x.key, x.meme) for x in got] == [("2", "m1"), ("5", "m3"), ("6", "m4")]
    assert [x.key for x in gather._distinct([o("1", "m1", "a tie"), o("2", "m2", "a tie")])] == ["1", "2"]


def _radar_rows(values, names=None):
    from memegauge.arena.common import DIMENSIONS

    return [Headline(method="arena", run="r", date="d", model="m", group=g, figure="win_rate", value=v, ci95_lo=0.0,
                     ci95_hi=1.0, n=18, memes=3, unit="rate", interval="wilson", higher_is_better=True)
            for g, v in zip(names or DIMENSIONS, values, strict=False)]


def _radar_labels(svg: str) -> tuple[tuple[float, ...], list[tuple[float, float, str, list[str]]]]:
    box = tuple(float(v) for v in re.search(r'viewBox="([^"]+)"', svg).group(1).split())
    labels = [(float(x), float(y), anchor, re.findall(r"<tspan[^>]*>([^<]*)</tspan>", body))
              for x, y, anchor, body in re.findall(r'<text x="([-\d.]+)" y="([-\d.]+)" text-anchor="(\w+)"[^>]*>(.*?)'
                                                   r"</text>", svg)]
    return box, labels


def test_the_radar_labels_lie_wholly_inside_its_viewbox():
    """The evidence run saw 'ncy 6%' and 'Correct…' cut at both sides of a 220-wide viewBox. Each label's extent is
    measured here with a real font's advance widths at 10 px (DejaVu Sans, the widest of the common sans-serif
    fonts; 6.2 px a character where it is not installed), not with the renderer's own estimate."""
    from PIL import ImageFont

    from memegauge.profiles.render import radar

    font = ImageFont.truetype("DejaVuSans.ttf", 10) if Path("/usr/share/fonts/truetype/dejavu").is_dir() else None
    for values in ([1.0, 0.06, 0.5, 0.11, 0.3], [0.0] * 5, [1.0] * 5, [0.5, 0.5, 0.5]):
        svg = str(radar(_radar_rows(values)))
        (left, top, width, height), labels = _radar_labels(svg)
        assert len(labels) == len(values)
        for x, y, anchor, lines in labels:
            text_width = max((font.getlength(line) if font else 6.2 * len(line)) for line in lines)
            start = {"start": x, "middle": x - text_width / 2, "end": x - text_width}[anchor]
            assert left <= start and start + text_width <= left + width, (lines, start, left, width)
            assert top <= y - 10 and y + 12 * (len(lines) - 1) + 3 <= top + height, (lines, y, top, height)
        assert "Instruction Following" in svg and "Redundancy" in svg
    assert radar(_radar_rows([0.1, 0.2])) is None


@pytest.mark.slow  # headless Chromium
@pytest.mark.skipif(not __import__("memegauge.testing.browser", fromlist=["available"]).available(),
                    reason="needs Debian's chromium and chromedriver and selenium")
def test_the_radar_labels_fit_in_chromium(tmp_path):
    from memegauge.profiles.render import radar
    from memegauge.testing.browser import start_driver

    page = tmp_path / "radar.html"
    page.write_text("<!DOCTYPE html><html><body>" + str(radar(_radar_rows([1.0, 0.06, 0.5, 0.11, 0.3]))) +
                    "</body></html>", encoding="utf-8")
    driver = start_driver()
    try:
        driver.get(page.as_uri())
        found = driver.execute_script(
            "const s = document.querySelector('svg'); const v = s.viewBox.baseVal;"
            "return [[v.x, v.y, v.width, v.height], [...s.querySelectorAll('text')].map(t => {"
            " const b = t.getBBox(); return [b.x, b.y, b.width, b.height]; })];")
    finally:
        driver.quit()
    (x0, y0, w, h), boxes = found
    assert len(boxes) == 5
    for x, y, bw, bh in boxes:
        assert x0 <= x and x + bw <= x0 + w and y0 <= y and y + bh <= y0 + h, ((x, y, bw, bh), (x0, y0, w, h))


def test_the_terminal_summary_names_a_few_published_figures_on_lines_that_fit(found):
    from memegauge.profiles.render import TERMINAL_PUBLISHED, headline_lines, to_text

    lines = headline_lines(found)
    many = [x for x in lines if len(x["published"]) > TERMINAL_PUBLISHED]
    assert many  # MemeQA's Tables 2–3: a dozen systems per line
    for width in (80, 100):
        text = to_text(found, width)
        block = text.split("Strengths and weaknesses")[0]
        published = [line for line in block.splitlines() if line.startswith("    ") and not line.lstrip().startswith(
            tuple(f"{p.model}:" for p in found.models))]
        assert published and all(len(line) <= width for line in published), max(published, key=len)
        for x in many:
            assert f"+{len(x['published']) - TERMINAL_PUBLISHED} more (--out FILE shows them all)" in \
                " ".join(block.split())
        joined = " ".join(block.split())
        assert "human annotators 81.9%" in joined and "random guessing 10.9%" in joined
    whole = to_text(found)  # not a terminal: whole lines, still a few figures each
    assert all(line.count("; ") <= TERMINAL_PUBLISHED for line in whole.splitlines() if "published (" in line)


def test_run_missing_names_a_benchmark_run_as_eval_does_and_a_missing_one_by_the_folder_given(world, monkeypatch):
    """docs/benchmarks.md's rule, `<benchmark>-<model>-<split>` (six hex digits for the --data folder, `-s<seed>`
    only for a seed other than 0): the run `--run-missing` plans is the very run `memegauge eval` made (so either
    command resumes it); a benchmark with no folder under --bench-data and no catalogue copy names that folder."""
    from memegauge.config import load_registry
    from memegauge.profiles.plan import plan

    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(world.root / "no-catalogue"))
    bench = world.root / "bench"
    runs, notes = plan({}, list(MODELS), [], load_registry(world.models), bench)
    planned = {r.name for r in runs}
    for r in runs:
        split = r.checked.inputs.split.replace("/", "_")
        assert re.fullmatch(rf"{r.method}-{r.models[0]}-{re.escape(split)}-[0-9a-f]{{6}}", r.name), r.name
    # the world ran `eval` on each benchmark's default split, FHM's on test_seen (a copy of dev_seen, the default)
    stored = {s["name"].replace("-test_seen-", "-dev_seen-") for s in Store(world.store).list_runs()
              if s["method"] in BENCHMARKS}
    assert len(stored) == len(MODELS) * len(BENCHMARKS) and planned == stored
    missing = [n for n in notes if "not planned —" in n]  # (the methods not given --with are said apart)
    assert missing  # goat-bench, ii-bench, memelens: no folder in bench/, none in the catalogue
    for note in missing:
        assert str(bench) in note and "no-catalogue" not in note.split("fix:")[0], note
        assert "memegauge data get" in note or "memegauge data import" in note, note


# ---- published figures: their n, their metric; the terminal's width (issue 45's review) ---------------------------


def test_every_published_figure_carries_its_n_or_says_it_is_not_stated_in_every_format(found):
    """The kit's `published` records carry the paper's n; the profile keeps it on every page, as `eval` does: no
    benchmark here states one (and MemeQA's paper gives no test-split count), so each says `n not stated`."""
    from memegauge.profiles.render import headline_lines, to_text

    published = [f for p in found.models for f in p.published]
    assert published and all(f.n is None for f in published)
    md_, text = to_markdown(found), to_text(found)
    for line in headline_lines(found):
        for f in line["published"]:
            assert f"{f.system} {100 * f.value:.1f}% (n not stated)" in line["published_text"]
    assert "human annotators 84.7% (n not stated); the paper's best baseline 64.7% (n not stated)" in md_
    assert "human annotators 84.7% (n not stated); the paper's best baseline 64.7% (n not stated)" in text
    assert "human annotators 84.7% (n not stated)" in render(found, "html")
    shown = json.loads(render(found, "json"))["models"][0]["published"]
    assert shown and all("n" in f and f["n"] is None for f in shown)
    assert {"n", "n_note"} <= set(found.to_pandas("published").columns)
    # MemeQA's paper says what it can of its n (9,031 per version, 60:20:20): `eval`'s note, once on each page
    from memegauge.memeqa.benchmark import PAPER_N

    assert {f["n_note"] for f in shown if f["kind"].startswith("MemeQA")} == {PAPER_N}
    assert {f["n_note"] for f in shown if not f["kind"].startswith("MemeQA")} == {""}
    assert text.count(PAPER_N) == md_.count(PAPER_N) == 1
    assert render(found, "html").count(str(escape(PAPER_N))) == 1


def test_a_published_n_the_benchmark_states_reaches_the_page():
    from memegauge.benchmarks.kit.profile import published
    from memegauge.profiles.render import _published_text

    report = {"title": "T", "split": "test", "tasks": {"a": {"published": [
        {"task": "a", "split": "test", "system": "S", "metric": "accuracy", "value": 0.647, "n": 1000, "source": "p"},
        {"task": "a", "split": "test", "system": "R", "metric": "accuracy", "value": 0.5, "n": None, "source": "p"},
        {"task": "a", "split": "dev", "system": "D", "metric": "accuracy", "value": 0.6, "n": 50, "source": "p"}]}}}
    found = published(report)
    assert [(f.system, f.n, f.group) for f in found] == [("S", 1000, "overall (a)"), ("R", None, "overall (a)")]
    assert _published_text(found) == "S 64.7% (n=1000); R 50.0% (n not stated)"


def test_a_benchmarks_published_metric_gets_its_own_headline_line_beside_ours(world, found):
    """MAMI publishes macro-F1 (sub-task A) and type-weighted F1 (sub-task B), not accuracy: the profile's headline
    has those figures of ours on the same split, each with the published ones beside it."""
    from memegauge.profiles.render import headline_lines

    for page in found.models:
        run = next(r for r in page.runs if r.method == "mami")
        report_rows = {(r.group, r.figure): r for r in headline_rows(build_report(Store(world.store), run.run))}
        mine = {(r.group, r.figure): r for r in page.headline if r.run == run.run}
        assert set(mine) == {("overall (misogynous)", "accuracy"), ("overall (misogynous)", "macro_f1"),
                             ("overall (subtypes)", "accuracy"), ("overall (subtypes)", "type_weighted_f1")}
        for key, row in mine.items():
            assert row.value == pytest.approx(report_rows[key].value) and row.n == report_rows[key].n
    lines = {(x["group"], x["figure"]): x for x in headline_lines(found) if x["kind"].startswith("MAMI")}
    assert {(f.system.split(" ")[0], f.value) for f in lines[("overall (misogynous)", "macro_f1")]["published"]} == \
        {("SRCB", 0.834), ("UniBO", 0.727)}
    assert {(f.system.split(" ")[0], f.value) for f in lines[("overall (subtypes)", "type_weighted_f1")]["published"]} \
        == {("SRCB", 0.731), ("UniBO", 0.710)}
    assert not lines[("overall (misogynous)", "accuracy")]["published"]  # no paper gives MAMI's accuracy
    md_ = to_markdown(found)
    row = next(r for r in md_.splitlines() if r.startswith("| MAMI") and "| macro_f1 |" in r)
    assert "SRCB (1st of SemEval-2022 Task 5, sub-task A) 83.4% (n not stated)" in row
    for p in found.models:  # FHM publishes accuracy only: its headline is accuracy alone, as before
        assert {r.figure for r in p.headline if r.group == "overall (hateful)"} == {"accuracy"}


def _words(text: str) -> list[str]:
    return text.split()


def test_every_line_of_the_terminal_summary_fits_the_terminal_and_keeps_commands_whole(found):
    from memegauge.profiles.render import to_text

    whole = to_text(found)
    assert max(len(line) for line in whole.splitlines()) > 100  # the figures of this world need wrapping at 100
    for width in (60, 80, 100):
        text = to_text(found, width)
        assert all(len(line) <= width for line in text.splitlines()), max(text.splitlines(), key=len)
        assert _words(text) == _words(whole)  # nothing lost, nothing reordered: only the line breaks differ
        for kept in ("--out FILE.html", "--site DIR.", "(n not stated)", "--out FILE"):
            assert kept in text and text.count(kept) == whole.count(kept), kept
        for line in text.splitlines():  # an interval is never cut
            assert line.count("[") == line.count("]"), line


def test_the_cli_wraps_the_summary_at_the_terminals_width_and_a_pipe_gets_whole_lines(world, capsys, monkeypatch):
    import io

    from rich.console import Console

    import memegauge.clikit

    code, piped, _ = cli(world, capsys, "profile", A)
    assert code == 0 and max(len(line) for line in piped.splitlines()) > 100  # not a terminal: whole lines
    screen = io.StringIO()
    monkeypatch.setattr(memegauge.clikit, "out", Console(file=screen, width=100, force_terminal=True))
    assert world.cli("profile", A) == 0
    shown = screen.getvalue()
    assert "\x1b" not in shown
    assert shown.splitlines() and all(len(line) <= 100 for line in shown.splitlines()), \
        max(shown.splitlines(), key=len)
    assert _words(shown) == _words(piped)


def test_a_published_figures_fields_are_one_record_shared_with_the_benchmark_yaml():
    """`benchmark.yaml`'s published figure and the profile's are one record (`report.published.PublishedValue`), each
    adding only where it belongs (a task; a kind and group): the n and its meaning are defined once."""
    from memegauge.benchmarks.kit.spec import Published
    from memegauge.profiles.records import PublishedFigure
    from memegauge.report.published import PublishedValue

    shared = set(PublishedValue.model_fields)
    assert {"system", "metric", "value", "split", "n", "source"} == shared
    for record, own in ((Published, {"task"}), (PublishedFigure, {"kind", "group", "n_note"})):
        assert issubclass(record, PublishedValue)
        assert set(record.model_fields) - shared == own and not shared & set(record.__annotations__)
