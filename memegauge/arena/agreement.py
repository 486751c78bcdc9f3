"""Agreement with human preferences (paper App. C, Tables 5–6): imported human pairwise votes → accuracy of
each judge and of the joint vote, and the number-of-judges ablation on the same battles.

Votes file (CSV with a header; extra columns ignored)::

    task,model_a,model_b,winner
    cat-box#1,gpt-4o,llava-8b,model_a        # winner: model_a | model_b | tie | tie (bothbad) | a model name

`task` is a task key as the report's details show it (``<meme id>#<n>``). A vote is matched to the battle
of that task between the same two models (in either order; the vote is re-oriented) in the headline
setting. Outcomes are compared as three classes — model_a wins, model_b wins, tie (both tie kinds alike),
as a human "which is better" vote does not say both-strong from both-weak. Votes on pairs that did not
battle are counted as unmatched.

Ablation: the joint vote of the first m panel judges (config order), m = 1..k, on the same battles —
accuracy against the humans, and agreement with the full panel's vote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memegauge.arena.common import OVERALL
from memegauge.arena.judging import TIE, TIE_BOTHBAD, joint_vote
from memegauge.files import read_csv_rows
from memegauge.errors import InputError

_WINNERS = {"model_a", "model_b", TIE, TIE_BOTHBAD}
_COLUMNS = ("task", "model_a", "model_b", "winner")
_FIX = "write a CSV with the header task,model_a,model_b,winner (winner: model_a, model_b, tie, " \
       "tie (bothbad) or one of the two model names)"


def read_human_votes(path: Path) -> list[dict[str, str]]:
    """Validated votes, winner normalised to model_a / model_b / tie / tie (bothbad)."""
    rows = [(line, cells) for line, cells in read_csv_rows(path) if any(c.strip() for c in cells)]
    header = [h.strip().lower() for h in rows[0][1]] if rows else []
    missing = [c for c in _COLUMNS if c not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", f"{path}:1", _FIX)
    votes = []
    for line, cells in rows[1:]:
        row = {name: cells[i].strip() if i < len(cells) else "" for i, name in enumerate(header) if name}
        if not any(row.values()):
            continue
        if not all(row[c] for c in _COLUMNS):
            raise InputError("empty cell in task, model_a, model_b or winner", f"{path}:{line}", _FIX)
        if row["model_a"] == row["model_b"]:
            raise InputError("model_a and model_b are the same model", f"{path}:{line}", _FIX)
        winner = {row["model_a"]: "model_a", row["model_b"]: "model_b"}.get(row["winner"], row["winner"].lower())
        if winner not in _WINNERS:
            raise InputError(f"winner {row['winner']!r} is not understood", f"{path}:{line}", _FIX)
        votes.append({"task": row["task"], "model_a": row["model_a"], "model_b": row["model_b"],
                      "winner": winner})
    if not votes:
        raise InputError("no votes in the file", str(path), _FIX)
    return votes


def _outcome(winner: str, flipped: bool) -> str:
    """Three-class outcome in the battle's orientation."""
    if winner in (TIE, TIE_BOTHBAD):
        return TIE
    if flipped:
        return "model_b" if winner == "model_a" else "model_a"
    return winner


def match_votes(votes: list[dict[str, str]], battles: list[dict[str, Any]]) -> list[tuple[str, dict]]:
    """(human outcome in the battle's orientation, battle) for every vote that matches a battle."""
    index = {(b["task"], b["model_a"], b["model_b"]): b for b in battles}
    matched = []
    for vote in votes:
        a, b = vote["model_a"], vote["model_b"]
        battle = index.get((vote["task"], a, b)) or index.get((vote["task"], b, a))
        if battle is not None:
            matched.append((_outcome(vote["winner"], battle["model_a"] != a), battle))
    return matched


def _accuracy(pairs: list[tuple[str, str | None]]) -> dict[str, Any]:
    scored = [(h, _outcome(v, False)) for h, v in pairs if v is not None]
    hits = sum(h == v for h, v in scored)
    return {"n": len(scored), "accuracy": hits / len(scored) if scored else None}


def agreement_summary(votes: list[dict[str, str]], battles: list[dict[str, Any]],
                      judges: list[str]) -> dict[str, Any]:
    """{votes, matched, judges: {J: {n, accuracy}}, joint: {n, accuracy}, ablation: {m: {...}}}."""
    matched = match_votes(votes, battles)
    per_judge = {j: _accuracy([(h, b["judges"].get(j, {}).get(OVERALL)) for h, b in matched]) for j in judges}
    joint = _accuracy([(h, b["joint"].get(OVERALL)) for h, b in matched])
    return {"votes": len(votes), "matched": len(matched), "judges": per_judge, "joint": joint,
            "ablation": judges_ablation(battles, judges, matched)}


def first_judges_vote(battle: dict[str, Any], judges: list[str]) -> str | None:
    return joint_vote([v for j in judges if (v := battle["judges"].get(j, {}).get(OVERALL)) is not None])


def judges_ablation(battles: list[dict[str, Any]], judges: list[str],
                    matched: list[tuple[str, dict]] | None = None) -> dict[str, dict[str, Any]]:
    """{m: {judges, agreement_with_panel, n, accuracy?}} for the first m judges, m = 1..k."""
    out = {}
    judged = [b for b in battles if b["joint"].get(OVERALL) is not None]
    for m in range(1, len(judges) + 1):
        panel = judges[:m]
        pairs = [(_outcome(b["joint"][OVERALL], False), first_judges_vote(b, panel)) for b in judged]
        agreement = _accuracy(pairs)
        row: dict[str, Any] = {"judges": panel, "n": agreement["n"],
                               "agreement_with_panel": agreement["accuracy"]}
        if matched is not None:
            row["accuracy"] = _accuracy([(h, first_judges_vote(b, panel)) for h, b in matched])["accuracy"]
        out[str(m)] = row
    return out
