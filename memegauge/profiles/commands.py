"""The profile's command: `profile`, as `memegauge --help` lists it (`memegauge.registry.Command`); the command is in
`memegauge.profiles.cli`, imported when dispatched."""

from memegauge.registry import Command

PROFILE = Command(
    name="profile", register="memegauge.profiles.cli:register",
    summary="One model's meme understanding on one page (several: side by side, with paired differences), from "
            "every stored run that evaluated it: headline figures with 95% intervals beside the published ones on"
            " the same split, strengths and weaknesses with the memes it got wrong, and what it takes to "
            "reproduce each figure.")
