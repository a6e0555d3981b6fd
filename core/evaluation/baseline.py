"""A flat top-10 retrieval over the rounds of one history: the floor any retrieval figure is compared with.

For each question, rank every round of the history by
h = 0.7·cos(E(query), E(round)) + 0.3·BM25_norm(query, round)
(DESIGN.md, Evaluation: "a flat top-10 over rounds (MiniLM + BM25, 0.7/0.3)"),
with BM25 min-max normalised over the rounds for that query, as the planning
context normalises it (core.planning.scoring.hybrid). No hierarchy, no tables,
no planner: the engine's evidence recall has to beat this one's.

Round text = the round's dialogue text plus its image captions; the query =
the question plus the caption of the question's own image when it has one.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..model import QA, Round
from ..planning.scoring import BM25Index, hybrid, stable_top, tokens

FLAT_K = 10
FLAT_LAMBDA = 0.7  # DESIGN.md: MiniLM + BM25, 0.7/0.3


def round_text(r: Round) -> str:
    """The round's dialogue lines, then one line per image caption."""
    return "\n".join([r.text] + [i.caption for i in r.images if i.caption])


def question_query(question: str, image_caption: str | None = None) -> str:
    """The question, followed by its image's caption when there is one."""
    return f"{question}\n{image_caption}" if image_caption else question


class FlatIndex:
    """The rounds of one history, embedded once and BM25-indexed once; `top` ranks them for a query.

    `encoder` is a TextEncoder (core.protocols): encode(texts) -> L2-normalised (n, dim) rows.
    An empty history gives an index whose `top` is always [].
    """

    def __init__(self, rounds: Sequence[Round], encoder, *, lam: float = FLAT_LAMBDA):
        self.ids = [r.round_id for r in rounds]
        self.encoder, self.lam = encoder, lam
        texts = [round_text(r) for r in rounds]
        self.vecs = np.asarray(encoder.encode(texts), dtype=np.float32) if texts else np.zeros((0, 1), np.float32)
        self.bm25 = BM25Index([tokens(t) for t in texts])

    def top_many(self, queries: Sequence[str], k: int = FLAT_K) -> list[list[str]]:
        """The ids of the k best rounds for each query, best first (ties: earlier round first)."""
        if not self.ids or not queries:
            return [[] for _ in queries]
        qvecs = np.asarray(self.encoder.encode(list(queries)), dtype=np.float32)
        out = []
        for q, v in zip(queries, qvecs):
            h = hybrid(v, self.vecs, tokens(q), self.bm25, self.lam).h
            out.append([self.ids[i] for i in stable_top(-h, k)])
        return out


def flat_top_k(rounds: Sequence[Round], qas: Iterable[QA], encoder, captions: dict[str, str] | None = None,
               k: int = FLAT_K) -> dict[str, list[str]]:
    """qa_id -> the ids of the flat top-k rounds for that question. `captions`: qa_id -> the caption
    of the question's own image (missing or empty: the question alone is the query)."""
    qas = list(qas)
    captions = captions or {}
    index = FlatIndex(rounds, encoder)
    tops = index.top_many([question_query(q.question, captions.get(q.qa_id)) for q in qas], k)
    return {q.qa_id: t for q, t in zip(qas, tops)}
