"""Not a test module: mypy reads it (tests/test_methods.py) to check that every built-in method's hook
implementations have the shapes `memegauge.methods` declares for them (a descriptor names them as
strings, `lazy`, so mypy could not see a mismatch there)."""

from __future__ import annotations

from memegauge.adammeme import hooks as adam_hooks, report as adam_report, view as adam_view
from memegauge.arena import hooks as arena_hooks, report as arena_report, view as arena_view
from memegauge.memeqa import hooks as qa_hooks, report as qa_report, view as qa_view
from memegauge.adammeme import rating as adam_rating
from memegauge.arena import rating as arena_rating
from memegauge.memeqa import rating as qa_rating
from memegauge.methods import CheckHook, RatingHook, ReportHook, RunHook, ViewHook
from memegauge.rating.part import BlocksHook, ItemsHook, SectionHook

reports: list[ReportHook] = [adam_report.build, arena_report.build, qa_report.build]
views: list[ViewHook] = [adam_view.view, arena_view.view, qa_view.view]
checks: list[CheckHook] = [adam_hooks.check, arena_hooks.check, qa_hooks.check]
runs: list[RunHook] = [adam_hooks.run, arena_hooks.run, qa_hooks.run]
ratings: list[RatingHook] = [adam_rating.part, arena_rating.part, qa_rating.part]
items: list[ItemsHook] = [adam_rating.items, arena_rating.items, qa_rating.items]
sections: list[SectionHook] = [adam_rating.section, arena_rating.section, qa_rating.section]
blocks: list[BlocksHook] = [adam_rating.blocks, arena_rating.blocks, qa_rating.blocks]
