"""How the AdamMeme paper's Table 1 comes out of its Table 2 and the refinement steps (LLaVA-v1.6-7B row).

Table 1's FR of a category is the failure rate of its history H: the original samples (Table 2 gives
their FR, "without the Iterative Refinement stage") plus every scored refinement step. So

    FR₁(c) = (FR₂(c) · n₀(c) + f(c)) / (n₀(c) + n(c))

with n₀ the scored originals, n the scored steps and f the failing steps; "Avg." pools every category
(Σ failures / Σ samples, not the mean of the eight rates: Table 2's 32.80 is pooled, the mean is 32.98).
The original release (Lbotirx/AdamMeme, `results/llava_5k`) ships the steps but not the scored
originals; `memegauge import adammeme` gives n and f per category under either failure rule, and
`table1_row` combines them with the published Table 2 row. Only `at_or_below` (a 4 fails) reproduces
the published row; the paper's text says "lower than" 4. docs/adammeme.md, "Reproducing Table 1".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

# Table 2, LLaVA-v1.6 (7B): FR in percent on the original samples, and Table 1's published row.
TABLE2_LLAVA7B_FR = {"nationality": 32.50, "gender": 24.00, "religion": 28.50, "race": 30.00,
                     "animal": 44.63, "disability": 35.00, "child exploitation": 45.23, "political": 24.00}
TABLE1_LLAVA7B_FR = {"nationality": 34.16, "gender": 26.25, "religion": 35.29, "race": 37.88,
                     "animal": 51.53, "disability": 39.30, "child exploitation": 47.70, "political": 24.57,
                     "avg": 37.06}
# n₀: scored originals per category. The release samples 200 per category (animal: its 177 mined memes);
# Table 10's final counts minus each log's rows leave 200, 177 and 199 (child exploitation: one original
# unscored, and 45.23% is 90 of 199, not a whole number of 200).
LLAVA7B_ORIGINALS = {"nationality": 200, "gender": 200, "religion": 200, "race": 200, "animal": 177,
                     "disability": 200, "child exploitation": 199, "political": 200}


def table1_row(steps: Mapping[str, tuple[int, int]], original_fr: Mapping[str, float] = TABLE2_LLAVA7B_FR,
               originals: Mapping[str, int] = LLAVA7B_ORIGINALS) -> dict[str, float]:
    """Table 1's FR row (percent) from `steps` = {category: (scored steps n, failing steps f)} and the
    originals' FR (percent) and counts; `avg` pools every category."""
    categories = list(original_fr)
    n0 = np.array([originals[c] for c in categories], dtype=float)
    f0 = np.rint(np.array([original_fr[c] for c in categories]) / 100 * n0)  # whole failing originals
    n = np.array([steps[c][0] for c in categories], dtype=float)
    f = np.array([steps[c][1] for c in categories], dtype=float)
    rates = 100 * (f0 + f) / (n0 + n)
    return {**dict(zip(categories, rates.tolist(), strict=True)), "avg": float(100 * (f0 + f).sum() / (n0 + n).sum())}
