"""Full-page PNG screenshots of HTML reports in headless Chromium (for looking at them, not timing).

    python bench/report_screenshots.py REPORT.html [...] --out DIR [--width 1280]

Each report is opened from file://, the first item of its browser (a refinement chain, a meme → its
first task → its first battle, a question) is opened so the picture shows a detail too, and the whole
page is saved as DIR/<report name>.png. Needs Debian's chromium and chromedriver.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memegauge.testing.browser import MISSING, available, start_driver

# The first item to open in each browser, outermost first (a later selector is looked up in the
# item opened before it).
OPEN_FIRST = ("details.chain", "details.meme-item", "details.task-item", "details.battle-item",
              "details.question-item")
OPEN = """const [selectors, done] = arguments;
(async () => {
  let scope = document;
  for (const selector of selectors) {
    const box = scope.querySelector(selector);
    if (!box) continue;
    box.open = true;  // the page fills a detail on its toggle event, which comes a moment later
    await new Promise(resolve => setTimeout(resolve, 150));
    scope = box;
  }
  const report = document.getElementById('report-data') !== null;  // the index has no script
  done([!report || document.body.getAttribute('data-ready') === '1', document.documentElement.scrollHeight]);
})();"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    if not available():
        sys.exit(MISSING)
    driver = start_driver(args.width, ["--hide-scrollbars"])
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for report in args.reports:
            driver.set_window_size(args.width, 900)
            driver.get(report.resolve().as_uri())
            ready, height = driver.execute_async_script(OPEN, list(OPEN_FIRST))
            driver.set_window_size(args.width, min(height + 40, 16000))
            path = args.out / f"{report.stem}.png"
            driver.save_screenshot(str(path))
            print(f"{path} ({height} px tall{'' if ready else ', page script did not finish'})")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
