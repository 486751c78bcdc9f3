"""MemeQA's command: `qa`, as `memegauge --help` lists it (`memegauge.registry.Command`); the command is in
`memegauge.memeqa.cli`, imported when dispatched."""

from memegauge.registry import Command

QA = Command(
    name="qa", register="memegauge.memeqa.cli:register",
    summary="MemeQA: holistic multiple-choice meme understanding.")
