"""Instruments for tests and benchmarks, kept out of the runtime folders (no command runs them):

* `memegauge.testing.server`: a local OpenAI-compatible server with fixed latency, deterministic answers and
  fault injection (`realistic`, `workload` and `browser` serve it and the browser tests);
* `tiny_models`: tiny Hugging Face models built locally (fine-tuning and the `hf` backend on CPU);
* `synthetic_memes`: a meme set of any size drawn from the bundled samples;
* `ocr_check`: a second OCR engine (tesseract) that checks a text erasure;
* `archives`: .tar.gz archives, bombs included, for the `memegauge data` tests and `bench/hostile_data.py`.
"""
