"""The planned calls of `qa eval` (`--dry-run`, and the progress's total): one call per question, or
per rotation of its options when circular — exact; each prompt rendered as the run renders it, so
its words are counted (the picture is counted by the estimate, per call)."""

from __future__ import annotations

from memegauge.engine.estimate import PlannedCalls
from memegauge.memeqa.evaluate import MAX_NEW_TOKENS, STAGE, presentations, qa_prompt, qa_request
from memegauge.types import TextPart


def plan_eval(questions, memes, *, model: str, version: str, circular: bool,
              requests: bool = False, words: bool = True) -> list[PlannedCalls]:
    """With `requests` (`--dry-run`), the requests themselves go with the plan: the estimate looks each up
    in the store's cache, so answers another run already got count as cached (a run replays them); each
    prompt is rendered once, for its request and its words. Without `words` (a run's progress, which counts
    calls only) no prompt is rendered: `prompt_words` is 0."""
    shown = [(q, p) for q in questions for p in presentations(q, circular)]
    asked = tuple(qa_request(q, p, version, model, memes[q.img]) for q, p in shown) if requests else ()
    if asked:
        counts = [len(_prompt_text(r).split()) for r in asked]
    elif words:
        counts = [len(qa_prompt(q, p.options, version).split()) for q, p in shown]
    else:
        counts = []
    return [PlannedCalls(stage=STAGE, model=model, calls=len(shown), max_tokens=MAX_NEW_TOKENS,
                         prompt_words=sum(counts) / max(len(counts), 1), images=1,
                         note="questions × rotations" if circular else "one per question", requests=asked)]


def _prompt_text(request) -> str:
    """The rendered prompt of a `qa_request`: its last part (the meme, picture or text, comes first)."""
    return next(part.text for part in reversed(request.messages[0].content) if isinstance(part, TextPart))


def plan_build(config, annotations, tagger) -> list[PlannedCalls]:
    """The planned calls of `qa build`: the cloze generator once per cloze (exact); the adversarial
    filter's discriminator on every drafted question each round and the generator on those it answered
    (at most `af_max_rounds` rounds: it stops when accuracy stops falling); the trivial filter once per
    question (at most: a cloze the generator fails on is dropped)."""
    from memegauge.memeqa.construct import cloze_items, multi_questions, single_questions
    from memegauge.memeqa.filtering import AF_STAGE, TRIVIAL_STAGE
    from memegauge.memeqa.generator import MAX_TOKENS, has_generator

    clozes = cloze_items(annotations, tagger)
    fixed = multi_questions(annotations, config.seed) + single_questions(annotations, config.seed)
    drafted = len(fixed) + len(clozes)
    regenerable = sum(has_generator(q.specific_type) for q in fixed) + len(clozes)
    words = sum(len(q.question.split()) + sum(len(o.split()) for o in q.options) for q in fixed) / max(len(fixed), 1)
    rounds = config.af_max_rounds
    plans = [PlannedCalls("memeqa.construct.cloze", config.generator, len(clozes), "exact", MAX_TOKENS[True],
                          words + 60, images=0, note="one per cloze"),
             PlannedCalls(AF_STAGE, config.discriminator, drafted * rounds, "at most", MAX_NEW_TOKENS, words + 40,
                          note="questions × AF rounds"),
             PlannedCalls("memeqa.filtering.generator", config.generator, regenerable * (rounds - 1), "at most",
                          MAX_TOKENS[False], words + 80, images=0, note="questions answered × later rounds")]
    if config.trivial_filter:
        plans.append(PlannedCalls(TRIVIAL_STAGE, config.trivial_model, drafted, "at most", MAX_NEW_TOKENS,
                                  words + 40, images=0, note="one per question, without the meme"))
    return [p for p in plans if p.calls]
