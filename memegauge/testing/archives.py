"""Hostile and ordinary .tar.gz archives for the `memegauge data` tests and `bench/hostile_data.py`: members
given as bytes, or as a size of zeros streamed into the archive without being held (an archive bomb's member
that claims far more than it unpacks to stays a small .tar.gz), and symlinks."""

from __future__ import annotations

import io
import tarfile


class Zeros(io.RawIOBase):
    """A stream of `size` zero bytes, read in pieces (tarfile copies a member from it without holding it whole)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(n)


def tar_gz(top: str, members: dict[str, bytes | int], links: dict[str, str] | None = None) -> bytes:
    """A .tar.gz of `members` under ``top/`` (an int: that many zero bytes, streamed, not held); `links`: symlinks
    (path → target), added after the members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for path, data in members.items():
            info = tarfile.TarInfo(f"{top}/{path}")
            if isinstance(data, int):
                info.size = data
                tar.addfile(info, Zeros(data))
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        for path, target in (links or {}).items():
            info = tarfile.TarInfo(f"{top}/{path}")
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buffer.getvalue()
