"""The failures of `memegauge data` that are not bad input (those are `InputError`)."""

from __future__ import annotations

from memegauge.errors import MemeGaugeError


class ChecksumError(MemeGaugeError):
    """A fetched or imported file does not match its pinned checksum; nothing was installed."""
