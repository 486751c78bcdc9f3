"""Page helpers for the report tests (the browser itself: `memegauge.testing.browser`).

`open_page` loads a report and checks its script finished; `console_errors` returns what the page
logged as errors since.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_page(driver: Any, path_or_url: str | Path) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path_or_url if isinstance(path_or_url, str) else path_or_url.as_uri())
    assert driver.execute_script("return document.body.getAttribute('data-ready')") == "1"


def console_errors(driver: Any) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
