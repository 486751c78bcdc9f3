"""MemeLens (QCRI/MemeLens on the Hugging Face Hub): one config per task, language and source data set,
pictures inside the Parquet files.

Installed layout (docs/data.md): ``memelens/`` the dataset repository at the pinned revision as released:
one folder per config (named ``TASK_LANG__SOURCE``, e.g. ``stereotype_en__MAMI``) with its Parquet
files, and ``README.md`` (the card, whose ``configs:`` list names every config's files).
"""

from __future__ import annotations

from pathlib import Path

import re
from typing import Any

from memegauge.data.catalogue import Entry, HubSource
from memegauge.data.memesets import ReleaseRow

_LANGUAGE = re.compile(r"[a-z]{2}")  # one language code of a config name (hi_en: Hindi-English)


def config_groups(name: str) -> tuple[str, str, str]:
    """(task, language, source) of a config folder. Names seen on the Hub's commit pages: TASK_LANG__SOURCE
    (``Harmful_en__HarMeme``, ``Harmful_Covid_en__HarMeme``, ``sentiment_category_en__MET_Meme``,
    ``Misogyny_hi_en__MIMIC2024``: task Misogyny, language hi-en) and TASK_LANG_SOURCE (``Hateful_en_FHM``,
    ``propoganda_ar_ArMeme``). The language is the run of two-letter lowercase codes after the task."""
    left, sep, origin = name.partition("__")
    tokens = left.split("_")
    if sep:
        start = len(tokens)
        while start > 1 and _LANGUAGE.fullmatch(tokens[start - 1]):
            start -= 1
        end = len(tokens)
    else:
        start = next((i for i in range(1, len(tokens)) if _LANGUAGE.fullmatch(tokens[i])), len(tokens))
        end = start
        while end < len(tokens) and _LANGUAGE.fullmatch(tokens[end]):
            end += 1
        origin = "_".join(tokens[end:])
    return "_".join(tokens[:start]), "-".join(tokens[start:end]), origin


def rows(folder: Path, split: str) -> list[ReleaseRow]:
    """Every config's rows of `split` (CONFIG/SPLIT-*.parquet), read as the Hub's viewer shows the columns
    (``id, image{bytes}, text, label, task_description, explanation, native_label, native_task_description``):
    `label` is the row's class name, its config's classes are every label the config holds (all its splits,
    read from the `label` column only), and `task_description` is the instruction. Ids are ``CONFIG/ID``."""
    from memegauge.data.memesets import parquet_rows, picture_file  # lazy: pyarrow when read

    out = []
    for config in sorted(p for p in folder.iterdir() if p.is_dir() and any(p.glob(f"{split}-*.parquet"))):
        classes = _classes(config)
        task, language, origin = config_groups(config.name)
        for path in sorted(config.glob(f"{split}-*.parquet")):
            for where, r in parquet_rows(path):
                label = _clean(r.get("label"))
                out.append(ReleaseRow(
                    where=where, id=f"{config.name}/{r.get('id')}" if r.get("id") not in (None, "") else "",
                    picture=picture_file(r.get("image"), where), text=str(r.get("text") or ""),
                    labels={"label": label}, why={} if label else {"label": "no label"},
                    groups={"config": config.name, "task": task, "language": language, "source": origin},
                    extra={"task_description": str(r.get("task_description") or ""), "classes": classes,
                           "explanation": str(r.get("explanation") or "")}))
    return out


def _clean(value: Any) -> str | None:
    text = str(value).strip().lower() if value not in (None, "") else ""
    return text or None


def _classes(config: Path) -> list[str]:
    """Every class name a config's rows carry, over all its splits (the `label` column alone is read)."""
    import pyarrow.parquet as pq  # lazy: only Parquet releases need it

    found = set()
    for path in config.glob("*.parquet"):
        found |= {c for c in (_clean(v) for v in pq.read_table(path, columns=["label"]).column("label").to_pylist())
                  if c}
    return sorted(found)

ENTRY = Entry(
    name="memelens",
    title="MemeLens: meme tasks (harm, hate, stereotype, sentiment…) across languages and source data sets",
    size="100K–1M rows (download size not confirmed from here)",
    licence="declared MIT on the dataset card — in conflict with the terms of the sets it re-releases "
            "(FHM and MAMI forbid redistribution; others are research-only); use it as those terms allow",
    citation="""@misc{memelens2026,
  title  = {MemeLens},
  author = {{Qatar Computing Research Institute}},
  year   = {2026},
  eprint = {2601.12539},
  archivePrefix = {arXiv}
}""",
    sources=(HubSource(
        id="memelens", repo_id="QCRI/MemeLens", revision="98eac34fc64fad505c98a0cc94aa70cb2e72a449",
        licence="MIT (declared; see the conflict above)", what="every config's Parquet files and README.md"),),
    folder=Path(__file__).parent,
    notes="The paper's title and authors could not be confirmed from here: the citation gives the arXiv id "
          "the dataset card links (2601.12539). "
          "Revision 98eac34 ('Upload stereotype_en__MAMI') is the newest commit seen from here, not "
          "confirmed as the head. The config list, column names and sizes could not be read from here: "
          "the card's `configs:` gives them once installed.",
    rows=rows,
)
