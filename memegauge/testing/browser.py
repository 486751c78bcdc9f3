"""Headless Chromium for report tests and report benches: Debian's `chromium` and `chromedriver`,
driven by selenium (test extra, imported lazily).

`available()` says whether all three are installed; `start_driver()` starts one browser that keeps
its console log (`goog:loggingPrefs`), so callers can check a page logged no error.
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import Any
from collections.abc import Sequence

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
MISSING = "needs Debian's chromium and chromedriver and selenium (scripts/setup.sh --test)"


def available() -> bool:
    return bool(CHROMIUM and CHROMEDRIVER and importlib.util.find_spec("selenium"))


def start_driver(width: int = 1280, extra_flags: Sequence[str] = ()) -> Any:
    """A headless browser `width` pixels wide; raises RuntimeError when it cannot run here."""
    if not available():
        raise RuntimeError(MISSING)
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},900", "--disable-extensions", "--no-first-run", *extra_flags):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    return driver
