"""Hybrid relevance: h = λ·cos(E(q), E(d)) + (1-λ)·BM25(q, d), BM25 min-max normalized per query.

Used for the planning context (paper eq. 9), for choosing columns and for
the fallback retrieval. Tokens are lower-case words with snake_case split and
a light plural/-ing stem, so "runs" meets "run" and "sleep_hours" meets "hours".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from rank_bm25 import BM25Okapi

STOPWORDS = frozenset("""
a an the and or of to in on at for by with from as is are was were be been being do does did done have has had
i me my mine we our us you your he she his her it its they them their this that these those what which who whom
whose when where why how much many any some all each per than then there here over under about into onto during
can could would should will shall may might must not no yes so if just also very more most less least
get got go went gone make made take took tell told say said know let s t
""".split())


def stem(w: str) -> str:
    """A deliberately light stemmer: plural s/es, -ing, -ed (enough for metadata matching)."""
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if (len(w) > 5 and w.endswith("ing")) or (len(w) > 4 and w.endswith("ed") and not w.endswith("eed")):
        w = w[:-3] if w.endswith("ing") else w[:-2]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # running -> run, logged -> log
            w = w[:-1]
        return w
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def tokens(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Lower-case stemmed word tokens; snake_case and camelCase are split."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text or "")
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower().replace("_", " ")):
        if not keep_stopwords and w in STOPWORDS:
            continue
        out.append(stem(w))
    return out


def minmax(x: np.ndarray) -> np.ndarray:
    """Min-max normalize; a constant vector maps to 1 where positive, else 0."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    if hi - lo < 1e-12:
        return (x > 0).astype(np.float64)
    return (x - lo) / (hi - lo)


def bm25_raw(query_tokens: Sequence[str], docs: Sequence[Sequence[str]]) -> np.ndarray:
    """Raw BM25 of the query against each tokenized document (0 for an empty corpus or query)."""
    if not docs or not query_tokens or not any(docs):
        return np.zeros(len(docs))
    # rank_bm25 divides by the mean length, so an all-empty corpus is guarded above; empty docs get a pad token
    bm = BM25Okapi([list(d) or ["\x00"] for d in docs])
    return np.maximum(np.asarray(bm.get_scores(list(query_tokens)), dtype=np.float64), 0.0)


@dataclass(frozen=True)
class HybridScores:
    cos: np.ndarray
    bm25: np.ndarray  # raw
    bm25_norm: np.ndarray
    h: np.ndarray


def hybrid(query_vec: np.ndarray, doc_vecs: np.ndarray, query_tokens: Sequence[str],
           doc_tokens: Sequence[Sequence[str]], lam: float) -> HybridScores:
    """Eq. 9 for every document. Vectors are L2-normalized, so cos is a dot product."""
    n = len(doc_tokens)
    cos = (doc_vecs @ query_vec).astype(np.float64) if n else np.zeros(0)
    raw = bm25_raw(query_tokens, doc_tokens)
    norm = minmax(raw)
    return HybridScores(cos=cos, bm25=raw, bm25_norm=norm, h=lam * cos + (1.0 - lam) * norm)
