"""The benchmark kit end to end: each shipped benchmark runs through `memegauge eval` against the test server on a
fixture in its release's own layout (made here), and every figure of its report equals the figure computed
here, with scikit-learn, from the gold labels and what the server says it answered (its truths, keyed by
prompt: the answer it meant, None for an unreadable reply, and the P(yes) its log-probabilities carry)."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import shutil
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from memegauge.testing.realistic import truth_key
from memegauge.testing.server import start_server

sklearn_metrics = pytest.importorskip("sklearn.metrics")
pyarrow = pytest.importorskip("pyarrow")
pyarrow_parquet = pytest.importorskip("pyarrow.parquet")

CLI = [sys.executable, "-c", "import sys; from memegauge.cli import main; sys.exit(main(sys.argv[1:]))"]


def picture(path: Path, n: int) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (24, 24), ((n * 37) % 256, (n * 91) % 256, (n * 53) % 256)).save(path)
    return path.name


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_CACHE_DIR", str(tmp_path / "cache"))  # pictures out of a Parquet release
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "data-dir"))  # this test's own catalogue
    with start_server() as server:
        (tmp_path / "models.yaml").write_text(
            f"tsrv: {{backend: openai, model: tsrv, base_url: {server.base_url}, max_concurrency: 8, "
            "backoff_s: 0.01, backoff_max_s: 0.05}\n"
            f"tsrv2: {{backend: openai, model: tsrv2, base_url: {server.base_url}, max_concurrency: 8, "
            "backoff_s: 0.01, backoff_max_s: 0.05}\n")
        yield tmp_path, server


def cli(tmp: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([*CLI, "--store", str(tmp / "s.db"), "--models", str(tmp / "models.yaml"), "--quiet",
                           *args], capture_output=True, text=True, timeout=300, env=env)
    assert not check or done.returncode == 0, done.stdout + done.stderr
    return done


# ---- fixtures in each release's own layout ---------------------------------------------------------------


def fhm(root: Path, n: int = 40) -> dict[str, str]:
    """FHM: img/<id>.png, <split>.jsonl with {id, img, label, text}."""
    gold = {}
    root.mkdir(parents=True, exist_ok=True)
    with (root / "dev_seen.jsonl").open("w") as handle:
        for i in range(n):
            meme_id = 10000 + i
            picture(root / "img" / f"{meme_id}.png", i)
            label = i % 3 == 0
            handle.write(json.dumps({"id": meme_id, "img": f"img/{meme_id}.png", "label": int(label),
                                     "text": f"fhm meme number {i} about topic {i * 7}"}) + "\n")
            gold[str(meme_id)] = "yes" if label else "no"
    return gold


# ---- the ground truth -----------------------------------------------------------------------------------


def truths(server, model: str) -> dict[str, dict]:
    """The server's benchmark truths of one model, by prompt."""
    return {key: truth for key, truth in server.stats["truths"].items()} | {"model": model}


def meant(found: dict, prompt: str) -> dict:
    return found[truth_key(f"{found['model']}\x1f{prompt}")]


def expected(answers: list[dict], server_truths: dict[str, dict], classes: list[str], multi: bool = False) -> dict:
    """Accuracy and macro-F1 from gold and the server's meant answers (unreadable: wrong, credited to no class)."""
    said = [meant(server_truths, a["prompt"])["answer"] for a in answers]
    gold = [a["gold"] for a in answers]
    if multi:
        y = np.array([[c in g for c in classes] for g in gold])
        p = np.array([[m is not None and c in m for c in classes] for m in said])
        correct = [m is not None and sorted(m) == sorted(g) for m, g in zip(said, gold, strict=True)]
        f1 = sklearn_metrics.f1_score(y, p, average="macro", zero_division=0)
    else:
        pred = ["<unreadable>" if m is None else m for m in said]
        correct = [m == g for m, g in zip(pred, gold, strict=True)]
        f1 = sklearn_metrics.f1_score(gold, pred, labels=classes, average="macro", zero_division=0)
    return {"accuracy": float(np.mean(correct)), "macro_f1": float(f1),
            "unreadable": sum(m is None for m in said), "n": len(answers)}


def test_fhm_runs_end_to_end_and_every_figure_is_the_ground_truth(world):
    tmp, server = world
    data = tmp / "fhm"
    gold = fhm(data)
    done = cli(tmp, "eval", "fhm", "--model", "tsrv", "--model", "tsrv2", "--split", "dev_seen", "--data", str(data))
    assert "tsrv2" in done.stdout and "accuracy" in done.stdout and "macro_f1" in done.stdout
    runs = json.loads(cli(tmp, "runs", "--json").stdout)
    assert len(runs) == 2
    for run in runs:
        report = json.loads(cli(tmp, "report", run["name"], "--format", "json").stdout)
        answers = [json.loads(line) for line in
                   cli(tmp, "export", run["name"], "--table", "answers", "--format", "jsonl").stdout.splitlines()]
        assert {a["item"]: a["gold"] for a in answers} == gold
        task = report["tasks"]["hateful"]
        found = truths(server, report["model"])
        want = expected(answers, found, ["yes", "no"])
        assert task["answered"] == want["n"] == 40 and task["unreadable"] == want["unreadable"]
        assert task["accuracy"]["value"] == pytest.approx(want["accuracy"], rel=1e-9)
        assert task["macro_f1"]["value"] == pytest.approx(want["macro_f1"], rel=1e-9)
        assert task["accuracy"]["ci95"] and task["macro_f1"]["n"] == 40
        assert task["unreadable_share"]["value"] == pytest.approx(want["unreadable"] / 40, rel=1e-9)
        with_p = [(a["gold"] == "yes", meant(found, a["prompt"])["p_yes"]) for a in answers]
        with_p = [(y, p) for y, p in with_p if p is not None]
        assert task["auroc"]["n"] == len(with_p)
        assert task["auroc"]["value"] == pytest.approx(
            sklearn_metrics.roc_auc_score([y for y, _ in with_p], [p for _, p in with_p]), rel=1e-6)
        for per in task["per_class"]:
            assert per["f1"]["value"] == pytest.approx(sklearn_metrics.f1_score(
                [a["gold"] for a in answers],
                [meant(found, a["prompt"])["answer"] or "<u>" for a in answers],
                labels=[per["class"]], average="macro", zero_division=0), rel=1e-9)
        assert task["published"] == []  # no figure on dev_seen could be confirmed (docs/benchmarks.md)
    csv_text = cli(tmp, "report", runs[0]["name"], "--format", "csv").stdout
    lines = list(csv.DictReader(csv_text.splitlines()))
    assert {line["group"] for line in lines} == {"overall (hateful)"}
    assert all(lines[0][k] not in ("", None) for k in ("accuracy", "accuracy_ci95_lo", "accuracy_n", "macro_f1",
                                                        "macro_f1_ci95_hi", "macro_f1_n", "auroc"))


def _jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def harmeme(root: Path, n: int = 18) -> str:
    """HarMeme as installed: annotations/HarMeme_V1/Annotations/Harm-C/test.jsonl as LCS2-IIITD/MOMENTA writes it
    (``{"id": "covid_memes_5425", "image": "covid_memes_5425.png", "labels": ["not harmful"], "text": "…"}``, JSON
    with spaces), pictures/ nested as the user's copy may nest them."""
    harm = ["not harmful", "somewhat harmful", "very harmful"]
    targets = ["individual", "organization", "community", "society"]
    records = []
    for i in range(n):
        labels = [harm[i % 3]] + ([targets[i % 4]] if i % 3 else [])
        image = picture(root / "pictures" / "HarMeme Images" / "harm-c" / f"covid_memes_{5425 + i}.png", i)
        records.append({"id": f"covid_memes_{5425 + i}", "image": image,
                        "labels": labels, "text": f"harmeme text {i}\non subject {i * 11}\n"})
    _jsonl(root / "annotations" / "HarMeme_V1" / "Annotations" / "Harm-C" / "test.jsonl", records)
    return "harm-c/test"


HARM_P_ODD_ROWS = [  # rows of Harm-P/train_v1.jsonl at MOMENTA commit 11722ec (ids, labels, coding as released)
    {"id": "memes_326", "image": "memes_326.png", "labels": ["", "individual", "organization"],
     "text": "NOW I DON'T JUST OWN YOUR DONALD TRUMP"},  # line 1706: no harm label
    {"id": "memes_4241", "image": "memes_4241.png", "labels": ["not harmful", "individual"],
     "text": "Me explaining to my teacher"},  # line 1312: not harmful, yet a target
    {"id": "memes_4829", "image": "memes_4829.png", "labels": ["somewhat harmful", "individual", "organization"],
     "text": "Ben Carson is offering free lobotomies"},  # line 1406: two targets
]


def harm_p(root: Path, n: int = 24) -> str:
    """Harm-P as MOMENTA releases it (train_v1.jsonl, compact JSON: ``{"id":"memes_44","image":"memes_44.png",
    "labels":["somewhat harmful","individual"],"text":"…"}``), with the release's odd rows: a row without a harm
    label, a not-harmful row carrying a target, a row naming two targets, and harmful rows naming none."""
    harm = ["not harmful", "somewhat harmful", "very harmful"]
    targets = ["individual", "organization", "community", "society"]
    records = []
    for i in range(n):
        labels = [harm[i % 3]] + ([targets[i % 4]] if i % 3 and i % 5 else [])  # i % 5 == 0: harmful, no target
        records.append({"id": f"memes_{44 + i}", "image": f"memes_{44 + i}.png", "labels": labels,
                        "text": f"harm-p text {i}\n"})
    records[3:3] = HARM_P_ODD_ROWS
    for i, record in enumerate(records):
        picture(root / "pictures" / record["image"], i)
    path = root / "annotations" / "HarMeme_V1" / "Annotations" / "Harm-P" / "train_v1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return "harm-p/train"


def mami(root: Path, n: int = 16) -> str:
    """MAMI as unpacked: a folder of the release's choosing holding Test.csv (``file_name<TAB>Text
    Transcription``), its JPGs, and test_labels.txt (file_name and the five 0/1 flags, tab-separated, no header);
    one line of test_labels.txt malformed (four flags), counted and left out."""
    folder = root / "MAMI DATASET" / "test"
    folder.mkdir(parents=True)
    lines, labels = ["file_name\tText Transcription"], []
    for i in range(n):
        name = picture(folder / f"{15000 + i}.jpg", i)
        lines.append(f"{name}\tmami text {i} about thing {i * 5}")
        flags = [str(i % 2), *(str(int((i >> k) & 1 and i % 2)) for k in range(4))]
        labels.append("\t".join([name, *(flags[:4] if i == n - 1 else flags)]))
    (folder / "Test.csv").write_text("\n".join(lines) + "\n")
    (root / "test_labels.txt").write_text("\n".join(labels) + "\n")
    return "test"


GOAT_TASKS = ("hatefulness", "misogyny", "offensiveness", "sarcasm", "harmfulness")
GOAT_NAMES = {  # picture names as the public listings (oops343/MemeAgent goat_dataset/TASK/test.jsonl) give them
    "hatefulness": ["15740.png", "04796.png", "38794.png", "60792.png"],
    "misogyny": ["15591.jpg", "15049.jpg", "15363.jpg", "15199.jpg"],
    "offensiveness": ["Qj9x2wz.png", "1f2zSW8.png", "Qk0x3aa.png", "2g3zTX9.png"],
    "sarcasm": ["823315070423797760.jpg", "816795819336577024.jpg", "822231638033756160.jpg", "820000000000000001.jpg"],
    "harmfulness": ["covid_memes_5425.png", "covid_memes_5426.png", "covid_memes_5429.png", "covid_memes_5427.png"],
}


def goat_listing(task: str) -> list[dict]:
    """One task's listing line for line: ``{"id": "15740", "img": "15740.png", "label": "1", "text": "…"}`` (string
    ids and labels, bare picture names)."""
    return [{"id": name.rsplit(".", 1)[0], "img": name, "label": str((i + len(task)) % 2), "text": f"goat {task} {i}"}
            for i, name in enumerate(GOAT_NAMES[task])]


def goat(root: Path, zipped: bool = True) -> str:
    """GOAT-Bench: hatefulness' pictures from the installed FHM (imported here, its release naming them
    img/15740.png, img/04796.png); the others beside their listing, in TASK/images/ as oops343/MemeAgent's
    load_dataset.py lays a task out: in test/TASK.zip (the Hub's files; the zip's inside could not be read, a
    listing at TASK/test.jsonl is assumed) or unpacked as TASK/test.jsonl. Label "1" is the trait present (as
    MemeAgent's summary.py scores it: pred_label 1 for yes)."""
    release = root.parent / "fhm-for-goat"
    rows = [{"id": int(name.split(".")[0]), "img": f"img/{name}", "label": 1, "text": f"fhm {name}"}
            for name in GOAT_NAMES["hatefulness"]]
    _jsonl(release / "train.jsonl", rows)
    for i, name in enumerate(GOAT_NAMES["hatefulness"]):
        picture(release / "img" / name, i)
    subprocess.run([*CLI, "data", "import", "fhm", str(release)], check=True, capture_output=True, timeout=120)
    for t, task in enumerate(GOAT_TASKS):
        listing = "".join(json.dumps(r) + "\n" for r in goat_listing(task))
        if zipped:
            (root / "test").mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(root / "test" / f"{task}.zip", "w") as z:
                if task != "hatefulness":
                    for i, name in enumerate(GOAT_NAMES[task]):
                        z.writestr(f"{task}/images/{name}", png_bytes(i + 10 * t))
                z.writestr(f"{task}/test.jsonl", listing)
        else:
            (root / task).mkdir(parents=True, exist_ok=True)
            (root / task / "test.jsonl").write_text(listing)
            if task != "hatefulness":
                for i, name in enumerate(GOAT_NAMES[task]):
                    picture(root / task / "images" / name, i + 10 * t)
    return "test"


def png_bytes(n: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (24, 24), ((n * 37) % 256, (n * 91) % 256, (n * 53) % 256)).save(out, format="PNG")
    return out.getvalue()


def ii_bench(root: Path, n: int = 14) -> str:
    """II-Bench as the data catalogue installs it (the Hub release): data/dev-00000-of-00001.parquet, one row per
    question with the picture's bytes inside (the `image` struct {bytes, path}) and the card's columns."""
    rows = [{"id": f"ii-{i}", "image": {"bytes": png_bytes(i // 2), "path": f"dev-{i // 2}.jpg"},
             "question": f"What does picture {i // 2} imply ({i % 2})?",
             **{f"option{k + 1}": f"meaning {k} of {i}" for k in range(6)},
             "correct_option": f"meaning {i % 6} of {i}", "answer": "ABCDEF"[i % 6], "image_type": "Illustration",
             "difficulty": ["easy", "hard"][i % 2], "domain": ["Life", "Art"][(i // 2) % 2],
             "emotion": ["Positive", "Negative", "Neutral"][i % 3], "rhetoric": "Metaphor", "explanation": "",
             "local_path": f"images/dev/dev-{i // 2}.jpg"} for i in range(n)]
    (root / "data").mkdir(parents=True)
    pyarrow_parquet.write_table(pyarrow.Table.from_pylist(rows), root / "data" / "dev-00000-of-00001.parquet")
    return "dev"


MEMELENS_CONFIGS = {  # config folder → its classes, as the Hub names configs and labels
    "Hateful_en_FHM": ["hateful", "not-hateful"],
    "Harmful_en__HarMeme": ["harmful", "partially-harmful", "not-harmful"],
    "Misogyny_hi_en__MIMIC2024": ["misogynous", "not-misogynous"],
}


def memelens(root: Path, n: int = 12) -> str:
    """MemeLens as the data catalogue installs it (the Hub release): one folder per config with test-*.parquet
    (and a train file, whose labels count among the config's classes), the viewer's columns: id, image{bytes},
    text, label (a class name), task_description, explanation, native_label, native_task_description. One row
    carries no label (counted, not asked)."""
    for c, (config, classes) in enumerate(MEMELENS_CONFIGS.items()):
        (root / config).mkdir(parents=True)
        for split, count in (("test", n), ("train", 3)):
            rows = [{"id": f"{split}{i}", "image": {"bytes": png_bytes(i + 20 * c), "path": None},
                     "text": f"memelens {config} {i}", "label": classes[i % len(classes)]
                     if (split, i) != ("test", n - 1) else "",
                     "task_description": f"Decide whether this meme is {' or '.join(classes)}.",
                     "explanation": "", "native_label": classes[i % len(classes)], "native_task_description": ""}
                    for i in range(count)]
            pyarrow_parquet.write_table(pyarrow.Table.from_pylist(rows),
                                        root / config / f"{split}-00000-of-00001.parquet")
    return "test"


def run_of(tmp: Path, server, name: str, split: str, data: Path) -> tuple[dict, list[dict], dict]:
    """`eval NAME` on `data`, then its report, its answers and the server's truths."""
    cli(tmp, "eval", name, "--model", "tsrv", "--split", split, "--data", str(data))
    [run] = [r for r in json.loads(cli(tmp, "runs", "--json").stdout) if r["method"] == name]
    report = json.loads(cli(tmp, "report", run["name"], "--format", "json").stdout)
    answers = [json.loads(line) for line in
               cli(tmp, "export", run["name"], "--table", "answers", "--format", "jsonl").stdout.splitlines()]
    return report, answers, truths(server, "tsrv")


@pytest.mark.parametrize(("name", "make"), [("harmeme", harmeme), ("mami", mami), ("goat-bench", goat),
                                            ("ii-bench", ii_bench), ("memelens", memelens)])
def test_each_shipped_benchmark_reads_its_release_and_scores_the_servers_answers(world, name, make):
    tmp, server = world
    data = tmp / name
    split = make(data)
    report, answers, found = run_of(tmp, server, name, split, data)
    assert report["tasks"] and set(report["tasks"]) == {a["task"] for a in answers}
    for task_name, task in report["tasks"].items():
        mine = [a for a in answers if a["task"] == task_name]
        classes = task["classes"] if task["answer"] != "letter" else list("ABCDEF")
        if task_name == "classify":  # MemeLens: figures per config, over the config's own classes
            continue
        want = expected(mine, found, classes, multi=task["answer"] == "labels")
        assert (task["answered"], task["unreadable"]) == (want["n"], want["unreadable"]), task_name
        assert task["accuracy"]["value"] == pytest.approx(want["accuracy"], rel=1e-9), task_name
        assert task["accuracy"]["n"] == want["n"]
        if task["answer"] != "letter":
            assert task["macro_f1"]["value"] == pytest.approx(want["macro_f1"], rel=1e-9), task_name
        for group in task["groups"]:
            subset = [a for a in mine if a["groups"].get(group["group"]) == group["value"]]
            assert group["accuracy"]["value"] == pytest.approx(expected(subset, found, classes)["accuracy"], rel=1e-9)
        assert task["asked"] + sum(task["left_out"].values()) == task["rows"]  # asked n of N, the rest said
    if name == "harmeme":  # the target is asked of harmful memes only
        assert report["tasks"]["target"]["asked"] == 12 and report["tasks"]["harmfulness"]["asked"] == 18
        assert report["tasks"]["target"]["left_out"] == {"not harmful": 6}
    if name == "mami":
        assert report["tasks"]["misogynous"]["auroc"]["value"] is not None
        assert report["tasks"]["misogynous"]["left_out"] == {"malformed line in test_labels.txt": 1}
    if name == "goat-bench":  # every task asked of its own memes; hatefulness' pictures are the installed FHM's
        assert {t: (task["asked"], task["rows"]) for t, task in report["tasks"].items()} == dict.fromkeys(GOAT_TASKS,
                                                                                                         (4, 4))
    if name == "ii-bench":  # the pictures inside the Parquet rows, written out once each, byte for byte
        assert report["tasks"]["implication"]["published"] == []  # its published figures are the test split's
        written = sorted((tmp / "cache" / "benchmark-pictures").iterdir())
        assert sorted(p.read_bytes() for p in written) == sorted({png_bytes(i) for i in range(7)})


def test_memelens_asks_each_config_as_its_own_multi_class_task_with_its_classes_and_instruction(world):
    """A 3-class and two 2-class configs: each row asked with its config's classes (read from the data, train's
    labels too) and its `task_description`; the figures per config equal scikit-learn's over that config's classes;
    the config names parse as the Hub spells them; a row without a label is counted, not asked."""
    tmp, server = world
    report, answers, found = run_of(tmp, server, "memelens", memelens(tmp / "ml"), tmp / "ml")
    task = report["tasks"]["classify"]
    assert report["run"]["method_version"] == "2"  # the YAML's `version:`, stored with the run
    assert (task["asked"], task["rows"], task["left_out"]) == (33, 36, {"no label": 3})
    assert {(g["value"], g["asked"], g["rows"]) for g in task["groups"] if g["group"] == "config"} == {
        (config, 11, 12) for config in MEMELENS_CONFIGS}
    assert {a["groups"]["config"]: (a["groups"]["task"], a["groups"]["language"], a["groups"]["source"])
            for a in answers} == {"Hateful_en_FHM": ("Hateful", "en", "FHM"),
                                  "Harmful_en__HarMeme": ("Harmful", "en", "HarMeme"),
                                  "Misogyny_hi_en__MIMIC2024": ("Misogyny", "hi-en", "MIMIC2024")}
    for config, classes in MEMELENS_CONFIGS.items():
        mine = [a for a in answers if a["groups"]["config"] == config]
        assert all(a["classes"] == sorted(classes) for a in mine)
        assert all(a["prompt"].startswith(f"Decide whether this meme is {' or '.join(classes)}.") for a in mine)
        assert all(a["prompt"].endswith(f"Answer format: one of: {', '.join(sorted(classes))}.") for a in mine)
        [group] = [g for g in task["groups"] if (g["group"], g["value"]) == ("config", config)]
        want = expected(mine, found, sorted(classes))
        assert group["accuracy"]["value"] == pytest.approx(want["accuracy"], rel=1e-9)
        assert group["macro_f1"]["value"] == pytest.approx(want["macro_f1"], rel=1e-9)
        assert group["macro_f1"]["n"] == len(mine) == 11 and group["macro_f1"]["ci95"]


def test_harmeme_harm_p_counts_its_odd_rows_and_scores_several_targets_against_all(world):
    """Harm-P train as released: the row without a harm label is left out of every task (counted), a not-harmful
    row is never asked the target (counted apart when it carries one), a harmful row naming no target is counted,
    and a meme naming two targets is right when the answer names either (accuracy and macro-F1 as scikit-learn's
    on the indicator matrices)."""
    tmp, server = world
    report, answers, found = run_of(tmp, server, "harmeme", harm_p(tmp / "hp"), tmp / "hp")
    tasks = report["tasks"]
    assert tasks["harmfulness"]["rows"] == 27 and tasks["harmfulness"]["left_out"] == {"no harm label": 1}
    assert tasks["target"]["left_out"] == {"no harm label": 1, "not harmful": 8, "not harmful (carries a target)": 1,
                                           "harmful, no target given": 3}
    assert tasks["target"]["asked"] == 14
    target = [a for a in answers if a["task"] == "target"]
    assert {a["item"] for a in target if isinstance(a["gold"], list) and len(a["gold"]) == 2} == {"memes_4829"}
    assert "memes_4241" not in {a["item"] for a in target} and "memes_326" not in {a["item"] for a in answers}
    classes = ["individual", "organization", "community", "society"]
    said = [meant(found, a["prompt"])["answer"] for a in target]
    gold = np.array([[c in a["gold"] for c in classes] for a in target])
    pred = np.array([[s == c for c in classes] for s in said])
    right = [s is not None and s in a["gold"] for s, a in zip(said, target, strict=True)]
    assert tasks["target"]["accuracy"]["value"] == pytest.approx(np.mean(right), rel=1e-9)
    assert tasks["target"]["macro_f1"]["value"] == pytest.approx(
        sklearn_metrics.f1_score(gold, pred, average="macro", zero_division=0), rel=1e-9)
    page = cli(tmp, "report", json.loads(cli(tmp, "runs", "--json").stdout)[0]["name"], "--format", "html").stdout
    assert ("target: asked 14 of 27; left out: not harmful (8), harmful, no target given (3), no harm label (1), "
            "not harmful (carries a target) (1).") in page


def test_mami_sub_task_b_is_scored_as_the_organisers_compute_score_b_beside_macro_f1(world):
    """type_weighted_f1 equals MAMI's compute_scoreB (Evaluation/evaluation.py): each type's binary macro-F1 (as
    scikit-learn's f1_score(average='macro') of that type's 0/1 column) weighted by the type's gold positives."""
    tmp, server = world
    report, answers, found = run_of(tmp, server, "mami", mami(tmp / "m", 40), tmp / "m")
    task = report["tasks"]["subtypes"]
    types = ["shaming", "stereotype", "objectification", "violence"]
    mine = [a for a in answers if a["task"] == "subtypes"]
    said = [meant(found, a["prompt"])["answer"] for a in mine]
    scores, weights = [], []
    for t in types:
        gold = [t in a["gold"] for a in mine]
        pred = [s is not None and t in s for s in said]
        scores.append(sklearn_metrics.f1_score(gold, pred, average="macro", labels=[False, True], zero_division=0))
        weights.append(sum(gold))
    assert task["type_weighted_f1"]["value"] == pytest.approx(np.average(scores, weights=weights), rel=1e-9)
    assert task["type_weighted_f1"]["n"] == 39 and task["type_weighted_f1"]["ci95"]
    assert task["macro_f1"]["value"] == pytest.approx(expected(mine, found, types, multi=True)["macro_f1"], rel=1e-9)
    rows = list(csv.DictReader(cli(tmp, "report", json.loads(cli(tmp, "runs", "--json").stdout)[0]["name"],
                                   "--format", "csv").stdout.splitlines()))
    assert any(r["group"] == "overall (subtypes)" and r.get("type_weighted_f1") for r in rows)


@pytest.mark.parametrize("zipped", [True, False])
def test_goat_bench_in_its_hub_layout_finds_hatefulness_pictures_by_bare_name_in_the_imported_fhm(world, zipped):
    """The listings name pictures bare (15740.png, 04796.png): hatefulness' are found in the imported FHM's img/;
    ids and labels are strings; every task asked 4 of 4; the authors' instruction asked."""
    tmp, server = world
    report, answers, found = run_of(tmp, server, "goat-bench", goat(tmp / "g", zipped=zipped), tmp / "g")
    hate = [a for a in answers if a["task"] == "hatefulness"]
    assert {a["item"] for a in hate} == {"hatefulness/15740", "hatefulness/04796", "hatefulness/38794",
                                         "hatefulness/60792"}
    assert all(a["prompt"].startswith("Given the meme, with the text 'goat hatefulness") for a in hate)
    assert all(t["asked"] == 4 and t["rows"] == 4 and not t["left_out"] for t in report["tasks"].values())


def test_a_run_that_can_ask_nothing_exits_2_with_one_line_saying_why(world):
    """FHM's test_unseen as first released carries no label: 0 items to ask is an error, never an empty 'done'."""
    tmp, _ = world
    _jsonl(tmp / "u" / "test_unseen.jsonl", [{"id": 50000 + i, "img": f"img/{50000 + i}.png", "text": f"t {i}"}
                                             for i in range(5)])
    for i in range(5):
        picture(tmp / "u" / "img" / f"{50000 + i}.png", i)
    done = cli(tmp, "eval", "fhm", "--model", "tsrv", "--split", "test_unseen", "--data", str(tmp / "u"), check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "0 items to ask of 5 rows (hateful: 5 no label (unlabelled split))" in said
    assert said.count("\n") <= 2 and not (tmp / "s.db").exists()  # one line (and its fix), no run started


def test_each_data_sets_converted_meme_set_and_its_benchmark_count_the_same_rows(world, tmp_path):
    """One reader per data set: `data import` converts the release with the catalogue entry's `rows`, and the
    benchmark reads the same rows: the converted meme set holds as many memes as the benchmark's split has rows."""
    from memegauge.data.catalogue import entry

    tmp, _ = world
    made = {"fhm": lambda root: fhm_release(root, 10), "mami": lambda root: mami(root, 10)}
    for name, make in made.items():
        make(tmp / f"{name}-release")
        cli(tmp, "data", "import", name, str(tmp / f"{name}-release"))
    root = tmp / "data-dir"
    for name, split, converted in (("fhm", "dev_seen", "dev_seen"), ("mami", "test", "test")):
        folder = next(p for p in root.rglob("converted") if p.parent.name == name or name in str(p))
        memes = (folder / f"{converted}.jsonl").read_text().splitlines()
        released = entry(name).rows(folder.parent / name, split)
        assert len(memes) == len(released) == 10, name
    harm = tmp / "harmeme-installed"  # the layout `data get harmeme` installs (annotations/ + pictures/)
    harm_p(harm)
    entry("harmeme").convert(harm)
    memes = [json.loads(line) for line in (harm / "converted" / "harm-p-train.jsonl").read_text().splitlines()]
    report, _, _ = run_of(tmp, world[1], "harmeme", "harm-p/train", harm)
    assert len(memes) == len(entry("harmeme").rows(harm, "harm-p/train")) == report["tasks"]["harmful"]["rows"] == 27
    assert next(m for m in memes if m["id"] == "memes_326")["labels"] == []  # no harm label: none converted
    assert not (harm / "converted" / "harm-p-train.unreadable.txt").exists()


def test_a_truncated_line_is_counted_by_the_benchmark_and_the_conversion_and_the_rest_is_asked(world):
    """A release with one line cut short (HarMeme train_v1.jsonl:8), one whose `labels` is not a list, and one
    with an unknown harm label: the run asks every other row and reports each under its own reason and line; the
    converted meme set plus its list of unreadable lines count the benchmark's rows (issue 49)."""
    from memegauge.data.catalogue import entry

    tmp, server = world
    harm = tmp / "harmeme-installed"
    harm_p(harm)
    path = harm / "annotations" / "HarMeme_V1" / "Annotations" / "Harm-P" / "train_v1.jsonl"
    lines = path.read_text().splitlines()
    lines[7] = lines[7][:68]  # line 8 cut short after its harm label, as a download stopped mid-line leaves it
    lines[9] = json.dumps({"id": "memes_900", "image": "memes_900.png", "labels": "very harmful", "text": "t"})
    lines[10] = json.dumps({**json.loads(lines[10]), "id": "memes_901", "labels": ["extremely harmful", "individual"]})
    path.write_text("\n".join(lines) + "\n")
    entry("harmeme").convert(harm)
    memes = (harm / "converted" / "harm-p-train.jsonl").read_text().splitlines()
    unreadable = (harm / "converted" / "harm-p-train.unreadable.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in unreadable] == [f"{path}:8", f"{path}:10"]
    report, answers, _ = run_of(tmp, server, "harmeme", "harm-p/train", harm)
    task = report["tasks"]["harmful"]
    assert len(memes) + len(unreadable) == task["rows"] == 27
    said = "unreadable line (train_v1.jsonl:8: invalid JSON: Expecting ',' delimiter (column 69))"  # docs/benchmarks.md
    assert said in (Path(__file__).parent.parent / "docs" / "benchmarks.md").read_text().replace("\n", " ")
    assert task["left_out"] == {said: 1, "unreadable line (train_v1.jsonl:10: 'labels' is not a list of texts)": 1,
                                "unknown harm label 'extremely harmful'": 1, "no harm label": 1}
    assert task["asked"] == 27 - 4 == len({a["item"] for a in answers if a["task"] == "harmful"})
    assert "memes_901" not in {a["item"] for a in answers}  # not asked, not a target either


FIFTH = """name: fifth
title: A fifth benchmark
version: "1"
paper: a test's own
data: fifth
splits: {dev: dev.jsonl}
split: dev
read: {format: jsonl, id: id, image: img, text: text}
tasks:
  funny:
    answer: label
    gold: label
    labels: [funny, dull, odd]
    prompt_source: plain instruction
    prompt: |
      Meme text: "{{ text }}"
      How does this meme read?
"""


def _installed(tmp: Path, name: str, yaml_text: str) -> dict[str, str]:
    """A package holding one benchmark folder, installed into a temporary site folder by its entry point."""
    site = tmp / "site"
    (site / "fifthbench").mkdir(parents=True)
    (site / "fifthbench" / "benchmark.yaml").write_text(yaml_text)
    (site / "fifthbench" / "__init__.py").write_text(
        "from pathlib import Path\nfrom memegauge.benchmarks.kit.family import benchmark_method\n"
        "METHOD = benchmark_method(Path(__file__).parent)\n")
    info = site / "fifthbench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fifthbench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[memegauge.benchmarks]\n{name} = fifthbench:METHOD\n")
    return {**os.environ, "PYTHONPATH": str(site)}


def test_a_fifth_benchmark_is_one_folder_and_one_entry_point_touching_no_shared_file(world):
    tmp, server = world
    shipped = {p: p.stat().st_mtime_ns for p in Path(__file__).parents[1].joinpath("memegauge").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    env = _installed(tmp, "fifth", FIFTH)
    _jsonl(tmp / "d" / "dev.jsonl", [{"id": i, "img": picture(tmp / "d" / f"{i}.png", i), "text": f"fifth {i}",
                                      "label": ["funny", "dull", "odd"][i % 3]} for i in range(12)])
    assert "fifth: A fifth benchmark" in cli(tmp, "eval", "--list", env=env).stdout
    cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), env=env)
    [run] = json.loads(cli(tmp, "runs", "--json", env=env).stdout)
    report = json.loads(cli(tmp, "report", run["name"], "--format", "json", env=env).stdout)
    answers = [json.loads(line) for line in
               cli(tmp, "export", run["name"], "--table", "answers", "--format", "jsonl", env=env).stdout.splitlines()]
    want = expected(answers, truths(server, "tsrv"), ["funny", "dull", "odd"])
    assert report["tasks"]["funny"]["macro_f1"]["value"] == pytest.approx(want["macro_f1"], rel=1e-9)
    assert "A fifth benchmark" in cli(tmp, "report", run["name"], "--format", "html", env=env).stdout
    assert shipped == {p: p.stat().st_mtime_ns for p in shipped}  # no file of MemeGauge written


OWN_KIT = """from memegauge.benchmarks.kit.answers import register_answer
from memegauge.benchmarks.kit.metrics import register_metric
from memegauge.report.intervals import rate


def first_word(plain, classes, options):
    \"\"\"This benchmark's own answer kind: the answer's first word, when it is one of the classes.\"\"\"
    word = plain.lower().split(" ")[0].strip(".,!") if plain else ""
    return word if word in classes else None


def said_first_class(gold, pred, seed):
    \"\"\"This benchmark's own metric: the share of items the model put in the first class.\"\"\"
    return rate(pred[:, 0].astype(float))


register_answer("first_word", first_word)
register_metric("said_first_class", said_first_class)
"""


def test_a_benchmark_brings_its_own_answer_kind_and_metric_in_its_module_touching_no_shared_file(world):
    """The open kit: a benchmark folder installed from a temporary folder registers an answer kind and a metric in
    its hooks.py; its YAML names them; the run reads answers with its kind and its report shows its metric (equal
    to the share computed here), and no file of MemeGauge is written."""
    tmp, server = world
    shipped = {p: p.stat().st_mtime_ns for p in Path(__file__).parents[1].joinpath("memegauge").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    own = FIFTH.replace("    answer: label", "    answer: first_word").replace(
        "    labels: [funny, dull, odd]", "    labels: [funny, dull, odd]\n    metrics: [accuracy, said_first_class]"
    ).replace("      How does this meme read?",
              "      How does this meme read?\n      Answer format: one of: {{ labels }}.")
    env = _installed(tmp, "fifth", own)
    (tmp / "site" / "fifthbench" / "hooks.py").write_text(OWN_KIT)
    _jsonl(tmp / "d" / "dev.jsonl", [{"id": i, "img": picture(tmp / "d" / f"{i}.png", i), "text": f"fifth {i}",
                                      "label": ["funny", "dull", "odd"][i % 3]} for i in range(15)])
    cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), env=env)
    [run] = json.loads(cli(tmp, "runs", "--json", env=env).stdout)
    report = json.loads(cli(tmp, "report", run["name"], "--format", "json", env=env).stdout)
    answers = [json.loads(line) for line in
               cli(tmp, "export", run["name"], "--table", "answers", "--format", "jsonl", env=env).stdout.splitlines()]
    found = truths(server, "tsrv")
    said = [meant(found, a["prompt"])["answer"] for a in answers]
    assert [a["read"] for a in answers] == said  # read by the module's own kind
    task = report["tasks"]["funny"]
    assert task["said_first_class"]["value"] == pytest.approx(np.mean([s == "funny" for s in said]), rel=1e-9)
    assert task["said_first_class"]["n"] == 15
    assert shipped == {p: p.stat().st_mtime_ns for p in shipped}


def test_a_yaml_naming_an_unregistered_metric_is_refused_before_any_call(world):
    tmp, _ = world
    env = _installed(tmp, "fifth", FIFTH.replace("    labels: [funny, dull, odd]",
                                                 "    labels: [funny, dull, odd]\n    metrics: [accuracy, nope]"))
    _jsonl(tmp / "d" / "dev.jsonl", [{"id": 1, "img": picture(tmp / "d" / "1.png", 1), "text": "t", "label": "odd"}])
    done = cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), env=env, check=False)
    assert done.returncode == 2 and "unknown metric 'nope'" in done.stdout + done.stderr


def test_memelens_config_names_parse_as_the_hub_spells_them():
    from memegauge.data.sets.memelens.entry import config_groups

    assert config_groups("Misogyny_hi_en__MIMIC2024") == ("Misogyny", "hi-en", "MIMIC2024")
    assert config_groups("Harmful_Covid_en__HarMeme") == ("Harmful_Covid", "en", "HarMeme")
    assert config_groups("sentiment_category_en__MET_Meme") == ("sentiment_category", "en", "MET_Meme")
    assert config_groups("Hateful_ar__Prop2Hate-Meme") == ("Hateful", "ar", "Prop2Hate-Meme")
    assert config_groups("Hateful_en_FHM") == ("Hateful", "en", "FHM")
    assert config_groups("propoganda_ar_ArMeme") == ("propoganda", "ar", "ArMeme")
    assert config_groups("abuse_bn__BanglaAbuseMeme") == ("abuse", "bn", "BanglaAbuseMeme")


def test_fhm_knows_mmfs_four_checksums_and_reads_a_copy_shipping_img_tar_gz(world):
    """mmf_cli/hm_convert.py: POSSIBLE_CHECKSUMS (four) and IMAGE_FILES = ["img.tar.gz", "img"]."""
    import tarfile

    from memegauge.data.catalogue import entry

    [source] = entry("fhm").sources
    assert sorted(source.known.values()) == sorted([
        "d8f1073f5fbf1b08a541cc2325fc8645619ab8ed768091fb1317d5c3a6653a77",
        "a424c003b7d4ea3f3b089168b5f5ea73b90a3ff043df4b8ff4d7ed87c51cb572",
        "6e609b8c230faff02426cf462f0c9528957b7884d68c60ebc26ff83846e5f80f",
        "c1363aae9649c79ae4abfdb151b56d3d170187db77757f3daa80856558ac367c"])
    tmp, server = world
    loose = tmp / "loose"
    gold = fhm(loose, 9)
    release = tmp / "tarred"
    release.mkdir()
    (release / "dev_seen.jsonl").write_text((loose / "dev_seen.jsonl").read_text())
    with tarfile.open(release / "img.tar.gz", "w:gz") as tar:
        tar.add(loose / "img", arcname="img")
    report, answers, _ = run_of(tmp, server, "fhm", "dev_seen", release)
    assert {a["item"]: a["gold"] for a in answers} == gold and report["tasks"]["hateful"]["asked"] == 9
    assert not (release / "img").exists()  # unpacked into the user cache, the copy left as given


def test_a_benchmark_named_as_a_shipped_one_is_refused(world):
    tmp, _ = world
    env = _installed(tmp, "fhm", FIFTH.replace("name: fifth", "name: fhm"))
    done = cli(tmp, "eval", "--list", env=env, check=False)
    assert done.returncode != 0 and "registered twice" in done.stdout + done.stderr


def test_every_shipped_benchmark_yaml_has_a_version_and_is_read_by_its_data_sets_one_reader():
    from memegauge.benchmarks.kit.family import BENCHMARKS_DIR
    from memegauge.benchmarks.kit.spec import load_spec
    from memegauge.data.catalogue import entry
    from memegauge.methods import method

    folders = sorted(p for p in BENCHMARKS_DIR.iterdir() if (p / "benchmark.yaml").is_file())
    assert [p.name for p in folders] == ["fhm", "goat_bench", "harmeme", "ii_bench", "mami", "memelens"]
    for folder in folders:
        spec = load_spec(folder)
        assert "version:" in (folder / "benchmark.yaml").read_text() and spec.version
        assert spec.read.rows == "catalogue" and entry(spec.data).rows is not None
        assert not (folder / "hooks.py").exists()  # nothing of the release parsed twice
    versions = {spec.name: spec.version for spec in map(load_spec, folders)}
    assert {name: method(name).version for name in versions} == versions  # stored with each run


def test_every_published_figure_quotes_its_source_with_its_address():
    """A figure set beside ours is one read in a source at hand: its `source` gives the address and quotes the
    passage holding the value (as a percentage), so a reader can check it; figures typed from memory are gone."""
    import re

    from memegauge.benchmarks.kit.family import benchmarks

    shown = [(spec.name, p) for spec in benchmarks() for p in spec.published]
    assert shown  # FHM's abstract figures
    for name, figure in shown:
        assert re.search(r"https://\S+", figure.source), (name, figure)
        quoted = re.findall(r'"([^"]+)"', figure.source)  # a percentage, a score (80.9) or a fraction (0.834, .787)
        written = {float(n) for q in quoted for n in re.findall(r"(?<![\d.])(\d*\.\d+|\d+)(?![\d.])", q)}
        assert figure.value in written or round(figure.value * 100, 6) in {round(n, 6) for n in written}, \
            (name, figure)
    # FHM's AUROCs and dev_seen figures once typed from memory stay out (MAMI's 0.834 is back, read in SRCB's abstract)
    assert not {round(p.value, 4) for _, p in shown} & {0.8265, 0.7141, 0.6506, 0.7397}


def test_unreadable_answers_are_counted_and_never_a_class():
    from memegauge.benchmarks.kit.answers import read_answer
    from memegauge.benchmarks.kit.spec import Task

    label = Task(answer="label", gold="g", labels=["not harmful", "harmful"], prompt="p", prompt_source="s")
    assert read_answer(label, "Not harmful.") == "not harmful" and read_answer(label, "harmful") == "harmful"
    assert read_answer(label, "It could be harmful or not harmful.") is None
    yes_no = Task(answer="yes_no", gold="g", prompt="p", prompt_source="s")
    assert read_answer(yes_no, "**Yes**, it is.") == "yes" and read_answer(yes_no, "I cannot tell.") is None
    several = Task(answer="labels", gold="g", labels=["a", "b", "c"], prompt="p", prompt_source="s")
    assert read_answer(several, "c, a") == ["a", "c"] and read_answer(several, "None.") == []
    assert read_answer(several, "a, z") is None
    letter = Task(answer="letter", gold="g", prompt="p", prompt_source="s")
    assert read_answer(letter, "(B) the second", 4) == "B" and read_answer(letter, "F", 4) is None


@pytest.mark.slow  # six benchmarks in one command: tens of seconds
def test_the_suite_runs_every_installed_benchmark_into_one_leaderboard(world):
    tmp, _ = world
    data = tmp / "data"
    fhm(data / "fhm", 12)
    for name, make in (("harmeme", harmeme), ("mami", mami), ("goat-bench", goat), ("ii-bench", ii_bench),
                       ("memelens", memelens)):
        make(data / name)
    from helpers.memeqa_data import make_dataset  # MemeQA is in the suite too: its folder as `--data` reads it

    make_dataset(tmp / "mq", memes=("m1", "m2"))
    shutil.copytree(tmp / "mq" / "data", data / "memeqa")
    shutil.copytree(tmp / "mq" / "images", data / "memeqa" / "images")
    split = {"harmeme": "harm-c/test", "mami": "test", "goat-bench": "test", "ii-bench": "test", "memelens": "test",
             "memeqa": "none-minus/dev"}
    done = cli(tmp, "eval", "--suite", "memes", "--model", "tsrv", "--data", str(data), "--out", str(tmp / "s.html"),
               check=False)
    # fhm's default split is dev_seen; the others' defaults are as in `split`
    assert done.returncode == 0, done.stderr
    runs = json.loads(cli(tmp, "runs", "--json").stdout)
    assert sorted(r["method"] for r in runs) == sorted(["fhm", *split])
    page = (tmp / "s.html").read_text()
    for name in ["fhm", *split]:  # a table per benchmark and split
        assert f"<h2>{name} · " in page
    assert "macro_f1" in page and "accuracy" in page


def test_a_benchmark_runs_from_the_python_api(world):
    import memegauge

    tmp, server = world
    fhm(tmp / "fhm", 8)
    result = memegauge.run("fhm", {"model": "tsrv", "data": str(tmp / "fhm")}, store=tmp / "api.db",
                           models=tmp / "models.yaml")
    assert result.status == "done" and result.report["tasks"]["hateful"]["answered"] == 8
    assert {"answers", "figures"} <= set(result.tables())


def test_without_data_the_catalogue_is_asked_and_its_absence_says_to_give_data(world):
    tmp, _ = world
    done = cli(tmp, "eval", "fhm", "--model", "tsrv", check=False,
               env={**os.environ, "MEMEGAUGE_DATA_DIR": str(tmp / "no-data")})  # an empty catalogue, if any
    if importlib.util.find_spec("memegauge.data") is None:  # this branch: no catalogue yet
        assert done.returncode == 2 and "--data DIR" in done.stdout + done.stderr
    else:  # the catalogue: fhm is not installed in this test's data folder
        assert done.returncode == 2
    bad = cli(tmp, "eval", "fhm", "--model", "tsrv", "--split", "nope", "--data", str(tmp), check=False)
    assert bad.returncode == 2 and "use one of: train, dev_seen" in bad.stdout + bad.stderr


# ---- the installed copy: `memegauge data import`, then `eval` by name ------------------------------------


def fhm_release(root: Path, n: int = 30) -> dict[str, str]:
    """A copy in FHM's release layout (docs/data.md): img/*.png and the five split files of phase 2."""
    gold = fhm(root, n)  # dev_seen.jsonl and img/
    for split, first in (("train", 20000), ("dev_unseen", 30000), ("test_seen", 40000), ("test_unseen", 50000)):
        _jsonl(root / f"{split}.jsonl", [{"id": first + i, "img": f"img/{first + i}.png", "label": i % 2,
                                          "text": f"{split} meme {i}"} for i in range(4)])
        for i in range(4):
            picture(root / "img" / f"{first + i}.png", i)
    return gold


def test_fhm_imported_by_memegauge_data_is_read_by_name_and_its_leaderboard_is_the_ground_truth(world):
    tmp, server = world
    env = {**os.environ, "MEMEGAUGE_DATA_DIR": str(tmp / "data-dir")}
    gold = fhm_release(tmp / "hateful_memes")
    cli(tmp, "data", "import", "fhm", str(tmp / "hateful_memes"), env=env)
    cli(tmp, "eval", "fhm", "--split", "dev_seen", "--model", "tsrv", env=env)  # no --data: the installed copy
    [run] = json.loads(cli(tmp, "runs", "--json", env=env).stdout)
    answers = [json.loads(line) for line in cli(tmp, "export", run["name"], "--table", "answers", "--format",
                                                "jsonl", env=env).stdout.splitlines()]
    assert {a["item"]: a["gold"] for a in answers} == gold
    want = expected(answers, truths(server, "tsrv"), ["yes", "no"])
    [line] = list(csv.DictReader(cli(tmp, "report", run["name"], "--format", "csv", env=env).stdout.splitlines()))
    assert line["group"] == "overall (hateful)" and line["model"] == "tsrv"
    assert float(line["accuracy"]) == pytest.approx(want["accuracy"], rel=1e-9)  # the CSV keeps full precision
    assert float(line["macro_f1"]) == pytest.approx(want["macro_f1"], rel=1e-9)
    assert int(line["accuracy_n"]) == int(line["macro_f1_n"]) == want["n"] == 30
    for figure in ("accuracy", "macro_f1"):
        assert float(line[f"{figure}_ci95_lo"]) <= float(line[figure]) <= float(line[f"{figure}_ci95_hi"])
    assert float(line["unreadable"]) == pytest.approx(want["unreadable"] / 30, rel=1e-9)


def test_the_suite_skips_a_benchmark_whose_data_is_not_installed_and_shows_the_others(world):
    """With only fhm and mami installed, `eval --suite memes` runs those two, names each skipped benchmark with the
    line that installs it, shows the leaderboard and exits 4 (docs/benchmarks.md)."""
    tmp, _ = world
    fhm_release(tmp / "hateful_memes", 6)
    mami(tmp / "mami-release", 6)
    cli(tmp, "data", "import", "fhm", str(tmp / "hateful_memes"))
    cli(tmp, "data", "import", "mami", str(tmp / "mami-release"))
    done = cli(tmp, "eval", "--suite", "memes", "--model", "tsrv", check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 4, said
    for name in ("goat-bench", "ii-bench", "memelens"):  # one pasteable command per line
        assert f"skipped: {name}: data set '{name}' is not installed; install with:\n    memegauge data get {name}\n" \
            in said
    assert "skipped: harmeme: data set 'harmeme' is not installed" in said
    # the leaderboard: a table per benchmark and split, a line per task and metric
    assert "fhm · dev_seen" in done.stdout and "mami · test" in done.stdout
    rows = {(cells[1].strip(), cells[2].strip()) for cells in (line.split("│") for line in done.stdout.splitlines()
                                                               if line.count("│") > 3)}
    assert ("hateful", "accuracy") in rows and ("misogynous", "accuracy") in rows
    assert "skipped: memeqa: data set 'memeqa' is not installed; install with:\n    memegauge data get memeqa" \
        in done.stdout  # MemeQA is a benchmark of the suite too
    assert sorted(r["method"] for r in json.loads(cli(tmp, "runs", "--json").stdout)) == ["fhm", "mami"]


def test_benchmarks_named_without_their_data_are_refused_before_any_run(world):
    tmp, _ = world
    fhm_release(tmp / "hateful_memes", 6)
    cli(tmp, "data", "import", "fhm", str(tmp / "hateful_memes"))
    done = cli(tmp, "eval", "fhm", "goat-bench", "ii-bench", "--model", "tsrv", check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "not installed: goat-bench: data set 'goat-bench' is not installed; install with:\n" \
           "    memegauge data get goat-bench\n" in said
    assert "not installed: ii-bench: data set 'ii-bench' is not installed; install with:\n" \
           "    memegauge data get ii-bench\n" in said
    assert "fhm:" not in said.split("error:")[0].replace("not installed: fhm", "")  # fhm is installed: no line
    assert not (tmp / "s.db").exists()  # no run started


def test_mami_imported_by_memegauge_data_is_read_by_name(world):
    tmp, server = world
    split = mami(tmp / "mami-release")
    cli(tmp, "data", "import", "mami", str(tmp / "mami-release"))
    cli(tmp, "eval", "mami", "--split", split, "--model", "tsrv")  # no --data: the installed copy
    [run] = json.loads(cli(tmp, "runs", "--json").stdout)
    report = json.loads(cli(tmp, "report", run["name"], "--format", "json").stdout)
    answers = [json.loads(line) for line in
               cli(tmp, "export", run["name"], "--table", "answers", "--format", "jsonl").stdout.splitlines()]
    mine = [a for a in answers if a["task"] == "misogynous"]
    want = expected(mine, truths(server, "tsrv"), ["yes", "no"])
    assert report["tasks"]["misogynous"]["answered"] == want["n"] == 15  # 16 rows, one malformed label line
    assert report["tasks"]["misogynous"]["left_out"] == {"malformed line in test_labels.txt": 1}
    assert report["tasks"]["misogynous"]["accuracy"]["value"] == pytest.approx(want["accuracy"], rel=1e-9)


def test_the_answers_parquet_types_classes_as_list_of_strings_for_yes_no_and_multi_class_runs(world):
    """`export RUN --table answers --format parquet`: `classes` is list<string> whether the benchmark's items
    carry none (FHM, yes/no: every row []) or their own (MemeLens), so the files of two runs concatenate
    (it was list<null> for a yes/no run; issue 49)."""
    tmp, server = world
    fhm(tmp / "fhm", 6)
    cli(tmp, "eval", "fhm", "--model", "tsrv", "--split", "dev_seen", "--data", str(tmp / "fhm"))
    split = memelens(tmp / "memelens")
    cli(tmp, "eval", "memelens", "--model", "tsrv", "--split", split, "--data", str(tmp / "memelens"))
    tables = {}
    for run in json.loads(cli(tmp, "runs", "--json").stdout):
        out = tmp / f"{run['method']}.parquet"
        cli(tmp, "export", run["name"], "--table", "answers", "--format", "parquet", "--out", str(out))
        tables[run["method"]] = pyarrow_parquet.read_table(out)
    kinds = {m: t.schema.field("classes").type for m, t in tables.items()}
    assert set(kinds) == {"fhm", "memelens"}
    assert all(pyarrow.types.is_list(k) and k.value_type == pyarrow.string() for k in kinds.values()), kinds
    assert set(map(tuple, tables["fhm"].column("classes").to_pylist())) == {()}
    assert any(tables["memelens"].column("classes").to_pylist())
    joined = pyarrow.concat_tables([tables["fhm"].select(["item", "classes"]),
                                    tables["memelens"].select(["item", "classes"])])
    assert joined.num_rows == sum(t.num_rows for t in tables.values())


def test_a_split_whose_file_is_missing_names_the_splits_the_copy_holds(world):
    """`eval harmeme --split harm-c/train` on a copy holding Harm-P only: one message naming the missing file,
    the benchmark's splits and those this copy holds (it said "cannot read the file (No such file or directory)",
    fix "check the path"; issue 49)."""
    tmp, _ = world
    harm_p(tmp / "harm")
    done = cli(tmp, "eval", "harmeme", "--model", "tsrv", "--split", "harm-c/train", "--data", str(tmp / "harm"),
               check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "the release's file for this split is not in the copy" in said and "Harm-C/train.jsonl" in said
    assert "harmeme's splits are harm-c/test, harm-c/val, harm-c/train, harm-p/test, harm-p/val, harm-p/train" in said
    assert "holds harm-p/train" in said and "No such file" not in said


def test_docs_say_which_runs_have_which_export_tables_for_every_benchmark_eval_offers():
    """docs/benchmarks.md's table of export tables: each `eval NAME` it names has exactly the tables it lists
    (as `memegauge export` offers them), and it names every benchmark `memegauge eval --list` offers (a MemeQA
    run has `questions`, not `answers`; issue 49)."""
    from memegauge.export import tables_of

    text = (Path(__file__).parent.parent / "docs" / "benchmarks.md").read_text()
    block = text[text.index("| a run of | its tables |"):]
    said = {}
    for line in block.splitlines()[2:]:
        if not line.strip().startswith("|"):
            break
        runs, tables = line.strip().strip("|").split("|")
        for name in re.findall(r"`eval ([\w-]+)`", runs):
            said[name] = set(re.findall(r"`(\w+)`", tables))
    offered = [line.split(":")[0] for line in subprocess.run([*CLI, "eval", "--list"], capture_output=True,
                                                              text=True, timeout=120).stdout.splitlines()
               if line and not line.startswith(" ")]
    assert sorted(said) == sorted(offered) and "memeqa" in said
    assert {name: set(tables_of(name)) for name in said} == said
    assert "answers" not in said["memeqa"]
