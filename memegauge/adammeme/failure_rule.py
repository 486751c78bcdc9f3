"""When an AdamMeme score is a failure (`metrics.FailureRule`): below the threshold (the paper's text) or at or
below it (the original release's results, which reproduce the published Table 1).

Apart from the records (pydantic) so that `memegauge adam`'s options, listed by `memegauge --help`, cost none."""

from __future__ import annotations

from typing import Literal

FailureRuleName = Literal["below", "at_or_below"]
