"""Running centroids of every topic, for assigning closing episodes without reading the table.

A topic is compared with a closing episode through the normalized mean of its
closed member episodes' text embeddings (and of their visual embeddings), kept
here as float64 sums updated when an episode joins; in the paper-exact mode
(`hierarchy_compare="description"`) the hierarchy replaces the text side with
the topic's description embedding (`set_text`) after each join. Sums are accumulated in
member round order both when episodes join and when the table is recomputed
from the stored episodes, so a memory built in several calls compares exactly
like one built at once.

The sums are saved in the table `topic_sums` (created here if missing, like
core/utility.py's table; one row per topic, written in the caller's
transaction with the topic's node), so reopening a large memory reads one row
per topic instead of every episode's embedding. A memory without that table, or
whose table does not match the stored episodes, is recomputed from the episodes.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np

from .fusion import fused_scores
from .nodes import vectors


@dataclass
class TopicStats:
    """What a topic row holds apart from its description and embeddings, from its closed members."""

    n_members: int = 0
    t_start: object = None
    t_end: object = None
    first_order: int = 0
    last_order: int = 0
    first_text: np.ndarray | None = None  # the first member's text embedding (a one-member topic takes it)


DDL = (
    "CREATE TABLE IF NOT EXISTS topic_sums(topic_id VARCHAR PRIMARY KEY, n_members INTEGER, t_start TIMESTAMP, "
    "t_end TIMESTAMP, first_order INTEGER, last_order INTEGER, text_sum DOUBLE[], vis_sum DOUBLE[], first_text FLOAT[])"
)
_CLOSED = "level = 'episode' AND closed AND parent_id IS NOT NULL"


class TopicTable:
    """Centroid matrices over all topics; rows are appended as topics are founded."""

    def __init__(self) -> None:
        self.saved_all = False  # topic_sums holds every topic (else the next save writes them all)
        self.ids: list[str] = []
        self.row: dict[str, int] = {}
        self.stats: dict[str, TopicStats] = {}
        self._text_sum: list[np.ndarray] = []
        self._vis_sum: list[np.ndarray | None] = []
        self._text = np.zeros((0, 0), np.float32)  # normalized centroids, capacity rows
        self._vis = np.zeros((0, 0), np.float32)
        self._has_vis = np.zeros(0, bool)

    def __len__(self) -> int:
        return len(self.ids)

    # ------------------------------------------------------------------ updates
    def add(self, topic_id: str, text: np.ndarray, vis: np.ndarray | None, t_start, t_end,
            first_order: int, last_order: int) -> None:
        """Add one closed episode (its stored float32 vectors) to a topic, founding the topic when new."""
        text64 = np.asarray(text, np.float32).astype(np.float64)
        vis64 = None if vis is None else np.asarray(vis, np.float32).astype(np.float64)
        i = self.row.get(topic_id)
        if i is None:
            i = len(self.ids)
            self.ids.append(topic_id)
            self.row[topic_id] = i
            self._text_sum.append(text64.copy())
            self._vis_sum.append(None if vis64 is None else vis64.copy())
            self.stats[topic_id] = TopicStats(1, t_start, t_end, first_order, last_order,
                                              np.asarray(text, np.float32).copy())
        else:
            self._text_sum[i] += text64
            if vis64 is not None:
                if self._vis_sum[i] is None:
                    self._vis_sum[i] = vis64.copy()
                else:
                    self._vis_sum[i] += vis64
            s = self.stats[topic_id]
            s.n_members += 1
            s.t_start = t_start if s.t_start is None or (t_start is not None and t_start < s.t_start) else s.t_start
            s.t_end = t_end if s.t_end is None or (t_end is not None and t_end > s.t_end) else s.t_end
            s.first_order = min(s.first_order, first_order)
            s.last_order = max(s.last_order, last_order)
        self._set_row(i)

    def set_text(self, topic_id: str, text: np.ndarray) -> None:
        """Compare closing episodes with `text` for this topic (its description embedding) instead of
        its centroid, until the topic next gains a member. Raises KeyError for an unknown topic."""
        i = self.row[topic_id]
        t = _unit(np.asarray(text, np.float32).astype(np.float64))
        if t.size != self._text.shape[1]:
            raise ValueError(f"topic {topic_id}: text embedding of length {t.size}, expected {self._text.shape[1]}")
        self._text[i] = t

    def text_centroid(self, topic_id: str) -> np.ndarray:
        return _unit(self._text_sum[self.row[topic_id]])

    def vis_sum(self, topic_id: str) -> np.ndarray | None:
        v = self._vis_sum[self.row[topic_id]]
        return None if v is None else v.copy()

    def vis_centroid(self, topic_id: str) -> np.ndarray | None:
        v = self._vis_sum[self.row[topic_id]]
        return None if v is None else _unit(v)

    def _set_row(self, i: int) -> None:
        t = _unit(self._text_sum[i])
        if self._text.shape[1] == 0:  # the first row: the encoder's dimension is known now
            rows = max(16, 2 * len(self.ids))
            self._text = np.zeros((rows, t.size), np.float32)
            self._vis = np.zeros((rows, 0), np.float32)
            self._has_vis = np.zeros(rows, bool)
        elif self._text.shape[1] != t.size:
            raise ValueError(f"topic text embeddings of lengths {self._text.shape[1]} and {t.size}")
        if i >= self._text.shape[0]:
            rows = 2 * (i + 1)
            self._text, self._vis, self._has_vis = _grow(self._text, rows), _grow(self._vis, rows), _grow(self._has_vis, rows)
        self._text[i] = t
        v = self._vis_sum[i]
        if v is not None:
            if self._vis.shape[1] == 0:
                self._vis = np.zeros((self._text.shape[0], v.size), np.float32)
            elif self._vis.shape[1] != v.size:
                raise ValueError(f"topic visual embeddings of lengths {self._vis.shape[1]} and {v.size}")
            self._vis[i] = _unit(v)
            self._has_vis[i] = True

    # ------------------------------------------------------------------ reads
    def best(self, text: np.ndarray | None, vis: np.ndarray | None, w_text: float, w_vis: float
             ) -> tuple[str | None, float]:
        """The topic most similar to an episode (the oldest on a tie) and its fused score; (None, -inf) when empty."""
        n = len(self.ids)
        if n == 0:
            return None, -np.inf
        vis_m, has = self._vis[:n], self._has_vis[:n]
        scores = fused_scores(text, vis if vis_m.shape[1] else None, self._text[:n], vis_m, has, w_text, w_vis)
        i = int(np.argmax(scores))
        return self.ids[i], float(scores[i])

    # ------------------------------------------------------------------ loading
    def save(self, con: duckdb.DuckDBPyConnection, topic_ids) -> None:
        """Write the sums of `topic_ids` (of every topic the first time) to topic_sums."""
        ids = list(self.ids) if not self.saved_all else [t for t in topic_ids if t in self.row]
        if not ids:
            return
        if not self.saved_all:
            con.execute(DDL)
            con.execute("DELETE FROM topic_sums")
        st = [self.stats[t] for t in ids]
        con.execute(
            "INSERT INTO topic_sums SELECT unnest(?::VARCHAR[]), unnest(?::INTEGER[]), unnest(?::TIMESTAMP[]), "
            "unnest(?::TIMESTAMP[]), unnest(?::INTEGER[]), unnest(?::INTEGER[]), unnest(?::DOUBLE[][]), "
            "unnest(?::DOUBLE[][]), unnest(?::FLOAT[][]) ON CONFLICT (topic_id) DO UPDATE SET "
            "n_members = excluded.n_members, t_start = excluded.t_start, t_end = excluded.t_end, "
            "first_order = excluded.first_order, last_order = excluded.last_order, text_sum = excluded.text_sum, "
            "vis_sum = excluded.vis_sum, first_text = excluded.first_text",
            [ids, [x.n_members for x in st], [x.t_start for x in st], [x.t_end for x in st],
             [x.first_order for x in st], [x.last_order for x in st],
             # numpy rows: bound much faster than Python lists of floats
             [self._text_sum[self.row[t]] for t in ids],
             [self._vis_sum[self.row[t]] for t in ids],
             [np.asarray(x.first_text, np.float32) for x in st]],
        )
        self.saved_all = True

    @classmethod
    def load(cls, con: duckdb.DuckDBPyConnection) -> "TopicTable":
        """All topics: from topic_sums when it matches the stored episodes, else recomputed from them."""
        has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'topic_sums'").fetchone()[0]
        if has:
            table = cls._from_sums(con)
            if table is not None:
                return table
        return cls.from_episodes(con)

    @classmethod
    def _from_sums(cls, con: duckdb.DuckDBPyConnection) -> "TopicTable | None":
        want = con.execute(f"SELECT count(DISTINCT parent_id), count(*) FROM nodes WHERE {_CLOSED}").fetchone()
        have = con.execute("SELECT count(*), coalesce(sum(n_members), 0) FROM topic_sums").fetchone()
        if tuple(want) != tuple(have):
            return None  # written by an older build, or not at all: recompute
        order = "ORDER BY first_order, topic_id"
        rows = con.execute(f"SELECT topic_id, n_members, t_start, t_end, first_order, last_order FROM topic_sums {order}"
                           ).fetchall()
        cols = con.execute(f"SELECT text_sum, vis_sum, first_text FROM topic_sums {order}").fetchnumpy()
        n = len(rows)
        texts = vectors(cols["text_sum"], n, np.float64)
        vis = vectors(cols["vis_sum"], n, np.float64)
        firsts = vectors(cols["first_text"], n)
        table = cls()
        table.ids = [r[0] for r in rows]
        table.row = {t: i for i, t in enumerate(table.ids)}
        table._text_sum, table._vis_sum = texts, vis
        for (tid, k, t_start, t_end, first, last), ft in zip(rows, firsts):
            table.stats[tid] = TopicStats(k, t_start, t_end, first, last, ft)
        for i in range(n):
            table._set_row(i)
        table.saved_all = True
        return table

    @classmethod
    def from_episodes(cls, con: duckdb.DuckDBPyConnection) -> "TopicTable":
        """All topics from the stored closed episodes, each summed in its members' round order."""
        order = f"WHERE {_CLOSED} ORDER BY first_order, node_id"
        rows = con.execute(f"SELECT parent_id, t_start, t_end, first_order, last_order FROM nodes {order}").fetchall()
        cols = con.execute(f"SELECT text_emb, vis_emb FROM nodes {order}").fetchnumpy()
        n = len(rows)
        texts = vectors(cols["text_emb"], n)
        vis = vectors(cols["vis_emb"], n)
        table = cls()
        if n == 0:
            return table
        missing = [rows[k][0] for k in range(n) if texts[k] is None]
        if missing:
            raise RuntimeError(f"hierarchy: a closed episode under {missing[0]} has no text embedding")
        row: dict[str, int] = {}
        idx = np.fromiter((row.setdefault(r[0], len(row)) for r in rows), dtype=np.int64, count=n)
        k = len(row)
        text = np.stack(texts).astype(np.float64)
        # np.add.at adds row by row in order: the same float64 sums as adding members one at a time
        sums = np.zeros((k, text.shape[1]), np.float64)
        np.add.at(sums, idx, text)
        has = np.fromiter((v is not None for v in vis), dtype=bool, count=n)
        vsums: list[np.ndarray | None] = [None] * k
        if has.any():
            vmat = np.stack([v for v in vis if v is not None]).astype(np.float64)
            vs = np.zeros((k, vmat.shape[1]), np.float64)
            np.add.at(vs, idx[has], vmat)
            vcount = np.bincount(idx[has], minlength=k)
            vsums = [vs[i] if vcount[i] else None for i in range(k)]
        table.ids = list(row)
        table.row = dict(row)
        table._text_sum = [sums[i] for i in range(k)]
        table._vis_sum = vsums
        for (parent, t_start, t_end, first, last), i, t in zip(rows, idx, texts):
            s = table.stats.get(parent)
            if s is None:
                table.stats[parent] = TopicStats(1, t_start, t_end, first, last, t)
                continue
            s.n_members += 1
            if t_start is not None and (s.t_start is None or t_start < s.t_start):
                s.t_start = t_start
            if t_end is not None and (s.t_end is None or t_end > s.t_end):
                s.t_end = t_end
            s.first_order, s.last_order = min(s.first_order, first), max(s.last_order, last)
        for i in range(k):
            table._set_row(i)
        return table


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return (v / n).astype(np.float32) if n > 0 else np.zeros(v.shape, np.float32)


def _grow(m: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows,) + m.shape[1:], m.dtype)
    out[: m.shape[0]] = m
    return out

