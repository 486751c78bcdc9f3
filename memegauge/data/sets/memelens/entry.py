"""MemeLens (QCRI/MemeLens on the Hugging Face Hub): one config per task, language and source data set.

Installed layout (docs/data.md): ``memelens/`` the dataset repository at the pinned revision as released:
one folder per config (named ``TASK_LANG__SOURCE``, e.g. ``stereotype_en__MAMI``) with its Parquet
files, pictures inside them, and ``README.md`` (the card, whose ``configs:`` list names every config's files).

The Hub's newer layout is read too (a ``--data`` folder): the card as the Hub serves it now (read from its
mirrors, e.g. https://hf.031202.xyz/datasets/QCRI/MemeLens) says "The dataset is organized by language:
{language}/ {dataset_name}/ images/ train.jsonl test.jsonl val.jsonl", each row ``id, image`` ("Relative path to
the meme image"), ``text, label, task_description, explanation, native_label, native_task_description,
native_explanation`` (and, in test, the judges' ``informativeness, clarity, plausibility, faithfulness,
llm_judge``); the authors' ``data/download_dataset.py`` (MohamedBayan/MemeLens at 5a73242) lays a download out
the same way (``LANG/DATASET/{train,test,val}.jsonl`` and ``LANG/DATASET/images/``).
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
    """Every config's rows of `split`, in either layout the Hub has served: CONFIG/SPLIT-*.parquet (the columns as
    the viewer shows them, ``id, image{bytes}, text, label, task_description, explanation, native_label,
    native_task_description``) and LANG/CONFIG/SPLIT.jsonl (`image` a relative path; the validation split is
    ``val.jsonl``). `label` is the row's class name, its config's classes are every label the config holds (all its
    splits, read from the `label` column only), and `task_description` is the instruction. Ids are ``CONFIG/ID``."""
    from memegauge.data.memesets import Unreadable, parquet_rows, picture_file, unreadable_row  # lazy: as above

    out = []
    for config in sorted(p for p in folder.iterdir() if p.is_dir() and any(p.glob(f"{split}-*.parquet"))):
        classes = _classes(config)
        for path in sorted(config.glob(f"{split}-*.parquet")):
            for where, r in parquet_rows(path):
                try:
                    out.append(_row(config.name, where, r, classes, picture_file(r.get("image"), where)))
                except Unreadable as exc:  # a cell of the wrong type: counted with its row
                    out.append(unreadable_row(where, str(exc), ("label",)))
    return out + _jsonl_layout(folder, split)


JSONL_SPLITS = {"validation": "val"}  # the newer layout's file names (download_dataset.py: train, test, val)


def _jsonl_layout(folder: Path, split: str) -> list[ReleaseRow]:
    """The rows of LANG/CONFIG/SPLIT.jsonl: each config folder one language folder down holding the split's file."""
    from memegauge.data.memesets import picture_file, release_jsonl  # lazy: as above

    name = f"{JSONL_SPLITS.get(split, split)}.jsonl"
    out = []
    for config in sorted(p.parent for p in folder.glob(f"*/*/{name}") if p.is_file()):
        classes: list[str] = []  # filled below, once every split's labels are read (shared by the rows)

        def row(where: str, r: dict[str, Any], config: Path = config, classes: list[str] = classes) -> ReleaseRow:
            image = r.get("image")
            picture = (_picture_path(folder, config, image, where) if isinstance(image, str) and image.strip()
                       else picture_file(image, where) if image not in (None, "") else None)
            return _row(config.name, where, r, classes, picture)
        listings = {path: release_jsonl(path, ("label",), row) for path in sorted(config.glob("*.jsonl"))}
        classes += sorted({c for found in listings.values() for r in found if (c := r.labels["label"])})
        out += listings[config / name]
    return out


def _picture_path(root: Path, config: Path, image: str, where: str) -> Path:
    """A row's picture given as a relative path: the card says only "Relative path to the meme image", so it is
    looked for under the config's folder, then under the release's folder (both confined to the release); when
    neither holds it, the config-relative path is returned and the kit counts the row under `picture not found`."""
    from memegauge.files import confined  # lazy: as above

    inside = confined(config, image, where)
    if inside.is_file():
        return inside
    at_root = confined(root, image, where)
    return at_root if at_root.is_file() else inside


def _row(config: str, where: str, r: dict[str, Any], classes: list[str], picture: Any) -> ReleaseRow:
    from memegauge.data.memesets import scalar  # lazy: as above (a field of the wrong type: Unreadable)

    task, language, origin = config_groups(config)
    label = _clean(scalar(r, "label"))
    found = scalar(r, "id")
    return ReleaseRow(
        where=where, id=f"{config}/{found}" if found not in (None, "") else "",
        picture=picture, text=scalar(r, "text") or "",
        labels={"label": label}, why={} if label else {"label": "no label"},
        groups={"config": config, "task": task, "language": language, "source": origin},
        extra={"task_description": str(r.get("task_description") or ""), "classes": classes,
               "explanation": str(r.get("explanation") or "")})


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
    citation="""@misc{shahroor2026memelens,
  title  = {{MemeLens}: Multilingual Multitask {VLMs} for Memes},
  author = {Shahroor, Ali Ezzat and Kmainasi, Mohamed Bayan and Hasnat, Abul and Dimitrov, Dimitar
            and Da San Martino, Giovanni and Nakov, Preslav and Alam, Firoj},
  year   = {2026},
  eprint = {2601.12539},
  archivePrefix = {arXiv}
}""",
    sources=(HubSource(
        id="memelens", repo_id="QCRI/MemeLens", revision="98eac34fc64fad505c98a0cc94aa70cb2e72a449",
        licence="MIT (declared; see the conflict above)", what="every config's Parquet files and README.md"),),
    folder=Path(__file__).parent,
    notes="The paper's title and authors are as a copy of arXiv:2601.12539 gives them "
          "(http://kk6lht.com/papers/2601.12539.md; the model card QCRI/MemeLens-VLM names the same title). "
          "Revision 98eac34 ('Upload stereotype_en__MAMI') is the newest commit seen from here, not "
          "confirmed as the head. The columns were read later from mirrors of the Hub's viewer and card (the "
          "card now describes a JSONL layout, LANG/DATASET/{train,test,val}.jsonl beside images/, which the "
          "reader reads too; whether the pinned revision's Parquet files are still served could not be "
          "confirmed); the config list and sizes: the card's `configs:` gives them once installed.",
    rows=rows,
)
