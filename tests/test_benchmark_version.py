"""A benchmark's `version:` is stored with its runs and kept apart: `compare` names a version difference as one of
the differences (refused without --allow-different, docs/reports.md), and `eval NAME --run R` refuses to resume a
run made by another version (it said "done" still carrying the old version)."""

from __future__ import annotations

import json
import os

from test_benchmarks import FIFTH, _installed, _jsonl, cli, picture, world  # noqa: F401 (world: a fixture)


def _at_version(tmp, version: str) -> dict[str, str]:
    """The fifth benchmark's YAML at `version` (installed once, then its version line rewritten in place)."""
    yaml = tmp / "site" / "fifthbench" / "benchmark.yaml"
    if not yaml.exists():
        _installed(tmp, "fifth", FIFTH)
        _jsonl(tmp / "d" / "dev.jsonl", [{"id": i, "img": picture(tmp / "d" / f"{i}.png", i), "text": f"fifth {i}",
                                          "label": ["funny", "dull", "odd"][i % 3]} for i in range(6)])
    yaml.write_text(FIFTH.replace('version: "1"', f'version: "{version}"'))
    return {**os.environ, "PYTHONPATH": str(tmp / "site")}


def test_compare_names_a_benchmark_version_difference_and_refuses_it_unless_allowed(world):  # noqa: F811 (the fixture imported above)
    tmp, _ = world
    for version, name in (("7", "r7"), ("8", "r8")):
        env = _at_version(tmp, version)
        cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), "--run", name, env=env)
    runs = {r["name"]: r for r in json.loads(cli(tmp, "runs", "--json", env=env).stdout)}
    assert set(runs) == {"r7", "r8"}
    done = cli(tmp, "compare", "r7", "r8", env=env, check=False)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said
    assert "asked different questions" in said and "version of fifth: r7 7, r8 8" in said, said
    allowed = json.loads(cli(tmp, "compare", "r7", "r8", "--allow-different", "--format", "json", env=env).stdout)
    assert {"key": "version of fifth", "values": {"r7": "7", "r8": "8"}} in allowed["differences"]
    assert json.loads(cli(tmp, "compare", "r7", "r7", "--format", "json", env=env).stdout)["differences"] == []


def test_a_run_made_by_another_benchmark_version_is_not_resumed_under_this_one(world):  # noqa: F811 (the fixture imported above)
    tmp, _ = world
    env = _at_version(tmp, "7")
    cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), "--run", "mine", env=env)
    env = _at_version(tmp, "8")
    done = cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), "--run", "mine", env=env,
               check=False)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said
    assert "run 'mine' was made by version 7 of benchmark fifth, and this is version 8" in said, said
    assert str(tmp / "s.db") in said and "choose another --run NAME" in said, said
    [run] = json.loads(cli(tmp, "runs", "--json", env=env).stdout)
    assert run["status"] == "done"  # the stored run untouched
    header = json.loads(cli(tmp, "report", "mine", "--format", "json", env=env).stdout)["run"]
    assert header["method_version"] == "7"
    cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), "--run", "mine8", env=env)


def test_a_run_stored_before_versions_were_differs_in_version_from_none():
    from memegauge.report.compare import differences

    def report(name, version):
        return {"run": {"name": name, "method": "fifth", "config": {}, "method_version": version}}

    assert differences([report("old", None), report("new", "8")]) == []
    assert differences([report("a", "7"), report("b", "8"), report("old", None)]) == [
        {"key": "version of fifth", "values": {"a": "7", "b": "8", "old": None}}]
