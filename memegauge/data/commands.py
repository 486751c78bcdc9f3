"""The data sets' command: `data`, as `memegauge --help` lists it (`memegauge.registry.Command`); the command is in
`memegauge.data.cli`, imported when dispatched."""

from memegauge.registry import Command

DATA = Command(
    name="data", register="memegauge.data.cli:register",
    summary="Benchmark data: fetch, import, check and cite the data sets (docs/data.md).")
