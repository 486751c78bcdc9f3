"""The rating kit's command: `rate`, as `memegauge --help` lists it (`memegauge.registry.Command`); the command is in
`memegauge.rating.cli`, imported when dispatched."""

from memegauge.registry import Command

RATE = Command(
    name="rate", register="memegauge.rating.cli:register",
    summary="Rate a run's outputs in the browser (AdamMeme scores and categories, MemeArena pairs, MemeQA "
            "questions; the papers' quality studies of what the agents wrote: AdamMeme's reference answers and "
            "refined texts, MemeArena's guidelines, guideline rounds and contexts); the report's \"People vs "
            "judges\" section compares the votes with the judges and the quality studies with the papers.")
