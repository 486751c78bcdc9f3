"""CPU per call: `memegauge qa eval` against a bare `openai`-client loop sending the same requests.

    python bench/cpu_per_call.py [--rounds 3] [--concurrency 64] [--latency-ms 100]
                                 [--data DIR --images DIR [--texts FILE] [--split test]]
                                 [--bare-pictures once|each] [--profile DIR]

Both sides ask every MemeQA (None−) question of one split with its picture, 64 in flight, of the local test
server (its own process: its CPU is no one's here). Each side is a process of its own, timed whole (user +
system CPU seconds from `os.wait4`, start-up and imports included):

* `qa eval`: ``python -m memegauge --store S --models M qa eval --data … --split … --model bench-vlm``,
  a fresh store each round (every call is made: none is replayed);
* the bare loop: ``openai.AsyncOpenAI().chat.completions.create`` per question under an
  ``asyncio.Semaphore(64)``, the same user message (the picture as a data URL, then the prompt text `qa
  eval` renders) and the same sampling parameters. ``--bare-pictures once`` (default) encodes each picture
  once per process, as a careful script would; ``each`` reads and encodes it again for every question, as
  the shortest script does.

The requests are the same: the test server's answer is a function of the messages (text and image URL), so
the bench checks that every question got the same answer from both sides and says so.

Data: the test split of the installed data set ``memeqa`` (1,887 questions, `memegauge data get memeqa`) when
it is there; else the dev split of the development copy (``$MEMEGAUGE_DEV_DATA``, default /work/shared/data:
``memeqa/`` and ``semeval2021-task6/images``; 1,973 questions on 190 pictures); or ``--data/--images``. The
first lines say which.

One line per round, then the same command for one question (start-up, imports, the report: the fixed cost)
and the CPU each further question adds on each side, their ratio; at the end that ratio's median and
``ratio: <qa eval CPU ÷ bare loop CPU>``, whole processes (the median over rounds). qa eval's thumbnails for
its report (one per picture, ~11 ms of CPU each) count among the further questions' cost: they are kept in the
user cache by the picture's sha256 (`memegauge.images.thumbnail`), and the bench gives `qa eval` a cache of its
own, empty at the start, so round 1 makes every thumbnail (cold) and later rounds read them back (warm), as a
user's second run of the same pictures does; the closing lines give both (``--cold``: every round cold). With
``--profile DIR`` each side runs once more under cProfile on its main thread's CPU clock (not timed; qa
eval's thumbnails, made in a thread, are not in it) and the 10 functions of most own time are printed for
each (profiles kept in DIR).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = "bench-vlm"

BARE = r"""
import asyncio, base64, json, sys
import openai

requests_path, url, concurrency, pictures_mode, out_path = sys.argv[1:6]
rows = [json.loads(line) for line in open(requests_path, encoding="utf-8")]
encoded = {}


def data_url(part):
    if pictures_mode == "once" and part["image"] in encoded:
        return encoded[part["image"]]
    with open(part["image"], "rb") as file:
        url = f"data:{part['mime']};base64,{base64.b64encode(file.read()).decode()}"
    encoded[part["image"]] = url
    return url


async def main():
    # the defaults but a longer connect timeout (5 s): on a busy 2-core machine 64 connections at once, under a
    # profiler, can take longer to be accepted
    client = openai.AsyncOpenAI(base_url=url, api_key="EMPTY", timeout=openai.Timeout(120.0))
    gate = asyncio.Semaphore(int(concurrency))

    async def ask(row):
        async with gate:
            content = [{"type": "image_url", "image_url": {"url": data_url(p)}} if "image" in p
                       else {"type": "text", "text": p["text"]} for p in row["parts"]]
            reply = await client.chat.completions.create(
                model=row["model"], messages=[{"role": "user", "content": content}], **row["params"])
            return reply.choices[0].message.content

    answers = await asyncio.gather(*(ask(row) for row in rows))
    await client.close()
    with open(out_path, "w", encoding="utf-8") as file:
        json.dump({row["id"]: answer for row, answer in zip(rows, answers)}, file)


asyncio.run(main())
"""


# cProfile on the main thread's CPU clock (its default is the wall clock, which on a busy machine charges a
# function for the time the process waited to run; the process clock would charge it for other threads'
# work, e.g. qa eval's thumbnails): `python -c PROFILED OUT module|script NAME ARGS…`
PROFILED = r"""
import cProfile, runpy, sys, time
out, kind, name, *rest = sys.argv[1:]
sys.argv = [name, *rest]
profile = cProfile.Profile(time.thread_time)
try:
    profile.runcall(runpy.run_module if kind == "module" else runpy.run_path, name, run_name="__main__")
except SystemExit as stop:
    if stop.code:
        raise
finally:
    profile.dump_stats(out)
"""


def dev_copy() -> Path:
    return Path(os.environ.get("MEMEGAUGE_DEV_DATA", "/work/shared/data"))


def pick_data(args: argparse.Namespace) -> tuple[Path, Path, Path | None, str, str]:
    """(questions folder, pictures folder, texts file, split, what it is) — the test split when installed."""
    if args.data:
        if not args.images:
            raise SystemExit("--data needs --images")
        split = args.split or ("test" if (args.data / "none-minus" / "test.json").is_file() else "dev")
        return args.data, args.images, args.texts, split, f"the {split} split of {args.data}"
    try:
        from memegauge.data.store import data_paths

        installed = data_paths("memeqa", "bench/cpu_per_call.py")
    except Exception:  # not installed (or no such catalogue entry in this version)
        installed = None
    if installed and (installed["data"] / "none-minus" / "test.json").is_file():
        return (installed["data"], installed["images"], installed.get("texts"), "test",
                "the test split of the installed data set memeqa")
    root = dev_copy()
    if not (root / "memeqa" / "none-minus" / "dev.json").is_file():
        raise SystemExit(f"no MemeQA data: install it (memegauge data get memeqa), set MEMEGAUGE_DEV_DATA, "
                         f"or pass --data/--images ({root} has no memeqa/none-minus/dev.json)")
    return (root / "memeqa", root / "semeval2021-task6" / "images", None, "dev",
            f"the dev split of the development copy {root} (MemeQA's test split is not installed)")


def write_requests(data: Path, images: Path, texts: Path | None, split: str, path: Path,
                   limit: int | None = None) -> tuple[int, int]:
    """The requests `qa eval [--limit N]` makes, one JSON line each, for the bare loop: (questions, pictures)."""
    from memegauge.memeqa.dataset import load_memes_for, load_questions, select_questions
    from memegauge.memeqa.evaluate import presentations, qa_request
    try:
        from memegauge.images.encoded import image_mime
    except ImportError:  # a MemeGauge from before it (measuring the code before this bench's issue)
        from memegauge.models.openai_backend import image_mime
    from memegauge.types import ImagePart

    questions = select_questions(load_questions(data, "none-minus", split), limit=limit, seed=0)
    memes = load_memes_for(questions, images, texts)
    mimes: dict[str, str] = {}
    with path.open("w", encoding="utf-8") as file:
        for question in questions:
            request = qa_request(question, presentations(question)[0], "none-minus", MODEL, memes[question.img])
            parts = []
            for part in request.messages[0].content:
                if isinstance(part, ImagePart):
                    image = str(part.path)
                    if image not in mimes:
                        mimes[image] = image_mime(part.path.read_bytes(), part.path)
                    parts.append({"image": image, "mime": mimes[image]})
                else:
                    parts.append({"text": part.text})
            params = {"temperature": request.params.temperature, "max_tokens": request.params.max_tokens,
                      "top_p": request.params.top_p}
            file.write(json.dumps({"id": question.id, "model": MODEL, "parts": parts, "params": params}) + "\n")
    return len(questions), len(mimes)


def timed(command: list[str], log: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run `command` as a child process; (its CPU seconds, user + system, and its wall seconds)."""
    started = time.perf_counter()
    with log.open("w") as out:
        # run from the scratch folder: `python -m` puts the working directory first on sys.path, and a
        # checkout there would shadow the memegauge under test ($PYTHONPATH's, or the installed one)
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=log.parent,
                                 env={**os.environ, **(env or {})})
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if child.returncode:
        raise SystemExit(f"{' '.join(command[:6])} … failed (exit {child.returncode}):\n{log.read_text()[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def qa_eval_command(store: Path, models: Path, data: Path, images: Path, texts: Path | None,
                    split: str, limit: int | None = None) -> list[str]:
    return ["-m", "memegauge", "--store", str(store), "--models", str(models), "qa", "eval",
            "--data", str(data), "--images", str(images), *(["--texts", str(texts)] if texts else []),
            "--split", split, "--version", "none-minus", "--model", MODEL, "--skip-preflight",
            *(["--limit", str(limit), "--seed", "0"] if limit else [])]


def qa_answers(store: Path) -> dict[str, str | None]:
    """{question id: raw answer} of the one run in `store` (read with sqlite3: any store version)."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT data FROM records WHERE kind='question'").fetchall()
    return {item["id"]: item["raw"] for item in (json.loads(data) for (data,) in rows)}


def top_functions(profile: Path, n: int = 10) -> str:
    import io
    import pstats

    text = io.StringIO()
    pstats.Stats(str(profile), stream=text).sort_stats("tottime").print_stats(n)
    lines = text.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    total = next((line.strip() for line in lines if "function calls" in line), "")
    return "\n".join([f"  {total}", *(f"  {line}" for line in lines[start:] if line.strip())])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (0: only --profile)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--data", type=Path, help="folder of none-minus/{split}.json")
    parser.add_argument("--images", type=Path, help="the pictures' folder")
    parser.add_argument("--texts", type=Path, help="{image, text} JSONL (default: beside the pictures)")
    parser.add_argument("--split", help="default: test when the folder has it, else dev")
    parser.add_argument("--bare-pictures", choices=("once", "each"), default="once",
                        help="the bare loop encodes each picture once per process (default) or per question")
    parser.add_argument("--profile", type=Path, help="also profile each side once (cProfile), kept in DIR")
    parser.add_argument("--cold", action="store_true", help="an empty thumbnail cache for every qa eval round")
    args = parser.parse_args()

    from memegauge.testing.server import spawn_server

    data, images, texts, split, what = pick_data(args)
    work = Path(tempfile.mkdtemp(prefix="cpu-per-call-"))
    requests = work / "requests.jsonl"
    questions, pictures = write_requests(data, images, texts, split, requests)
    one = work / "one.jsonl"  # the fixed cost: the same command for a single question
    write_requests(data, images, texts, split, one, limit=1)
    import memegauge

    print(f"data: {what}: {questions:,} None− questions on {pictures} pictures")
    print(f"memegauge from {Path(memegauge.__file__).parent}; {args.concurrency} in flight; server latency "
          f"{args.latency_ms:g} ms; bare loop encodes each picture {args.bare_pictures}", flush=True)
    server, url = spawn_server(args.latency_ms)
    try:
        models = work / "models.yaml"
        models.write_text(json.dumps({MODEL: {"backend": "openai", "model": MODEL, "base_url": url, "vision": True,
                                              "max_concurrency": args.concurrency, "timeout_s": 120}}))
        python = sys.executable
        bare_script = work / "bare_loop.py"
        bare_script.write_text(BARE, encoding="utf-8")
        bare = [python, str(bare_script), str(requests), url, str(args.concurrency), args.bare_pictures]
        ratios, marginal, same, cold = [], [], None, []
        for round_ in range(1, args.rounds + 1):
            store = work / f"round{round_}.db"
            # qa eval's own user cache (its report thumbnails): empty in round 1 (and every round with --cold)
            cache = {"MEMEGAUGE_CACHE_DIR": str(work / (f"cache{round_}" if args.cold else "cache"))}
            cold.append(args.cold or round_ == 1)
            qa_cpu, qa_wall = timed([python, *qa_eval_command(store, models, data, images, texts, split)],
                                    work / f"qa{round_}.log", cache)
            answers = work / f"bare{round_}.json"
            bare_cpu, bare_wall = timed([*bare, str(answers)], work / f"bare{round_}.log")
            ours, theirs = qa_answers(store), json.loads(answers.read_text())
            same = sum(ours.get(k) == v for k, v in theirs.items())
            if len(ours) != questions or same != questions:
                raise SystemExit(f"the two sides differ: {len(ours)} questions stored, {same} of {questions} "
                                 "answers equal (not the same requests)")
            ratios.append(qa_cpu / bare_cpu)
            print(f"round {round_} ({'cold' if cold[-1] else 'warm'} thumbnails): qa eval {qa_cpu:.2f} s CPU "
                  f"({qa_cpu / questions * 1000:.2f} ms a call, "
                  f"wall {qa_wall:.1f} s) | bare openai loop {bare_cpu:.2f} s CPU "
                  f"({bare_cpu / questions * 1000:.2f} ms a call, wall {bare_wall:.1f} s) | {ratios[-1]:.3f}",
                  flush=True)
            qa_one, _ = timed([python, *qa_eval_command(work / f"one{round_}.db", models, data, images, texts,
                                                        split, limit=1)], work / f"qa-one{round_}.log", cache)
            bare_one, _ = timed([*bare[:2], str(one), *bare[3:], str(work / "one.json")],
                                work / f"bare-one{round_}.log")
            qa_call = (qa_cpu - qa_one) / (questions - 1)
            bare_call = (bare_cpu - bare_one) / (questions - 1)
            marginal.append(qa_call / bare_call)
            print(f"  one question: qa eval {qa_one:.2f} s, bare loop {bare_one:.2f} s | each further question: "
                  f"qa eval {qa_call * 1000:.2f} ms, bare loop {bare_call * 1000:.2f} ms | {marginal[-1]:.3f}",
                  flush=True)
        if ratios:
            print(f"answers: {same:,} of {questions:,} equal on both sides (the same requests)")
            print(f"per further call (start-up and one question's work taken off): "
                  f"{statistics.median(marginal):.3f}")
            for label, chosen in (("cold", True), ("warm", False)):
                picked = [r for r, c in zip(ratios, cold, strict=True) if c == chosen]
                if picked:
                    print(f"ratio with {label} thumbnails: {statistics.median(picked):.3f} "
                          f"(median of {len(picked)} round{'s' if len(picked) > 1 else ''})")
            print(f"ratio: {statistics.median(ratios):.3f}", flush=True)
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
            for side, command in (
                    ("qa eval", ["-c", PROFILED, str(args.profile / "qa_eval.prof"), "module",
                                 *qa_eval_command(work / "profile.db", models, data, images, texts, split)[1:]]),
                    ("bare openai loop", ["-c", PROFILED, str(args.profile / "bare.prof"), "script",
                                          *bare[1:], str(work / "profile.json")])):
                timed([python, *command], work / "profile.log", {"MEMEGAUGE_CACHE_DIR": str(work / "cache")})
                name = "qa_eval.prof" if side == "qa eval" else "bare.prof"
                print(f"profile of {side} (top 10 by own time):\n{top_functions(args.profile / name)}")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
