"""The house: files and lines per folder of the package (issue 23's "before and after").

    python bench/house.py [PACKAGE_DIR]     # default: memegauge/ of this checkout

Counts every .py, .js, .j2, .css and .html file (source; no data, no pictures) per folder, and the lines
of each kind, so a move between folders shows as lines leaving one row and arriving in another.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

KINDS = (".py", ".js", ".j2", ".css", ".html")


def house(package: Path) -> dict[str, Counter]:
    rows: dict[str, Counter] = {}
    for path in sorted(package.rglob("*")):
        if path.suffix not in KINDS or "__pycache__" in path.parts or not path.is_file():
            continue
        folder = str(path.parent.relative_to(package.parent))
        row = rows.setdefault(folder, Counter())
        row["files"] += 1
        row[path.suffix] += len(path.read_text(encoding="utf-8").splitlines())
    return rows


def main() -> None:
    package = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "memegauge"
    rows = house(package)
    print(f"{'folder':34} {'files':>5} " + " ".join(f"{k:>6}" for k in KINDS) + f" {'lines':>6}")
    total = Counter()
    for folder, row in rows.items():
        total.update(row)
        print(f"{folder:34} {row['files']:5} " + " ".join(f"{row[k]:6}" for k in KINDS)
              + f" {sum(row[k] for k in KINDS):6}")
    print(f"{'total':34} {total['files']:5} " + " ".join(f"{total[k]:6}" for k in KINDS)
          + f" {sum(total[k] for k in KINDS):6}")


if __name__ == "__main__":
    main()
