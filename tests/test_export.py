"""`memegauge export`: real AdamMeme, Arena and MemeQA runs (CLI against the local test server), each
table loaded with pandas: one row per stored record, the documented columns and dtypes, ISO dates;
tables of another method refused; Parquet round-trips; nothing half-written."""

from __future__ import annotations

import io
import json

import pytest

from memegauge.adammeme.records import ScoreRecord, StepRecord
from memegauge.arena.records import BattleRecord, JudgmentRecord
from memegauge.engine import Store
from memegauge.memeqa.records import QuestionRecord
from memegauge.records import read_records
from memegauge.testing.server import start_server
from helpers.runs import run_all, world

pandas = pytest.importorskip("pandas")

RECORDS = {"samples": ScoreRecord, "steps": StepRecord, "battles": BattleRecord,
           "judgments": JudgmentRecord, "questions": QuestionRecord}
RUN_OF = {"samples": "adammeme", "steps": "adammeme", "battles": "arena", "judgments": "arena",
          "questions": "memeqa"}
SCORE_COLUMN = {"samples": "failure", "steps": "improved", "battles": "winner", "judgments": "winner",
                "questions": "correct"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    with start_server() as server:
        w = world(root, server.base_url)
        names = run_all(w)
    yield w, names


def exported(w, capsys, *args: str) -> str:
    capsys.readouterr()
    assert w.cli("export", *args) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("table", list(RECORDS))
def test_each_table_loads_in_pandas_with_one_row_per_record(runs, capsys, table):
    w, names = runs
    name = names[RUN_OF[table]]
    frame = pandas.read_csv(io.StringIO(exported(w, capsys, name, "--table", table)))
    store = Store(w.store)
    stored = read_records(store, store.run_row(name)["id"], RECORDS[table])
    assert len(stored) > 0 and len(frame) == len(stored)
    fields = list(RECORDS[table].model_fields)
    assert list(frame.columns[:2]) == ["run", "run_created"]
    assert set(fields) <= set(frame.columns) and SCORE_COLUMN[table] in frame.columns
    assert (frame["run"] == name).all()
    created = pandas.to_datetime(frame["run_created"], utc=True)  # ISO 8601, not epoch seconds
    assert created.dt.year.min() >= 2020
    store.close()


def test_dtypes_and_values_match_the_store(runs, capsys):
    w, names = runs
    questions = pandas.read_csv(io.StringIO(exported(w, capsys, names["memeqa"], "--table", "questions")))
    assert questions["correct"].dtype == bool and questions["rotations"].dtype.kind == "i"
    store = Store(w.store)
    stored = {q.id: q for q in read_records(store, store.run_row(names["memeqa"])["id"], QuestionRecord)}
    for row in questions.itertuples():
        assert row.correct == stored[row.id].correct
        assert json.loads(row.gold) == stored[row.id].gold  # nested values: one JSON text per cell
    samples = pandas.read_csv(io.StringIO(exported(w, capsys, names["adammeme"], "--table", "samples")))
    assert samples["score"].dtype.kind in "if" and set(samples["score"].dropna()) <= set(range(1, 11))
    assert (samples["failure"] == (samples["score"] <= 4)).all()  # the run's rule: at_or_below 4
    store.close()


@pytest.mark.parametrize("method", ["adammeme", "arena", "memeqa"])
def test_leaderboard_of_each_method(runs, capsys, method):
    w, names = runs
    frame = pandas.read_csv(io.StringIO(exported(w, capsys, names[method], "--table", "leaderboard")))
    assert len(frame) > 0
    assert {"run", "run_created", "method", "model", "group", "figure", "value", "ci95_lo", "ci95_hi", "n"} <= set(
        frame.columns)
    assert (frame["method"] == method).all() and frame["value"].dtype.kind == "f"
    bounded = frame.dropna(subset=["ci95_lo", "ci95_hi"])  # an interval on too few items has none (a note)
    assert ((bounded["ci95_lo"] <= bounded["value"]) & (bounded["value"] <= bounded["ci95_hi"])).all()
    if method == "adammeme":
        assert set(frame["model"]) == {"gpt-x", "llava-x"} and {"avg_score", "failure_rate"} <= set(frame["figure"])
    elif method == "arena":
        assert "win_rate" in set(frame["figure"])
    else:
        assert frame.loc[frame["figure"] == "accuracy", "value"].between(0, 1).all()


def test_jsonl_keeps_nesting_and_parquet_round_trips(runs, capsys, tmp_path):
    pytest.importorskip("pyarrow")
    w, names = runs
    lines = exported(w, capsys, names["arena"], "--table", "battles", "--format", "jsonl").splitlines()
    first = json.loads(lines[0])
    assert isinstance(first["joint"], dict) and first["winner"] == first["joint"].get("overall")
    out = tmp_path / "q.parquet"
    assert w.cli("export", names["memeqa"], "--table", "questions", "--format", "parquet", "--out", str(out)) == 0
    frame = pandas.read_parquet(out)
    csv_frame = pandas.read_csv(io.StringIO(exported(w, capsys, names["memeqa"], "--table", "questions")))
    assert len(frame) == len(csv_frame) and frame["correct"].dtype == bool
    assert [p.name for p in tmp_path.iterdir()] == ["q.parquet"]  # no temporary file left behind


def test_a_table_of_another_method_is_refused_with_the_tables_it_has(runs, capsys, tmp_path):
    w, names = runs
    out = tmp_path / "battles.csv"
    capsys.readouterr()
    assert w.cli("export", names["memeqa"], "--table", "battles", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "no table 'battles'" in err and "questions, leaderboard" in err
    assert not out.exists()
    assert w.cli("export", names["memeqa"], "--table", "questions", "--format", "parquet") == 2  # needs --out
    assert w.cli("export", names["memeqa"], "--table", "questions", "--format", "xlsx") == 2
