"""docs/memeqa.md's rule for the macro accuracy's interval is the one `memeqa.headline.macro` follows: a cluster
bootstrap from MIN_MEMES memes on, `wilson-pooled` below, Wilson on the memes when every answer is alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from memegauge.memeqa.headline import MIN_MEMES, macro

DOC = " ".join((Path(__file__).parents[1] / "docs" / "memeqa.md").read_text().split())


def _answers(memes: int, per_meme: int = 11) -> tuple[list[float], list[str], list[str]]:
    """`memes` memes of `per_meme` questions, one of each type, a mixed pattern of right and wrong."""
    correct = [float((m * 7 + t * 3) % 5 < 3) for m in range(memes) for t in range(per_meme)]
    return correct, [f"t{t}" for _ in range(memes) for t in range(per_meme)], [f"m{m}" for m in range(memes)
                                                                                for _ in range(per_meme)]


def test_the_doc_states_the_rule_the_code_follows():
    assert f"a cluster bootstrap over memes from {MIN_MEMES} memes on" in DOC
    assert "method `wilson-pooled`" in DOC and "`wilson-clustered`" in DOC
    assert "0 of 22 on 2 memes is `0.0 [0.0, 65.8] (n=22)`" in DOC
    assert "unless" not in DOC.split("The macro's interval", 1)[1].split("Never a zero-width", 1)[0]
    for memes, method in ((3, "wilson-pooled"), (MIN_MEMES - 1, "wilson-pooled"), (MIN_MEMES, "bootstrap")):
        found = macro(*_answers(memes))
        assert found["method"] == method, memes
        assert found["ci95"][1] > found["ci95"][0]
    zero = macro([0.0] * 22, [f"t{i % 11}" for i in range(22)], ["m1"] * 11 + ["m2"] * 11)
    assert zero["method"] == "wilson-clustered" and zero["ci95"] == pytest.approx([0.0, 0.657620], abs=1e-6)
