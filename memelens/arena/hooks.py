"""What MemeLens calls of MemeArena (`memelens.methods.Method`): imported when first needed."""

from memelens.arena.cli import register as commands  # noqa: F401
from memelens.arena.demo import demo  # noqa: F401
from memelens.report.arena import build as report  # noqa: F401
from memelens.report.html import arena_view as view  # noqa: F401
