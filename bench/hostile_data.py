"""Hostile mirrors against `memegauge data get` (issue 47): the archive bomb and the endless body.

    python bench/hostile_data.py [--claim-mb 200] [--member-mb 2]

Against a local GitHub-shaped mirror (memegauge.testing.dataserver, 127.0.0.1):

* **bomb**: a data set whose manifest lists a `--member-mb` MB file; the mirror's archive holds that file
  claiming `--claim-mb` MB (zeros, so the .tar.gz is small). Printed: the archive's size, the peak bytes
  under the data folder while `get` ran (sampled every 5 ms, plus the largest file the install wrote as
  its members were written), the time, and how it ended.
* **endless**: the mirror answers the archive's URL with a body that never ends and no Content-Length.
  Printed: the bytes the mirror sent and the bytes `get` kept before it stopped, and how it ended.

Run it in a checkout of any version (e.g. before and after issue 47) to compare them side by side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))

from memegauge.data import catalogue  # noqa: E402
from memegauge.data.catalogue import Entry, GitHubSource, register  # noqa: E402
from memegauge.data.install import get  # noqa: E402
from memegauge.testing.archives import tar_gz  # noqa: E402
from memegauge.testing.dataserver import DataServer  # noqa: E402

COMMIT = "b" * 40
SOURCE = GitHubSource(id="files", repo="owner/bomb", commit=COMMIT, licence="MIT", what="files")


class Peak:
    """The most bytes under a folder, sampled on a thread."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.peak, self.running = folder, 0, True
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while self.running:
            total = 0
            for root, _, files in os.walk(self.folder):
                for name in files:
                    try:
                        total += os.path.getsize(os.path.join(root, name))
                    except OSError:
                        pass
            self.peak = max(self.peak, total)
            time.sleep(0.005)

    def __enter__(self) -> Peak:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join()


def attempt(name: str, mirror: str, data: Path) -> tuple[str, float, int]:
    started = time.monotonic()
    with Peak(data) as peak:
        try:
            get(name, mirror=mirror, quiet=True, say=lambda text: None)
            ended = "installed (!)"
        except Exception as exc:  # noqa: BLE001 (a bench reports whatever ended it)
            ended = f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}"
    return ended, time.monotonic() - started, peak.peak


def main(args: argparse.Namespace) -> None:
    member = b"\1" * (args.member_mb * 10**6)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        data = root / "data"
        os.environ["MEMEGAUGE_DATA_DIR"] = str(data)
        (root / "entry").mkdir()
        (root / "entry" / "manifest.json").write_text(json.dumps(
            {"files": {"big.bin": [len(member), hashlib.sha256(member).hexdigest()]}}))
        described = Entry(name="bomb", title="t", size="2 MB", licence="MIT", citation="-", sources=(SOURCE,),
                          folder=root / "entry")
        catalogue.entries = lambda: register(described, {})

        archive = tar_gz(f"bomb-{COMMIT}", {"big.bin": args.claim_mb * 10**6})
        with DataServer() as server:
            server.add_github("owner/bomb", COMMIT, archive=archive)
            ended, seconds, peak = attempt("bomb", server.url, data)
        print(f"bomb: a {len(archive) / 1e6:.2f} MB archive whose {args.member_mb} MB member claims "
              f"{args.claim_mb} MB: peak {peak / 1e6:.2f} MB written in {seconds:.2f} s; {ended}")

        sent = [0]

        class Endless(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    while sent[0] < args.endless_stop_mb * 10**6:  # a safety net for a version that never stops
                        self.wfile.write(bytes(65536))
                        sent[0] += 65536
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Endless)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        ended, seconds, peak = attempt("bomb", f"http://127.0.0.1:{server.server_address[1]}", data)
        server.shutdown()
        print(f"endless body: the mirror sent {sent[0] / 1e6:.2f} MB, `get` kept at most {peak / 1e6:.2f} MB, "
              f"{seconds:.2f} s; {ended}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claim-mb", type=int, default=200)
    parser.add_argument("--member-mb", type=int, default=2)
    parser.add_argument("--endless-stop-mb", type=int, default=2000, help="the endless server stops after this "
                        "much (so that a version without a bound ends)")
    main(parser.parse_args())
