"""What MemeLens calls of AdamMeme (`memelens.methods.Method`): imported when first needed."""

from memelens.adammeme.cli import register as commands  # noqa: F401
from memelens.adammeme.demo import demo  # noqa: F401
from memelens.report.adammeme import build as report  # noqa: F401
from memelens.report.html import adammeme_view as view  # noqa: F401
