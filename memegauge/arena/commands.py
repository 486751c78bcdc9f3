"""MemeArena's command: `arena`, as `memegauge --help` lists it (`memegauge.registry.Command`); the command is in
`memegauge.arena.cli`, imported when dispatched."""

from memegauge.registry import Command

ARENA = Command(
    name="arena", register="memegauge.arena.cli:register",
    summary="MemeArena: context-aware pairwise evaluation (run, or `rank`).")
