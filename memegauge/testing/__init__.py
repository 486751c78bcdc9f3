"""Test helpers: a local OpenAI-compatible server with fixed latency, deterministic answers and
fault injection (`memegauge.testing.server`)."""
