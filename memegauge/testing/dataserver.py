"""A local HTTP server shaped like GitHub's archive URLs and the Hugging Face Hub's dataset API, for the
`memegauge data` tests and the local mirror script (scripts/data_mirror.py). Binds 127.0.0.1 only.

GitHub: ``/OWNER/REPO/archive/COMMIT.tar.gz`` (a .tar.gz whose top folder is ``REPO-COMMIT/``).
Hub: ``/api/datasets/REPO/revision/REV`` (the commit), ``/api/datasets/REPO/tree/REV`` (the file list
with sizes, git blob ids and LFS sha256) and ``/datasets/REPO/resolve/REV/PATH`` (HEAD and GET, with
``X-Repo-Commit`` and ``ETag``), which is what `huggingface_hub` asks for under ``HF_ENDPOINT``.

Every file honours ``Range: bytes=N-`` (206). Faults per path, for the failure tests: ``"404"``,
``"truncate"`` (announce the full length, send half, close), ``"drop_once"`` (truncate the first GET
only), ``"gated"`` (the Hub's 403 for a gated repository). `requests` lists every request as
``(method, path, range header)``.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


def github_archive(repo: str, commit: str, files: dict[str, bytes]) -> bytes:
    """A GitHub-shaped source archive: every file under ``REPO-COMMIT/``, deterministic."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{repo.split('/')[1]}-{commit}/{path}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class DataServer:
    """Serves registered byte strings by path (see the module docstring); a context manager."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, dict[str, str]]] = {}
        self.faults: dict[str, str] = {}
        self.requests: list[tuple[str, str, str]] = []
        self._dropped: set[str] = set()
        self.server: ThreadingHTTPServer | None = None

    # ---- content ---------------------------------------------------------------------------------

    def add(self, path: str, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.files[path] = (data, headers or {})

    def add_github(self, repo: str, commit: str, files: dict[str, bytes] | None = None,
                   archive: bytes | None = None) -> str:
        """Serve a repository's archive at `commit` (built from `files`, or the given archive bytes)."""
        path = f"/{repo}/archive/{commit}.tar.gz"
        self.add(path, archive if archive is not None else github_archive(repo, commit, files or {}),
                 {"Content-Type": "application/x-gzip"})
        return path

    def add_hub(self, repo_id: str, commit: str, files: dict[str, bytes], lfs: set[str] = frozenset(),
                revisions: tuple[str, ...] = ()) -> None:
        """Serve a Hub dataset repository at `commit` (also under each name in `revisions`)."""
        tree = []
        for path, data in sorted(files.items()):
            item = {"type": "file", "path": path, "size": len(data), "oid": blob_id(data)}
            if path in lfs:
                item["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 130}
            tree.append(item)
        for rev in (commit, *revisions):
            info = {"id": repo_id, "sha": commit, "private": False, "gated": False, "disabled": False,
                    "siblings": [{"rfilename": p} for p in sorted(files)], "tags": [], "downloads": 0, "likes": 0}
            self.add(f"/api/datasets/{repo_id}/revision/{rev}", json.dumps(info).encode(),
                     {"Content-Type": "application/json"})
            self.add(f"/api/datasets/{repo_id}/tree/{rev}", json.dumps(tree).encode(),
                     {"Content-Type": "application/json"})
            for path, data in files.items():
                etag = hashlib.sha256(data).hexdigest() if path in lfs else blob_id(data)
                self.add(f"/datasets/{repo_id}/resolve/{rev}/{path}", data,
                         {"X-Repo-Commit": commit, "ETag": f'"{etag}"', "Content-Type": "application/octet-stream"})

    # ---- serving ---------------------------------------------------------------------------------

    def __enter__(self) -> DataServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, port: int = 0) -> str:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet: `requests` records them
                pass

            def do_HEAD(self) -> None:
                owner._serve(self, body=False)

            def do_GET(self) -> None:
                owner._serve(self, body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.url

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def _serve(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = urlsplit(handler.path).path
        asked = handler.headers.get("Range", "")
        self.requests.append((handler.command, path, asked))
        fault = self.faults.get(path)
        if fault == "gated":  # the Hub's answer to a gated repository without an accepted request
            handler.send_response(403)
            handler.send_header("X-Error-Code", "GatedRepo")
            handler.send_header("X-Error-Message", "Access to this dataset is restricted.")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if path not in self.files or fault == "404":
            handler.send_response(404)
            handler.send_header("Content-Length", "9")
            handler.end_headers()
            if body:
                handler.wfile.write(b"not found")
            return
        data, headers = self.files[path]
        start = int(asked.removeprefix("bytes=").split("-")[0]) if asked.startswith("bytes=") else 0
        if start >= len(data) and start:
            handler.send_response(416)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(206 if start else 200)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Accept-Ranges", "bytes")
        handler.send_header("Content-Length", str(len(data) - start))
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        handler.end_headers()
        if not body:
            return
        cut = fault == "truncate" or (fault == "drop_once" and path not in self._dropped)
        if cut:
            self._dropped.add(path)
            handler.wfile.write(data[start:start + (len(data) - start) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        handler.wfile.write(data[start:])
