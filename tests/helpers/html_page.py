"""A report page parsed the way the HTML tests read it (standard library parser, no browser)."""

from __future__ import annotations

import json
from html.parser import HTMLParser


class Page(HTMLParser):
    """The parts of a page the tests look at: tables (cell texts and classes), scripts, attributes."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, str]]]] = []
        self.scripts: list[tuple[dict, str]] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.meta_csp = ""
        self._cell: list[str] | None = None
        self._cell_class = ""
        self._script: dict | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.attributes += [(tag, k, v or "") for k, v in attrs.items()]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._cell_class = [], attrs.get("class") or ""
        elif tag == "script":
            self._script, self._text = attrs, []
        elif tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy":
            self.meta_csp = attrs["content"]

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(("".join(self._cell).strip(), self._cell_class))
            self._cell = None
        elif tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._text)))
            self._script = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._script is not None:
            self._text.append(data)

    def table_with(self, header: str) -> list[list[tuple[str, str]]]:
        return next(t for t in self.tables if t and header in [c for c, _ in t[0]])

    def data(self) -> dict:
        return json.loads(next(text for attrs, text in self.scripts if attrs.get("id") == "report-data"))
