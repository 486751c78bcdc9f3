"""What MemeLens calls of MemeQA (`memelens.methods.Method`): imported when first needed."""

from memelens.memeqa.cli import register as commands  # noqa: F401
from memelens.memeqa.demo import demo  # noqa: F401
from memelens.report.memeqa import build as report  # noqa: F401
from memelens.report.html import memeqa_view as view  # noqa: F401
