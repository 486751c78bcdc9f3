"""Retrieval by misbelief (§2.4, Eq. 7; App. A): BM25 over the misbelief sentences of one category.

`retrieve` scores every candidate of the query's category with bm25s (English stop words removed) and
returns the top k, best first; ties keep the candidates' given order, so the result never depends on
anything but the inputs. Candidates of other categories are never returned.
"""

from __future__ import annotations

from typing import Protocol, Sequence, TypeVar

import bm25s
import numpy as np


class HasMisbelief(Protocol):
    category: str
    misbelief: str


T = TypeVar("T", bound=HasMisbelief)


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


def bm25_scores(query: str, documents: Sequence[str]) -> np.ndarray:
    """BM25 score of each document for the query (all zero when nothing matches)."""
    if not documents:
        return np.zeros(0)
    index = bm25s.BM25()
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
