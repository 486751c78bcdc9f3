"""Headless Chromium for the report tests: Debian's `chromium` and `chromedriver`, driven by selenium.

`available()` says whether all three are installed (tests skip cleanly otherwise); `start_driver()`
starts one browser that keeps its console log (`goog:loggingPrefs`); `open_page` loads a report and
checks its script finished; `console_errors` returns what the page logged as errors since.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def available() -> bool:
    return bool(CHROMIUM and CHROMEDRIVER and importlib.util.find_spec("selenium"))


def start_driver() -> Any:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--disable-extensions", "--no-first-run"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    return driver


def open_page(driver: Any, path_or_url: str | Path) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path_or_url if isinstance(path_or_url, str) else path_or_url.as_uri())
    assert driver.execute_script("return document.body.getAttribute('data-ready')") == "1"


def console_errors(driver: Any) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
