"""The store's layout: its tables (`SCHEMA`), its version (`SCHEMA_VERSION`, kept in `PRAGMA user_version`)
and the steps that bring an older store to it (`migrate`): the layout's own, then each method's, which
are handed to the store from above (`MethodSteps`): the store imports no method, and opening a store
loads only the methods whose runs it holds, and only when a step may be due."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from memegauge.registry import METHOD_STEPS, provide, provided

Step = Callable[[sqlite3.Connection], None]
MethodSteps = Callable[[list[str]], list[tuple[int, Step]]]
"""The methods' migration steps: given the method names of a store's runs, their `(version, step)`
pairs (`memegauge.methods.migration_steps`, provided through `memegauge.registry` when the method
registry is imported; a `Store` may also be handed its own)."""


def install_method_steps(steps: MethodSteps) -> None:
    """Hand the store the methods' steps (what `memegauge.methods` does through the registry when imported)."""
    provide(METHOD_STEPS, steps)

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, method TEXT NOT NULL,
  status TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
  config_json TEXT NOT NULL, config_hash TEXT NOT NULL, seed INTEGER, version TEXT, error TEXT,
  roles_json TEXT, method_version TEXT
);
CREATE TABLE IF NOT EXISTS executions (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, started REAL NOT NULL, ended REAL,
  status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
  key TEXT PRIMARY KEY, model TEXT NOT NULL, stage TEXT, request_json TEXT NOT NULL,
  status TEXT NOT NULL, text TEXT, error_class TEXT, error TEXT, attempts INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost REAL NOT NULL,
  latency_s REAL NOT NULL, created REAL NOT NULL, finish_reason TEXT NOT NULL DEFAULT '',
  reasoning TEXT NOT NULL DEFAULT '', images_sent INTEGER NOT NULL DEFAULT 0,
  logprobs TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, model TEXT NOT NULL, run_id INTEGER,
  attempt INTEGER NOT NULL, error_class TEXT NOT NULL, error TEXT, latency_s REAL, created REAL
);
CREATE TABLE IF NOT EXISTS run_calls (
  run_id INTEGER NOT NULL, key TEXT NOT NULL, stage TEXT, execution_id INTEGER NOT NULL,
  fresh INTEGER NOT NULL, PRIMARY KEY (run_id, key)
);
CREATE TABLE IF NOT EXISTS records (
  run_id INTEGER NOT NULL, kind TEXT NOT NULL, rkey TEXT NOT NULL, data TEXT NOT NULL,
  seq INTEGER NOT NULL, PRIMARY KEY (run_id, kind, rkey)
);
CREATE TABLE IF NOT EXISTS leases (
  run_id INTEGER PRIMARY KEY, execution_id INTEGER NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
  started REAL NOT NULL, heartbeat REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_key ON attempts(key);
CREATE INDEX IF NOT EXISTS records_kind ON records(run_id, kind, seq);
"""

SCHEMA_VERSION = 4
"""The store layout this MemeGauge writes, kept in `PRAGMA user_version`.

0  a store made before versioning (MemeGauge ≤ 0.1.0 of 2026-11-23): `calls` may lack the columns of
   `ADDED_CALL_COLUMNS` and the `leases` table may be missing.
1  every table of `SCHEMA` and every column of `CALL_COLUMNS`.
2  every record's key is made of its own fields (`memegauge.records`); a method whose records were keyed
   otherwise rewrites their keys in its own step (`Method.migrations`, run by `migrate`). Records that kept
   a key field only in their key are completed from the key when read, so they need no rewrite.
3  `runs` has `roles_json` (role → model names) and `method_version` (the method's `Method.version`), set
   when a run is made through the run path (`memegauge.run_path.run_checked`); NULL for older runs,
   whose reports derive the roles from the config as before.
4  `calls.logprobs`: the first answer token's top log-probabilities (JSON; '' when none were asked for).

A store is migrated step by step (`migrate`) when it is opened for writing; a read-only one is read
as it is. A store with a higher version was written by a newer MemeGauge and is refused, never guessed
at. Any change to a table or to what a record holds bumps the version and adds its migration."""

# Columns added to `calls` after its first version: a store written before them gets them (with
# their defaults) when it is opened, so old answers stay served.
ADDED_CALL_COLUMNS = {
    "finish_reason": "TEXT NOT NULL DEFAULT ''",
    "reasoning": "TEXT NOT NULL DEFAULT ''",
    "images_sent": "INTEGER NOT NULL DEFAULT 0",
}
CALL_COLUMNS = ("key", "model", "stage", "request_json", "status", "text", "error_class", "error",
                "attempts", "prompt_tokens", "completion_tokens", "cost", "latency_s", "created",
                "finish_reason", "reasoning", "images_sent", "logprobs")


def _to_version_1(db: sqlite3.Connection) -> None:
    """Unversioned → 1: the call columns added since the first layout (`leases` comes from SCHEMA)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    for name, decl in ADDED_CALL_COLUMNS.items():
        if name not in present:
            db.execute(f"ALTER TABLE calls ADD COLUMN {name} {decl}")
    if "images_sent" not in present:  # not counted then: unknown (-1), never "no picture" (0)
        db.execute("UPDATE calls SET images_sent=-1")


def _to_version_3(db: sqlite3.Connection) -> None:
    """2 → 3: the run header's roles and method version (NULL: an older run, derived when reported)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    for name in ("roles_json", "method_version"):
        if name not in present:
            db.execute(f"ALTER TABLE runs ADD COLUMN {name} TEXT")


def _to_version_4(db: sqlite3.Connection) -> None:
    """3 → 4: `calls.logprobs` (older calls asked for none: '')."""
    if "logprobs" not in {row[1] for row in db.execute("PRAGMA table_info(calls)")}:
        db.execute("ALTER TABLE calls ADD COLUMN logprobs TEXT NOT NULL DEFAULT ''")


# what later versions added, so a store of version 0 may lack them
_ADDED_LATER = {"calls": set(ADDED_CALL_COLUMNS) | {"logprobs"}, "runs": {"roles_json", "method_version"}}
_OPTIONAL_TABLES = {"leases"}


def layout_mismatch(db: sqlite3.Connection) -> str:
    """Why the tables of `db` are not a MemeGauge store's ('' when they are, or when there is none):
    every table of `SCHEMA` (but `leases`, added later) with every column it has had since version 0.
    Another application's database that merely has a table named `runs` (MLflow's) is told apart here,
    before anything is written."""
    tables = {row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")}
    if not tables:
        return ""
    expected = sqlite3.connect(":memory:")
    expected.executescript(SCHEMA)
    missing, absent = [], []
    for (table,) in expected.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        needed = {row[1] for row in expected.execute(f"PRAGMA table_info({table})")} - _ADDED_LATER.get(table, set())
        if table not in tables:
            if table not in _OPTIONAL_TABLES:
                absent.append(f"table {table}")
            continue
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        missing += [f"{table}.{column}" for column in sorted(needed - have)]
    expected.close()
    missing += absent  # the columns of a table it has tell most: named first
    if not missing:
        return ""
    shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
    lacking = ", ".join(missing[:4]) + (", …" if len(missing) > 4 else "")
    return f"tables {shown}; lacks {lacking}"


LAYOUT_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _to_version_1, 3: _to_version_3, 4: _to_version_4}
"""Step k of the store's own layout (tables and columns): turns a store of version k - 1 into version k."""


def migrate(db: sqlite3.Connection, version: int, method_steps: MethodSteps | None = None) -> None:
    """Run every step from `version` + 1 to `SCHEMA_VERSION`: the layout's, then each method's for that
    step (a method's records are its own: a method names its steps in its descriptor, `Method.migrations`,
    and the store runs them without knowing its record kinds)."""
    steps = _method_steps(db, method_steps)
    for target in range(version + 1, SCHEMA_VERSION + 1):
        if target in LAYOUT_MIGRATIONS:
            LAYOUT_MIGRATIONS[target](db)
        for step_version, step in steps:
            if step_version == target:
                step(db)


def _method_steps(db: sqlite3.Connection, given: MethodSteps | None) -> list[tuple[int, Step]]:
    """The steps of the methods whose runs hold records, as (version, step); none for a store without
    records (a new one), which needs none, so opening a new store loads no method."""
    names = [row[0] for row in db.execute(
        "SELECT DISTINCT method FROM runs WHERE id IN (SELECT DISTINCT run_id FROM records) ORDER BY method")]
    if not names:
        return []
    source = given or provided(METHOD_STEPS)
    if source is None:
        raise RuntimeError("the store needs its methods' migration steps and none were handed to it: "
                           "import memegauge.methods before opening an older store, or pass Store(migrations=...)")
    return source(names)
