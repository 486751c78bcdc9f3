"""The run store and response cache: one SQLite file (WAL), store schema version `SCHEMA_VERSION` (4).

`Store` (here) is the one façade: runs and leases, calls (the cache) and records. Its other concerns are
modules beside it: `schema` (tables, version, migrations: the layout's, then each method's own),
`errors` (every SQLite error as one `StoreError`), `leases` (who holds a run), `stats` (the report's
aggregates over calls, mixed into `Store`).

Crash-safety design
-------------------
* One writer per run: the asyncio process owns one connection; every write is a short explicit
  transaction (`BEGIN IMMEDIATE`, so two processes never interleave one). A run is held through a
  lease (process id, host, heartbeat every 5 s); a second process asking for a live run is refused
  (`RunBusy`); a lease whose holder died (its pid gone on this host, or 30 s without heartbeat from
  another) is taken over, and readers show that run as `interrupted`.
* Failed calls are stored with their class and attempts, but an engine never serves one as a final
  answer: it asks again (within its bounds) unless the call already failed in that same engine.
* Every SQLite error becomes one `StoreError` naming the file and the fix (disk full, damaged file,
  read-only media, lock held); a store on read-only media opens read-only for reading commands. A new
  store's file is made on first use, so bad input stops a command before any file appears.
* A model call's result (the `calls` row and the `run_calls` link) is committed in ONE transaction
  before the engine hands the answer to the stage that asked; the calls that finish in the same turn of
  the engine's event loop share that transaction (`put_calls`: one commit for a burst of answers, not
  one each). A kill -9 can therefore lose only calls that had not finished, or whose answer no stage
  had yet received; they are repeated on rerun, finished ones never.
* Failed attempts (429, 5xx, timeouts …) are committed as they happen, so the record of faults
  survives a crash even when the call itself had not finished.
* Stage outputs (`records`) are upserts keyed by (run, kind, key): recomputing them on resume from
  cached calls writes the same rows again, so a resumed run ends bit-for-bit where an uninterrupted
  one would. Seeded draws never depend on timing, only on the config and the seed.
* `journal_mode=WAL` + `synchronous=NORMAL`: a committed transaction survives the process dying at
  any instant (the WAL is in the OS page cache); only a power loss may drop the last commits, which
  a rerun repeats. `busy_timeout` lets a second process (e.g. `memegauge runs`) read while one writes.
  On a network filesystem (NFS, Lustre …), where WAL's shared memory is unsafe, the rollback journal
  (`DELETE` + `synchronous=FULL`) instead, with one warning (`filesystems`).
* The cache key covers model identity, sampling params, messages (images by sha256), the expected
  output shape and the sample index, so identical requests replay and `--repeat K` draws afresh.
  The cache is global: a second run of the same config with another name also makes 0 calls.
* API keys never reach the store: requests are stored as the engine built them, which holds none.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from memegauge._version import __version__
from memegauge.engine.store.filesystems import journal_mode
from memegauge.engine.store.errors import GuardedConnection, RunBusy, StoreError, store_fault
from memegauge.engine.store.leases import HEARTBEAT_S, HOST, LEASE_TTL_S, lease_alive
from memegauge.engine.store.schema import (CALL_COLUMNS, SCHEMA, SCHEMA_VERSION, MethodSteps, layout_mismatch,
                                           migrate)
from memegauge.engine.store.stats import CallStats
from memegauge.files import canonical_json
from memegauge.types import CallRecord, CallStatus, ErrorClass, InputError, Usage

__all__ = ["CALL_COLUMNS", "HEARTBEAT_S", "SCHEMA_VERSION", "RunBusy", "Store", "StoreError", "canonical_json",
           "lease_alive", "store_fault"]

def _writable(path: Path) -> bool:
    """Whether the store file can be written here (read-only media, a file without write permission)."""
    if not os.access(path, os.W_OK):
        return False
    try:
        return not os.statvfs(path).f_flag & os.ST_RDONLY
    except (AttributeError, OSError):
        return True


class Store(CallStats):
    """SQLite run store + response cache. See the module docstring for the crash-safety design."""

    def __init__(self, path: Path | str, migrations: MethodSteps | None = None) -> None:
        self.path = Path(path)
        self.migrations = migrations  # the methods' steps for an older store (None: those installed)
        if self.path.exists() and not self.path.is_file():
            raise InputError("the store path is not a file", where=str(self.path),
                             fix="pass --store FILE or set MEMEGAUGE_STORE to a file path")
        self.readonly = self.path.exists() and not _writable(self.path)
        self._db: sqlite3.Connection | None = None
        self._columns: list[str] | None = None
        if self.path.exists() or str(path) == ":memory:":
            self._open()  # an existing store is checked at once: not a store, damaged, read-only …

    @property
    def db(self) -> sqlite3.Connection:
        """The connection. A new store's file is made on first use, so a command that stops on bad
        input before it reads or writes anything leaves no empty store behind."""
        if self._db is None:
            self._open()
        return self._db

    def _open(self) -> None:
        if not self.readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the store's folder ({exc.strerror})", str(self.path),
                                 "pass --store with a path in a writable folder") from None
        try:
            self._db = self._connect()
            self.db.execute("PRAGMA busy_timeout=30000")
            self._refuse_foreign()  # before the first write: another application's file stays as it was
            version = self._schema_version()
            if not self.readonly:
                mode = journal_mode(self.path)  # DELETE on NFS, Lustre …: WAL needs shared memory
                self.db.execute(f"PRAGMA journal_mode={mode}")
                self.db.execute("PRAGMA synchronous=" + ("NORMAL" if mode == "WAL" else "FULL"))
            if self.readonly:
                self.db.execute("SELECT COUNT(*) FROM runs").fetchone()
            else:
                self.db.executescript(SCHEMA)
                self._migrate(version)
        except StoreError as exc:
            if "damaged" in str(exc) and "not a database" in str(exc):
                raise InputError("not a MemeGauge store (not an SQLite database)", where=str(self.path),
                                 fix="point --store at a MemeGauge .db file or a new path") from None
            if "no such table" in str(exc):
                raise InputError("not a MemeGauge store (an SQLite file without its tables)",
                                 where=str(self.path), fix="point --store at a MemeGauge .db file") from None
            raise

    def _refuse_foreign(self) -> None:
        """Refuse an SQLite file that holds tables but not MemeGauge's layout (another application's
        database, even one with a table named `runs`, as MLflow's): adding tables and a `user_version`
        to it would change a file that is not ours. An empty file, or a new one, has no table and
        becomes a store. The layout is checked by tables and columns (`layout_mismatch`)."""
        mismatch = layout_mismatch(self.db)
        if mismatch:
            raise InputError(f"not a MemeGauge store: an SQLite database of another application "
                             f"({mismatch}); it was left untouched", where=str(self.path),
                             fix="point --store at a MemeGauge .db file or at a new path")

    def _connect(self) -> sqlite3.Connection:
        """A connection whose errors name the file; read-only media are opened read-only (and, where
        SQLite cannot even create its lock files beside the store, as an immutable snapshot)."""
        if self.readonly:
            immutable = "&immutable=1" if not os.access(self.path.parent, os.W_OK) else ""
            target, uri = f"file:{self.path.resolve()}?mode=ro{immutable}", True
        else:
            target, uri = str(self.path), False
        try:
            db = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False, timeout=30,
                                 factory=GuardedConnection)
        except sqlite3.Error as exc:
            raise store_fault(exc, self.path) from None
        db.store_path = self.path
        return db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[None]:
        """One write transaction: all of it or none. The connection is in autocommit mode, where
        `with connection:` would commit each statement on its own, so BEGIN IMMEDIATE is explicit
        (IMMEDIATE takes the write lock up front: two processes never interleave a transaction)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back already (disk full)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _call_columns(self) -> list[str]:
        """The `calls` columns this store has: all of them, except in an older store on read-only
        media, which could not be migrated (read once)."""
        if self._columns is None:
            present = {row[1] for row in self.db.execute("PRAGMA table_info(calls)")}
            self._columns = [c for c in CALL_COLUMNS if c in present]
        return self._columns

    def _schema_version(self) -> int:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store was written by a newer MemeGauge (store schema version {version}; "
                             f"this MemeGauge {__version__} reads versions up to {SCHEMA_VERSION})",
                             str(self.path), "upgrade MemeGauge (pip install -U memegauge), or use another "
                             "--store; the store is left as it is")
        return version

    def _migrate(self, version: int) -> None:
        """Bring a store of an older layout to `SCHEMA_VERSION`, one step at a time, in one
        transaction: a crash leaves it at its old version, and the next open migrates again."""
        if version == SCHEMA_VERSION:
            return
        with self._tx():
            migrate(self.db, version, self.migrations)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    # ---- runs -----------------------------------------------------------------------------------

    def open_run(self, name: str, method: str, config: dict[str, Any], config_hash: str,
                 seed: int | None, version: str) -> tuple[int, int]:
        """Create the run (or resume it when the same name and config exist); start an execution.

        Returns (run_id, execution_id). Resuming a run whose config differs is refused: results of
        two configs must not mix under one name.
        """
        now = time.time()
        with self._tx():
            row = self.db.execute("SELECT id, config_hash, method, config_json FROM runs WHERE name=?",
                                  (name,)).fetchone()
            if row is None:
                cur = self.db.execute(
                    "INSERT INTO runs(name, method, status, created, updated, config_json,"
                    " config_hash, seed, version) VALUES (?,?,?,?,?,?,?,?,?)",
                    (name, method, "running", now, now, canonical_json(config), config_hash, seed,
                     version))
                run_id = cur.lastrowid
            else:
                run_id, old_hash, old_method, old_config = row
                if old_hash != config_hash or old_method != method:
                    raise InputError(
                        f"run {name!r} exists with a different "
                        + (f"method ({old_method}, not {method})" if old_method != method else
                           f"config: {config_differences(json.loads(old_config or '{}'), config)}"),
                        where=str(self.path),
                        fix="choose another --run NAME, or rerun with the original config to resume")
                self._take_lease_or_refuse(name, run_id, now)
                self.db.execute("UPDATE runs SET status='running', updated=?, error=NULL WHERE id=?",
                                (now, run_id))
            cur = self.db.execute("INSERT INTO executions(run_id, started, status) VALUES (?,?,?)",
                                  (run_id, now, "running"))
            self.db.execute("INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?,?)",
                            (run_id, cur.lastrowid, os.getpid(), HOST, now, now))
        return run_id, cur.lastrowid

    def set_run_origin(self, name: str, roles: dict[str, list[str]], method_version: str) -> None:
        """Record which models the run used by role and which version of its method made it, once (the
        first execution's: a resumed run keeps what its first execution wrote)."""
        with self._tx():
            self.db.execute("UPDATE runs SET roles_json=?, method_version=? WHERE name=? AND roles_json IS NULL",
                            (canonical_json(roles), method_version, name))

    # ---- one writer per run ---------------------------------------------------------------------

    def _take_lease_or_refuse(self, name: str, run_id: int, now: float) -> None:
        """Inside open_run's transaction: refuse when a live process holds the run; else take it
        over, marking the executions its dead holder left `running` as `interrupted`."""
        lease = self.db.execute("SELECT pid, host, started, heartbeat FROM leases WHERE run_id=?",
                                (run_id,)).fetchone()
        if lease is not None and lease_alive(*lease[:2], lease[3], now):
            pid, host, started, beat = lease
            raise RunBusy(
                f"run {name!r} is being written by process {pid} on {host} (started "
                f"{time.strftime('%H:%M:%S', time.localtime(started))}, last heartbeat {now - beat:.0f} s ago)",
                where=str(self.path),
                fix="wait for it to finish, or stop it and rerun (a process that died is taken over at "
                    f"once on this machine, after {LEASE_TTL_S:.0f} s without heartbeat elsewhere); two "
                    "writers would pay for the same calls twice")
        self.db.execute("UPDATE executions SET status='interrupted', ended=? WHERE run_id=? AND status='running'",
                        (now, run_id))

    def accept_run(self, run_id: int, note: str) -> None:
        """Mark an incomplete run done, its failures accepted (`--max-failure-rate`), saying so."""
        with self._tx():
            self.db.execute("UPDATE runs SET status='done', error=? WHERE id=?", (note, run_id))

    def heartbeat(self, run_id: int, execution_id: int) -> None:
        """The holder says it is alive (every few seconds while a run executes)."""
        with self._tx():
            self.db.execute("UPDATE leases SET heartbeat=? WHERE run_id=? AND execution_id=?",
                            (time.time(), run_id, execution_id))

    def effective_status(self, run: dict[str, Any]) -> str:
        """A run's status as a reader should see it: `running` only while its holder lives; a run
        whose process died (kill -9, power loss) is `interrupted`."""
        if run["status"] != "running":
            return run["status"]
        lease = self.db.execute("SELECT pid, host, heartbeat FROM leases WHERE run_id=?",
                                (run["id"],)).fetchone()
        return "running" if lease is not None and lease_alive(*lease, time.time()) else "interrupted"

    def finish_run(self, run_id: int, execution_id: int, status: str, error: str = "") -> None:
        now = time.time()
        with self._tx():
            self.db.execute("DELETE FROM leases WHERE run_id=? AND execution_id=?", (run_id, execution_id))
            self.db.execute("UPDATE runs SET status=?, updated=?, error=? WHERE id=?",
                            (status, now, error or None, run_id))
            self.db.execute("UPDATE executions SET status=?, ended=? WHERE id=?",
                            (status, now, execution_id))

    def run_row(self, name: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM runs WHERE name=?", (name,)).fetchone()
        if row is None:
            known = [r[0] for r in self.db.execute("SELECT name FROM runs ORDER BY id DESC LIMIT 5")]
            raise InputError(f"no run named {name!r}", where=str(self.path),
                             fix=f"list runs with `memegauge runs`; recent: {', '.join(known) or 'none'}")
        return self._row_dict(row, "runs")

    def list_runs(self) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT name FROM runs ORDER BY id").fetchall()
        return [self.run_summary(name) for (name,) in rows]

    def run_summary(self, name: str) -> dict[str, Any]:
        """Run metadata plus call accounting: calls made, cached, failed, tokens and cost."""
        run = self.run_row(name)
        run["status"] = self.effective_status(run)
        rid = run["id"]
        made, tokens, cost = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(c.prompt_tokens + c.completion_tokens), 0),"
            " COALESCE(SUM(c.cost), 0) FROM run_calls r JOIN calls c ON c.key = r.key"
            " WHERE r.run_id=? AND r.fresh=1", (rid,)).fetchone()
        total, failed = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(c.status='failed'), 0) FROM run_calls r"
            " JOIN calls c ON c.key = r.key WHERE r.run_id=?", (rid,)).fetchone()
        last = self.db.execute("SELECT MAX(id) FROM executions WHERE run_id=?", (rid,)).fetchone()[0]
        last_new = self.db.execute(
            "SELECT COUNT(*) FROM run_calls WHERE run_id=? AND execution_id=? AND fresh=1",
            (rid, last)).fetchone()[0]
        retries = self.db.execute(
            "SELECT COUNT(*) FROM attempts WHERE run_id=?", (rid,)).fetchone()[0]
        executions = self.db.execute("SELECT COUNT(*) FROM executions WHERE run_id=?",
                                     (rid,)).fetchone()[0]
        run.update(calls=total, calls_made=made, cached=total - made, failed_calls=failed,
                   tokens=tokens, cost=round(cost, 6), last_execution_new_calls=last_new,
                   failed_attempts=retries, executions=executions)
        return run

    # ---- calls ----------------------------------------------------------------------------------

    def get_call(self, key: str, with_request: bool = False) -> CallRecord | None:
        """The stored call, or None. Its `request` (the largest part) is read only when asked for:
        a replay needs the answer, not the question, so 200k cached calls stay cheap to serve."""
        columns = [c for c in self._call_columns() if with_request or c != "request_json"]
        row = self.db.execute(f"SELECT {', '.join(columns)} FROM calls WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        d = dict(zip(columns, row, strict=True))
        return CallRecord(
            key=d["key"], model=d["model"], stage=d["stage"] or "",
            request=json.loads(d["request_json"]) if with_request else {}, status=CallStatus(d["status"]),
            text=d["text"], error_class=ErrorClass(d["error_class"]) if d["error_class"] else None,
            error=d["error"] or "", attempts=d["attempts"],
            usage=Usage(prompt_tokens=d["prompt_tokens"], completion_tokens=d["completion_tokens"]),
            cost=d["cost"], latency_s=d["latency_s"], created=d["created"],
            finish_reason=d.get("finish_reason") or "", reasoning=d.get("reasoning") or "",
            images_sent=d.get("images_sent") or 0, logprobs=json.loads(d.get("logprobs") or "{}"))

    def put_call(self, record: CallRecord, run_id: int | None, execution_id: int | None,
                 fresh: bool) -> None:
        """Commit a finished call and link it to the run, atomically."""
        link = (run_id, record.key, record.stage, execution_id, fresh)
        self.put_calls([record] if fresh else [], [link] if run_id is not None else [])

    def put_calls(self, records: list[CallRecord], links: list[tuple[int, str, str, int | None, bool]]) -> None:
        """Commit finished calls and their links (run, key, stage, execution, fresh) in one transaction: the
        engine writes every call that finished in one turn of its event loop at once (`CallWriter`)."""
        insert = (f"INSERT OR REPLACE INTO calls ({', '.join(CALL_COLUMNS)})"
                  f" VALUES ({', '.join('?' * len(CALL_COLUMNS))})")
        with self._tx():  # one statement each for the calls and the links, SQLite looping over the rows
            if records:
                self.db.executemany(insert, [_call_row(record) for record in records])
            if links:
                # A call already linked keeps its first link: the execution that made it stays on record.
                self.db.executemany("INSERT OR IGNORE INTO run_calls VALUES (?,?,?,?,?)",
                                    [(run_id, key, stage, execution_id or 0, int(fresh))
                                     for run_id, key, stage, execution_id, fresh in links])

    def link_cached(self, run_id: int | None, key: str, stage: str, execution_id: int | None) -> None:
        if run_id is not None:
            self.put_calls([], [(run_id, key, stage, execution_id, False)])

    def put_attempt(self, key: str, model: str, run_id: int | None, attempt: int,
                    error_class: ErrorClass, error: str, latency_s: float) -> None:
        with self._tx():
            self.db.execute(
                "INSERT INTO attempts(key, model, run_id, attempt, error_class, error, latency_s,"
                " created) VALUES (?,?,?,?,?,?,?,?)",
                (key, model, run_id, attempt, error_class.value, error, latency_s, time.time()))

    def run_calls(self, run_id: int) -> list[CallRecord]:
        keys = [k for (k,) in self.db.execute(
            "SELECT key FROM run_calls WHERE run_id=? ORDER BY rowid", (run_id,))]
        return [c for c in (self.get_call(k, with_request=True) for k in keys) if c is not None]

    def put_record(self, run_id: int, kind: str, key: str, data: Any) -> None:
        """Upsert one stage output; `seq` keeps first-insertion order for stable reports."""
        with self._tx():
            self.db.execute(
                "INSERT INTO records VALUES (?,?,?,?, COALESCE((SELECT MAX(seq)+1 FROM records"
                " WHERE run_id=?), 0)) ON CONFLICT(run_id, kind, rkey) DO UPDATE SET data=excluded.data",
                (run_id, kind, key, canonical_json(data), run_id))

    def put_records(self, run_id: int, kind: str, items: list[tuple[str, Any]]) -> None:
        """Upsert many stage outputs in one transaction (all or none)."""
        with self._tx():
            seq = self.db.execute("SELECT COALESCE(MAX(seq)+1, 0) FROM records WHERE run_id=?",
                                  (run_id,)).fetchone()[0]
            for offset, (key, data) in enumerate(items):
                self.db.execute(
                    "INSERT INTO records VALUES (?,?,?,?,?) ON CONFLICT(run_id, kind, rkey)"
                    " DO UPDATE SET data=excluded.data",
                    (run_id, kind, key, canonical_json(data), seq + offset))

    def get_record(self, run_id: int, kind: str, key: str) -> Any | None:
        row = self.db.execute("SELECT data FROM records WHERE run_id=? AND kind=? AND rkey=?",
                              (run_id, kind, key)).fetchone()
        return json.loads(row[0]) if row else None

    def records(self, run_id: int, kind: str) -> list[Any]:
        return [json.loads(d) for (d,) in self.db.execute(
            "SELECT data FROM records WHERE run_id=? AND kind=? ORDER BY seq", (run_id, kind))]

    def record_items(self, run_id: int, kind: str) -> Iterator[tuple[str, Any]]:
        for key, data in self.db.execute(
                "SELECT rkey, data FROM records WHERE run_id=? AND kind=? ORDER BY seq",
                (run_id, kind)):
            yield key, json.loads(data)

    def record_kinds(self, run_id: int) -> dict[str, int]:
        return dict(self.db.execute(
            "SELECT kind, COUNT(*) FROM records WHERE run_id=? GROUP BY kind", (run_id,)).fetchall())

    def _row_dict(self, row: tuple, table: str) -> dict[str, Any]:
        names = [d[1] for d in self.db.execute(f"PRAGMA table_info({table})")]
        return dict(zip(names, row, strict=True))


def _call_row(record: CallRecord) -> tuple:
    """A call's `calls` row, in `CALL_COLUMNS` order."""
    return (record.key, record.model, record.stage, canonical_json(record.request),
            record.status.value, record.text,
            record.error_class.value if record.error_class else None, record.error,
            record.attempts, record.usage.prompt_tokens, record.usage.completion_tokens,
            record.cost, record.latency_s, record.created or time.time(),
            record.finish_reason, record.reasoning, record.images_sent,
            canonical_json(record.logprobs) if record.logprobs else "")


def config_differences(stored: dict[str, Any], given: dict[str, Any], limit: int = 6) -> str:
    """What differs between a stored run's config and the one given, in words, key by key ("max_tokens: stored 16,
    now 64; limit: stored (not set), now 10"); a nested value by its path ("benchmark_rows.hateful.asked: stored 40,
    now 27"), never as cut JSON; at most `limit` differences named, then how many more."""
    def shown(value: Any) -> str:
        if value is None:
            return "(not set)"
        if isinstance(value, str):  # a path or a name: its end tells runs apart
            return value if len(value) <= 50 else "…" + value[-49:]
        text = canonical_json(value)
        if len(text) <= 50 or not isinstance(value, list | dict):
            return text
        return f"a list of {len(value)} items" if isinstance(value, list) else f"{len(value)} keys"

    old, new = _leaves(stored), _leaves(given)
    paths = [p for p in sorted(set(old) | set(new)) if canonical_json(old.get(p)) != canonical_json(new.get(p))]
    # settings first (a limit, a token bound), then what a run derives from its inputs (counts, hashes)
    paths.sort(key=lambda p: "." in p or isinstance(old.get(p), list) or isinstance(new.get(p), list))
    found = [f"{p}: stored {shown(old.get(p))}, now {shown(new.get(p))}" for p in paths[:limit]]
    more = f"; and {len(paths) - limit} more" if len(paths) > limit else ""
    return ("; ".join(found) + more) if found else "its hash differs (a prompt file or a setting's content)"


def _leaves(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A config's values by dotted path ("benchmark_rows.hateful.asked"): nested mappings opened down to their
    leaves (an empty mapping and a list are leaves)."""
    out: dict[str, Any] = {}
    for key, inner in value.items():
        path = f"{prefix}{key}"
        if isinstance(inner, dict) and inner:
            out.update(_leaves(inner, path + "."))
        else:
            out[path] = inner
    return out
