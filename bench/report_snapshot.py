"""Every report format of a fixed set of runs, written to a folder, to show that a change of the code's
layout changed no report (issue 23: "no behaviour change").

    python bench/report_snapshot.py make  DIR   # runs + stores into DIR/stores, then reports (before)
    python bench/report_snapshot.py render DIR OUT  # the reports of DIR/stores, rendered now, into OUT
    diff -r DIR/reports OUT                       # empty: byte-identical
    python bench/report_snapshot.py figures DIR1 DIR2   # two `make`s: JSON reports without clock or paths
    python bench/report_snapshot.py added DIR OUT       # DIR/reports vs OUT's JSON, less issue 25's keys
    python bench/report_snapshot.py rate DIR            # + rated copies of the three runs, main fixture
    python bench/report_snapshot.py same DIR OUT        # DIR/reports vs OUT: JSON figures at rel 1e-9

`make` runs what tests/test_determinism.py runs (AdamMeme, MemeArena and MemeQA against the local test
server, seed 7, realistic style), plus `memegauge demo` against the test server (the demo's screen run
and every method's demo part), each shipped benchmark's fixture of tests/test_benchmarks.py through `memegauge
eval` (one store per benchmark), and copies the v0 store fixture (tests/data/store-v0). `render` opens a
copy of each saved store with the code of the checkout it runs in and writes json, md, csv and html of
every run: the same stores rendered by two versions of the code, so even the clock's fields are equal.
`make` also renders, so DIR/reports are the "before" reports when `make` runs on the old code.
"""

from __future__ import annotations

import asyncio
import gzip
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

FORMATS = ("json", "md", "csv", "html")


def _determinism_runs(work: Path, stores: Path) -> None:
    """The three runs of tests/test_determinism.py, each in its own store."""
    from helpers.memeqa_data import make_dataset
    from helpers.models import served_registry as _registry
    from helpers.worlds import arena_world as _arena_world

    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config, load_registry
    from memegauge.engine import Store
    from memegauge.memeqa.runs import eval_run
    from memegauge.memeqa.config import EvalConfig
    from memegauge.testing.server import start_server

    def server():
        return start_server(latency_ms=2, seed=7, style="realistic", refusers=["tgt-b"])

    with server() as srv:
        _arena_world(work, srv.base_url, n_memes=10)
        registry = _registry(work, srv.base_url, ["agent", "tgt-a", "tgt-b"])
        cfg = AdamConfig(memes=work / "memes.jsonl", agent="agent", targets=["tgt-a", "tgt-b"], erase=False,
                         seeds_per_category=3, max_steps=3, warn_below=0, mining_batch=4)
        store = Store(stores / "adam.db")
        asyncio.run(run_adammeme(cfg, store, registry, "adam", progress=False))
        store.close()
    with server() as srv:
        config = _arena_world(work, srv.base_url, n_memes=3)
        store = Store(stores / "arena.db")
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, load_registry(work / "models.yaml"),
                              "arena", progress=False))
        store.close()
    data, images = make_dataset(work / "qa", memes=("m1", "m2", "m3"))
    with server() as srv:
        registry = _registry(work, srv.base_url, ["vlm"])
        store = Store(stores / "qa.db")
        asyncio.run(eval_run(store, registry, EvalConfig(data=data, images=images, version="none-plus", split="dev",
                                                         model="vlm"), run_name="qa"))
        store.close()


def _demo_run(work: Path, stores: Path) -> None:
    """`memegauge demo` with a test-server model: the screen run and every method's demo part."""
    from memegauge.cli import main
    from memegauge.testing.server import start_server

    with start_server() as srv:
        models = work / "demo-models.yaml"
        models.write_text(f"tsrv: {{backend: openai, model: tsrv, base_url: {srv.base_url}, "
                          "max_concurrency: 8, backoff_s: 0.01, backoff_max_s: 0.05}\n")
        code = main(["--store", str(stores / "demo.db"), "--models", str(models), "--quiet", "demo",
                     "--model", "tsrv", "--out", str(work / "demo-out")])
    if code != 0:
        raise SystemExit(f"memegauge demo exited {code}")


def _benchmark_runs(work: Path, stores: Path) -> None:
    """Each shipped benchmark's fixture of tests/test_benchmarks.py (its release's own layout), run by `memegauge
    eval` against the test server into its own store (`bench-NAME.db`)."""
    import os
    import subprocess

    import test_benchmarks as fixtures

    from memegauge.testing.server import start_server

    os.environ["MEMEGAUGE_CACHE_DIR"] = str(work / "bench-cache")
    os.environ["MEMEGAUGE_DATA_DIR"] = str(work / "bench-data-dir")  # goat-bench reads the imported FHM
    makers = {"fhm": lambda root: (fixtures.fhm(root), "dev_seen")[1], "harmeme": fixtures.harmeme,
              "mami": fixtures.mami, "goat-bench": fixtures.goat, "ii-bench": fixtures.ii_bench,
              "memelens": fixtures.memelens}
    with start_server() as srv:
        models = work / "bench-models.yaml"
        models.write_text(f"tsrv: {{backend: openai, model: tsrv, base_url: {srv.base_url}, "
                          "max_concurrency: 8, backoff_s: 0.01, backoff_max_s: 0.05}\n")
        for name, maker in makers.items():
            data = work / "bench" / name
            split = maker(data)
            subprocess.run([*fixtures.CLI, "--store", str(stores / f"bench-{name}.db"), "--models", str(models),
                            "--quiet", "eval", name, "--model", "tsrv", "--split", split, "--data", str(data)],
                           check=True, timeout=600)


def make(folder: Path) -> None:
    stores = folder / "stores"
    stores.mkdir(parents=True, exist_ok=False)
    work = folder / "inputs"
    work.mkdir()
    _determinism_runs(work, stores)
    _demo_run(work, stores)
    _benchmark_runs(work, stores)
    with gzip.open(ROOT / "tests" / "data" / "store-v0" / "store.db.gz", "rb") as src, \
            open(stores / "v0.db", "wb") as out:
        shutil.copyfileobj(src, out)
    render(folder, folder / "reports")


def _copy_store(source: Path, target: Path) -> None:
    """A consistent copy through SQLite (what the write-ahead log holds included: a store still open in
    another process, or not checkpointed yet, copies whole)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as out:
        src.backup(out)
    src.close()
    out.close()


def render(folder: Path, out: Path) -> None:
    """Each saved store, copied (opening migrates and writes), reported in every format into `out`."""
    from memegauge.engine import Store
    from memegauge.report.formats import render_report

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for saved in sorted((folder / "stores").glob("*.db")):
            copy = Path(tmp) / saved.name
            _copy_store(saved, copy)
            store = Store(copy)
            for run in sorted(r["name"] for r in store.list_runs()):
                for fmt in FORMATS:
                    text = render_report(store, run, fmt)
                    (out / f"{saved.stem}--{run}.{fmt}").write_text(text, encoding="utf-8")
            store.close()
    print(f"{len(list(out.iterdir()))} report files in {out}")


CLOCK = {"created", "updated", "timing", "wall_s", "latency_s", "mean_call_latency_s"}  # test_determinism's


def _figures(value, root: str):
    """A report without the clock's own fields, its input folder written as ROOT, the checkout's sample
    pictures as SAMPLES/ and the demo's meme files (named by a hash of their content, which holds the
    pictures' paths) as HASH; `config_hash` is left out too (it hashes the config, which names them)."""
    import re

    if isinstance(value, dict):
        return {k: _figures(v, root) for k, v in value.items() if k not in CLOCK | {"config_hash"}}
    if isinstance(value, list):
        return [_figures(v, root) for v in value]
    if not isinstance(value, str):
        return value
    value = re.sub(r"\S*/memegauge/samples/", "SAMPLES/", value.replace(root, "ROOT"))
    return re.sub(r"-[0-9a-f]{16}\.jsonl", "-HASH.jsonl", value)


def figures(first: Path, second: Path) -> int:
    """Compare the JSON reports of two `make`s (two executions, so the clock and input paths differ; maybe two
    machines, so floats are compared within rel 1e-9: BLAS kernels differ between CPU types)."""
    import json

    from helpers.reports import figure_differences

    differ = []
    for path in sorted((first / "reports").glob("*.json")):
        a = _figures(json.loads(path.read_text(encoding="utf-8")), str(first.resolve()))
        b = _figures(json.loads((second / "reports" / path.name).read_text(encoding="utf-8")), str(second.resolve()))
        if figure_differences(b, a):
            differ.append(path.name)
    print(f"{len(list((first / 'reports').glob('*.json'))) - len(differ)} JSON reports equal (floats within "
          f"rel 1e-9) without the clock and input paths; differ: {', '.join(differ) or 'none'}")
    return 1 if differ else 0


# what issue 25 added to every report (95% intervals); its one change of an existing figure: a Bradley–Terry
# interval resting on too few battles is null (with `bt_note`) instead of a zero-width range
ADDED = {"intervals", "win_rate_ci95", "bt_note"}


def added(before: Path, now: Path) -> int:
    """The JSON reports of the same stores, rendered before and now, compared without the keys issue 25
    added (floats within rel 1e-9): every other difference printed."""
    import json

    from helpers.reports import figure_differences

    def without(value):
        if isinstance(value, dict):
            return {k: without(v) for k, v in value.items() if k not in ADDED}
        return [without(v) for v in value] if isinstance(value, list) else value

    changed = 0
    for path in sorted((before / "reports").glob("*.json")):
        found = figure_differences(without(json.loads((now / path.name).read_text(encoding="utf-8"))),
                                   without(json.loads(path.read_text(encoding="utf-8"))))
        changed += bool(found)
        print(f"{path.name}: " + ("equal" if not found else f"{len(found)} differences, e.g. {found[:2]}"))
    return 1 if changed else 0


def _vote(item, rater: int, n: int) -> dict:
    """A fixed vote of rater `rater` on the `n`-th item, by the item's page (every kind the page asks)."""
    page = item.page
    if "questions" in page:
        return {"shown": {q: ("A", "B", "tie")[(n + rater + i) % 3] for i, q in enumerate(page["questions"])}}
    if "options" in page:
        return {"answer": [(n * (rater + 1)) % len(page["options"])]}
    if "categories" in page:
        names = [c["name"] for c in page["categories"]]
        return {"categories": names[(n + rater) % len(names):][:1] if names and (n + rater) % 3 else []}
    return {"score": 1 + (n * (rater + 2)) % 10}


def rate(folder: Path) -> None:
    """Rated copies of the determinism runs (two raters on the rating page, the CSV imports of AdamMeme
    and MemeArena) and the "main" store fixture (calls only), so `render` shows the People vs judges
    section and opens every fixture: what a change of `rating/` or of the store must leave as it was."""
    from memegauge.adammeme.records import HumanLabel, HumanScore
    from memegauge.arena.records import HumanVoteRecord
    from memegauge.engine import Store
    from memegauge.rating.items import run_items
    from memegauge.rating.server import RatingApp
    from memegauge.records import write_records
    from memegauge.report import run_header

    stores = folder / "stores"
    for source, run in (("adam", "adam"), ("arena", "arena"), ("qa", "qa")):
        target = stores / f"rated-{source}.db"
        _copy_store(stores / f"{source}.db", target)
        store = Store(target)
        header = {**run_header(store, run).as_dict(), "id": store.run_row(run)["id"]}
        items = run_items(store, header, 6)
        for rater, name in enumerate(("ana", "ben")):
            app = RatingApp(store, header, items, name)
            for n, item in enumerate(items):
                app.vote(n, _vote(item, rater, n))
        scores = [i for i in items if i.task == "score"]
        labels = [i for i in items if i.task == "labels"]
        write_records(store, header["id"], [HumanScore(sample=i.source, score=1 + n % 10)
                                             for n, i in enumerate(scores)])
        write_records(store, header["id"], [HumanLabel(meme=i.source, categories=[]) for i in labels[:2]])
        if source == "arena":
            battle = store.records(header["id"], "battle")[0]
            write_records(store, header["id"], [HumanVoteRecord(index=0, task=battle["task"], model_a=battle["model_a"],
                                                                model_b=battle["model_b"], winner="model_a")])
        store.close()
    with gzip.open(ROOT / "tests" / "data" / "store-main" / "store.db.gz", "rb") as src, \
            open(stores / "main.db", "wb") as out:
        shutil.copyfileobj(src, out)
    print(f"rated copies and main.db in {stores}")


def _close(a, b, path: str = "") -> list[str]:
    """Where two JSON values differ, floats compared at rel 1e-9 (BLAS may round differently)."""
    import math

    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in _close(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} vs {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _close(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {a!r} -> {b!r}"]
    return [] if a == b else [f"{path}: {a!r} -> {b!r}"]


def same(before: Path, now: Path) -> int:
    """Every report file of `before`/reports against `now`: JSON by value (floats at rel 1e-9), the
    other formats byte for byte; the differing files printed."""
    import json

    names = sorted(p.name for p in (before / "reports").iterdir())
    missing = sorted(set(names) ^ {p.name for p in now.iterdir()})
    differ = []
    for name in names:
        old, new = before / "reports" / name, now / name
        if not new.exists():
            continue
        if name.endswith(".json"):
            found = _close(json.loads(old.read_text(encoding="utf-8")), json.loads(new.read_text(encoding="utf-8")))
        else:
            found = [] if old.read_bytes() == new.read_bytes() else ["bytes differ"]
        if found:
            differ.append(f"{name}: {found[:3]}")
    print(f"{len(names)} report files; missing on one side: {missing or 'none'}; "
          f"{len(names) - len(differ)} identical (JSON floats at rel 1e-9)")
    for line in differ:
        print("  differs:", line)
    return 1 if differ or missing else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "render":
        render(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "figures":
        raise SystemExit(figures(Path(sys.argv[2]), Path(sys.argv[3])))
    elif len(sys.argv) == 4 and sys.argv[1] == "added":
        raise SystemExit(added(Path(sys.argv[2]), Path(sys.argv[3])))
    elif len(sys.argv) == 3 and sys.argv[1] == "rate":
        rate(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "same":
        raise SystemExit(same(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)
