"""The retrieval-memory interface the tools need, and a simple implementation over `nodes`.

`RetrievalMemory` is what SemanticMatch / EventLocate call; core.hierarchy's
Hierarchy can be adapted to it. `NodeTableRetrieval` reads the `nodes`
table directly (text embeddings + BM25 over descriptions). When the
hierarchy has not been built (no event nodes), every stored round serves as
an event, so questions can still be answered from the raw history.
"""
from __future__ import annotations

import threading
from datetime import datetime
from typing import Protocol, Sequence, runtime_checkable

import duckdb
import numpy as np

from ..protocols import TextEncoder
from .event_context import EventContext
from .scoring import BM25Index, bm25_raw, minmax, stable_top, tokens

LEVELS = ("event", "episode", "topic")
HYBRID_LAMBDA = 0.5  # weight of the embedding cosine against BM25 when re-scoring a wrapped memory


@runtime_checkable
class RetrievalMemory(Protocol):
    def search(self, query: str, scope: str = "event", k: int = 10) -> list[tuple[str, float]]:
        """Best-first (node_id, relevance) within a scope: a level, 'all', or a node id (its events)."""

    def node(self, node_id: str) -> dict:
        """{'node_id', 'level', 'description', 'round_id' (events), 'time' (datetime), 't_start', 't_end'}."""

    def members(self, node_id: str) -> list[str]:
        """Direct children of a topic or episode (empty for events)."""


class NodeTableRetrieval:
    """RetrievalMemory over the `nodes` table: λ·cos(text_emb) + (1-λ)·BM25, per level.

    Reloads when the nodes or rounds change. Uses stored embeddings when they
    match the encoder's dimension, else encodes descriptions once.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, text_encoder: TextEncoder, lam: float = 0.7):
        self.con = con
        self.encoder = text_encoder
        self.lam = lam
        self._sig = None
        self._lock = threading.Lock()
        self._nodes: dict[str, dict] = {}
        self._children: dict[str, list[str]] = {}
        self._levels: dict[str, tuple[list[str], np.ndarray, list[list[str]]]] = {}

    # ------------------------------------------------------------------ loading
    def _signature(self, cur) -> tuple:
        n = cur.execute("SELECT count(*), max(last_order), max(n_members), count(description) FROM nodes").fetchone()
        r = cur.execute("SELECT count(*), max(round_order) FROM rounds").fetchone()
        return tuple(n) + tuple(r)

    def _ensure(self) -> None:
        with self._lock:
            cur = self.con.cursor()
            try:
                sig = self._signature(cur)
                if sig == self._sig:
                    return
                self._load(cur)
                self._sig = sig
            finally:
                cur.close()

    def _load(self, cur) -> None:
        rows = cur.execute(
            "SELECT n.node_id, n.level, n.parent_id, coalesce(nullif(n.description, ''), r.text, ''), n.text_emb, "
            "coalesce(n.t_start, r.time), n.t_end, n.round_id, coalesce(n.first_order, r.round_order) "
            "FROM nodes n LEFT JOIN rounds r ON r.round_id = n.round_id ORDER BY n.level, n.first_order, n.node_id"
        ).fetchall()
        if not any(r[1] == "event" for r in rows):
            # no hierarchy yet: every round is an event
            rows += [
                (f"round:{rid}", "event", None, text, None, t, t, rid, order)
                for rid, text, t, order in cur.execute(
                    "SELECT round_id, text, time, round_order FROM rounds ORDER BY round_order").fetchall()
            ]
        nodes: dict[str, dict] = {}
        children: dict[str, list[str]] = {}
        by_level: dict[str, list] = {lv: [] for lv in LEVELS}
        for nid, level, parent, desc, emb, t0, t1, rid, order in rows:
            nodes[nid] = {"node_id": nid, "level": level, "parent_id": parent, "description": desc or "",
                          "round_id": rid, "time": t0, "t_start": t0, "t_end": t1 or t0, "order": order}
            if parent:
                children.setdefault(parent, []).append(nid)
            if level in by_level:
                by_level[level].append((nid, desc or "", emb))
        levels = {}
        for level, items in by_level.items():
            ids = [i[0] for i in items]
            texts = [i[1] for i in items]
            embs = [i[2] for i in items]
            if items and all(e is not None and len(e) == self.encoder.dim for e in embs):
                mat = np.asarray(embs, dtype=np.float32)
                norms = np.linalg.norm(mat, axis=1, keepdims=True)
                mat = mat / np.where(norms == 0, 1, norms)
            elif items:
                mat = np.asarray(self.encoder.encode(texts), dtype=np.float32)
            else:
                mat = np.zeros((0, self.encoder.dim), dtype=np.float32)
            levels[level] = (ids, mat, [tokens(t) for t in texts])
        self._nodes, self._children, self._levels = nodes, children, levels

    # ------------------------------------------------------------------ protocol
    def node(self, node_id: str) -> dict:
        self._ensure()
        if node_id not in self._nodes:
            raise KeyError(node_id)
        return dict(self._nodes[node_id])

    def members(self, node_id: str) -> list[str]:
        self._ensure()
        return list(self._children.get(node_id, []))

    def events_under(self, node_id: str) -> list[str]:
        """All event ids below a node (the node itself for an event)."""
        self._ensure()
        node = self._nodes.get(node_id)
        if node is None:
            return []
        if node["level"] == "event":
            return [node_id]
        out: list[str] = []
        for c in self._children.get(node_id, []):
            out.extend(self.events_under(c))
        return out

    def search(self, query: str, scope: str = "event", k: int = 10) -> list[tuple[str, float]]:
        self._ensure()
        if scope in LEVELS:
            groups = [(scope, None)]
        elif scope == "all":
            groups = [(lv, None) for lv in LEVELS]
        elif scope in self._nodes:
            groups = [("event", set(self.events_under(scope)))]
        else:
            raise KeyError(scope)
        qv = np.asarray(self.encoder.encode([query])[0], dtype=np.float32)
        qt = tokens(query)
        scored: list[tuple[str, float]] = []
        for level, restrict in groups:
            ids, mat, toks = self._levels.get(level, ([], np.zeros((0, 1)), []))
            if not ids:
                continue
            idx = np.arange(len(ids)) if restrict is None else np.array(
                [i for i, n in enumerate(ids) if n in restrict], dtype=int)
            if idx.size == 0:
                continue
            cos = mat[idx] @ qv
            bm = minmax(bm25_raw(qt, [toks[i] for i in idx]))
            h = self.lam * cos + (1 - self.lam) * bm
            scored += [(ids[i], float(s)) for i, s in zip(idx, h)]
        scored.sort(key=lambda x: -x[1])
        return scored[:k]


def node_time(node: dict) -> datetime | None:
    t = node.get("time") or node.get("t_start")
    return t if isinstance(t, datetime) else None


def as_retrieval(obj) -> RetrievalMemory:
    """Check that an object offers the RetrievalMemory methods (raises TypeError otherwise)."""
    missing = [m for m in ("search", "node", "members") if not callable(getattr(obj, m, None))]
    if missing:
        raise TypeError(f"retrieval memory lacks {', '.join(missing)}")
    return obj


__all__: Sequence[str] = ("RetrievalMemory", "NodeTableRetrieval", "node_time", "as_retrieval", "LEVELS")


class AdaptedRetrieval:
    """Wraps any object with search/node/members (e.g. core.hierarchy.Hierarchy) into RetrievalMemory.

    node() may return a dict, a dataclass (NodeInfo) or None (-> KeyError);
    members() may return ids or objects with a `node_id`; the event time is
    taken from `time` or `t_start`. When the wrapped memory exposes its DuckDB
    connection (`con`, with the `nodes` table), a level search is re-scored
    with the hybrid relevance of paper eq. 9, λ·cos + (1-λ)·BM25 over the node
    descriptions: names and rare words ("LGBTQ", "Becoming Nicole") that an
    embedding blurs then still find their rounds (LoCoMo 26: event recall@10
    0.41 -> 0.65 at λ = 0.5). lam=1 keeps the wrapped memory's own ranking.
    """

    def __init__(self, inner, lam: float = HYBRID_LAMBDA, context: EventContext | None = None):
        self.inner = as_retrieval(inner)
        self.lam = lam
        self.context = context or EventContext()
        self._bm25: dict[str, tuple[tuple, list[str], BM25Index]] = {}
        self._places: tuple[tuple, list[str], np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()

    def _level_docs(self, level: str) -> tuple[list[str], BM25Index] | None:
        """(node ids, BM25 index of their descriptions) of a level, cached until the level changes;
        None without a table. Scores are bit for bit those of bm25_raw over the descriptions."""
        con = getattr(self.inner, "con", None)
        if con is None or self.lam >= 1.0:
            return None
        cur = con.cursor()
        try:
            sig = tuple(cur.execute("SELECT count(*), max(first_order), max(last_order), sum(length(description)) "
                                    "FROM nodes WHERE level = ?", [level]).fetchone())
            with self._lock:
                hit = self._bm25.get(level)
                if hit is not None and hit[0] == sig:
                    return hit[1], hit[2]
            rows = cur.execute("SELECT node_id, coalesce(description, '') FROM nodes WHERE level = ? "
                               "ORDER BY first_order, node_id", [level]).fetchall()
        except duckdb.Error:
            return None
        finally:
            cur.close()
        ids = [r[0] for r in rows]
        index = BM25Index([tokens(r[1]) for r in rows])
        with self._lock:
            self._bm25[level] = (sig, ids, index)
        return ids, index

    def _dense(self, query: str, level: str, ids: list[str]) -> np.ndarray:
        """Dense scores aligned with `ids` (0 for a node the wrapped memory does not score)."""
        scorer = getattr(self.inner, "level_scores", None)
        if callable(scorer):  # core.hierarchy.Hierarchy: every score of the level as one array
            got_ids, scores = scorer(query, level)
            if len(got_ids) == len(ids) and (got_ids is ids or list(got_ids) == ids):
                return np.asarray(scores, dtype=np.float64)
            dense = dict(zip(got_ids, np.asarray(scores, dtype=np.float64).tolist()))
        else:
            dense = {str(n): float(s) for n, s in self.inner.search(query, level, len(ids))}
        return np.array([dense.get(i, 0.0) for i in ids])

    def _event_places(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """(session number, round order) of each event of `ids`, cached until the events change;
        None when the wrapped memory has no table of rounds to place them."""
        con = getattr(self.inner, "con", None)
        if con is None:
            return None
        cur = con.cursor()
        try:
            sig = tuple(cur.execute("SELECT count(*), max(first_order) FROM nodes WHERE level = 'event'").fetchone())
            with self._lock:
                hit = self._places
                if hit is not None and hit[0] == sig and hit[1] is ids:
                    return hit[2], hit[3]
            rows = dict((nid, (sid, order)) for nid, sid, order in cur.execute(
                "SELECT n.node_id, r.session_id, r.round_order FROM nodes n JOIN rounds r ON r.round_id = n.round_id "
                "WHERE n.level = 'event'").fetchall())
        except duckdb.Error:
            return None
        finally:
            cur.close()
        numbers: dict[str, int] = {}
        session = np.array([numbers.setdefault(rows.get(i, (i, 0))[0], len(numbers)) for i in ids], dtype=np.int64)
        order = np.array([rows.get(i, (None, -1))[1] for i in ids], dtype=np.int64)
        with self._lock:
            self._places = (sig, ids, session, order)
        return session, order

    def _hybrid(self, query: str, level: str, k: int) -> list[tuple[str, float]] | None:
        docs = self._level_docs(level)
        if docs is None or not docs[0]:
            return None
        ids, index = docs
        bm = minmax(index.scores(tokens(query)))
        h = self.lam * self._dense(query, level, ids) + (1 - self.lam) * bm
        if level == "event" and self.context.active:
            places = self._event_places(ids)
            if places is not None:
                h = self.context.rescore(h, *places)
        top = stable_top(-h, k)
        return [(ids[i], float(h[i])) for i in top]

    def search(self, query: str, scope: str = "event", k: int = 10) -> list[tuple[str, float]]:
        levels = LEVELS if scope == "all" else (scope,) if scope in LEVELS else None
        if levels is not None:
            out: list[tuple[str, float]] = []
            for lv in levels:
                got = self._hybrid(query, lv, k)
                if got is None:
                    break
                out += got
            else:
                out.sort(key=lambda x: -x[1])
                return out[:k]
        return [(str(n), float(s)) for n, s in self.inner.search(query, scope, k)]

    def node(self, node_id: str) -> dict:
        n = self.inner.node(node_id)
        if n is None:
            raise KeyError(node_id)
        if not isinstance(n, dict):
            from dataclasses import asdict, is_dataclass
            n = asdict(n) if is_dataclass(n) else dict(vars(n))
        n = dict(n)
        n.setdefault("time", n.get("t_start"))
        n.setdefault("node_id", node_id)
        return n

    def members(self, node_id: str) -> list[str]:
        return [m if isinstance(m, str) else getattr(m, "node_id") for m in self.inner.members(node_id)]


def adapt(obj, context: EventContext | None = None) -> RetrievalMemory:
    """`obj` itself when it is a NodeTableRetrieval or AdaptedRetrieval, else wrapped (events read in
    `context`)."""
    return obj if isinstance(obj, (NodeTableRetrieval, AdaptedRetrieval)) else AdaptedRetrieval(obj, context=context)
