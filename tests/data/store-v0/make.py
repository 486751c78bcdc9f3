"""Make `store.db.gz` and `reports/*.json` here: one run of each method, written by the MemeGauge of the
commit named in README.md beside this file, so later versions can prove they still report it.

    .venv/bin/python tests/data/store-v0/make.py      # only at that commit: the point is the old code

Runs (realistic test server, seed 7): `adam` (AdamMeme, 10 memes, 2 targets, refinement), `arena`
(MemeArena, 3 memes, 3 targets, 2 judges), `qa` (MemeQA None+ dev, 3 memes). Meme pictures and files are
written to a temporary folder that is deleted afterwards, as a moved or deleted meme folder would be.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from test_determinism import _without_clock  # noqa: E402
from test_memeqa import make_dataset  # noqa: E402
from test_realistic import _arena_world, _registry  # noqa: E402

from memegauge.engine import Store  # noqa: E402
from memegauge.report import build_report  # noqa: E402
from memegauge.testing.server import start_server  # noqa: E402


def main() -> None:
    from memegauge.adammeme.config import AdamConfig
    from memegauge.adammeme.pipeline import run_adammeme
    from memegauge.arena.config import ArenaConfig
    from memegauge.arena.pipeline import run_arena
    from memegauge.config import load_config, load_registry
    from memegauge.memeqa.runs import eval_run

    target = HERE / "store.db.gz"
    with tempfile.TemporaryDirectory() as folder, start_server(latency_ms=0, seed=7, style="realistic",
                                                              refusers=["tgt-b"]) as server:
        tmp = Path(folder)
        store = Store(tmp / "store.db")
        adam, arena, qa = tmp / "adam", tmp / "arena", tmp / "qa"
        for path in (adam, arena, qa):
            path.mkdir()
        _arena_world(adam, server.base_url, n_memes=10)
        registry = _registry(adam, server.base_url, ["agent", "tgt-a", "tgt-b"])
        cfg = AdamConfig(memes=adam / "memes.jsonl", agent="agent", targets=["tgt-a", "tgt-b"], erase=False,
                         seeds_per_category=3, max_steps=3, warn_below=0, mining_batch=4)
        asyncio.run(run_adammeme(cfg, store, registry, "adam", progress=False))
        config = _arena_world(arena, server.base_url, n_memes=3)
        asyncio.run(run_arena(load_config(config, ArenaConfig), store, load_registry(arena / "models.yaml"),
                              "arena", progress=False))
        data, images = make_dataset(qa, memes=("m1", "m2", "m3"))
        asyncio.run(eval_run(store, _registry(qa, server.base_url, ["vlm"]), data=data, images=images,
                             version="none-plus", split="dev", model="vlm", run_name="qa"))
        store.close()
        db = sqlite3.connect(tmp / "store.db")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.close()
        with open(tmp / "store.db", "rb") as db_file, gzip.open(target, "wb", compresslevel=9) as out:
            shutil.copyfileobj(db_file, out)
        reports = HERE / "reports"
        reports.mkdir(exist_ok=True)
        store = Store(tmp / "store.db")
        for name in ("adam", "arena", "qa"):
            text = json.dumps(_without_clock(build_report(store, name)), indent=1, sort_keys=True, default=str)
            (reports / f"{name}.json").write_text(text + "\n")
        store.close()
    print(f"wrote {target} ({target.stat().st_size:,} bytes) and {reports}")


if __name__ == "__main__":
    main()
