"""Retrieval by misbelief (§2.4, Eq. 7; App. A): BM25 over the misbelief sentences of one category.

`retrieve` scores every candidate of the query's category with bm25s (English stop words removed) and
returns the top k, best first; ties keep the candidates' given order, so the result never depends on
anything but the inputs. Candidates of other categories are never returned.

bm25s is imported on the first retrieval, with JAX hidden from it: bm25s's top-k module imports JAX
when it is installed and runs a top-k at import time, and JAX then takes 75% of the GPU's memory
(issue 24). Only `get_scores` is used here, which is numpy whatever the backend.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar
from collections.abc import Iterator, Sequence

import numpy as np


class HasMisbelief(Protocol):
    category: str
    misbelief: str


T = TypeVar("T", bound=HasMisbelief)


@contextmanager
def _hidden(*modules: str) -> Iterator[None]:
    """Within the block, `import` of these modules fails as if they were not installed (a None in
    sys.modules); a module already imported elsewhere is left alone."""
    hidden = [m for m in modules if m not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def _bm25s() -> Any:
    """bm25s on its numpy backend (see the module docstring)."""
    if "bm25s" not in sys.modules:
        with _hidden("jax", "jax.lax"):
            import bm25s  # noqa: F401
    return sys.modules["bm25s"]


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    return _bm25s().tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


def bm25_scores(query: str, documents: Sequence[str]) -> np.ndarray:
    """BM25 score of each document for the query (all zero when nothing matches)."""
    if not documents:
        return np.zeros(0)
    index = _bm25s().BM25()
    index.index(_tokens(documents), show_progress=False)
    query_tokens = _tokens([query])[0]
    if not query_tokens:
        return np.zeros(len(documents))
    return np.asarray(index.get_scores(query_tokens), dtype=float)


def retrieve(query: str, category: str, candidates: Sequence[T], k: int) -> list[T]:
    """The k candidates of `category` whose misbelief best matches `query`, best first."""
    pool = [c for c in candidates if c.category == category]
    scores = bm25_scores(query, [c.misbelief for c in pool])
    order = np.argsort(-scores, kind="stable")[:k]
    return [pool[i] for i in order]
