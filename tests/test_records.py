"""Typed records: writers and readers share one model per kind; a record of an older store still
validates (and a legacy "rejected: reason" decision is read as decision + reason)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from memegauge.adammeme.records import MiningRecord, Proposal, ScoreRecord
from memegauge.models.spec import ModelRegistry
from memegauge.engine import Store, open_run


def _score(**overrides) -> ScoreRecord:
    fields = {"id": "t/0/race/m1", "target": "t", "repeat": 0, "category": "race", "meme": "m1",
              "text": "some text", "misbelief": "a misbelief", "iteration": 0, "reference": "ref",
              "answer": "ans", "comparison": "cmp Rating: [[3]]", "score": 3, "status": "scored",
              "failed_stage": None, "error_class": None, **overrides}
    return ScoreRecord(**fields)


def test_run_put_and_all_round_trip_a_typed_record(tmp_path):
    store = Store(tmp_path / "s.db")

    async def go():
        async with open_run(store, ModelRegistry({}), name="r", method="adammeme", config={}) as (run, _):
            run.put(_score())
            run.put_many([_score(id="t/0/race/m2", meme="m2", score=None, status="failed",
                                 failed_stage="scorer", error_class="unparseable")])
            return run.all(ScoreRecord)

    back = asyncio.run(go())
    assert [r.key for r in back] == ["t/0/race/m1", "t/0/race/m2"]
    assert isinstance(back[0], ScoreRecord) and back[0].stored() == _score().stored()
    assert back[1].score is None and back[1].failed_stage == "scorer"


def test_a_record_with_a_field_the_model_does_not_know_is_refused():
    with pytest.raises(ValidationError):
        ScoreRecord.model_validate({**_score().stored(), "scroe": 3})
    with pytest.raises(ValidationError):
        _score(failed_stage="miner")  # not a stage that can fail a score


def test_a_legacy_decision_string_reads_as_decision_and_reason():
    old = {"name": "race", "description": "d", "decision": "rejected: duplicate of 'race'",
           "judge": None, "examiner": None}
    proposal = Proposal.model_validate(old)
    assert (proposal.decision, proposal.reason) == ("rejected", "duplicate of 'race'")
    record = MiningRecord(meme="m1", status="ok", categories=[], votes={}, miners=[], proposals=[proposal],
                          labels=[])
    assert record.key == "m1" and MiningRecord.model_validate(record.stored()) == record


def test_a_field_retired_since_is_kept_when_read_but_refused_when_written(tmp_path):
    from memegauge.arena.records import GuidelineRecord
    from memegauge.records import read_records

    old = {"task": "m0#1", "meme": "m0", "ok": True, "text": "g", "versions": {"0": "g"}, "init_author": "a",
           "rounds": 1, "failed_rounds": 0, "skipped": ["b"], "error_class": None, "error": ""}
    store = Store(tmp_path / "s.db")

    async def go():
        async with open_run(store, ModelRegistry({}), name="r", method="arena", config={}) as (run, _):
            run.store.put_record(run.id, "guideline", "m0#1", old)  # as an older MemeGauge wrote it

    asyncio.run(go())
    (back,) = read_records(store, store.run_row("r")["id"], GuidelineRecord)
    assert isinstance(back, GuidelineRecord) and back.stored() == old
    with pytest.raises(ValidationError):
        GuidelineRecord.model_validate(old)
