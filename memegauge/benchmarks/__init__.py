"""The field's meme benchmarks, one folder each (``<name>/benchmark.yaml`` and at most one ``hooks.py``), and the
kit that turns each folder into a registered method (`memegauge.benchmarks.kit`). See docs/benchmarks.md."""
