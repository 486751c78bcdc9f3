"""The planned calls of `memegauge arena` (`--dry-run`), stage by stage, from the pipeline's own
planners (`plan_fusion`, `plan_battles`) run on the tasks the config asks for with every answer
assumed given: contexts and tasks are exact (one agent call per meme each); answers, fusion rounds,
judgments and detection are upper bounds ("at most"), reached when no call fails (a failed task or
answer removes its battles)."""

from __future__ import annotations

from collections import Counter

from memegauge.arena.answers import STAGE as ANSWERS
from memegauge.arena.common import arrival_stages, task_key
from memegauge.arena.config import ArenaConfig
from memegauge.arena.contexts import STAGE as CONTEXTS
from memegauge.arena.detection import STAGE as DETECTION
from memegauge.arena.fusion import STAGE as FUSION, plan_fusion
from memegauge.arena.judging import STAGE as JUDGING, plan_battles
from memegauge.arena.records import AnswerRecord
from memegauge.arena.tasks import STAGE as TASKS
from memegauge.engine.estimate import PlannedCalls
from memegauge.prompts import template_words


def plan_calls(config: ArenaConfig, memes: list) -> list[PlannedCalls]:
    tokens, targets = config.max_tokens, config.all_targets
    words = sum(len(m.text.split()) + len(m.caption.split()) for m in memes) / max(len(memes), 1)
    tasks = [{"task": task_key(m.id, i), "meme": m.id, "index": i}
             for m in memes for i in range(1, config.tasks_per_meme + 1)]
    answers = {AnswerRecord.key_of(task=t["task"], target=a): {"ok": True} for t in tasks for a in targets}
    plans = [PlannedCalls(CONTEXTS, config.agent, len(memes), "exact", tokens.contexts,
                          template_words("arena_context") + words, note="one per meme"),
             PlannedCalls(TASKS, config.agent, len(memes), "exact", tokens.tasks,
                          template_words("arena_task") + words + 60, note="one per meme")]
    plans += [PlannedCalls(ANSWERS, target, len(tasks), "at most", tokens.answers,
                           template_words("arena_answer") + words + 40, note="one per task")
              for target in targets]
    pool = config.judges if config.fusion_pool == "judges" else targets
    arrivals = arrival_stages(config.targets, config.added_targets)
    fusion = Counter(r.judge for t in tasks for r in plan_fusion(t["task"], pool, config.judges, config.seed,
                                                                 arrivals).rounds)
    answer_words = tokens.answers * 0.75
    plans += [PlannedCalls(FUSION, judge, n, "at most", tokens.fusion,
                           template_words("arena_fusion") + words + 2 * answer_words, note="tasks × fusion rounds")
              for judge, n in fusion.items()]
    battle_plan = plan_battles(tasks, answers, config.targets, config.added_targets, config.judges,
                               list(config.settings), config.answers_per_task, config.self_judging,
                               config.both_orders, config.seed)
    judged = Counter(j.judge for j in battle_plan.judgments)
    plans += [PlannedCalls(JUDGING, judge, n, "at most", tokens.judging,
                           template_words("arena_judge") + words + 3 * answer_words,
                           note="battles × settings × judges × orders") for judge, n in judged.items()]
    if config.detection:
        plans += [PlannedCalls(DETECTION, target, len(memes), "exact", tokens.detection,
                               template_words("arena_detect") + words, note="one per meme")
                  for target in targets]
    return plans
