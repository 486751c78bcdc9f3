"""The items a rater sees: a seeded, stratified sample of a run's outputs, blinded.

Every rater of a run gets the same items in the same order: the draw depends only on the run's seed
and the task, never on the rater or on time. Strata are those the papers balance their human studies
over: AdamMeme scores per (category, target) ("evenly cover 8 categories and 11 target mLLMs", §3.4)
and memes per Miners' category (App. D), MemeArena battles per model pair, MemeQA questions per type.
Each stratum is shuffled, then the strata are taken in turn (round robin), so a sample of n is the
first n of a sample of n + 1 and every stratum is as evenly covered as n allows.

Blinding (MemeArena): an item's id is a hash, never the battle key; which answer is shown as A is a
seeded coin per battle (`swapped`); the names of the run's models are replaced in every text shown by
`MODEL_PLACEHOLDER`, so an answer that names itself does not unblind the rater.
"""

from __future__ import annotations

import hashlib
import random
import re
import warnings
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from memegauge.arena.common import DIMENSIONS, OVERALL
from memegauge.engine.store import Store
from memegauge.images.thumbnail import MemeImage, thumbnail_data_url
from memegauge.prompts import render_prompt, using_prompts
from memegauge.rating.records import Task
from memegauge.records import read_records
from memegauge.types import InputError, Meme, MemeGaugeError

MODEL_PLACEHOLDER = "[a model]"
DEFAULT_SAMPLE = 120
PAIR_QUESTIONS = (*DIMENSIONS, OVERALL)


@dataclass(frozen=True)
class Item:
    """One thing to rate: `page` is all the page may see of it; the rest stays on the server."""

    id: str
    task: Task
    source: str
    stratum: str
    page: dict[str, Any] = field(compare=False)
    swapped: bool = False


def item_id(task: str, source: str) -> str:
    return f"{task}-{hashlib.sha256(f'{task}|{source}'.encode()).hexdigest()[:12]}"


def stratified(strata: dict[str, list[str]], n: int, rng: random.Random) -> list[tuple[str, str]]:
    """(stratum, key) pairs: each stratum shuffled, then taken in turn until n are drawn."""
    queues = {s: rng.sample(keys, len(keys)) for s, keys in sorted(strata.items()) if keys}
    drawn: list[tuple[str, str]] = []
    while queues and len(drawn) < n:
        for s in list(queues):
            if len(drawn) == n:
                break
            drawn.append((s, queues[s].pop(0)))
            if not queues[s]:
                del queues[s]
    return drawn


def _rng(seed: Any, task: str) -> random.Random:
    return random.Random(f"{seed}:rate:{task}")


def _group(rows: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for stratum, key in rows:
        out.setdefault(stratum, []).append(key)
    return out


# ---- AdamMeme -----------------------------------------------------------------------------------

def adammeme_items(store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]:
    """`n` Scorer items (the target's answer, the reference, the Scorer's exact instructions → 1–10)
    and `n` mining items (a meme → its categories in the run's final taxonomy)."""
    run_id, seed = run["id"], run.get("seed")
    scored = {r["id"]: r for r in store.records(run_id, "score") if r.get("status") == "scored"}
    texts = {r["meme"]: r.get("text") or "" for r in scored.values()} | {m.id: m.text for m in run_memes(run)} \
        | {m["meme"]: m["text"] for m in store.records(run_id, "mining") if m.get("text")}  # an import's texts
    taxonomy = store.get_record(run_id, "taxonomy", "final") or {}
    categories = taxonomy.get("categories") or {}
    items = []
    for stratum, key in stratified(_group((f"{r['category']} · {r['target']}", k) for k, r in scored.items()),
                                   n, _rng(seed, "score")):
        r = scored[key]
        question, prompt = _scorer_prompt(run, r, categories)
        items.append(Item(item_id("score", key), "score", key, stratum, {
            "task": "score", "text": r.get("text") or "", "image": images.get(r["meme"]),
            "category": r["category"], "reference": r.get("reference") or "", "answer": r.get("answer") or "",
            "rubric": scorer_rubric(prompt), "prompt": prompt}))
    mined = {m["meme"]: m for m in store.records(run_id, "mining") if m.get("status") == "ok"}
    for stratum, meme in stratified(_group(((m.get("categories") or ["harmless"])[0], k) for k, m in mined.items()),
                                    n, _rng(seed, "labels")):
        items.append(Item(item_id("labels", meme), "labels", meme, stratum, {
            "task": "labels", "text": texts.get(meme, ""), "image": images.get(meme),
            "categories": [{"name": c, "description": d} for c, d in categories.items()]}))
    return shown_only(items, run) if items else items


def _scorer_prompt(run: dict[str, Any], score: dict[str, Any], categories: dict[str, str]) -> tuple[str, str]:
    """The analysis question and the Scorer's prompt as the run asked them: its own templates (`prompts:`)
    and, when it asked category-specific questions, the category's description (runs stored before
    `analysis_question` existed asked the bare category)."""
    config = run.get("config") or {}
    described = config.get("analysis_question") == "description"
    with using_prompts(config.get("prompts")):
        question = render_prompt("adammeme_question", task=score["category"], text=score.get("text") or "",
                                 description=categories.get(score["category"], "") if described else "")
        return question, render_prompt("adammeme_scorer", meme_text=score.get("text") or "", question=question,
                                       ref_answer=score.get("reference") or "", answer=score.get("answer") or "")


def scorer_rubric(prompt: str) -> str:
    """The Scorer's instructions without the item's question and answers (shown apart): its prompt up
    to ``[Question]`` and from the end of the assistant's answer on, as `adammeme_scorer.j2` lays it out."""
    head, _, rest = prompt.partition("[Question]")
    _, _, tail = rest.partition("[The End of Assistant's Answer]")
    return f"{head.strip()}\n\n{tail.strip()}".strip()


def run_memes(run: dict[str, Any]) -> list[Meme]:
    """The run's meme set, as far as it still loads (a moved set gives none: texts and pictures then
    come from the store alone)."""
    from memegauge.memes import load_memes

    path = (run.get("config") or {}).get("memes")
    try:
        return load_memes(path, require_images=False) if path else []
    except (MemeGaugeError, OSError):
        return []


# ---- MemeArena ----------------------------------------------------------------------------------

def arena_items(store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]:
    """`n` battles of the headline setting, one per (task, pair), the answers in a seeded order."""
    run_id, seed, config = run["id"], run.get("seed"), run.get("config") or {}
    setting = (config.get("settings") or ["fused"])[0]
    battles = {b["battle"]: b for b in store.records(run_id, "battle")
               if b["setting"] == setting and b.get("joint", {}).get(OVERALL) is not None}
    tasks = {t["task"]: t for t in store.records(run_id, "task")}
    answers = {(a["task"], a["target"]): a.get("text") or "" for a in store.records(run_id, "answer")}
    memes = {m["id"]: m for m in store.records(run_id, "meme")}
    blind = blinder([*config.get("targets", []), *config.get("added_targets", []), *config.get("judges", [])])
    items = []
    for stratum, key in stratified(_group((" vs ".join(sorted((b["model_a"], b["model_b"]))), k)
                                               for k, b in battles.items()), n, _rng(seed, "pair")):
        b = battles[key]
        swapped = random.Random(f"{seed}:rate:swap:{key}").random() < 0.5
        first, second = (b["model_b"], b["model_a"]) if swapped else (b["model_a"], b["model_b"])
        meme = memes.get(b["meme"], {})
        items.append(Item(item_id("pair", key), "pair", key, stratum, {
            "task": "pair", "text": blind(meme.get("text") or ""), "image": images.get(b["meme"]),
            "instruction": blind(tasks.get(b["task"], {}).get("prompt") or ""),
            "answer_a": blind(answers.get((b["task"], first), "")),
            "answer_b": blind(answers.get((b["task"], second), "")),
            "questions": list(PAIR_QUESTIONS)}, swapped))
    return items


def blinder(names: Iterable[str]):
    """A function that replaces every model name (case-insensitive, longest first) by the placeholder."""
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE)
    return lambda text: pattern.sub(MODEL_PLACEHOLDER, text)


# ---- MemeQA -------------------------------------------------------------------------------------

def memeqa_items(store: Store, run: dict[str, Any], n: int, images: Pictures) -> list[Item]:
    """`n` questions per the run's question types, shown without the gold answer."""
    questions = {q["id"]: q for q in store.records(run["id"], "question")}
    items = []
    for stratum, key in stratified(_group((q["type"], k) for k, q in questions.items()), n,
                                   _rng(run.get("seed"), "answer")):
        q = questions[key]
        items.append(Item(item_id("answer", key), "answer", key, stratum, {
            "task": "answer", "text": q.get("text") or "", "image": images.get(q.get("img") or ""),
            "type": q["type"], "question": q["question"], "options": list(q["options"]),
            "multi": q.get("general_type") == "multi"}))
    return items


BUILDERS = {"adammeme": adammeme_items, "arena": arena_items, "memeqa": memeqa_items}


def run_items(store: Store, run: dict[str, Any], n: int = DEFAULT_SAMPLE) -> list[Item]:
    """The rating items of a run (`run` as `memegauge.report.run_header` gives it, with its `id`)."""
    builder = BUILDERS.get(run["method"])
    if builder is None or (run["method"] == "memeqa" and (run.get("config") or {}).get("task", "eval") != "eval"):
        raise InputError(f"a {run['method']} run has nothing for people to rate", f"run {run['name']!r}",
                         "rate an AdamMeme, MemeArena or MemeQA evaluation run")
    items = builder(store, run, n, Pictures(store, run))
    if not items:
        raise InputError("the run has no finished output to rate yet", f"run {run['name']!r}",
                         "let the run finish (or resume it), then rate it")
    return items


def shown_only(items: list[Item], run: dict[str, Any]) -> list[Item]:
    """The items a rater can judge, for a builder whose items are about their meme: each shows it, by
    its text or its picture. Those whose meme has neither in the store (an import of results without
    the meme texts or pictures, a meme set since moved) are left out, with one warning saying how many
    and why; none left is an error."""
    shown = [item for item in items if item.page.get("text") or item.page.get("image")]
    if not shown:
        raise InputError(f"none of the run's {len(items)} items can be shown: their memes have neither text "
                         "nor picture in the store", f"run {run['name']!r}",
                         "import or run it again with the meme set at hand (its texts and pictures)")
    if len(shown) < len(items):
        warnings.warn(f"{len(items) - len(shown)} of {len(items)} items left out: their memes have neither "
                      "text nor picture in the store (a rater could not judge them)", stacklevel=2)
    return shown


class Pictures:
    """Meme id → picture (JPEG data URL) as the run stored it (`MemeImage`); for a run made before runs
    stored their pictures, a thumbnail of the meme file, made only for the memes a rater is shown."""

    def __init__(self, store: Store, run: dict[str, Any]) -> None:
        self.stored = {r.meme: r.thumbnail for r in read_records(store, run["id"], MemeImage)}
        self.store, self.run = store, run
        self._paths: dict[str, Any] | None = None

    def get(self, meme: str) -> str | None:
        if self.stored:
            return self.stored.get(meme)
        if self._paths is None:
            self._paths = ({m["id"]: m.get("image") for m in self.store.records(self.run["id"], "meme")}
                           if self.run["method"] == "arena" else {m.id: m.image for m in run_memes(self.run)})
        return thumbnail_data_url(self._paths.get(meme))
