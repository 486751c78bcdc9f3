"""Store errors: every SQLite error on the store file becomes one `StoreError` naming the file and the fix
(`store_fault`), through a connection whose cursors translate them (`GuardedConnection`); `RunBusy` when a
live process holds the run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memegauge.files import shell_command
from memegauge.errors import ActionableError

class RunBusy(ActionableError):
    """Another live process is writing this run (exit 1); says who, since when, and what to do."""


class StoreError(ActionableError):
    """The store file cannot be used as asked (disk full, damaged, read-only, locked): exit 1, one
    message naming the file and the fix, never a traceback."""


def store_fault(exc: sqlite3.Error, path: Path) -> StoreError:
    """The one message for an SQLite error on the store file."""
    text = str(exc).lower()
    if "full" in text:
        return StoreError("the disk holding the store is full", str(path),
                          "free space on that disk (or move the store and pass --store) and rerun the "
                          "same command: the run continues where it stopped, nothing finished is lost")
    if "readonly" in text or "read-only" in text:
        return StoreError("the store is read-only here, and this command writes to it", str(path),
                          "copy the store to writable storage and pass --store COPY (runs, report and "
                          "view read a read-only store as it is)")
    if "malformed" in text or "not a database" in text or "encrypted" in text or "corrupt" in text:
        return StoreError(f"the store file is damaged ({exc})", str(path),
                          f"recover what is readable: {shell_command('sqlite3', path, '.recover')}"
                          " | sqlite3 recovered.db, then "
                          "pass --store recovered.db (or start a new store)")
    if "locked" in text or "busy" in text:
        return StoreError("the store stayed locked by another process for 30 s", str(path),
                          "wait for the other memegauge process to finish, or use another --store")
    if "unable to open" in text or "disk i/o" in text:
        return StoreError(f"cannot read or write the store file ({exc})", str(path),
                          "check that its folder exists, is writable and its disk is healthy, or pass "
                          "--store PATH")
    return StoreError(f"storage error ({exc})", str(path), "check the disk and the file, then rerun")


class GuardedCursor(sqlite3.Cursor):
    """A cursor whose SQLite errors become `StoreError`s naming the file."""

    def _guard(self, call, *args):
        try:
            return call(*args)
        except sqlite3.Error as exc:
            raise store_fault(exc, self.connection.store_path) from None

    def execute(self, *args):  # type: ignore[override]
        return self._guard(super().execute, *args)

    def executemany(self, *args):  # type: ignore[override]
        return self._guard(super().executemany, *args)

    def executescript(self, *args):  # type: ignore[override]
        return self._guard(super().executescript, *args)

    def fetchone(self):  # type: ignore[override]
        return self._guard(super().fetchone)

    def fetchall(self):  # type: ignore[override]
        return self._guard(super().fetchall)

    def fetchmany(self, *args):  # type: ignore[override]
        return self._guard(super().fetchmany, *args)

    def __next__(self):
        return self._guard(super().__next__)


class GuardedConnection(sqlite3.Connection):
    store_path: Path = Path("?")

    def cursor(self, factory=GuardedCursor):  # type: ignore[override]
        return super().cursor(factory)

    # Connection.execute makes its cursor in C, past `cursor` above: route it explicitly.
    def execute(self, *args):  # type: ignore[override]
        return self.cursor().execute(*args)

    def executemany(self, *args):  # type: ignore[override]
        return self.cursor().executemany(*args)

    def executescript(self, script):  # type: ignore[override]
        return self.cursor().executescript(script)
