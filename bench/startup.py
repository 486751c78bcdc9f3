"""Start-up cost of the command line: CPU seconds of `memegauge --help`, `--version`, `eval --list` and
`data list`, each beside the floor, `python -c "import typer, rich"`, measured side by side in one run (issue 44:
"a CLI that starts in a blink").

    python bench/startup.py [--repeat 7]          # the table: median CPU of each, and its ratio to the floor
    python bench/startup.py --before DIR          # each command also run from DIR, a checkout of the code before
                                                  # (with its installed metadata, `*.dist-info`, copied into DIR),
                                                  # in the same rounds: before and after side by side
    python bench/startup.py --importtime="eval --list"  # `python -X importtime` of one command: its 10
                                                        # costliest imports, cumulative and self (with
                                                        # --before DIR: DIR's first, then this checkout's)

CPU is the child's user + system time (`resource.getrusage(RUSAGE_CHILDREN)`), whole process, so a loaded
machine slows the floor and the commands alike; the rounds interleave them (floor, each command, floor, …)
and each figure is the median of `--repeat` rounds. Wall time is shown too, as it varies with the machine's
load. The figures are ratios: the issue's goals are `--help` ≤ 0.3 s and `--version` ≤ 0.15 s of CPU on the
reference machine, where the floor took about 0.10 s.
"""

from __future__ import annotations

import argparse
import os
import shlex
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = ("typer+rich floor", [sys.executable, "-c", "import typer, rich"])
COMMANDS = (("--help",), ("--version",), ("eval", "--list"), ("data", "list"))


def memegauge() -> list[str]:
    """The installed `memegauge` script beside this interpreter (what users run), else `-m memegauge`."""
    script = Path(sys.executable).with_name("memegauge")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "memegauge"]


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `argv`, output discarded; a failure stops the bench."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def table(repeat: int, before: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # a fresh data folder and store: `data list` reads no one's installed copies
        env = {**os.environ, "MEMEGAUGE_DATA_DIR": str(Path(tmp) / "data"),
               "MEMEGAUGE_STORE": str(Path(tmp) / "s.db")}
        old_env = {**env, "PYTHONPATH": str(before)} if before else env  # DIR's package and metadata first
        rows = [(FLOOR[0], FLOOR[1], env)]
        for c in COMMANDS:
            if before:
                rows.append((f"before: memegauge {' '.join(c)}", [*memegauge(), *c], old_env))
            rows.append((f"memegauge {' '.join(c)}", [*memegauge(), *c], env))
        for _, argv, environment in rows:  # warm the file cache and the bytecode once
            measure(argv, environment)
        cpu: dict[str, list[float]] = {name: [] for name, _, _ in rows}
        wall: dict[str, list[float]] = {name: [] for name, _, _ in rows}
        for _ in range(repeat):
            for name, argv, environment in rows:
                c, w = measure(argv, environment)
                cpu[name].append(c)
                wall[name].append(w)
    floor = statistics.median(cpu[FLOOR[0]])
    print(f"start-up, median of {repeat} interleaved rounds ({sys.executable})")
    print(f"{'command':36} {'CPU s':>7} {'× floor':>8} {'wall s':>7}")
    for name, _, _ in rows:
        median = statistics.median(cpu[name])
        print(f"{name:36} {median:7.3f} {median / floor:8.2f} {statistics.median(wall[name]):7.3f}")


def importtime(args: list[str], top: int = 10, before: Path | None = None) -> None:
    """The `top` costliest imports of one command, by cumulative microseconds (`-X importtime`); with `before`, the
    same command from that checkout first."""
    for label, path in ((f"before ({before})", before), ("after", None)) if before else (("", None),):
        env = {**os.environ, "PYTHONPATH": str(path)} if path else dict(os.environ)
        argv = [sys.executable, "-X", "importtime", "-c",
                "import sys; from memegauge.cli import main; sys.exit(main(sys.argv[1:]))", *args]
        with tempfile.TemporaryDirectory() as cwd:  # not the checkout: its folder would shadow `before`'s package
            done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=cwd)
        rows = []
        for line in done.stderr.splitlines():
            if line.startswith("import time:") and "|" in line and "cumulative" not in line:
                own, cumulative, name = line.removeprefix("import time:").split("|", 2)
                rows.append((int(cumulative), int(own), name.rstrip()))
        print(f"{label + ': ' if label else ''}python -X importtime memegauge {' '.join(args)}: {len(rows)} modules, "
              f"{sum(r[1] for r in rows) / 1e6:.3f} s of imports")
        print(f"  top {top} by cumulative µs{'':22}top {top} by self µs")
        by_self = sorted(rows, key=lambda r: r[1], reverse=True)[:top]
        for (cumulative, _, name), (_, own, own_name) in zip(sorted(rows, reverse=True)[:top], by_self, strict=False):
            print(f"  {cumulative:9d} {name[:38]:38}  {own:9d} {own_name.strip()[:38]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--before", type=Path, metavar="DIR", help="a checkout of the code before, run beside")
    parser.add_argument("--importtime", metavar="ARGS", help='one command\'s arguments, e.g. --importtime="--help"')
    options = parser.parse_args()
    if options.importtime is not None:
        importtime(shlex.split(options.importtime) or ["--help"], before=options.before)
    else:
        table(options.repeat, options.before)


if __name__ == "__main__":
    main()
