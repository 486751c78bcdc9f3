"""MemeArena's steps of the store migration (`memegauge.engine.store.schema.migrate` runs them; the arena
descriptor names them in `Method.migrations`). Each takes the store's connection inside the migration's
transaction."""

from __future__ import annotations

import json
import sqlite3


def repeat_keys_from_field(db: sqlite3.Connection) -> None:
    """Store version 1 → 2: ``repeat`` records keyed by their `repeat` field (1-based; version 1 keyed
    them 0-based); through temporary keys, as the old key ``1`` is the new key of another record."""
    rows = db.execute("SELECT run_id, rkey, data FROM records WHERE kind='repeat'").fetchall()
    db.execute("UPDATE records SET rkey = '~' || rkey WHERE kind='repeat'")
    for run_id, rkey, data in rows:
        db.execute("UPDATE records SET rkey=? WHERE run_id=? AND kind='repeat' AND rkey=?",
                   (str(json.loads(data)["repeat"]), run_id, "~" + rkey))
