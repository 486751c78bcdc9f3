"""Model registries for tests: scripted models (answers from `register_script` functions, no network)
and OpenAI-compatible entries pointing at the local test server (`memegauge.testing.server`)."""

from __future__ import annotations

from pathlib import Path

from memegauge.config import load_registry

from memegauge.models.spec import ModelRegistry, ModelSpec


def scripted_registry(*names: str, **fields) -> ModelRegistry:
    """One scripted model per name (its script registered under the same name), retried after 1-2 ms;
    `fields` apply to every entry (e.g. max_retries=1)."""
    fields = {"backend": "scripted", "backoff_s": 0.001, "backoff_max_s": 0.002, **fields}
    return ModelRegistry({n: ModelSpec(name=n, model=n, **fields) for n in names})


def served_registry(folder: Path, base_url: str, names: list[str], extra: str = "") -> ModelRegistry:
    """Write `folder/models.yaml` with one test-server model per name (concurrency 8, short backoffs;
    `extra` is appended to each entry, e.g. ", vision: false") and load it."""
    path = folder / "models.yaml"
    path.write_text("".join(f"{n}: {{backend: openai, model: {n}, base_url: {base_url}, max_concurrency: 8,"
                            f" backoff_s: 0.01, backoff_max_s: 0.02{extra}}}\n" for n in names))
    return load_registry(path)
