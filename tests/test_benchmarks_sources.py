"""Readers confirmed against sources read in issue 49's second pass: MemeLens in the layout the Hub serves now
(the card, as its mirrors show it, and the authors' data/download_dataset.py: LANG/DATASET/{train,test,val}.jsonl
beside LANG/DATASET/images/, `image` a relative path), read as the Parquet layout is (one multi-class task per
config, its classes from the data, its rows' task_description as the instruction)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_benchmarks import expected, picture, run_of, world  # noqa: F401,F811  (world: the fixture, used by name)

# config → (its language folder, its classes), as the authors' download_dataset.py files them (LANGUAGE_DATASETS)
JSONL_CONFIGS = {
    "Harmful_en__HarMeme": ("en", ["harmful", "partially-harmful", "not-harmful"]),
    "Misogyny_hi_en__MIMIC2024": ("hi", ["misogynous", "not-misogynous"]),
}


def memelens_jsonl(root: Path, n: int = 10) -> None:
    """The card's layout line for line: {language}/{dataset_name}/images/, train.jsonl, test.jsonl, val.jsonl; each
    row `id, image` (a relative path), `text, label, task_description, explanation, native_label,
    native_task_description, native_explanation`, and in test the judges' `informativeness, clarity, plausibility,
    faithfulness, llm_judge`. In test: the last row of each config carries no label, and the one before names a
    picture the folder lacks (both counted, not asked)."""
    for c, (config, (language, classes)) in enumerate(JSONL_CONFIGS.items()):
        folder = root / language / config
        for split, count in (("test", n), ("train", 3), ("val", 2)):
            lines = []
            for i in range(count):
                image = f"images/{split}_{i}.png"
                if (split, i) != ("test", n - 2):
                    picture(folder / image, i + 20 * c)
                row = {"id": f"{split}{i}", "image": image, "text": f"memelens {config} {split} {i}",
                       "label": classes[i % len(classes)] if (split, i) != ("test", n - 1) else "",
                       "task_description": f"Decide whether this meme is {' or '.join(classes)}.",
                       "explanation": "why", "native_label": classes[i % len(classes)],
                       "native_task_description": "", "native_explanation": ""}
                if split == "test":
                    row |= {"informativeness": 4.5, "clarity": 4.0, "plausibility": 4.5, "faithfulness": 5.0,
                            "llm_judge": None}
                lines.append(json.dumps(row))
            (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n")


def test_memelens_in_the_hubs_jsonl_layout_asks_each_config_with_its_own_classes(world):  # noqa: F811 (the fixture imported above)
    tmp, server = world
    data = tmp / "ml"
    memelens_jsonl(data)
    report, answers, found = run_of(tmp, server, "memelens", "test", data)
    task = report["tasks"]["classify"]
    assert (task["asked"], task["rows"]) == (16, 20)
    assert task["left_out"] == {"no label": 2, "picture not found": 2}
    assert {(g["value"], g["asked"], g["rows"]) for g in task["groups"] if g["group"] == "config"} == {
        (config, 8, 10) for config in JSONL_CONFIGS}
    for config, (_, classes) in JSONL_CONFIGS.items():
        mine = [a for a in answers if a["groups"]["config"] == config]
        assert all(a["classes"] == sorted(classes) for a in mine)  # train's and val's labels counted too
        assert all(a["prompt"].startswith(f"Decide whether this meme is {' or '.join(classes)}.") for a in mine)
        [group] = [g for g in task["groups"] if (g["group"], g["value"]) == ("config", config)]
        want = expected(mine, found, sorted(classes))
        assert group["accuracy"]["value"] == pytest.approx(want["accuracy"], rel=1e-9)
        assert group["macro_f1"]["value"] == pytest.approx(want["macro_f1"], rel=1e-9)
        assert group["macro_f1"]["n"] == len(mine) == 8 and group["macro_f1"]["ci95"]
    assert {a["groups"]["language"] for a in answers} == {"en", "hi-en"}  # the config name's, not the folder's


def test_memelens_jsonl_layout_reads_val_jsonl_as_the_validation_split_and_confines_pictures(tmp_path):
    from memegauge.data.sets.memelens.entry import rows
    from memegauge.types import InputError

    memelens_jsonl(tmp_path)
    found = rows(tmp_path, "validation")
    assert sorted(r.id for r in found) == sorted(f"{c}/val{i}" for c in JSONL_CONFIGS for i in range(2))
    assert all(Path(r.picture).is_file() and r.extra["classes"] for r in found)
    listing = tmp_path / "en" / "Harmful_en__HarMeme" / "val.jsonl"
    listing.write_text(json.dumps({"id": "x", "image": "../../../../etc/passwd", "label": "harmful"}) + "\n")
    with pytest.raises(InputError, match="leaves the release's folder"):
        rows(tmp_path, "validation")


def test_memelens_jsonl_layout_counts_an_unreadable_line_and_keeps_the_configs_classes(tmp_path):
    """A line cut short in one config's test.jsonl and one in its train.jsonl: each is a row marked unreadable
    (file and line), the others read, and the classes still come from every readable row (issue 49)."""
    from memegauge.data.sets.memelens.entry import rows

    memelens_jsonl(tmp_path)
    folder = tmp_path / "en" / "Harmful_en__HarMeme"
    for name, n in (("test.jsonl", 2), ("train.jsonl", 1)):
        lines = (folder / name).read_text().splitlines()
        lines[n] = lines[n][:30]
        (folder / name).write_text("\n".join(lines) + "\n")
    found = [r for r in rows(tmp_path, "test") if r.where.startswith(str(folder))]
    assert len(found) == 10
    [bad] = [r for r in found if r.unreadable]
    assert bad.where == f"{folder / 'test.jsonl'}:3" and bad.labels == {"label": None}
    assert bad.unreadable.startswith("unreadable line (test.jsonl:3: invalid JSON: ")
    assert all(r.extra["classes"] == sorted(JSONL_CONFIGS["Harmful_en__HarMeme"][1]) for r in found
               if not r.unreadable)
