"""Helpers shared by the test files: import them as `from helpers.<module> import <name>` (pyproject's
`pythonpath = ["tests"]` puts tests/ on the path; no test file imports another test file). Fixtures
built on them are in tests/conftest.py: `store`, `engine_scripts`, `method_runs`.

Where to find what (add to these rather than writing a new copy in a test file):

- `models`: `scripted_registry(*names, **fields)` (scripted models, no network) and
  `served_registry(folder, base_url, names)` (models.yaml for the local test server, loaded).
- `engine`: the call engine's scripted models (`engine_registry`, `request`, `register_engine_scripts`).
- `arena_scripted`: a scripted MemeArena world (targets of known quality, judges preferring the better
  answer): `config`, `make_registry`, `run`, `records`, `responder`, `CALLS`.
- `memeqa_data`: tiny MemeQA data sets in the official layout (`make_dataset`, `qa_dataset`) and
  `qa build` annotations (`write_annotations`).
- `worlds`: on-disk inputs (`arena_world`: memes + registry + arena.yaml on the test server;
  `adam_resume_world`; `adammeme_legacy_layout`: the original AdamMeme repository's results).
- `runs`: real runs of every method through the CLI against the test server (`world`, `run_all`,
  `World.cli`); the session fixture `method_runs` holds one of each.
- `synthetic`: runs of any size written straight into a store in each method's record kinds (no model),
  with XSS probes (`PROBE`, `XSS_IMG`, `XSS_SCRIPT`) in every free-text field on request.
- `html_page`: `Page`, a report page parsed into tables, scripts and attributes.
- `browser`: `open_page`, `console_errors` for tests that drive headless Chromium.
- `reports`: `without_clock` (a report minus when it ran and how long it took) for comparisons;
  `assert_same_figures` / `figure_differences` for figures held against a file made on another machine
  (floats within rel 1e-9: BLAS kernels differ between CPU types; everything else exact).
- `training`: `noise_picture`, `kill_at_first_checkpoint_then_resume`, `assert_same_dev_points`.
- `net`: `free_port`.
- `bench`: `load_bench(name)` loads a bench/ script as a module.

Asserts inside helpers are rewritten by pytest like a test's (tests/conftest.py registers the package),
so a failing helper assert shows its values.
"""
