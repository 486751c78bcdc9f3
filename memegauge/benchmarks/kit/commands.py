"""The benchmark kit's command: `eval`, as `memegauge --help` lists it (`memegauge.registry.Command`); the command is
in `memegauge.benchmarks.kit.cli`, imported when dispatched."""

from memegauge.registry import Command

EVAL = Command(
    name="eval", register="memegauge.benchmarks.kit.cli:register",
    summary="Run meme benchmarks (`memegauge eval --list` names them; MemeQA included) on models.")
