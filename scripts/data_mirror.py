"""Serve a local mirror of a catalogue entry's GitHub sources, built from local clones with `git archive`.

    python scripts/data_mirror.py memeqa memeqa=CLONE pictures=CLONE [--port 8765]
    memegauge data get memeqa --mirror http://127.0.0.1:8765

Each source's archive is `git archive --format=tar.gz --prefix=REPO-COMMIT/ COMMIT` of its clone at the
entry's pinned commit, served at GitHub's path ``/OWNER/REPO/archive/COMMIT.tar.gz`` (Range requests
honoured). Every request is printed as it arrives (method, path, Range), so a second `get` making no
request shows as no line. Binds 127.0.0.1; stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from memegauge.data.catalogue import entry
from memegauge.testing.dataserver import DataServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entry")
    parser.add_argument("clones", nargs="+", metavar="SOURCE_ID=GIT_DIR")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    clones = dict(pair.split("=", 1) for pair in args.clones)
    server = DataServer()
    for source in entry(args.entry).sources:
        if source.kind != "github":
            continue
        prefix = f"{source.repo.split('/')[1]}-{source.commit}/"
        archive = subprocess.run(["git", "--git-dir", clones[source.id], "archive", "--format=tar.gz",
                                  f"--prefix={prefix}", source.commit], check=True, capture_output=True).stdout
        path = server.add_github(source.repo, source.commit, archive=archive)
        print(f"{path}: {len(archive)} bytes", flush=True)
    print(f"serving on {server.start(args.port)}", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            for method, path, asked in server.requests[seen:]:
                print(f"request: {method} {path} {asked}".rstrip(), flush=True)
            seen = len(server.requests)
    except KeyboardInterrupt:
        print(f"{len(server.requests)} requests in all", flush=True)
        server.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
