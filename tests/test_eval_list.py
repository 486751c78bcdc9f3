"""`eval --list`: what a benchmark needs to run, said truthfully (a `data:` that no catalogue names needs
`--data DIR`, not "installed"); `eval --list NAME` lists that one benchmark."""

from __future__ import annotations

from test_benchmarks import FIFTH, _installed, _jsonl, cli, picture, world  # noqa: F401 (world: a fixture)


def test_a_benchmark_whose_data_no_catalogue_names_is_listed_and_refused_as_needing_data_dir(world):  # noqa: F811 (the fixture imported above)
    tmp, _ = world
    env = _installed(tmp, "fifth", FIFTH)
    listed = " ".join(cli(tmp, "eval", "--list", env=env).stdout.split())
    line = listed.split("fifth: A fifth benchmark", 1)[1].split(" goat-bench: ", 1)[0]
    assert "installed" not in line and "data fifth: in no data catalogue: run it " \
        "with --data DIR" in line, line
    done = cli(tmp, "eval", "fifth", "--model", "tsrv", env=env, check=False)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said
    assert "the data of fifth is in no data catalogue" in said and "memegauge eval fifth --data DIR" in said, said
    assert "no data set named" not in said and not (tmp / "s.db").exists()
    _jsonl(tmp / "d" / "dev.jsonl", [{"id": i, "img": picture(tmp / "d" / f"{i}.png", i), "text": f"fifth {i}",
                                      "label": "odd"} for i in range(3)])
    cli(tmp, "eval", "fifth", "--model", "tsrv", "--data", str(tmp / "d"), env=env)  # as it says: runs


def test_eval_list_names_lists_those_alone_and_refuses_an_unknown_one(capsys):
    from memegauge.cli import main

    assert main(["eval", "--list"]) == 0
    every = capsys.readouterr().out
    assert main(["eval", "--list", "fhm", "mami"]) == 0
    listed = capsys.readouterr().out
    names = [line.split(":", 1)[0] for line in listed.splitlines() if not line.startswith(" ")]
    assert names == ["fhm", "mami"] and "goat-bench" in every
    assert all(line in every for line in listed.splitlines())  # each as the whole listing has it
    assert main(["eval", "--list", "nosuch"]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "unknown benchmark nosuch" in said and "name one of: fhm, goat-bench" in said
