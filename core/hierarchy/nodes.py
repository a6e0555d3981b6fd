"""Rows of the `nodes` table (core/store.py migration 1) and their reads and writes.

Every write is a plain statement on the caller's connection: the caller owns
the transaction (no BEGIN/COMMIT here).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
import numpy as np

LEVELS = ("event", "episode", "topic")
_COLS = (
    "node_id, level, parent_id, description, text_emb, vis_emb, t_start, t_end, "
    "first_order, last_order, n_members, closed, round_id, image_ids"
)


@dataclass
class NodeRow:
    """One hierarchy node as stored. Internal and mutable; the public read API returns frozen views."""

    node_id: str
    level: str
    parent_id: str | None
    description: str
    text_emb: np.ndarray | None = field(default=None, repr=False)
    vis_emb: np.ndarray | None = field(default=None, repr=False)
    t_start: datetime | None = None
    t_end: datetime | None = None
    first_order: int = 0
    last_order: int = 0
    n_members: int = 0
    closed: bool = False
    round_id: str | None = None
    image_ids: tuple[str, ...] = ()


def _vec(v) -> np.ndarray | None:
    return None if v is None else np.asarray(v, dtype=np.float32)


def _list(v: np.ndarray | None) -> list[float] | None:
    return None if v is None else np.asarray(v, dtype=np.float32).tolist()


def _from_tuple(r) -> NodeRow:
    return NodeRow(
        node_id=r[0], level=r[1], parent_id=r[2], description=r[3] or "", text_emb=_vec(r[4]),
        vis_emb=_vec(r[5]), t_start=r[6], t_end=r[7], first_order=r[8], last_order=r[9],
        n_members=r[10] or 0, closed=bool(r[11]), round_id=r[12],
        image_ids=tuple(json.loads(r[13])) if r[13] else (),
    )


def _params(n: NodeRow) -> list:
    return [
        n.node_id, n.level, n.parent_id, n.description, _list(n.text_emb), _list(n.vis_emb), n.t_start, n.t_end,
        n.first_order, n.last_order, n.n_members, n.closed, n.round_id,
        json.dumps(list(n.image_ids)) if n.image_ids else None,
    ]


def load(con: duckdb.DuckDBPyConnection, node_id: str) -> NodeRow | None:
    r = con.execute(f"SELECT {_COLS} FROM nodes WHERE node_id = ?", [node_id]).fetchone()
    return _from_tuple(r) if r else None


def children(con: duckdb.DuckDBPyConnection, parent_id: str) -> list[NodeRow]:
    rows = con.execute(
        f"SELECT {_COLS} FROM nodes WHERE parent_id = ? ORDER BY first_order, node_id", [parent_id]
    ).fetchall()
    return [_from_tuple(r) for r in rows]


def open_episode(con: duckdb.DuckDBPyConnection) -> NodeRow | None:
    """The current (open) episode; at most one exists."""
    r = con.execute(
        f"SELECT {_COLS} FROM nodes WHERE level = 'episode' AND NOT closed ORDER BY first_order DESC LIMIT 1"
    ).fetchone()
    return _from_tuple(r) if r else None


def event_state(con: duckdb.DuckDBPyConnection, node_id: str) -> tuple[str | None, int | None, bool]:
    """(parent of event `node_id` or None, highest inserted event order or None, whether the event exists)."""
    row = con.execute(
        "SELECT (SELECT max(first_order) FROM nodes WHERE level = 'event'), "
        "(SELECT count(*) FROM nodes WHERE node_id = ?), (SELECT any_value(parent_id) FROM nodes WHERE node_id = ?)",
        [node_id, node_id],
    ).fetchone()
    return row[2], row[0], bool(row[1])


def insert(con: duckdb.DuckDBPyConnection, n: NodeRow) -> None:
    con.execute(f"INSERT INTO nodes ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _params(n))


def update(con: duckdb.DuckDBPyConnection, n: NodeRow) -> None:
    p = _params(n)
    con.execute(
        "UPDATE nodes SET level = ?, parent_id = ?, description = ?, text_emb = ?, vis_emb = ?, t_start = ?, "
        "t_end = ?, first_order = ?, last_order = ?, n_members = ?, closed = ?, round_id = ?, image_ids = ? "
        "WHERE node_id = ?",
        p[1:] + [p[0]],
    )


def delete(con: duckdb.DuckDBPyConnection, node_id: str) -> None:
    con.execute("DELETE FROM nodes WHERE node_id = ?", [node_id])
