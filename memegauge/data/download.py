"""One file over HTTP(S), resumable: streamed into ``NAME.part``, continued with a Range request after an
interruption, moved to its final name only once complete.

A dropped connection is retried (at most `RETRIES` times, each resuming where the bytes stopped); a
server that ignores the Range header (200 instead of 206) restarts the file. Progress: a rich bar with
bytes, speed and ETA on a terminal, plain timestamped lines elsewhere.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import IO

import httpx
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

from memegauge.errors import MemeGaugeError
from memegauge.files import sha256_file

RETRIES = 3
PLAIN_EVERY_S = 10.0
MAX_REDIRECTS = 5
"""Redirects followed for one download (GitHub's archive URL takes one): more is one `DownloadError`."""


class DownloadError(MemeGaugeError):
    """A download failed after its retries; what was received is kept for the next attempt to resume."""


@dataclass
class Fetched:
    """What one download did.

    path       The complete file.
    requests   HTTP requests sent (0 when the file was already complete).
    received   Bytes received over the network (a resumed file counts only the new bytes).
    resumed    Whether a Range request continued a partial file.
    """

    path: Path
    requests: int = 0
    received: int = 0
    resumed: bool = False


class Meter:
    """Bytes of one download: a bar on a terminal, plain lines elsewhere, nothing when quiet."""

    def __init__(self, label: str, quiet: bool = False, stream: IO[str] | None = None) -> None:
        self.label, self.quiet = label, quiet
        self.stream = stream or sys.stderr
        self.total: int | None = None
        self.done = 0
        self.started = time.monotonic()
        self.last_line = 0.0
        self.bar: Progress | None = None
        self.task = None

    def __enter__(self) -> Meter:
        if not self.quiet and self.stream.isatty():
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                TransferSpeedColumn(), TimeRemainingColumn(), console=Console(file=self.stream))
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=None)
        return self

    def update(self, done: int, total: int | None) -> None:
        self.done, self.total = done, total
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total)
        elif not self.quiet and time.monotonic() - self.last_line >= PLAIN_EVERY_S:
            self._line()

    def _line(self) -> None:
        self.last_line = time.monotonic()
        elapsed = self.last_line - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        total = f"/{self.total / 1e6:.1f} MB" if self.total else " MB"
        eta = f", ETA {int((self.total - self.done) / rate)}s" if self.total and rate > 0 else ""
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.stream.write(f"{stamp} {self.label}: {self.done / 1e6:.1f}{total}, "
                          f"{rate / 1e6:.1f} MB/s{eta}\n")
        self.stream.flush()

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif not self.quiet:
            self._line()


def download(url: str, target: Path, *, client: httpx.Client, label: str = "", quiet: bool = False,
             headers: dict[str, str] | None = None, max_bytes: int | None = None) -> Fetched:
    """Download `url` to `target` (resuming ``target.part``); returns what was done.

    `max_bytes` bounds the file (the expected size, or a stated cap): a server announcing more is refused
    before its body is read, and a body running past it (no Content-Length, or a false one) is stopped
    at the first byte over, its part file deleted. Redirects past the client's `max_redirects` (a loop)
    are one `DownloadError`."""
    if target.is_file():
        return Fetched(target)
    part = target.with_name(target.name + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    fetched = Fetched(target)
    with Meter(label or target.name, quiet) as meter:
        for attempt in range(RETRIES + 1):
            try:
                _attempt(url, part, client, fetched, meter, headers or {}, max_bytes)
                break
            except httpx.TooManyRedirects:
                raise DownloadError(f"{url}: redirected more than {client.max_redirects} times (a redirect loop?); "
                                    "nothing was installed: check the mirror's address (--mirror)") from None
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise DownloadError(f"{url}: cannot be fetched ({exc}); nothing was installed: check the mirror's "
                                    "address (--mirror)") from None
            except (httpx.TransportError, _Short) as exc:
                if attempt == RETRIES:
                    raise DownloadError(f"{url}: the download failed {RETRIES + 1} times ({exc}); "
                                        f"{part.stat().st_size if part.exists() else 0} bytes are kept in "
                                        f"{part}: rerun the same command to resume") from exc
                time.sleep(min(2.0, 0.2 * 2 ** attempt))
    os.replace(part, target)
    return fetched


def remember(path: Path, url: str) -> None:
    """Note beside a complete download where it came from and its sha256 (``NAME.json``), for `cached`."""
    from memegauge.files import write_text_atomic

    write_text_atomic(path.with_name(path.name + ".json"), json.dumps({"url": url, "sha256": sha256_file(path)}))


def cached(path: Path, url: str) -> bool:
    """Whether a complete download at `path` may be reused for `url`: it came from that very URL and its
    bytes still hash to what was noted when it completed. Anything else (another mirror's, a file left
    without its note by a killed run, a changed file) is deleted and fetched again."""
    note = path.with_name(path.name + ".json")
    try:
        known = json.loads(note.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        known = None
    if isinstance(known, dict) and known.get("url") == url and known.get("sha256") == sha256_file(path):
        return True
    path.unlink(missing_ok=True)
    note.unlink(missing_ok=True)
    return False


class _Short(Exception):
    """The body ended before the length the server announced."""


def _attempt(url: str, part: Path, client: httpx.Client, fetched: Fetched, meter: Meter,
             headers: dict[str, str], max_bytes: int | None = None) -> None:
    have = part.stat().st_size if part.exists() else 0
    request = dict(headers)
    if have:
        request["Range"] = f"bytes={have}-"
    fetched.requests += 1
    with client.stream("GET", url, headers=request) as response:
        if response.status_code == 416 and have:  # the partial file is already complete (or wrong): restart
            part.unlink()
            raise _Short("the server refused the resume range; starting again")
        if response.status_code not in (200, 206):
            raise DownloadError(f"{url}: HTTP {response.status_code} {response.reason_phrase}")
        append = response.status_code == 206 and have > 0
        fetched.resumed |= append
        length = response.headers.get("content-length", "")
        total = (have if append else 0) + int(length) if length.isdigit() else None
        if max_bytes is not None and total is not None and total > max_bytes:
            part.unlink(missing_ok=True)
            raise DownloadError(f"{url}: the server announces {total} bytes, more than the {max_bytes} expected; "
                                "nothing was read or installed")
        done = have if append else 0
        with part.open("ab" if append else "wb") as handle:
            for chunk in response.iter_raw():  # as received: a chunk size would hold back bytes a drop then loses
                if max_bytes is not None and done + len(chunk) > max_bytes:
                    handle.write(chunk[:max_bytes - done])
                    fetched.received += max_bytes - done
                    handle.close()
                    part.unlink(missing_ok=True)
                    raise DownloadError(f"{url}: the body goes past {max_bytes} bytes, the most expected; stopped "
                                        f"at the first byte over, nothing was installed")
                handle.write(chunk)
                done += len(chunk)
                fetched.received += len(chunk)
                meter.update(done, total)
        if total is not None and done < total:
            raise _Short(f"the body ended at {done} of {total} bytes")
