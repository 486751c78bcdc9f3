"""Run leases: which process holds a run. A holder on this machine is alive while its process exists; one on
another machine while it beats (every `HEARTBEAT_S`) within `LEASE_TTL_S`."""

from __future__ import annotations

import os
import socket

HOST = socket.gethostname()
LEASE_TTL_S = 30.0  # a holder on another machine is presumed dead after this long without heartbeat
HEARTBEAT_S = 5.0


def lease_alive(pid: int, host: str, heartbeat: float, now: float) -> bool:
    """Whether a lease's holder still lives: on this machine, its process exists; on another,
    it beat within LEASE_TTL_S."""
    if host == HOST:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # exists, owned by someone else
            return True
        return True
    return now - heartbeat < LEASE_TTL_S
