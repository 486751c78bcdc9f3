"""The progress ETA of a ~2-minute run, read at its midpoint, against the time the run really had left.

    python bench/progress_eta.py [--method memeqa|arena] [--latency-ms 1000] [--memes 40]

The run is the `memegauge` CLI as a detached job would run it (stderr a file, so plain progress lines
every `--progress-every 2` seconds), against the local test server in its own process with a fixed
latency per request. From the lines: the first at or past half of the calls gives `ETA at midpoint`;
the run's own last line (written as it ends) gives the truth. Prints both and their ratio (1.00 = the
ETA was exact; the issue asks for within 30 %, i.e. 0.70 – 1.30).

memeqa: `qa eval` of 11 question types × `--memes` memes (33 questions repeated, each copy worded
apart so none is a cache hit) at max_concurrency 4 (one stage, every count exact).
arena: 12 memes, three targets and two judges at max_concurrency 4: six stages of different widths,
the later counts upper bounds until the answers are in.

Measured (2 shared cores): memeqa, 429 calls at 1000 ms: ETA 53 s vs 54 s left (0.98);
arena, 672 calls at 1500 ms (`--method arena --latency-ms 1500`): 64 s vs 61 s (1.05).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from memegauge.testing.server import spawn_server  # noqa: E402
from helpers.memeqa_data import qa_dataset  # noqa: E402
from helpers.runs import QA_MODEL, world  # noqa: E402

# the ETA read is the likely one: `ETA 1m05s`, `ETA ~1m05s (≤ 3m10s)`, or `ETA ≤ 3m10s` (no expectation)
LINE = re.compile(r"^(\S+Z) progress: (\d+)/≤?(\d+) calls .* ETA (?:≤ |~)?(\S+?)(?: \(≤ \S+\))?$")


def seconds(clock: str) -> float | None:
    """`1m05s` / `1h02m` → seconds; `?` → None."""
    match = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", clock)
    if clock == "?" or not match:
        return None
    hours, minutes, secs = (int(g or 0) for g in match.groups())
    return 3600 * hours + 60 * minutes + secs


def command(method: str, root: Path, base_url: str, memes: int) -> list[str]:
    w = world(root, base_url)
    w.models.write_text(w.models.read_text().replace("max_concurrency: 8", "max_concurrency: 4"))
    base = [sys.executable, "-m", "memegauge.cli", "--store", str(w.store), "--models", str(w.models),
            "--progress-every", "2"]
    if method == "arena":
        w.arena.write_text(w.arena.read_text().replace("limit: 3", "limit: 12"))
        return [*base, "arena", "-c", str(w.arena)]
    if method == "adammeme":  # 12 memes, two targets, refinement: counts bounded until the answers are in
        return [*base, "adam", "-c", str(w.adam)]
    data, images = qa_dataset(root / "qa-big", ("m0", "m1", "m2"))
    split = data / "none-minus" / "dev.json"
    items = json.loads(split.read_text())  # 33 questions, repeated under new ids: `memes` / 3 times as many
    split.write_text(json.dumps([{**q, "id": f"{q['id']}#{k}", "question": f"{q['question']} (copy {k})"}
                                for k in range(max(memes // 3, 1)) for q in items]))
    return [*base, "qa", "eval", "--data", str(data), "--images", str(images), "--version", "none-minus",
            "--split", "dev", "--model", QA_MODEL]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--method", choices=("memeqa", "arena", "adammeme"), default="memeqa")
    parser.add_argument("--latency-ms", type=float, default=1000)
    parser.add_argument("--memes", type=int, default=40)
    args = parser.parse_args()
    server, base_url = spawn_server(args.latency_ms)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "nohup.out"
            with open(log, "w") as handle:  # as `nohup memegauge … &` would: stderr is a file
                code = subprocess.call(command(args.method, Path(tmp), base_url, args.memes), stdout=subprocess.DEVNULL,
                                       stderr=handle, stdin=subprocess.DEVNULL)
            text = log.read_text()
    finally:
        server.terminate()
    if code:
        sys.exit(f"the run failed ({code}):\n{text[-2000:]}")
    lines = [(datetime.fromisoformat(m[1].replace("Z", "+00:00")), int(m[2]), int(m[3]), seconds(m[4]))
             for m in map(LINE.match, text.splitlines()) if m]
    end, calls = lines[-1][0], lines[-1][1]
    # the midpoint of the calls the run made (a bounded total shown then may be far above them)
    when, done, total, eta = next(line for line in lines if line[1] * 2 >= calls)
    truth = (end - when).total_seconds()
    start = lines[0][0]
    print(f"{args.method}: {len(lines)} progress lines, run {(end - start).total_seconds():.0f} s from the "
          f"first line, {lines[-1][1]} calls, server latency {args.latency_ms:g} ms")
    print(f"midpoint line: {done}/{total} calls at +{(when - start).total_seconds():.0f} s")
    print(f"ETA at midpoint {eta:.0f} s; actual remaining {truth:.0f} s; ratio {eta / truth:.2f}")


if __name__ == "__main__":
    main()
