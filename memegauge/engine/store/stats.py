"""What a report counts of a run's calls, computed in SQL over the run's stored calls and attempts (no call
is loaded): latency, backends, attempts and failures by class, truncations, pictures. Part of `Store`."""

from __future__ import annotations

import sqlite3


class CallStats:
    """The report aggregates of `Store` (which provides `db`)."""

    db: sqlite3.Connection

    def call_latency(self, run_id: int) -> tuple[int, float | None]:
        """(calls, mean stored latency) of a run, computed in SQL (no call is loaded)."""
        n, mean = self.db.execute(
            "SELECT COUNT(*), AVG(c.latency_s) FROM run_calls r JOIN calls c ON c.key = r.key"
            " WHERE r.run_id=?", (run_id,)).fetchone()
        return n, mean

    def call_backends(self, run_id: int) -> set[str]:
        """The backends (``embedded``, ``openai`` …) that served the run's calls, from the stored
        model identity, whatever the registry named the models."""
        return {b for (b,) in self.db.execute(
            "SELECT DISTINCT json_extract(c.request_json, '$.model.backend') FROM run_calls r"
            " JOIN calls c ON c.key = r.key WHERE r.run_id = ?", (run_id,)) if b}

    def token_means(self) -> dict[tuple[str, str], tuple[int, float, float]]:
        """(model, stage) → (answered calls, mean prompt tokens, mean completion tokens) over every
        answered call the store holds: what `--dry-run` estimates a planned call from."""
        rows = self.db.execute("SELECT model, stage, COUNT(*), AVG(prompt_tokens), AVG(completion_tokens)"
                               " FROM calls WHERE status='ok' GROUP BY model, stage").fetchall()
        return {(model, stage or ""): (n, p, c) for model, stage, n, p, c in rows}

    def answered_among(self, keys: list[str]) -> int:
        """How many of these cache keys the store holds answered (any run's): calls a run asking the
        same requests replays without paying (`--dry-run`'s `cached`)."""
        found, chunk = 0, 500  # SQLite's bound-parameter limit is far above; chunks keep statements small
        for start in range(0, len(keys), chunk):
            part = keys[start:start + chunk]
            found += self.db.execute(f"SELECT COUNT(*) FROM calls WHERE status='ok' AND key IN "
                                     f"({', '.join('?' * len(part))})", part).fetchone()[0]
        return found

    def answered_calls(self, name: str) -> dict[tuple[str, str], int]:
        """(model, stage) → the run `name`'s answered calls (none when there is no such run yet)."""
        rows = self.db.execute("SELECT c.model, r.stage, COUNT(*) FROM runs u JOIN run_calls r ON r.run_id = u.id"
                               " JOIN calls c ON c.key = r.key WHERE u.name=? AND c.status='ok'"
                               " GROUP BY c.model, r.stage", (name,)).fetchall()
        return {(model, stage or ""): n for model, stage, n in rows}

    def call_totals(self, run_id: int) -> dict[tuple[str, str], dict[str, float]]:
        """(model, stage) → the run's calls, their prompt and completion tokens and cost: what a
        `--dry-run` estimate is checked against."""
        rows = self.db.execute("SELECT c.model, r.stage, COUNT(*), SUM(c.prompt_tokens), SUM(c.completion_tokens),"
                               " SUM(c.cost) FROM run_calls r JOIN calls c ON c.key = r.key WHERE r.run_id=?"
                               " GROUP BY c.model, r.stage", (run_id,)).fetchall()
        return {(model, stage or ""): {"calls": n, "prompt_tokens": p, "completion_tokens": c, "cost": cost}
                for model, stage, n, p, c, cost in rows}

    def attempt_counts(self, run_id: int) -> dict[str, int]:
        return dict(self.db.execute(
            "SELECT error_class, COUNT(*) FROM attempts WHERE run_id=? GROUP BY error_class",
            (run_id,)).fetchall())

    def truncated_counts(self, run_id: int) -> dict[str, int]:
        """Calls of the run whose output was cut at max_tokens, by the stage that asked."""
        return dict(self.db.execute(
            "SELECT COALESCE(r.stage, ''), COUNT(*) FROM run_calls r JOIN calls c ON c.key=r.key"
            " WHERE r.run_id=? AND c.finish_reason='length' GROUP BY r.stage ORDER BY r.stage",
            (run_id,)).fetchall())

    def image_counts(self, run_id: int) -> dict[str, dict[str, int]]:
        """Per model: the run's calls, and how many of them carried an image as a picture. Calls made
        before MemeGauge counted pictures (migrated stores: images_sent -1) are `unrecorded`; calls
        whose pictures were downscaled to the model's `max_image_pixels` are `downscaled`; calls where a
        text-only model (`vision: false`) read the meme's text in place of its picture are `as_text`."""
        counts = {}
        for model, calls, with_image, unrecorded, downscaled, as_text in self.db.execute(
                "SELECT c.model, COUNT(*), SUM(c.images_sent > 0), SUM(c.images_sent < 0),"
                " SUM(json_extract(c.request_json, '$.images_downscaled') IS NOT NULL),"
                " SUM(c.images_sent = 0 AND instr(c.request_json, '\"alt_text\"') > 0) FROM run_calls r"
                " JOIN calls c ON c.key=r.key WHERE r.run_id=? GROUP BY c.model ORDER BY c.model", (run_id,)):
            counts[model] = {"calls": calls, "with_image": with_image}
            if as_text:
                counts[model]["as_text"] = as_text
            if unrecorded:
                counts[model]["unrecorded"] = unrecorded
            if downscaled:
                counts[model]["downscaled"] = downscaled
        return counts

    def failed_call_counts(self, run_id: int) -> dict[str, int]:
        return dict(self.db.execute(
            "SELECT c.error_class, COUNT(*) FROM run_calls r JOIN calls c ON c.key=r.key"
            " WHERE r.run_id=? AND c.status='failed' GROUP BY c.error_class", (run_id,)).fetchall())

    # ---- stage records --------------------------------------------------------------------------
