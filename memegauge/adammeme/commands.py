"""AdamMeme's commands: `adam`, `erase`, `import`, as `memegauge --help` lists them (`memegauge.registry.Command`); the
commands are in `memegauge.adammeme.cli`, imported when dispatched."""

from memegauge.registry import Command

ADAM = Command(
    name="adam", register="memegauge.adammeme.cli:register",
    summary="Run AdamMeme: mine, score and refine memes for one or more target models.")
ERASE = Command(
    name="erase", register="memegauge.adammeme.cli:register",
    summary="Erase the text of every image in IN_DIR (OCR + inpainting) into OUT_DIR; resumable.")
IMPORT = Command(
    name="import", register="memegauge.adammeme.cli:register",
    summary="Import results made elsewhere into the run store.")
