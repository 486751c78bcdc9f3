"""How long a big run's HTML report takes to open in a browser (issue 6: under 3 s).

    python bench/report_open_time.py [--battles 2000] [--chains 500] [--questions 9031] [--repeats 3]

Builds synthetic runs in a temporary store with the test helpers (`tests/helpers/synthetic.py`: records in
each method's kinds, so the real report builders and renderer run): a MemeArena run with about
`--battles` battles (3 per task, 3 tasks per meme), an AdamMeme run with exactly `--chains` refinement
chains (2 targets × 5 categories), a MemeQA run with `--questions` questions (the paper's test size by
default), and — side by side, as the reference point — the small runs the tests use. Renders each
report (timed), opens it from file:// in headless Debian Chromium (selenium + chromedriver) `--repeats`
times, and prints per report the file size and the median navigation timing (domContentLoaded and load
event ends, from `performance.getEntriesByType('navigation')`; the page's script runs before
domContentLoaded, so it is included), the time to open the first detail of its browser, and the ratio
of the big report's load time to the small one's measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from memegauge.engine import Store  # noqa: E402
from memegauge.report import build_report  # noqa: E402
from memegauge.report.html import to_html  # noqa: E402
from memegauge.testing.browser import MISSING, available, start_driver  # noqa: E402
from helpers.synthetic import adammeme_run, arena_run, memeqa_run  # noqa: E402

CATEGORIES = ("gender", "race", "religion", "nationality", "disability")
TARGETS = ("target-a", "target-b")
DETAIL = {"arena": "details.meme-item", "adammeme": "details.chain", "memeqa": "details.question-item"}
NAVIGATION = """const n = performance.getEntriesByType('navigation')[0];
return [n.domContentLoadedEventEnd, n.loadEventEnd, document.body.getAttribute('data-ready')];"""
OPEN_DETAIL = """const box = document.querySelector(arguments[0]);
const t0 = performance.now();
box.querySelector(':scope > summary').click();
box.offsetHeight;  // force layout of the filled detail
return [performance.now() - t0, box.open];"""


def build_runs(store: Store, directory: Path, battles: int, chains: int, questions: int) -> list[tuple[str, str]]:
    """(label, run name) pairs: each big run next to its small test-sized counterpart."""
    memes = max(1, -(-battles // 9))  # 9 battles per meme: at least `battles`
    per_pair = max(1, chains // (len(TARGETS) * len(CATEGORIES)))
    return [
        ("arena, tests' size", arena_run(store, "arena-small")),
        (f"arena, {memes * 9} battles", arena_run(store, "arena-big", memes=memes)),
        ("adammeme, tests' size", adammeme_run(store, "adam-small", directory / "adam-small")),
        (f"adammeme, {per_pair * len(TARGETS) * len(CATEGORIES)} chains",
         adammeme_run(store, "adam-big", directory / "adam-big", targets=TARGETS, categories=CATEGORIES,
                      chains=per_pair, memes_per_category=10, max_steps=4)),
        ("memeqa, tests' size", memeqa_run(store, "qa-small")),
        (f"memeqa, {questions} questions", memeqa_run(store, "qa-big", questions=questions)),
    ]


def browser() -> Any:
    if not available():
        sys.exit(MISSING)
    return start_driver()


def measure(driver: Any, path: Path, method: str, repeats: int) -> dict[str, float]:
    dcl, load, detail = [], [], []
    for _ in range(repeats):
        driver.get("about:blank")
        driver.get(path.as_uri())
        content_loaded, loaded, ready = driver.execute_script(NAVIGATION)
        assert ready == "1", f"{path.name}: the page's script did not finish"
        opened_ms, is_open = driver.execute_script(OPEN_DETAIL, DETAIL[method])
        assert is_open
        dcl.append(content_loaded)
        load.append(loaded)
        detail.append(opened_ms)
    return {"dcl_ms": statistics.median(dcl), "load_ms": statistics.median(load),
            "detail_ms": statistics.median(detail)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=2000)
    parser.add_argument("--chains", type=int, default=500)
    parser.add_argument("--questions", type=int, default=9031)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        store = Store(directory / "store.db")
        runs = build_runs(store, directory, args.battles, args.chains, args.questions)
        pages = []
        for label, name in runs:
            started = time.perf_counter()
            report = build_report(store, name)
            html = to_html(store, report)
            render_s = time.perf_counter() - started
            path = directory / f"{name}.html"
            path.write_text(html, encoding="utf-8")
            pages.append((label, report["run"]["method"], path, render_s, _size(report)))
        driver = browser()
        try:
            print(f"{'report':28} {'items':>7} {'MB':>6} {'render s':>8} {'DCL ms':>8} {'load ms':>8} "
                  f"{'detail ms':>9} {'load ratio':>10}")
            small_load = None
            for label, method, path, render_s, items in pages:
                timing = measure(driver, path, method, args.repeats)
                big = "size" not in label
                ratio = f"{timing['load_ms'] / small_load:.1f}x" if big and small_load else ""
                small_load = None if big else timing["load_ms"]
                print(f"{label:28} {items:>7} {path.stat().st_size / 1e6:>6.2f} {render_s:>8.2f} "
                      f"{timing['dcl_ms']:>8.0f} {timing['load_ms']:>8.0f} {timing['detail_ms']:>9.1f} {ratio:>10}")
            print(f"(median of {args.repeats} loads each from file:// in headless Chromium; "
                  f"load ratio = big report's load time / the tests'-size report's, same run)")
        finally:
            driver.quit()
            store.close()


def _size(report: dict) -> int:
    """Battles, chains or questions in a report."""
    if report["run"]["method"] == "arena":
        return report["counts"]["battles"]
    if report["run"]["method"] == "adammeme":
        steps = report["details"]["steps"]
        return len({(s["target"], s["category"], s["chain"]) for s in steps})
    return len(report["details"])


if __name__ == "__main__":
    main()
