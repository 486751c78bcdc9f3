"""Make `store.db.gz`, `identities.json` and `keys.json` here with the MemeGauge of main at e9c3507 (before
`models/spec.py`), so later versions can prove that the same model identity still gives the same cache key.

    cd tests/data/store-main && ../../../.venv/bin/python make.py     # only at that commit

`identities.json`: every entry of `models.yaml` → its `identity` (the cache key's `model` part), computed
with this folder as the working directory (the `adapter` paths are relative to it). `store.db.gz`: the
calls of `requests()` answered by the scripted entries, one engine, no run. `keys.json`: their keys.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

from memegauge.types import ChatRequest, ImagePart, Message, SamplingParams

HERE = Path(__file__).resolve().parent
PICTURE = HERE.parents[2] / "memegauge" / "samples" / "cat-box.png"


def requests() -> list[ChatRequest]:
    """Greedy, sampled and picture calls to each scripted entry (the test asks these again)."""
    out = []
    for model in ("plain", "served"):
        out.append(ChatRequest(model=model, messages=[Message.user("Say OK.")], stage="fixture.text"))
        out.append(ChatRequest(model=model, messages=[Message.user("Tell a word.")], sample_index=1,
                               params=SamplingParams(temperature=0.7, max_tokens=8), stage="fixture.sampled"))
        out.append(ChatRequest(model=model, stage="fixture.picture", messages=[Message.user(
            ImagePart.of(PICTURE, alt_text="a cat in a box"), "What is in the picture?")]))
    return out


def main() -> None:
    from memegauge.config import load_registry
    from memegauge.engine import Store
    from memegauge.engine.core import Engine

    registry = load_registry(HERE / "models.yaml")
    identities = {name: registry.get(name).identity for name in registry.names()
                  if not name.startswith("embedded")}
    (HERE / "identities.json").write_text(json.dumps(identities, indent=1, sort_keys=True) + "\n")
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "store.db"
        store = Store(db)
        engine = Engine(store, registry)

        async def ask() -> list[str]:
            try:
                return [(await engine.chat(r)).record.key for r in requests()]
            finally:
                await engine.aclose()

        keys = asyncio.run(ask())
        store.close()
        raw = sqlite3.connect(db)
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        raw.execute("VACUUM")
        raw.close()
        with open(db, "rb") as src, gzip.open(HERE / "store.db.gz", "wb", compresslevel=9) as out:
            shutil.copyfileobj(src, out)
    (HERE / "keys.json").write_text(json.dumps(keys, indent=1) + "\n")
    print(f"wrote {len(identities)} identities and {len(keys)} calls")


if __name__ == "__main__":
    main()
