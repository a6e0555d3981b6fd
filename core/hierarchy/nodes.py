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


_BULK_SELECT = (
    "SELECT unnest(?::VARCHAR[]) AS node_id, unnest(?::VARCHAR[]) AS level, unnest(?::VARCHAR[]) AS parent_id, "
    "unnest(?::VARCHAR[]) AS description, unnest(?::FLOAT[][]) AS text_emb, unnest(?::FLOAT[][]) AS vis_emb, "
    "unnest(?::TIMESTAMP[]) AS t_start, unnest(?::TIMESTAMP[]) AS t_end, unnest(?::INTEGER[]) AS first_order, "
    "unnest(?::INTEGER[]) AS last_order, unnest(?::INTEGER[]) AS n_members, unnest(?::BOOLEAN[]) AS closed, "
    "unnest(?::VARCHAR[]) AS round_id, unnest(?::VARCHAR[]) AS image_ids"
)


def _columns(rows: list[NodeRow]) -> list[list]:
    """Parameters of _BULK_SELECT: one list per column (vectors as float32 arrays, bound faster than lists)."""
    cols = [list(col) for col in zip(*(_params(n) for n in rows))]
    cols[4] = [None if n.text_emb is None else np.asarray(n.text_emb, np.float32) for n in rows]
    cols[5] = [None if n.vis_emb is None else np.asarray(n.vis_emb, np.float32) for n in rows]
    return cols


def insert_many(con: duckdb.DuckDBPyConnection, rows: list[NodeRow]) -> None:
    """Insert new rows in one statement (executemany is row by row in DuckDB)."""
    if rows:
        con.execute(f"INSERT INTO nodes ({_COLS}) SELECT node_id, level, parent_id, description, text_emb, vis_emb, "
                    f"t_start, t_end, first_order, last_order, n_members, closed, round_id, image_ids::JSON "
                    f"FROM ({_BULK_SELECT})", _columns(rows))


def update_many(con: duckdb.DuckDBPyConnection, rows: list[NodeRow]) -> None:
    """Overwrite stored rows (matched by node_id) in one statement."""
    if rows:
        con.execute(
            "UPDATE nodes SET level = u.level, parent_id = u.parent_id, description = u.description, "
            "text_emb = u.text_emb, vis_emb = u.vis_emb, t_start = u.t_start, t_end = u.t_end, "
            "first_order = u.first_order, last_order = u.last_order, n_members = u.n_members, closed = u.closed, "
            f"round_id = u.round_id, image_ids = u.image_ids::JSON FROM ({_BULK_SELECT}) u "
            "WHERE nodes.node_id = u.node_id",
            _columns(rows),
        )


def update_stats_many(con: duckdb.DuckDBPyConnection, rows: list[NodeRow]) -> None:
    """Overwrite everything but the description of stored rows; text_emb becomes NULL (description stale)."""
    if rows:
        con.execute(
            "UPDATE nodes SET parent_id = u.parent_id, text_emb = NULL, vis_emb = u.vis_emb, t_start = u.t_start, "
            "t_end = u.t_end, first_order = u.first_order, last_order = u.last_order, n_members = u.n_members, "
            f"closed = u.closed FROM ({_BULK_SELECT}) u WHERE nodes.node_id = u.node_id",
            _columns(rows),
        )


def delete_many(con: duckdb.DuckDBPyConnection, node_ids: list[str]) -> None:
    if node_ids:
        con.execute("DELETE FROM nodes WHERE node_id IN (SELECT unnest(?::VARCHAR[]))", [node_ids])


def vectors(col, n: int, dtype=np.float32) -> list[np.ndarray | None]:
    """A fetched FLOAT[] / DOUBLE[] column (fetchnumpy: object array, masked where NULL) as arrays or None."""
    mask = np.zeros(n, dtype=bool)
    if isinstance(col, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(col)
        col = col.data
    return [None if mask[i] or col[i] is None else np.asarray(col[i], dtype=dtype) for i in range(n)]
