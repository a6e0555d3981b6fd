"""Hybrid relevance: h = λ·cos(E(q), E(d)) + (1-λ)·BM25(q, d), BM25 min-max normalized per query.

Used for the planning context (paper eq. 9), for choosing columns and for
the fallback retrieval. Tokens are lower-case words with snake_case split and
a light plural/-ing stem, so "runs" meets "run" and "study_hours" meets "hours".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from rank_bm25 import BM25Okapi
from ..lexicon import singular

STOPWORDS = frozenset("""
a an the and or of to in on at for by with from as is are was were be been being do does did done have has had
i me my mine we our us you your he she his her it its they them their this that these those what which who whom
whose when where why how much many any some all each per than then there here over under about into onto during
can could would should will shall may might must not no yes so if just also very more most less least
get got go went gone make made take took tell told say said know let s t
""".split())


def stem(w: str) -> str:
    """A deliberately light stemmer: plural s/es, -ing, -ed (enough for metadata matching)."""
    if (len(w) > 5 and w.endswith("ing")) or (len(w) > 4 and w.endswith("ed") and not w.endswith("eed")):
        w = w[:-3] if w.endswith("ing") else w[:-2]
        if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # running -> run, logged -> log
            w = w[:-1]
        return w
    return singular(w)


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


class BM25Index:
    """`bm25_raw(query, docs)` for many queries over the same docs, without rebuilding the index.

    Built once (BM25Okapi's idf, lengths and term counts), then each query only
    touches the documents that contain its tokens (an inverted index), with the
    same arithmetic as BM25Okapi.get_scores term by term, so the scores are
    bit-for-bit those of `bm25_raw`.
    """

    def __init__(self, docs: Sequence[Sequence[str]]):
        self.n = len(docs)
        self.empty = not docs or not any(docs)
        self._post: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if self.empty:
            return
        bm = BM25Okapi([list(d) or ["\x00"] for d in docs])
        self.idf, self.k1, self.b, self.avgdl = bm.idf, bm.k1, bm.b, bm.avgdl
        self.doc_len = np.array(bm.doc_len)
        post: dict[str, tuple[list[int], list[int]]] = {}
        for i, freqs in enumerate(bm.doc_freqs):
            for w, f in freqs.items():
                p = post.setdefault(w, ([], []))
                p[0].append(i)
                p[1].append(f)
        self._post = {w: (np.asarray(ix, dtype=np.int64), np.asarray(fr)) for w, (ix, fr) in post.items()}

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        if self.empty or not query_tokens:
            return np.zeros(self.n)
        score = np.zeros(self.n)
        k1, b = self.k1, self.b
        for q in query_tokens:
            hit = self._post.get(q)
            if hit is None:
                continue  # BM25Okapi adds idf * 0 / (...) = 0 to every document
            ix, tf = hit
            score[ix] += (self.idf.get(q) or 0) * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * self.doc_len[ix] / self.avgdl)))
        return np.maximum(score, 0.0)


@dataclass(frozen=True)
class HybridScores:
    cos: np.ndarray
    bm25: np.ndarray  # raw
    bm25_norm: np.ndarray
    h: np.ndarray


def hybrid(query_vec: np.ndarray, doc_vecs: np.ndarray, query_tokens: Sequence[str],
           doc_tokens: Sequence[Sequence[str]] | BM25Index, lam: float) -> HybridScores:
    """Eq. 9 for every document. Vectors are L2-normalized, so cos is a dot product.
    `doc_tokens` may be a BM25Index over the documents' tokens (same scores, no rebuild)."""
    index = doc_tokens if isinstance(doc_tokens, BM25Index) else None
    n = index.n if index is not None else len(doc_tokens)
    cos = (doc_vecs @ query_vec).astype(np.float64) if n else np.zeros(0)
    raw = index.scores(query_tokens) if index is not None else bm25_raw(query_tokens, doc_tokens)
    norm = minmax(raw)
    return HybridScores(cos=cos, bm25=raw, bm25_norm=norm, h=lam * cos + (1.0 - lam) * norm)


def stable_top(keys: np.ndarray, k: int, among: np.ndarray | None = None) -> np.ndarray:
    """Indices of the k smallest `keys`, in the order `np.argsort(keys, kind="stable")` puts them.

    among: ascending indices to choose from (all when None). Only the items
    at or below the k-th smallest key are sorted, so taking the best k of
    100k scores does not sort 100k; ties at the cut are kept and ordered by
    position, as a full stable sort orders them.
    """
    idx = np.arange(keys.size) if among is None else np.asarray(among)
    if k <= 0:
        return idx[:0]
    if idx.size > k:
        sub = keys[idx]
        idx = idx[sub <= np.partition(sub, k - 1)[k - 1]]
    return idx[np.argsort(keys[idx], kind="stable")][:k]
