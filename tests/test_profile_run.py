"""`memegauge profile --run-missing`: the plan (`--dry-run`: runs, calls and cost bound, nothing sent or written),
the real run (the calls made are the calls planned), `--budget` stopping it cleanly, and the rerun resuming without
asking any question twice (each missing part is a normal run of its method, resumed from the engine's cache)."""

from __future__ import annotations


from memegauge.config import load_registry
from memegauge.engine import Store
from memegauge.profiles.gather import build_profile
from memegauge.profiles.plan import plan
from memegauge.testing.server import start_server

from helpers.profile_world import BENCHMARKS, MODELS, ProfileWorld, write_inputs


def _args(root, *extra: str) -> list[str]:
    return ["profile", *MODELS, "--run-missing", "--with", f"memeqa={root / 'qa.yaml'}",
            "--with", f"adammeme={root / 'adam.yaml'}", "--with", f"arena={root / 'arena.yaml'}",
            "--bench-data", str(root / "bench"), "--skip-preflight", "--format", "json", "--out",
            str(root / "profile.json"), *extra]


def _planned(root) -> dict[str, tuple[int, bool]]:
    """run name → (planned calls, whether the count is exact), from the plan itself."""
    runs, _ = plan({}, list(MODELS), [f"memeqa={root / 'qa.yaml'}", f"adammeme={root / 'adam.yaml'}",
                                      f"arena={root / 'arena.yaml'}"], load_registry(root / "models.yaml"),
                   root / "bench")
    return {r.name: (sum(c.calls for c in r.calls), all(c.bound == "exact" for c in r.calls)) for r in runs}


def _distinct_calls(store: Store) -> int:
    """Calls in the store's cache, keyed by request: one per distinct question asked."""
    return store.db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


def test_dry_run_then_the_real_run_makes_the_calls_planned(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "no-catalogue"))  # only --bench-data's benchmarks
    with start_server(seed=4, style="realistic") as server:
        write_inputs(tmp_path, server.base_url)
        w = ProfileWorld(tmp_path, tmp_path / "store.db", tmp_path / "models.yaml")
        capsys.readouterr()
        assert w.cli(*_args(tmp_path, "--dry-run")) == 0
        said = capsys.readouterr()
        assert not w.store.exists() and server.stats["requests"] == 0  # nothing sent, nothing written
        planned = _planned(tmp_path)
        assert len(planned) == 4 + 1 + 1 + 2 * len(BENCHMARKS)  # MemeQA 2 versions × 2 models, one AdamMeme, one arena
        for name in planned:
            assert name in said.out
        assert "not planned" in said.out + said.err  # the benchmarks without data say so
        assert w.cli(*_args(tmp_path)) == 0
        store = Store(w.store)
        made = 0
        for name, (calls, exact) in planned.items():
            summary = store.run_summary(name)
            assert summary["status"] == "done"
            assert summary["calls"] == calls if exact else summary["calls"] <= calls, name
            made += summary["calls_made"]
        # every request the server got is one distinct stored call (the runs' calls and each model's picture check)
        assert server.stats["requests"] == _distinct_calls(store) >= made
    found = build_profile(store, list(MODELS))
    for page in found.models:
        assert {r.method for r in page.runs} == {"memeqa", "adammeme", "arena", *BENCHMARKS}
        assert sum(r.method == "memeqa" for r in page.runs) == 2 and page.missing == []
    assert (tmp_path / "profile.json").stat().st_size > 1000


def test_an_interrupted_profile_resumes_without_asking_any_question_twice(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMEGAUGE_DATA_DIR", str(tmp_path / "no-catalogue"))
    with start_server(seed=4, style="realistic", latency_ms=20) as server:
        write_inputs(tmp_path, server.base_url)
        models = tmp_path / "models.yaml"
        models.write_text(models.read_text().replace("max_concurrency: 8", "max_concurrency: 2")
                          .replace("backoff_s", "price_in: 2.5, price_out: 10, backoff_s"))
        w = ProfileWorld(tmp_path, tmp_path / "store.db", models)
        planned = _planned(tmp_path)
        assert w.cli(*_args(tmp_path, "--budget", "0.002")) == 1  # stopped cleanly by the budget
        err = capsys.readouterr().err
        assert "budget reached" in err
        store = Store(w.store)
        before = {r["name"]: r["status"] for r in store.list_runs()}
        assert "stopped" in before.values() and set(before) <= set(planned)
        first = server.stats["requests"]
        assert 0 < first
        assert w.cli(*_args(tmp_path)) == 0  # the same command, without the budget: it resumes
        runs = store.list_runs()
        assert {r["name"] for r in runs} == set(planned) and all(r["status"] == "done" for r in runs)
        # no question asked twice: the two executions together sent exactly one request per distinct stored call
        assert server.stats["requests"] == _distinct_calls(store)
        assert sum(store.run_summary(r["name"])["calls_made"] for r in runs) <= _distinct_calls(store)
