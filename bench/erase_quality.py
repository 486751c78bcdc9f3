"""Erasure and OCR quality on real memes, measured by two independent OCR engines.

    python bench/erase_quality.py [--images DIR] [--texts memes.jsonl] [--limit N] [--out DIR]

Defaults to the 190 SemEval-2021 Task 6 dev memes in ../shared/data/semeval2021-task6 (gold text in its
memes.jsonl). For each OCR engine (tesseract, the previous erasure's; RapidOCR PP-OCRv4, the current
one's) it prints:

- recall: the share of gold words (3+ letters) the engine reads on the original picture;
- for each erasure (tesseract word boxes → letter masks, the previous method; RapidOCR text lines →
  grown masks, two passes, the current one) the residual: of the gold words an engine could read
  before erasure, the share it can still read after, by each engine;
- the share of the picture painted, the share of pixels outside the painted mask that changed (0 by
  construction: inpainting only writes masked pixels), and seconds per image for the erasure.

Words are matched on letters and digits only (engines drop spaces between words, e.g.
"IfAmyConeyBarrett"), so a gold word is read when it occurs in the engine's text with the
separators removed. Per-image rows go to OUT/rows.jsonl; OUT/contact.png shows 12 memes before / after.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from memegauge.images import erase
from memegauge.testing import ocr_check

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "semeval2021-task6"
ENGINES = ("tesseract", "rapidocr")
ERASURES = ("tesseract-boxes", "rapidocr-lines")


def gold_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower().replace("'", "")) if len(w) >= 3}


def squeeze(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def read(engine: str, rgb: np.ndarray) -> str:
    if engine == "tesseract":
        return " ".join(ocr_check.ocr_words(rgb))
    return " ".join(text for _, text, _ in erase.read_text(rgb))


def erase_with(method: str, rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(erased picture, painted mask) by the previous or the current method."""
    if method == "tesseract-boxes":
        mask = erase.build_mask(rgb, ocr_check.find_text_boxes(rgb))
        return erase.inpaint(rgb, mask), mask
    out, mask, _ = erase.erase_regions(rgb)
    return out, mask


def measure(path: Path, text: str) -> dict:
    rgb = erase.load_rgb(path)
    words = gold_words(text)
    row: dict = {"image": path.name, "gold_words": len(words)}
    before = {e: squeeze(read(e, rgb)) for e in ENGINES}
    for e in ENGINES:
        row[f"read_before.{e}"] = sorted(w for w in words if w in before[e])
    for method in ERASURES:
        started = time.perf_counter()
        out, mask = erase_with(method, rgb)
        row[f"{method}.s"] = time.perf_counter() - started
        outside = mask == 0
        row[f"{method}.painted"] = float((~outside).mean())
        row[f"{method}.changed_outside"] = float(np.any(out != rgb, axis=2)[outside].mean()) if outside.any() else 0.0
        for e in ENGINES:
            after = squeeze(read(e, out))
            row[f"{method}.left.{e}"] = sorted(w for w in row[f"read_before.{e}"] if w in after)
        row[f"_{method}.image"] = out
    return row


def summary(rows: list[dict]) -> list[str]:
    n = len(rows)
    gold = sum(r["gold_words"] for r in rows)
    lines = [f"{n} images, {gold} gold words (3+ letters)", "",
             "OCR recall on the originals (share of gold words read):"]
    for e in ENGINES:
        lines.append(f"  {e:10} {sum(len(r[f'read_before.{e}']) for r in rows) / gold:7.1%}")
    lines += ["", "after erasure: share of the words an engine read before that it still reads",
              f"  {'erasure':16} {'by tesseract':>13} {'by rapidocr':>12} {'painted':>8} "
              f"{'changed outside':>16} {'s/image':>8}"]
    for method in ERASURES:
        left = []
        for e in ENGINES:
            readable = sum(len(r[f"read_before.{e}"]) for r in rows)
            still = sum(len(r[f"{method}.left.{e}"]) for r in rows)
            left.append(f"{still / readable:7.1%} ({still}/{readable})" if readable else "-")
        painted = np.mean([r[f"{method}.painted"] for r in rows])
        changed = np.mean([r[f"{method}.changed_outside"] for r in rows])
        seconds = np.mean([r[f"{method}.s"] for r in rows])
        lines.append(f"  {method:16} {left[0]:>13} {left[1]:>12} {painted:8.1%} {changed:16.4%} {seconds:8.2f}")
    return lines


def contact_sheet(rows: list[dict], images: Path, out: Path, count: int = 12, side: int = 256) -> None:
    """Before | previous | current, one meme per row."""
    chosen = rows[:count]
    sheet = Image.new("RGB", (3 * side + 40, len(chosen) * (side + 20) + 20), "white")
    draw = ImageDraw.Draw(sheet)
    for x, title in zip((10, side + 20, 2 * side + 30), ("original", *ERASURES), strict=True):
        draw.text((x, 4), title, fill="black")
    for i, row in enumerate(chosen):
        pictures = [Image.open(images / row["image"]).convert("RGB"),
                    *(Image.fromarray(row[f"_{m}.image"]) for m in ERASURES)]
        for j, picture in enumerate(pictures):
            picture.thumbnail((side, side))
            sheet.paste(picture, (10 + j * (side + 10), 20 + i * (side + 20)))
    sheet.save(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=Path, default=SHARED / "images")
    parser.add_argument("--texts", type=Path, default=SHARED / "memes.jsonl")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("bench-out/erase"))
    args = parser.parse_args()
    texts = {json.loads(line)["image"]: json.loads(line)["text"]
             for line in args.texts.read_text(encoding="utf-8").splitlines() if line.strip()}
    names = sorted(texts)[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with open(args.out / "rows.jsonl", "w", encoding="utf-8") as log:
        for i, name in enumerate(names, start=1):
            row = measure(args.images / name, texts[name])
            rows.append(row)
            log.write(json.dumps({k: v for k, v in row.items() if not k.startswith("_")}) + "\n")
            log.flush()
            if len(rows) > 12:  # keep the pictures of the contact sheet's memes only
                for m in ERASURES:
                    row.pop(f"_{m}.image", None)
            print(f"{i}/{len(names)} {name}", flush=True)
    contact_sheet(rows, args.images, args.out / "contact.png")
    print("\n".join(summary(rows)))


if __name__ == "__main__":
    main()
