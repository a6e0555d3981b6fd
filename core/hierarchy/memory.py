"""The retrieval memory: topic -> episode -> event hierarchy (paper 3.4, appendix A).

Construction, one round at a time in round order (`Hierarchy.insert`):

- the round becomes an event: text = dialogue + image captions + OCR text,
  text embedding of that text, visual embedding = normalized mean of its
  images' vectors (none when no image has bytes);
- it is compared with the current (open) episode only: it joins it when the
  time gap is at most `episode_max_gap_hours` and the fused similarity (eq. 13)
  exceeds θ_epi; otherwise that episode is closed and assigned to its best
  topic among all topics (fused similarity > θ_topic, else it founds a new
  topic), and a new episode is opened with the event;
- an episode's description is regenerated (LLM when configured, else
  extractive, core/describe.py) and embedded (eq. 11); its visual embedding is
  the normalized mean of its image-bearing events'. A topic is refreshed the
  same way from its episodes when one joins.

What is compared, `config.hierarchy_compare`:

- "description" (the default, the paper's eq. 11-13): a new event is compared
  with the open episode's description embedding, and that description is
  regenerated and re-embedded after each insertion (one encoder call per
  insert once the episode has two events); a closing episode is compared with
  each topic's description embedding, which is regenerated and re-embedded
  each time a topic gains an episode.
- "centroid" (faster, for large histories; see bench/build_bench.py and
  bench/hierarchy_semantics.py): the text side of both comparisons is a
  running centroid, the normalized mean of the open episode's event
  embeddings and of a topic's member episodes' embeddings. Descriptions are
  still generated and embedded (the stored text_emb follows eq. 11, so search
  is the same), but once per batch instead of once per insert.

Visual sides are the same in both modes (means of image-bearing members).
A memory can be continued in the other mode: the state a mode needs is
recomputed from the stored nodes on load.

Cost: construction reads nothing from the table per insert (the open episode,
the topic centroids and the topic row stats live in memory, reloaded when
the open episode's row shows that someone else wrote or a transaction rolled
back). Inside `batch()` (the build: one per transaction) descriptions are
computed once per batch and embedded in one encoder call per level; topics
that gained members and the still-open episode are written with a NULL
text_emb and described by `finalize()` (or a flush outside a batch), so each
topic description is embedded once per build. A topic is described from its
first 8 and latest 24 member descriptions, so its cost does not grow with it.

Choices the paper leaves open:

- A node with a single member takes that member's embeddings, and its
  description (shortened extractively when longer than 300 characters). So
  opening an episode or founding a topic costs no encoder call.
- Time gaps are absolute, so a round far *earlier* than the episode (a history
  added out of time order) also starts a new episode.
- `finalize()` (called by the build after its last round) attaches the open
  episode to its best topic provisionally, so it is visible in the tree and in
  topic search. The next `insert` first undoes that attachment (the topic is
  refreshed from its closed members, or removed when it had no other), and the
  episode is assigned for good when it closes. Because every description,
  embedding and centroid is a pure function of a node's members (centroids
  are summed in member order), building in two halves (with finalize and a
  reopen in between), or with other batch boundaries, gives the same
  hierarchy as building at once.

Node ids are derived from round ids: event "ev:<round>", episode
"ep:<its first round>", topic "tp:<first round of its founding episode>".

All writes happen on the caller's connection inside the caller's transaction.
"""
from __future__ import annotations

import json
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterator, Sequence

import duckdb
import numpy as np

from .. import prompts
from ..config import DEFAULT, Config
from ..describe import MAX_CHARS, describe
from ..errors import LLMError
from ..model import Round
from ..protocols import LLM, ImageEncoder, TextEncoder
from . import nodes
from .fusion import fused_scores, fused_similarity, mean_direction, normalize
from .index import EmbeddingIndex
from .naming import event_name, node_names
from .nodes import LEVELS, NodeRow
from .topics import TopicTable
from .views import InsertResult, LocatedEvent, NodeInfo, TreeNode

SCOPES = ("event", "episode", "topic", "all")
_LLM_INPUT_CHARS = 6000  # member texts sent to the LLM for one description
_LLM_MAX_CHARS = 600  # a longer LLM description is cut
# A topic is described from its first and its latest member descriptions only, so the cost of
# a topic gaining a member does not grow with the topic (the description is <= 300 chars anyway).
TOPIC_FIRST_MEMBERS = 8
TOPIC_LATEST_MEMBERS = 24


def event_text(round: Round, ocr: dict[str, str] | None = None) -> str:
    """The text an event keeps and embeds: dialogue lines, then each image's caption and OCR text."""
    lines = [round.text] if round.text else []
    ocr = ocr or {}
    for img in round.images:
        if img.caption:
            lines.append(f"Image: {img.caption}")
        if ocr.get(img.image_id):
            lines.append(f"Text in image: {' '.join(ocr[img.image_id].split())}")
    return "\n".join(lines)


def _naive_utc(t: datetime) -> datetime:
    # DuckDB TIMESTAMP is naive; compare like with like
    return t.astimezone(timezone.utc).replace(tzinfo=None) if t.tzinfo else t


class Hierarchy:
    """The retrieval memory over the `nodes` table of an open memory connection.

    Encoders and the optional LLM are passed in (never built here). Reads are
    vectorized over embedding matrices cached in the object and reloaded after
    any change to the table.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        text_encoder: TextEncoder,
        image_encoder: ImageEncoder | None,
        config: Config = DEFAULT,
        llm: LLM | None = None,
    ):
        self.con = con
        self.text_encoder = text_encoder
        self.image_encoder = image_encoder
        self.config = config
        # episode and topic descriptions by the model only where config.llm_steps says "describe"
        self.llm = llm if config.uses_model("describe") else None
        # how independent descriptions of one batch are made: the builtin map, or a thread pool's
        # (the build sets it when model calls may be in flight together); results keep their order
        self.map = map
        self.fallbacks: list[str] = []  # descriptions that fell back from the LLM to extractive
        self._index = EmbeddingIndex(con)
        self._state: _State | None = None  # construction state, loaded on the first insert / finalize
        self._exact = config.hierarchy_compare == "description"
        self._deferred = False  # inside batch()

    # ------------------------------------------------------------------ construction
    def insert(
        self,
        round_order: int,
        round: Round,
        ocr: dict[str, str] | None = None,
        image_vectors: dict[str, np.ndarray] | None = None,
        text_vector: np.ndarray | None = None,
    ) -> InsertResult:
        """Add one round as an event and update its episode (and, when one closes, a topic).

        image_vectors: image id -> embedding from the image encoder (the build
        batches them); images with bytes but no vector are encoded here, images
        without bytes (LoCoMo) have no visual embedding. text_vector: the
        precomputed embedding of `event_text(round, ocr)`.
        Outside `batch()` the nodes are written before returning; inside it they
        are written when the batch ends, and topic_id / new_topic of a closed
        episode are then None (it is assigned at the end of the batch).
        Idempotent: a round already inserted is skipped (skipped=True).
        Raises ValueError when round_order is not after every inserted round
        (the hierarchy is built in round order) or text_vector has the wrong shape.
        """
        st = self._ready()
        ev_id = f"ev:{round.round_id}"
        if st.last_order is not None and round_order <= st.last_order:
            parent = self._event_parent(st, ev_id)
            if parent is not None:
                return InsertResult(ev_id, parent, False, skipped=True)
            raise ValueError(
                f"round {round.round_id}: order {round_order} is not after the last inserted round "
                f"(order {st.last_order}); the hierarchy is built in round order"
            )
        text = event_text(round, ocr)
        tvec = self._text_vector(text, text_vector, round.round_id)
        vvec = self._event_visual(round, image_vectors)
        t = _naive_utc(round.time)
        event = NodeRow(
            node_id=ev_id, level="event", parent_id=None, description=text, text_emb=tvec, vis_emb=vvec,
            t_start=t, t_end=t, first_order=round_order, last_order=round_order, n_members=1, closed=True,
            round_id=round.round_id, image_ids=tuple(i.image_id for i in round.images),
        )
        if st.provisional is not None:
            self._detach(st)
        episode = st.open
        similarity = gap_hours = None
        closed_id = None
        if episode is not None:
            gap_hours = abs((t - episode.node.t_end).total_seconds()) / 3600.0
            if self._exact and episode.described != len(episode.members):
                self._describe_episodes([episode])  # loaded from a memory built in the other mode
            ep_text = episode.node.text_emb if self._exact else episode.text_centroid()
            similarity = fused_similarity(tvec, vvec, ep_text, episode.vis_centroid(),
                                          self.config.w_text, self.config.w_visual)
            if not (gap_hours <= self.config.episode_max_gap_hours and similarity > self.config.theta_epi):
                episode.node.closed = True
                st.closing.append(episode)
                st.dirty_episodes[episode.node.node_id] = episode
                closed_id = episode.node.node_id
                episode = None
        opened = episode is None
        if opened:
            episode = _Episode(NodeRow(node_id=f"ep:{round.round_id}", level="episode", parent_id=None, description=""))
            st.open = episode
        event.parent_id = episode.node.node_id
        episode.add(event)
        if self._exact:
            # eq. 11 after each insertion: the next event is compared with this description's embedding
            self._describe_episodes([episode])
        st.new_events[ev_id] = event
        st.dirty_episodes[episode.node.node_id] = episode
        st.last_order = round_order
        assigned = {} if self._deferred else self._flush(st)
        topic_id, new_topic = assigned.get(closed_id, (None, False))
        return InsertResult(
            event_id=ev_id, episode_id=episode.node.node_id, opened_episode=opened, closed_episode=closed_id,
            topic_id=topic_id, new_topic=new_topic, similarity=similarity, gap_hours=gap_hours,
        )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Defer writes and description work of the inserts inside the block to its end.

        The build wraps each transaction's rounds in one batch: the episodes and
        topics touched are described and embedded once per batch (one encoder
        call per level) and all rows are written in a few statements. The nodes
        table is only current after the block; the caller's transaction must
        still be open when it ends. On an exception nothing is written and the
        construction state is reloaded from the table on next use.
        """
        if self._deferred:
            raise RuntimeError("Hierarchy.batch() blocks do not nest")
        st = self._ready()
        self._deferred = True
        try:
            yield
            self._flush(st, describe_topics=False)
        except BaseException:
            self._state = None
            raise
        finally:
            self._deferred = False

    def flush(self) -> None:
        """Write everything deferred so far, topic descriptions included (also callable inside a batch)."""
        if self._state is not None:
            self._flush(self._state)

    def finalize(self) -> str | None:
        """Attach the open episode to its best topic provisionally (see the module doc).

        Returns the topic id, or None when there is no open episode. Calling it
        twice is harmless; the next `insert` undoes the attachment first.
        """
        st = self._ready()
        self._flush(st)
        episode = st.open
        if episode is None:
            return None
        if st.provisional is not None:
            return st.provisional
        topic_id, _ = self._best_topic(st, episode)
        if topic_id is None:
            topic_id = "tp:" + episode.node.node_id.split(":", 1)[1]
        episode.node.parent_id = topic_id
        nodes.update(self.con, episode.node)
        self._write_topics(st, [topic_id], extra=episode)
        st.provisional = topic_id
        st.check = self._signature(st)
        self._index.invalidate()
        return topic_id

    # construction state --------------------------------------------------------
    def _ready(self) -> "_State":
        """The construction state, loaded from the table when missing or when the table changed under it."""
        st = self._state
        if st is not None and (self._deferred or self._stored_signature(st) == st.check):
            return st
        self._state = st = _State.load(self.con)
        if self._exact:
            self._load_topic_descriptions(st)
        st.check = self._signature(st)
        return st

    @staticmethod
    def _signature(st: "_State") -> tuple:
        ep = st.open
        if ep is None:
            return (None,)
        return (ep.node.node_id, len(ep.members), ep.node.last_order, st.provisional)

    def _stored_signature(self, st: "_State") -> tuple:
        # the open episode changes with every insert and finalize: if its row is what this object
        # last wrote, nothing was rolled back or written by someone else since
        if st.open is None:
            return (None,) if self.con.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0 else ("changed",)
        row = self.con.execute(
            "SELECT n_members, last_order, parent_id, closed FROM nodes WHERE node_id = ?", [st.open.node.node_id]
        ).fetchone()
        if row is None or row[3]:
            return ("changed",)
        return (st.open.node.node_id, row[0], row[1], row[2])

    def _event_parent(self, st: "_State", ev_id: str) -> str | None:
        if ev_id in st.new_events:
            return st.new_events[ev_id].parent_id
        row = self.con.execute("SELECT parent_id FROM nodes WHERE node_id = ?", [ev_id]).fetchone()
        return None if row is None else (row[0] or "")

    def _detach(self, st: "_State") -> None:
        """Undo finalize's provisional attachment of the open episode."""
        topic_id = st.provisional
        st.provisional = None
        st.open.node.parent_id = None
        st.dirty_episodes[st.open.node.node_id] = st.open
        if topic_id in st.topics.row:
            st.dirty_topics.add(topic_id)  # rewritten from its closed members
        else:
            st.deleted_topics.add(topic_id)

    def _best_topic(self, st: "_State", episode: "_Episode") -> tuple[str | None, float]:
        best_id, best = st.topics.best(episode.node.text_emb, episode.node.vis_emb,
                                       self.config.w_text, self.config.w_visual)
        if best_id is not None and best > self.config.theta_topic:
            return best_id, best
        return None, best

    def _flush(self, st: "_State", describe_topics: bool = True) -> dict[str, tuple[str, bool]]:
        """Describe, assign and write everything pending; returns closed episode id -> (topic, founded).

        describe_topics=False (the end of a batch) writes topics that gained
        members with their counts, times and visual embedding but without a new
        description: their text_emb is set NULL, which marks them for the next
        flush with describe_topics=True (finalize), also after a crash.
        """
        if describe_topics and st.open is not None and st.open.described != len(st.open.members):
            st.dirty_episodes[st.open.node.node_id] = st.open  # it waited since an earlier batch
        if not (st.new_events or st.dirty_episodes or st.dirty_topics or st.deleted_topics or st.closing
                or (describe_topics and (st.undescribed or st.unsaved_topics))):
            return {}
        self._index.invalidate()
        # inside a build the open episode usually grows on: its description waits for it to close
        # (or for finalize); meanwhile its row has a NULL text_emb, like a waiting topic's
        wait = None if describe_topics or st.open is None or len(st.open.members) < 2 else st.open
        self._describe_episodes([e for e in st.dirty_episodes.values()
                                 if e.described != len(e.members) and e is not wait])
        if wait is not None and wait.described != len(wait.members):
            wait.node.text_emb = None
        assigned: dict[str, tuple[str, bool]] = {}
        for episode in st.closing:  # in closing order: each one sees the topics the earlier ones made
            topic_id, _ = self._best_topic(st, episode)
            founded = topic_id is None
            if founded:
                topic_id = "tp:" + episode.node.node_id.split(":", 1)[1]
            n = episode.node
            st.topics.add(topic_id, n.text_emb, n.vis_emb, n.t_start, n.t_end, n.first_order, n.last_order)
            if self._exact:
                # the topic's description is regenerated now: the next closing episode is compared with it
                window = self._member_window(st, topic_id)
                window.add(n.description)
                st.topic_desc[topic_id] = self._topic_description(window.texts(), st.topics.stats[topic_id])
                st.topics.set_text(topic_id, st.topic_desc[topic_id][1])
            n.parent_id = topic_id
            st.dirty_topics.add(topic_id)
            st.deleted_topics.discard(topic_id)
            assigned[n.node_id] = (topic_id, founded)
        st.closing = []
        nodes.insert_many(self.con, list(st.new_events.values()))
        eps = list(st.dirty_episodes.values())
        nodes.insert_many(self.con, [e.node for e in eps if not e.stored])
        nodes.update_many(self.con, [e.node for e in eps if e.stored])
        for e in eps:
            e.stored = True
        gone = st.deleted_topics - st.dirty_topics
        nodes.delete_many(self.con, sorted(gone))
        st.stored_topics -= gone
        st.undescribed -= gone
        self._write_topics(st, sorted(st.dirty_topics | (st.undescribed if describe_topics else set())),
                           describe=describe_topics)
        # topic_sums is written once per build (at finalize): a build killed before leaves it behind the
        # episodes, which the next load detects, recomputing the sums from the episodes instead
        st.unsaved_topics |= st.dirty_topics
        if describe_topics:
            st.topics.save(self.con, sorted(st.unsaved_topics))
            st.unsaved_topics.clear()
        st.new_events.clear()
        st.dirty_episodes.clear()
        st.dirty_topics.clear()
        st.deleted_topics.clear()
        st.check = self._signature(st)
        return assigned

    def _describe_episodes(self, episodes: list["_Episode"]) -> None:
        """Regenerate the description and text embedding of episodes whose members changed (one encoder call)."""
        multi: list[NodeRow] = []
        several: list["_Episode"] = []
        for e in episodes:
            n = e.node
            if len(e.members) == 1:
                only = e.members[0]
                n.description = only.description if len(only.description) <= MAX_CHARS else describe([only.description])
                n.text_emb = only.text_emb
            else:
                several.append(e)
                multi.append(n)
            e.described = len(e.members)
        texts = self.map(lambda e: self._describe("episode", [m.description for m in e.members]), several)
        for e, text in zip(several, texts):
            e.node.description = text
        self._embed(multi)

    def _embed(self, rows: list[NodeRow]) -> None:
        if rows:
            vecs = self.text_encoder.encode([r.description for r in rows])
            for r, v in zip(rows, vecs):
                r.text_emb = normalize(v)

    def _write_topics(self, st: "_State", topic_ids: list[str], extra: "_Episode | None" = None,
                      describe: bool = True) -> None:
        """Recompute topics from their closed members (plus `extra`, the provisionally attached open episode).

        describe=False leaves the description of topics with several members to a later call (see _flush).
        """
        if not topic_ids:
            return
        # member texts only for the topics described now: a batch leaves most topics waiting, and the
        # window query reads every episode of the topics it is given
        need = [tid for tid in topic_ids
                if not (extra is None and tid in st.topic_desc)
                and (describe or (st.topics.stats[tid].n_members if tid in st.topics.row else 0)
                     + (extra is not None) == 1)]
        texts = self._topic_member_texts(need) if need else {}
        pending: list[NodeRow] = []
        rows: list[NodeRow] = []
        multi: list[NodeRow] = []
        to_describe: list[tuple[NodeRow, list[str]]] = []  # described together after the loop
        for tid in topic_ids:
            known = tid in st.topics.row
            s = st.topics.stats.get(tid)
            members = texts.get(tid, [])
            n_members = (s.n_members if known else 0) + (extra is not None)
            first_text = s.first_text if known else extra.node.text_emb
            vis_sum = None
            vis_parts = [v for v in ((st.topics.vis_sum(tid) if known else None),
                                     None if extra is None or extra.node.vis_emb is None
                                     else np.asarray(extra.node.vis_emb, np.float32).astype(np.float64)) if v is not None]
            if vis_parts:
                vis_sum = vis_parts[0] if len(vis_parts) == 1 else vis_parts[0] + vis_parts[1]
            times = [(s.t_start, s.t_end, s.first_order, s.last_order)] if known else []
            if extra is not None:
                members = members + [extra.node.description]
                times.append((extra.node.t_start, extra.node.t_end, extra.node.first_order, extra.node.last_order))
            node = NodeRow(node_id=tid, level="topic", parent_id=None, description="")
            if extra is None and tid in st.topic_desc:  # described when it gained its last member
                node.description, node.text_emb = st.topic_desc[tid]
            elif n_members == 1:
                only = members[-1] if members else ""
                node.description = only if len(only) <= MAX_CHARS else describe([only])
                node.text_emb = first_text
            elif describe:
                to_describe.append((node, _bounded(members)))
                multi.append(node)
            else:
                pending.append(node)
            node.vis_emb = None if vis_sum is None else normalize(vis_sum)
            node.t_start = min((x[0] for x in times if x[0] is not None), default=None)
            node.t_end = max((x[1] for x in times if x[1] is not None), default=None)
            node.first_order = min(x[2] for x in times)
            node.last_order = max(x[3] for x in times)
            node.n_members = n_members
            node.closed = extra is None
            rows.append(node)
        texts = self.map(lambda job: self._describe("topic", job[1]), to_describe)
        for (node, _), text in zip(to_describe, texts):
            node.description = text
        self._embed(multi)
        waiting = {r.node_id for r in pending}
        ready = [r for r in rows if r.node_id not in waiting]
        nodes.insert_many(self.con, [r for r in rows if r.node_id not in st.stored_topics])
        nodes.update_many(self.con, [r for r in ready if r.node_id in st.stored_topics])
        nodes.update_stats_many(self.con, [r for r in pending if r.node_id in st.stored_topics])
        st.stored_topics.update(r.node_id for r in rows)
        st.undescribed.difference_update(r.node_id for r in ready)
        st.undescribed.update(r.node_id for r in pending)

    def _topic_member_texts(self, topic_ids: list[str]) -> dict[str, list[str]]:
        """Descriptions of the closed member episodes each topic is described from (the first and latest ones)."""
        rows = self.con.execute(
            "SELECT parent_id, description FROM ("
            " SELECT parent_id, description, first_order, node_id,"
            "  row_number() OVER (PARTITION BY parent_id ORDER BY first_order, node_id) AS k,"
            "  count(*) OVER (PARTITION BY parent_id) AS n"
            " FROM nodes WHERE level = 'episode' AND closed AND parent_id IN (SELECT unnest(?::VARCHAR[])))"
            " WHERE k <= ? OR k > n - ? ORDER BY parent_id, first_order, node_id",
            [topic_ids, TOPIC_FIRST_MEMBERS, TOPIC_LATEST_MEMBERS],
        ).fetchall()
        out: dict[str, list[str]] = {}
        for tid, desc in rows:
            out.setdefault(tid, []).append(desc or "")
        return out

    def _member_window(self, st: "_State", topic_id: str) -> "_MemberWindow":
        """The member descriptions `topic_id` is described from (loaded from the table on first use)."""
        if st.windows is None:
            st.windows = {}
            stored = self._topic_member_texts(sorted(st.stored_topics)) if st.stored_topics else {}
            for tid, texts in stored.items():
                w = st.windows[tid] = _MemberWindow()
                for t in texts:
                    w.add(t)
        return st.windows.setdefault(topic_id, _MemberWindow())

    def _topic_description(self, texts: list[str], stats) -> tuple[str, np.ndarray]:
        """(description, text embedding) of a topic from its member descriptions, as `_write_topics` makes them."""
        if len(texts) == 1:
            only = texts[0]
            return (only if len(only) <= MAX_CHARS else describe([only])), stats.first_text
        desc = self._describe("topic", _bounded(texts))
        return desc, normalize(self.text_encoder.encode([desc])[0])

    def _load_topic_descriptions(self, st: "_State") -> None:
        """Paper-exact mode: compare with each topic's stored description embedding (recomputed when missing)."""
        if not len(st.topics):
            return
        order = "WHERE level = 'topic' ORDER BY node_id"
        rows = self.con.execute(f"SELECT node_id, description, closed FROM nodes {order}").fetchall()
        embs = nodes.vectors(self.con.execute(f"SELECT text_emb FROM nodes {order}").fetchnumpy()["text_emb"],
                             len(rows))
        redo = []
        for (tid, desc, closed), emb in zip(rows, embs):
            if tid not in st.topics.row:
                continue  # only provisionally attached: not a topic of closed episodes yet
            if closed and emb is not None:
                st.topic_desc[tid] = (desc or "", emb)
                st.topics.set_text(tid, emb)
            else:  # waiting for a description (centroid mode) or describing the provisional member too
                redo.append(tid)
        for tid in redo:
            st.topic_desc[tid] = self._topic_description(self._member_window(st, tid).texts(), st.topics.stats[tid])
            st.topics.set_text(tid, st.topic_desc[tid][1])

    def _text_vector(self, text: str, given: np.ndarray | None, round_id: str) -> np.ndarray:
        if given is None:
            return normalize(self.text_encoder.encode([text])[0])
        v = np.asarray(given, dtype=np.float32)
        if v.ndim != 1 or v.size != self.text_encoder.dim:
            raise ValueError(
                f"round {round_id}: text_vector has shape {v.shape}, expected ({self.text_encoder.dim},) "
                f"from {self.text_encoder.name}"
            )
        return normalize(v)

    def _event_visual(self, round: Round, image_vectors: dict[str, np.ndarray] | None) -> np.ndarray | None:
        given = image_vectors or {}
        vectors: list[np.ndarray] = []
        to_encode: list[bytes] = []
        for img in round.images:
            if img.image_id in given and given[img.image_id] is not None:
                vectors.append(np.asarray(given[img.image_id], np.float32))
            elif img.data is not None and self.image_encoder is not None:
                to_encode.append(img.data)
        if to_encode:
            vectors.extend(self.image_encoder.encode_images(to_encode))
        return mean_direction(vectors)

    def _describe(self, level: str, texts: Sequence[str]) -> str:
        """LLM description of an episode or topic from its members; extractive when no LLM or on failure."""
        if self.llm is None:
            return describe(texts)
        # bound the prompt: long histories make big topics
        budget = max(200, _LLM_INPUT_CHARS // max(len(texts), 1))
        members = [" ".join(t.split())[:budget] for t in texts]
        task = prompts.EPISODE_DESCRIPTION if level == "episode" else prompts.TOPIC_DESCRIPTION
        messages, schema = (prompts.episode_description if level == "episode" else prompts.topic_description)(members)
        try:
            result = self.llm.complete_json(task, messages, schema, prompt_version=prompts.PROMPT_VERSION[task])
            text = " ".join(str(result.data.get("description", "")).split())
            if text:
                return text[:_LLM_MAX_CHARS]
            self.fallbacks.append(f"{level} description: empty LLM output; used extractive")
        except (LLMError, AttributeError, TypeError) as e:
            self.fallbacks.append(f"{level} description: {e}; used extractive")
        return describe(texts)

    # ------------------------------------------------------------------ reads
    def invalidate(self) -> None:
        """Drop the cached embedding matrices (they also reload by themselves when the table changes)."""
        self._index.invalidate()

    def counts(self) -> dict[str, int]:
        """Number of nodes per level."""
        rows = dict(self.con.execute("SELECT level, count(*) FROM nodes GROUP BY level").fetchall())
        return {lvl: int(rows.get(lvl, 0)) for lvl in LEVELS}

    def tree(self, levels: Sequence[str] = ("topic", "episode", "event")) -> list[TreeNode]:
        """All nodes of the given levels, topics first, each level in round order (one query, no vectors)."""
        bad = [lvl for lvl in levels if lvl not in LEVELS]
        if bad:
            raise ValueError(f"unknown hierarchy level(s) {bad}; expected {', '.join(LEVELS)}")
        rows = self.con.execute(
            "SELECT node_id, level, parent_id, description, n_members, t_start, t_end, first_order, last_order "
            "FROM nodes WHERE level IN (SELECT unnest(?)) "
            "ORDER BY CASE level WHEN 'topic' THEN 0 WHEN 'episode' THEN 1 ELSE 2 END, first_order, node_id",
            [list(levels)],
        ).fetchall()
        return _tree_nodes(rows)

    def node(self, node_id: str) -> NodeInfo | None:
        """Details of one node, or None when there is no such node."""
        n = nodes.load(self.con, node_id)
        if n is None:
            return None
        return NodeInfo(
            node_id=n.node_id, level=n.level, parent_id=n.parent_id, description=n.description,
            label=self._name(n), t_start=n.t_start, t_end=n.t_end, first_order=n.first_order,
            last_order=n.last_order, n_members=n.n_members, closed=n.closed, round_id=n.round_id,
            image_ids=n.image_ids, has_visual=n.vis_emb is not None,
        )

    def members(self, node_id: str) -> list[TreeNode]:
        """The direct members of a node in round order (empty for an event or an unknown id)."""
        rows = self.con.execute(
            "SELECT node_id, level, parent_id, description, n_members, t_start, t_end, first_order, last_order "
            "FROM nodes WHERE parent_id = ? ORDER BY first_order, node_id",
            [node_id],
        ).fetchall()
        return _tree_nodes(rows)

    def _name(self, n: NodeRow) -> str:
        """A node's display name (core.hierarchy.naming): a topic or episode is named against its siblings."""
        if n.level == "event":
            return event_name(n.description)
        siblings = self.con.execute(
            "SELECT node_id, level, parent_id, description FROM nodes "
            "WHERE level = ? AND parent_id IS NOT DISTINCT FROM ?", [n.level, n.parent_id]).fetchall()
        return node_names(siblings).get(n.node_id, "")

    def path(self, node_id: str) -> list[str]:
        """Ids from the node's topic down to the node itself (empty for an unknown id)."""
        out: list[str] = []
        cur: str | None = node_id
        while cur is not None and len(out) < 3:
            row = self.con.execute("SELECT parent_id FROM nodes WHERE node_id = ?", [cur]).fetchone()
            if row is None:
                break
            out.append(cur)
            cur = row[0]
        return out[::-1]

    def images(self, node_id: str) -> list[str]:
        """Image ids of every event under (or at) a node, in round order."""
        rows = self.con.execute(
            "SELECT image_ids FROM nodes WHERE level = 'event' AND image_ids IS NOT NULL AND ("
            " node_id = ? OR parent_id = ? OR parent_id IN (SELECT node_id FROM nodes WHERE parent_id = ?)) "
            "ORDER BY first_order",
            [node_id, node_id, node_id],
        ).fetchall()
        return [i for (ids,) in rows for i in json.loads(ids)]

    def query_vectors(self, query: str) -> tuple[np.ndarray, np.ndarray | None]:
        """(text vector, visual-space vector or None) of a textual query.

        The visual one comes from the image encoder's text branch, only when it
        has one (open_clip); the default image descriptor does not.
        """
        q_text = normalize(self.text_encoder.encode([query])[0])
        q_vis = None
        if self.image_encoder is not None and getattr(self.image_encoder, "supports_text", False):
            q_vis = normalize(self.image_encoder.encode_text([query])[0])
        return q_text, q_vis

    def search(
        self,
        query: str,
        scope: str = "all",
        k: int = 10,
        query_vectors: tuple[np.ndarray, np.ndarray | None] | None = None,
    ) -> list[tuple[str, float]]:
        """The k nodes of `scope` ("event", "episode", "topic" or "all") most similar to the query.

        Scores follow the fusion rule: text cosine, plus text-to-image cosine
        for nodes with images when the image encoder has a text branch.
        query_vectors: (text, visual or None) to skip encoding (see query_vectors()).
        Ties keep round order. Raises ValueError for an unknown scope or k < 0.
        """
        if scope not in SCOPES:
            raise ValueError(f"unknown search scope {scope!r}; expected one of {', '.join(SCOPES)}")
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        q_text, q_vis = query_vectors if query_vectors is not None else self.query_vectors(query)
        levels = LEVELS if scope == "all" else (scope,)
        ids: list[str] = []
        parts: list[np.ndarray] = []
        for ix in self._index.levels(levels):
            ids.extend(ix.ids)
            parts.append(fused_scores(q_text, q_vis, ix.text, ix.vis, ix.has_vis, self.config.w_text,
                                      self.config.w_visual))
        if not ids:
            return []
        scores = np.concatenate(parts)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(ids[i], float(scores[i])) for i in top]

    def level_scores(
        self, query: str, level: str, query_vectors: tuple[np.ndarray, np.ndarray | None] | None = None
    ) -> tuple[list[str], np.ndarray]:
        """(ids in round order, fused score of each) for every node of one level: what search() ranks.

        Raises ValueError for an unknown level.
        """
        if level not in LEVELS:
            raise ValueError(f"unknown hierarchy level {level!r}; expected one of {', '.join(LEVELS)}")
        q_text, q_vis = query_vectors if query_vectors is not None else self.query_vectors(query)
        ix = self._index.level(level)
        if not ix.ids:
            return ix.ids, np.zeros(0)
        return ix.ids, fused_scores(q_text, q_vis, ix.text, ix.vis, ix.has_vis, self.config.w_text,
                                    self.config.w_visual)

    def locate_events(
        self,
        query: str,
        k: int = 5,
        window: int | None = None,
        query_vectors: tuple[np.ndarray, np.ndarray | None] | None = None,
    ) -> list[LocatedEvent]:
        """The k events most similar to the query, each with `window` events before and after it.

        window defaults to config.event_window; neighbours are taken in round
        order across the whole history. Raises ValueError for k < 0 or window < 0.
        """
        window = self.config.event_window if window is None else window
        if k < 0 or window < 0:
            raise ValueError(f"k and window must be >= 0, got k={k}, window={window}")
        q_text, q_vis = query_vectors if query_vectors is not None else self.query_vectors(query)
        ix = self._index.level("event")
        if not ix.ids:
            return []
        scores = fused_scores(q_text, q_vis, ix.text, ix.vis, ix.has_vis, self.config.w_text, self.config.w_visual)
        top = np.argsort(-scores, kind="stable")[:k]
        hits = [ix.ids[i] for i in top]
        times = dict(self.con.execute(
            "SELECT node_id, t_start FROM nodes WHERE node_id IN (SELECT unnest(?))", [hits]
        ).fetchall())
        out = []
        for i in top:
            lo, hi = max(0, i - window), min(len(ix.ids), i + window + 1)
            out.append(LocatedEvent(
                event_id=ix.ids[i], round_id=ix.round_ids[i] or "", score=float(scores[i]),
                round_order=int(ix.orders[i]), time=times.get(ix.ids[i]), episode_id=ix.parents[i],
                context=tuple(ix.ids[lo:hi]),
            ))
        return out


def _bounded(texts: list[str]) -> list[str]:
    if len(texts) <= TOPIC_FIRST_MEMBERS + TOPIC_LATEST_MEMBERS:
        return texts
    return texts[:TOPIC_FIRST_MEMBERS] + texts[-TOPIC_LATEST_MEMBERS:]


class _MemberWindow:
    """A topic's first TOPIC_FIRST_MEMBERS and latest TOPIC_LATEST_MEMBERS member descriptions (see _bounded)."""

    def __init__(self) -> None:
        self.first: list[str] = []
        self.tail: deque[str] = deque(maxlen=TOPIC_LATEST_MEMBERS)

    def add(self, text: str) -> None:
        (self.first if len(self.first) < TOPIC_FIRST_MEMBERS else self.tail).append(text)

    def texts(self) -> list[str]:
        return self.first + list(self.tail)


@dataclass
class _Episode:
    """An episode under construction: its row, its events, and running sums of their vectors."""

    node: NodeRow
    members: list[NodeRow] = field(default_factory=list)
    text_sum: np.ndarray | None = None  # float64 sum of the members' stored float32 text embeddings
    vis_sum: np.ndarray | None = None
    stored: bool = False  # its row exists in the table
    described: int = 0  # number of members when its description and text_emb were computed

    def add(self, event: NodeRow) -> None:
        n = self.node
        self.members.append(event)
        t = np.asarray(event.text_emb, np.float32).astype(np.float64)
        self.text_sum = t.copy() if self.text_sum is None else self.text_sum + t
        if event.vis_emb is not None:
            v = np.asarray(event.vis_emb, np.float32).astype(np.float64)
            self.vis_sum = v.copy() if self.vis_sum is None else self.vis_sum + v
        n.vis_emb = None if self.vis_sum is None else normalize(self.vis_sum)
        n.t_start = event.t_start if n.t_start is None else min(n.t_start, event.t_start)
        n.t_end = event.t_end if n.t_end is None else max(n.t_end, event.t_end)
        n.first_order = event.first_order if not self.members[:-1] else min(n.first_order, event.first_order)
        n.last_order = max(n.last_order, event.last_order)
        n.n_members = len(self.members)

    def text_centroid(self) -> np.ndarray:
        return normalize(self.text_sum)

    def vis_centroid(self) -> np.ndarray | None:
        return None if self.vis_sum is None else normalize(self.vis_sum)


@dataclass
class _State:
    """What construction needs between inserts, so an insert reads nothing from the table."""

    open: _Episode | None
    topics: TopicTable
    stored_topics: set[str]
    provisional: str | None = None  # topic the open episode is attached to by finalize
    last_order: int | None = None
    closing: list[_Episode] = field(default_factory=list)  # closed, assigned to a topic at the next flush
    new_events: dict[str, NodeRow] = field(default_factory=dict)
    dirty_episodes: dict[str, _Episode] = field(default_factory=dict)
    dirty_topics: set[str] = field(default_factory=set)
    deleted_topics: set[str] = field(default_factory=set)
    undescribed: set[str] = field(default_factory=set)  # topics stored with a stale description, text_emb NULL
    unsaved_topics: set[str] = field(default_factory=set)  # topics whose topic_sums row is behind
    # paper-exact mode: each topic's (description, embedding) from its closed members, and the member
    # descriptions it is made from (loaded on first use)
    topic_desc: dict[str, tuple[str, np.ndarray]] = field(default_factory=dict)
    windows: dict[str, "_MemberWindow"] | None = None
    check: tuple = ()

    @classmethod
    def load(cls, con: duckdb.DuckDBPyConnection) -> "_State":
        row = nodes.open_episode(con)
        episode = None
        if row is not None:
            episode = _Episode(row, stored=True)
            members = nodes.children(con, row.node_id)
            for m in members:
                episode.add(m)
            episode.node = row  # the stored row (its description and embedding) stays as it is
            episode.described = len(members) if row.text_emb is not None else 0
        topic_rows = con.execute("SELECT node_id, text_emb IS NULL FROM nodes WHERE level = 'topic'").fetchall()
        return cls(open=episode, topics=TopicTable.load(con), stored_topics={t for t, _ in topic_rows},
                   undescribed={t for t, stale in topic_rows if stale},
                   provisional=None if row is None else row.parent_id,
                   last_order=None if row is None else row.last_order)


def _tree_nodes(rows) -> list[TreeNode]:
    """TreeNodes of (node_id, level, parent_id, description, n_members, t_start, t_end, first_order, last_order)
    rows; each node is named against the rows of its level and parent (pass whole sibling sets)."""
    names = node_names([r[:4] for r in rows])
    return [TreeNode(
        node_id=r[0], level=r[1], parent_id=r[2], label=names[r[0]], n_members=r[4] or 0,
        t_start=r[5], t_end=r[6], first_order=r[7], last_order=r[8],
    ) for r in rows]
