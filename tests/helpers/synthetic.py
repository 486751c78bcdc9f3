"""Synthetic runs for the report tests and `bench/report_open.py`: records written straight into a
store in each method's record kinds (see the pipelines' docstrings), so the real report builders and
the real HTML renderer run on runs of any size without calling a model. Values are seeded.

`probe` puts XSS payloads into every free-text field (meme text, model outputs, model names).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from memegauge import __version__
from memegauge.testing.synthetic_memes import write_meme_set
from memegauge.arena.common import DIMENSIONS, OVERALL
from memegauge.engine import Store, config_hash
from memegauge.memes import load_memes
from memegauge.samples import sample_memes_path

XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = '</script><script>window.__xss=2</script>'
PROBE = f"{XSS_IMG} & {XSS_SCRIPT} \u2028 <!-- "
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")


def _run(store: Store, name: str, method: str, config: dict[str, Any],
         records: dict[str, list[tuple[str, Any]]]) -> str:
    run_id, execution = store.open_run(name, method, config, config_hash(config), config.get("seed", 0),
                                       __version__)
    for kind, items in records.items():
        store.put_records(run_id, kind, items)
    store.finish_run(run_id, execution, "done")
    return name


def _say(rng: random.Random, what: str, probe: bool, words: int = 25) -> str:
    vocabulary = ("meme", "joke", "stereotype", "context", "humour", "audience", "harm", "irony", "group",
                  "image", "caption", "reading", "implies", "because", "the", "a", "of", "and")
    body = " ".join(rng.choice(vocabulary) for _ in range(words))
    return f"{what}: {body}." + (f" {PROBE}" if probe else "")


def adammeme_run(store: Store, name: str, directory: Path, *, targets: tuple[str, ...] = ("target-a", "target-b"),
                 categories: tuple[str, ...] = ("gender", "race", "religion"), chains: int = 3,
                 memes_per_category: int = 6, max_steps: int = 3, seed: int = 0, probe: bool = False,
                 agent: str = "agent-x") -> str:
    """An AdamMeme run: `chains` seeds per category, each refined for 1..max_steps steps."""
    rng = random.Random(f"{seed}:adam")
    memes = load_memes(write_meme_set(directory, memes_per_category * len(categories), seed))
    if probe:
        memes[0] = memes[0].model_copy(update={"text": f"meme text {PROBE}"})
        (directory / "memes.jsonl").write_text("".join(json.dumps(
            {"id": m.id, "image": str(m.image), "text": m.text, "caption": m.caption}) + "\n" for m in memes))
    per_category = {c: memes[i * memes_per_category:(i + 1) * memes_per_category] for i, c in enumerate(categories)}
    config = {"memes": str(directory / "memes.jsonl"), "agent": agent, "targets": list(targets), "seed": seed}
    scores, steps = [], []
    for target in targets:
        for c, chosen in per_category.items():
            for m in chosen:
                key = f"{target}/0/{c}/{m.id}"
                scores.append((key, {"id": key, "target": target, "repeat": 0, "category": c, "meme": m.id,
                                     "text": m.text, "misbelief": _say(rng, f"Misbelief {c}", probe, 8),
                                     "iteration": 0, "reference": _say(rng, "reference", probe),
                                     "answer": _say(rng, "answer", probe), "comparison": _say(rng, "compare", probe),
                                     "score": rng.randint(1, 10), "status": "scored", "failed_stage": None,
                                     "error_class": None}))
            for chain in range(chains):
                seed_meme = chosen[chain % len(chosen)]
                parent = next(r["score"] for k, r in scores if k == f"{target}/0/{c}/{seed_meme.id}")
                for step in range(rng.randint(1, max_steps)):
                    failed = rng.random() < 0.08
                    score = None if failed else rng.randint(1, 10)
                    key = f"{target}/0/{c}/{chain:03d}/{step:03d}"
                    steps.append((key, {
                        "id": key, "target": target, "repeat": 0, "category": c, "meme": seed_meme.id,
                        "case": f"{target}/0/{c}/{seed_meme.id}", "original_text": seed_meme.text,
                        "misbelief": _say(rng, f"Misbelief {c}", probe, 8), "parent_score": parent,
                        "examples": [], "attempts": [{"status": "ok", "error_class": None}],
                        "rewrite": None if failed else _say(rng, "rewrite", probe, 12),
                        "explanation": _say(rng, "why", probe), "reference": _say(rng, "reference", probe),
                        "answer": None if failed else _say(rng, "answer", probe),
                        "comparison": None if failed else _say(rng, "compare", probe) + f" Rating: [[{score}]]",
                        "score": score, "improved": None if failed else score < parent,
                        "status": "unparseable" if failed else "scored",
                        "failed_stage": "scorer" if failed else None, "error_class": "unparseable" if failed else None,
                        "chain": chain, "seed": seed_meme.id, "step": step, "iteration": step + 1}))
                    if failed or score >= parent:
                        break
                    parent = score
    records = {
        "meta": [("run", {"targets": list(targets), "agent": agent, "threshold": 4.0, "repeats": 1,
                          "top_terms": 10, "memes": len(memes), "erase": False})],
        "taxonomy": [("final", {"categories": {c: f"harm about {c}" for c in categories}, "added": {}})],
        "mining": [(m.id, {"meme": m.id, "status": "ok", "categories": [c], "votes": {}, "miners": [],
                           "proposals": [], "labels": []})
                   for c, chosen in per_category.items() for m in chosen],
        "sampling": [(c, {"mined": len(chosen), "sampled": [m.id for m in chosen],
                          "seeds": [m.id for m in chosen[:chains]], "warning": "fewer than 150 samples"})
                     for c, chosen in per_category.items()],
        "score": scores, "step": steps}
    return _run(store, name, "adammeme", config, records)


def arena_run(store: Store, name: str, *, models: tuple[str, ...] = ("model-a", "model-b", "model-c", "model-d"),
              judges: tuple[str, ...] = ("model-a", "model-b", "model-c"), memes: int = 4,
              tasks_per_meme: int = 3, seed: int = 0, probe: bool = False, agent: str = "agent-x",
              bootstrap_rounds: int = 100, both_orders: bool = True) -> str:
    """An arena run: every task's three sampled answers battle pairwise (3 battles per task)."""
    rng = random.Random(f"{seed}:arena")
    samples = load_memes(sample_memes_path())
    strength = {m: rng.random() * 2 for m in models}
    config = {"agent": agent, "targets": list(models), "added_targets": [], "judges": list(judges), "seed": seed,
              "settings": ["fused"], "elo_k": 4.0, "bootstrap_rounds": bootstrap_rounds,
              "both_orders": both_orders, "detection": False, "memes": "samples"}
    records: dict[str, list] = {k: [] for k in ("meme", "context", "tasks", "task", "answer", "fusion_round",
                                                "guideline", "judgment", "battle")}
    order = 0
    for i in range(memes):
        base = samples[i % len(samples)]
        meme_id = f"{base.id}-{i:04d}"
        meme_text = f"{base.text} {PROBE}" if probe and i == 0 else base.text
        records["meme"].append((meme_id, {"id": meme_id, "order": i, "text": meme_text, "caption": base.caption,
                                          "labels": base.labels,
                                          "image": str(base.image) if i % 7 else "/no/such.png"}))
        personas = [_say(rng, f"user {u}", probe, 15) for u in (1, 2, 3)]
        records["context"].append((meme_id, {"meme": meme_id, "ok": True, "personas": personas,
                                             "error_class": None, "error": ""}))
        records["tasks"].append((meme_id, {"meme": meme_id, "ok": True, "prompts": personas}))
        for n in range(1, tasks_per_meme + 1):
            task = f"{meme_id}#{n}"
            records["task"].append((task, {"task": task, "meme": meme_id, "index": n, "persona": personas[n - 1],
                                           "prompt": _say(rng, "task prompt", probe, 20)}))
            for model in models:
                records["answer"].append((f"{task}|{model}", {
                    "task": task, "meme": meme_id, "target": model, "ok": True,
                    "text": "[Background Knowledge] " + _say(rng, model, probe, 60) + "\n[Reasoning] " +
                            _say(rng, "reasoning", probe, 60),
                    "sections": {}, "missing_sections": [], "error_class": None, "error": ""}))
            for r, judge in enumerate(judges):
                records["fusion_round"].append((f"{task}|{r:02d}", {
                    "task": task, "round": r, "judge": None if r == 0 else judge, "author": judges[r - 1],
                    "guideline_first": True, "guideline": _say(rng, "guideline", probe, 40), "ok": True,
                    "error_class": None, "error": ""}))
            records["guideline"].append((task, {"task": task, "meme": meme_id, "ok": True,
                                                "text": _say(rng, "fused guideline", probe, 50),
                                                "init_author": judges[0], "rounds": len(judges) - 1,
                                                "failed_rounds": 0, "skipped": False}))
            answered = rng.sample(list(models), 3)
            for a, b in ((answered[0], answered[1]), (answered[0], answered[2]), (answered[1], answered[2])):
                a, b = sorted((a, b))
                verdicts = {j: {d: _winner(rng, strength[a], strength[b]) for d in (*DIMENSIONS, OVERALL)}
                            for j in judges if j not in (a, b)}
                key = f"fused|{task}|{a}|{b}"
                for j, v in verdicts.items():
                    records["judgment"].append((f"{key}|{j}|ab", {
                        "setting": "fused", "task": task, "model_a": a, "model_b": b, "judge": j, "order": "ab",
                        "verdicts": v, "text": _say(rng, "judgment", probe), "ok": True, "error_class": None,
                        "error": ""}))
                joint = {d: _majority([v[d] for v in verdicts.values()]) for d in (*DIMENSIONS, OVERALL)}
                records["battle"].append((key, {
                    "battle": key, "order": order, "setting": "fused", "task": task, "meme": meme_id,
                    "model_a": a, "model_b": b, "judges": verdicts,
                    "flips": {j: rng.random() < 0.2 for j in verdicts} if both_orders else {},
                    "failed_judgments": [], "joint": joint, "judged": bool(verdicts)}))
                order += 1
    return _run(store, name, "arena", config, records)


def _winner(rng: random.Random, a: float, b: float) -> str:
    x = rng.random() * (a + b + 0.6)
    return "model_a" if x < a else "model_b" if x < a + b else rng.choice(WINNERS[2:])


def _majority(votes: list[str]) -> str | None:
    if not votes:
        return None
    best = max(set(votes), key=lambda v: (votes.count(v), v))
    return best if votes.count(best) * 2 > len(votes) else "tie"


QA_TYPES = ("Visual Identification", "Target Identification", "Conditional Sentiment Identification",
            "Intent Completion")


def memeqa_run(store: Store, name: str, *, version: str = "none-minus", questions: int = 40,
               model: str = "model-a", seed: int = 0, probe: bool = False) -> str:
    rng = random.Random(f"{seed}:qa")
    config = {"task": "eval", "version": version, "split": "dev", "model": model, "questions": "synthetic",
              "limit": None, "types": list(QA_TYPES), "seed": seed, "circular": False}
    rows = []
    for i in range(questions):
        kind = QA_TYPES[i % len(QA_TYPES)]
        multi = kind in QA_TYPES[:2]
        n_options = 3 if kind.startswith("Conditional Sentiment") else 4
        gold = sorted(rng.sample(range(n_options), rng.randint(1, 2) if multi else 1))
        failed, unparseable = rng.random() < 0.05, rng.random() < 0.1
        guess = sorted(rng.sample(range(n_options), len(gold))) if rng.random() < 0.5 else gold
        letters = "".join(chr(65 + g) for g in guess)
        rows.append((f"q{i:04d}", {
            "id": f"q{i:04d}", "type": kind, "general_type": "multi" if multi else "single",
            "img": f"{i}.png", "question": f"Question {i} about the meme" + (f" {PROBE}" if probe else ""),
            "options": [f"option {chr(65 + k)}" + (f" {PROBE}" if probe else "") for k in range(n_options)],
            "gold": gold, "gold_letters": "".join(chr(65 + g) for g in gold),
            "prediction": None if failed or unparseable else letters,
            "raw": None if failed else (f"I think {PROBE}" if probe or unparseable else letters),
            "correct": None if failed else (not unparseable and guess == gold),
            "parse_failed": None if failed else unparseable,
            "parse_error": "no option letter" if unparseable and not failed else "",
            "error_class": "timeout" if failed else None,
            "answer_space": 2 ** n_options if multi else n_options, "rotations": 1, "rotation_raw": None}))
    info = {"task": "eval", "version": version, "split": "dev", "model": model, "circular": False,
            "types": list(QA_TYPES)}
    return _run(store, name, "memeqa", config, {"question": rows, "meta": [("info", info)]})
