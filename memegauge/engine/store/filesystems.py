"""Which filesystem holds the store, and the journal mode that is safe there.

SQLite's WAL keeps its index in shared memory (the `-shm` file, memory-mapped by every process); SQLite
says WAL "does not work over a network filesystem": processes on two machines (two SLURM jobs on two
nodes, a login node reading while a job writes) each map their own copy, and the store can be damaged.
Cluster home and scratch directories are such filesystems (NFS, Lustre, GPFS, BeeGFS, CephFS, SMB).
There the store uses the rollback journal (`journal_mode=DELETE`, `synchronous=FULL`), which needs only
file locks, with one warning; everywhere else it uses WAL. Linux reads the type from /proc/mounts
(`MOUNTS`: the longest mount point holding the store, the last entry among equal ones: mounts stacked
on one point, as autofs then nfs4, list the mounted one last); where that cannot be read (macOS, Windows) the
store keeps WAL.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)

MOUNTS = Path("/proc/mounts")
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "lustre", "gpfs", "beegfs", "cephfs", "ceph", "cifs", "smb3", "smbfs", "afs", "9p",
    "fuse.sshfs", "fuse.glusterfs", "glusterfs", "fuse.cephfs", "fuse.beegfs", "orangefs", "pvfs2",
})
_WARNED: set[str] = set()


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding `path` ('' when unknown): the entry of `MOUNTS` whose mount
    point is the longest prefix of the path's real location; of entries on the same point the last
    (the one mounted over the others: autofs then the nfs4 it mounted)."""
    try:
        lines = MOUNTS.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    target = Path(path).resolve()
    best, kind = -1, ""
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(_unescape(fields[1]))
        if (target == point or point in target.parents) and len(point.parts) >= best:
            best, kind = len(point.parts), fields[2]
    return kind


def journal_mode(path: Path) -> str:
    """`WAL`, or `DELETE` on a network filesystem (with one warning per store and process)."""
    if str(path) == ":memory:":
        return "WAL"  # SQLite keeps an in-memory database's journal in memory whatever is asked
    kind = filesystem_type(path.parent)
    if kind not in NETWORK_FILESYSTEMS:
        return "WAL"
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        log.warning("the store %s is on a network filesystem (%s), where SQLite's WAL is unsafe: using "
                    "its rollback journal instead (slower; one writing process at a time). A store on "
                    "local disk is faster: pass --store on a local path (e.g. $TMPDIR) and copy it back",
                    path, kind)
    return "DELETE"


def _unescape(field: str) -> str:
    """/proc/mounts writes a space in a mount point as \\040 (tab \\011, newline \\012, backslash \\134)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)
