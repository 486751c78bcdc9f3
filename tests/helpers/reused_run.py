"""A run name reused with another config: `eval fhm` on the local test server stored as run 'mine' with
``--limit 2``, then asked again with other options (tests/test_figures_said.py, tests/test_eval_outputs.py)."""

from __future__ import annotations

from pathlib import Path

from helpers.models import served_registry
from memegauge.cli import main
from memegauge.testing.server import start_server


def rerun_with(tmp_path: Path, capsys, *second: str) -> tuple[int, str]:
    """The exit code of the second `eval` (run 'mine' with `second` in place of the stored ``--limit 2``) and
    what it said on stderr, white space folded."""
    from test_benchmarks import fhm  # a test module: imported when used, as the tests that call this do

    with start_server() as server:
        served_registry(tmp_path, server.base_url, ["tsrv"])
        fhm(tmp_path / "fhm", 6)
        base = ["--store", str(tmp_path / "s.db"), "--models", str(tmp_path / "models.yaml"), "--quiet", "eval",
                "fhm", "--model", "tsrv", "--data", str(tmp_path / "fhm"), "--run", "mine"]
        assert main([*base, "--limit", "2"]) == 0
        capsys.readouterr()
        code = main([*base, *second])
        return code, " ".join(capsys.readouterr().err.split())
