"""In-memory matrices of the stored node embeddings, for vectorized search.

Loaded once per level and kept until the nodes table changes: the owner calls
`invalidate()` after writing, and `fresh()` also compares a cheap fingerprint
of the table so that a rolled-back transaction or another writer on the same
connection cannot leave stale vectors behind.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np

from .nodes import LEVELS


@dataclass
class LevelIndex:
    ids: list[str]
    text: np.ndarray  # (n, d) float32, normalized rows
    vis: np.ndarray  # (n, dv) float32, zero rows where has_vis is False
    has_vis: np.ndarray  # (n,) bool
    orders: np.ndarray  # (n,) int64 first_order
    round_ids: list[str | None]
    parents: list[str | None]


def _stack(col, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Stack a fetched FLOAT[] column (object array, masked where NULL) into a matrix and a presence mask."""
    mask = np.ones(n, dtype=bool)
    if isinstance(col, np.ma.MaskedArray):
        mask = ~np.ma.getmaskarray(col)
        col = col.data
    dim = next((len(col[i]) for i in range(n) if mask[i] and col[i] is not None), 0)
    out = np.zeros((n, dim), dtype=np.float32)
    for i in range(n):
        if mask[i] and col[i] is not None:
            out[i] = np.asarray(col[i], dtype=np.float32)
        else:
            mask[i] = False
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return out, mask


class EmbeddingIndex:
    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self._levels: dict[str, LevelIndex] = {}
        self._fingerprint: tuple | None = None

    def invalidate(self) -> None:
        self._levels.clear()
        self._fingerprint = None

    def _current_fingerprint(self) -> tuple:
        return self.con.execute(
            "SELECT count(*), coalesce(sum(n_members), 0), coalesce(max(last_order), 0), "
            "count(parent_id), count(vis_emb), coalesce(sum(length(description)), 0) FROM nodes"
        ).fetchone()

    def level(self, level: str) -> LevelIndex:
        """The matrices of one level ("event", "episode" or "topic"), loading them if needed."""
        return self.levels((level,))[0]

    def levels(self, levels: tuple[str, ...] | list[str]) -> list[LevelIndex]:
        """The matrices of several levels, checking the table's fingerprint once (it scans the table)."""
        bad = [lvl for lvl in levels if lvl not in LEVELS]
        if bad:
            raise ValueError(f"unknown hierarchy level {bad[0]!r}; expected one of {', '.join(LEVELS)}")
        fp = self._current_fingerprint()
        if fp != self._fingerprint:
            self._levels.clear()
            self._fingerprint = fp
        for level in levels:
            if level not in self._levels:
                self._levels[level] = load_level(self.con, level)
        return [self._levels[level] for level in levels]


def load_level(con: duckdb.DuckDBPyConnection, level: str) -> LevelIndex:
    """Read one level's embeddings and positions from the nodes table into matrices (round order)."""
    cols = con.execute(
        "SELECT node_id, text_emb, vis_emb, first_order, round_id, parent_id FROM nodes "
        "WHERE level = ? ORDER BY first_order, node_id",
        [level],
    ).fetchnumpy()
    ids = [str(x) for x in cols["node_id"]]
    n = len(ids)
    text, _ = _stack(cols["text_emb"], n)
    vis, has_vis = _stack(cols["vis_emb"], n)
    return LevelIndex(
        ids=ids,
        text=text,
        vis=vis,
        has_vis=has_vis,
        orders=np.asarray(cols["first_order"], dtype=np.int64).reshape(n),
        round_ids=[None if x is None else str(x) for x in _plain(cols["round_id"])],
        parents=[None if x is None else str(x) for x in _plain(cols["parent_id"])],
    )


def _plain(col) -> list:
    """A fetched column as a list, with None where it was NULL."""
    if isinstance(col, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(col)
        return [None if m else v for v, m in zip(col.data.tolist(), mask)]
    return col.tolist()
