"""The declarative benchmark kit: a folder holding ``benchmark.yaml`` (and at most one ``hooks.py`` for what YAML
cannot say) becomes a registered `memegauge.methods.Method` (`benchmark_method`), so `report`, `export`, `compare`,
`view`, `rate` and the API work on its runs as on any method's. `memegauge eval` runs them (`kit/cli.py`).

Modules: `spec` (the YAML's typed form), `items` (reading a release in its own layout), `answers` (reading a
model's answer), `metrics` (accuracy, macro-F1, per-class P/R/F1, AUROC, each with its 95% interval and n),
`records`, `run`, `report`, `family` (the built-in folders' entry point), `cli`.
"""
