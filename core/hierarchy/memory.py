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
- the episode's description is regenerated (LLM when configured, else
  extractive, core/describe.py) and re-embedded; its visual embedding is the
  normalized mean of its image-bearing events'. A topic is refreshed the same
  way from its episodes when one joins.

Choices the paper leaves open:

- A node with a single member takes that member's embeddings, and its
  description (shortened extractively when longer than 300 characters). So a
  fresh one-event episode is compared with the next event through the event's
  own text, not through a lossy summary of it, and opening an episode or
  founding a topic costs no encoder call. Nodes with several members embed
  their regenerated description (eq. 11).
- Time gaps are absolute, so a round far *earlier* than the episode (a history
  added out of time order) also starts a new episode.
- `finalize()` (called by the build after its last round) attaches the open
  episode to its best topic provisionally, so it is visible in the tree and in
  topic search. The next `insert` first undoes that attachment (the topic is
  refreshed from its closed members, or removed when it had no other), and the
  episode is assigned for good when it closes. Because every refresh is a pure
  function of a node's members, building in two halves (with finalize and a
  reopen in between) gives the same hierarchy as building at once.

Node ids are derived from round ids: event "ev:<round>", episode
"ep:<its first round>", topic "tp:<first round of its founding episode>".

All writes happen on the caller's connection inside the caller's transaction.
"""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Sequence

import duckdb
import numpy as np

from .. import prompts
from ..config import DEFAULT, Config
from ..describe import MAX_CHARS, describe, short_label
from ..errors import LLMError
from ..model import Round
from ..protocols import LLM, ImageEncoder, TextEncoder
from . import nodes
from .fusion import fused_scores, fused_similarity, mean_direction, normalize
from .index import EmbeddingIndex, load_level
from .nodes import LEVELS, NodeRow
from .views import InsertResult, LocatedEvent, NodeInfo, TreeNode

SCOPES = ("event", "episode", "topic", "all")
_LLM_INPUT_CHARS = 6000  # member texts sent to the LLM for one description
_LLM_MAX_CHARS = 600  # a longer LLM description is cut


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
        self.llm = llm
        self.fallbacks: list[str] = []  # descriptions that fell back from the LLM to extractive
        self._index = EmbeddingIndex(con)

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
        Idempotent: a round already inserted is skipped (skipped=True).
        Raises ValueError when round_order is not after every inserted round
        (the hierarchy is built in round order) or text_vector has the wrong shape.
        """
        ev_id = f"ev:{round.round_id}"
        parent, last, exists = nodes.event_state(self.con, ev_id)
        if exists:
            return InsertResult(ev_id, parent or "", False, skipped=True)
        if last is not None and round_order <= last:
            raise ValueError(
                f"round {round.round_id}: order {round_order} is not after the last inserted round "
                f"(order {last}); the hierarchy is built in round order"
            )
        self._index.invalidate()
        text = event_text(round, ocr)
        tvec = self._text_vector(text, text_vector, round.round_id)
        vvec = self._event_visual(round, image_vectors)
        t = _naive_utc(round.time)
        event = NodeRow(
            node_id=ev_id, level="event", parent_id=None, description=text, text_emb=tvec, vis_emb=vvec,
            t_start=t, t_end=t, first_order=round_order, last_order=round_order, n_members=1, closed=True,
            round_id=round.round_id, image_ids=tuple(i.image_id for i in round.images),
        )
        episode = nodes.open_episode(self.con)
        if episode is not None and episode.parent_id is not None:
            self._detach(episode)
        similarity = gap_hours = None
        closed_id = topic_id = None
        new_topic = False
        if episode is not None:
            gap_hours = abs((t - episode.t_end).total_seconds()) / 3600.0
            similarity = self._fused(event, episode)
            if not (gap_hours <= self.config.episode_max_gap_hours and similarity > self.config.theta_epi):
                episode.closed = True
                topic_id, new_topic = self._assign(episode)
                closed_id = episode.node_id
                episode = None
        opened = episode is None
        if opened:
            episode = NodeRow(node_id=f"ep:{round.round_id}", level="episode", parent_id=None, description="")
        event.parent_id = episode.node_id
        nodes.insert(self.con, event)
        self._refresh(episode, exists=not opened)
        return InsertResult(
            event_id=ev_id, episode_id=episode.node_id, opened_episode=opened, closed_episode=closed_id,
            topic_id=topic_id, new_topic=new_topic, similarity=similarity, gap_hours=gap_hours,
        )

    def finalize(self) -> str | None:
        """Attach the open episode to its best topic provisionally (see the module doc).

        Returns the topic id, or None when there is no open episode. Calling it
        twice is harmless; the next `insert` undoes the attachment first.
        """
        episode = nodes.open_episode(self.con)
        if episode is None:
            return None
        if episode.parent_id is not None:
            return episode.parent_id
        self._index.invalidate()
        topic_id, _ = self._assign(episode)
        return topic_id

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

    def _fused(self, a: NodeRow, b: NodeRow) -> float:
        return fused_similarity(
            a.text_emb, a.vis_emb, b.text_emb, b.vis_emb, self.config.w_text, self.config.w_visual
        )

    def _assign(self, episode: NodeRow) -> tuple[str, bool]:
        """Put a (closing or provisionally placed) episode under its best topic, or found one."""
        best_id, best = None, -math.inf
        topics = load_level(self.con, "topic")
        if topics.ids:
            scores = fused_scores(episode.text_emb, episode.vis_emb, topics.text, topics.vis, topics.has_vis,
                                  self.config.w_text, self.config.w_visual)
            i = int(np.argmax(scores))  # the first (oldest) topic on a tie
            best_id, best = topics.ids[i], float(scores[i])
        if best_id is not None and best > self.config.theta_topic:
            episode.parent_id = best_id
            nodes.update(self.con, episode)
            self._refresh(nodes.load(self.con, best_id), exists=True)
            return best_id, False
        topic = NodeRow(node_id="tp:" + episode.node_id.split(":", 1)[1], level="topic", parent_id=None,
                        description="")
        episode.parent_id = topic.node_id
        nodes.update(self.con, episode)
        self._refresh(topic, exists=False)
        return topic.node_id, True

    def _detach(self, episode: NodeRow) -> None:
        """Undo finalize's provisional attachment of the open episode."""
        topic_id = episode.parent_id
        episode.parent_id = None
        nodes.update(self.con, episode)
        topic = nodes.load(self.con, topic_id)
        if topic is None:
            return
        if nodes.children(self.con, topic_id):
            self._refresh(topic, exists=True)
        else:
            nodes.delete(self.con, topic_id)

    def _refresh(self, node: NodeRow, *, exists: bool) -> None:
        """Recompute an episode or topic from its members (a pure function of them) and store it."""
        kids = nodes.children(self.con, node.node_id)
        if not kids:
            raise RuntimeError(f"hierarchy node {node.node_id} has no members")
        if len(kids) == 1:
            only = kids[0]
            node.description = (
                only.description if len(only.description) <= MAX_CHARS else describe([only.description])
            )
            node.text_emb = only.text_emb
        else:
            node.description = self._describe(node.level, [k.description for k in kids])
            node.text_emb = normalize(self.text_encoder.encode([node.description])[0])
        node.vis_emb = mean_direction([k.vis_emb for k in kids if k.vis_emb is not None])
        node.t_start = min(k.t_start for k in kids if k.t_start is not None)
        node.t_end = max(k.t_end for k in kids if k.t_end is not None)
        node.first_order = min(k.first_order for k in kids)
        node.last_order = max(k.last_order for k in kids)
        node.n_members = len(kids)
        if node.level == "topic":
            node.closed = all(k.closed for k in kids)
        (nodes.update if exists else nodes.insert)(self.con, node)

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
        return [_tree_node(r) for r in rows]

    def node(self, node_id: str) -> NodeInfo | None:
        """Details of one node, or None when there is no such node."""
        n = nodes.load(self.con, node_id)
        if n is None:
            return None
        return NodeInfo(
            node_id=n.node_id, level=n.level, parent_id=n.parent_id, description=n.description,
            label=short_label(n.description), t_start=n.t_start, t_end=n.t_end, first_order=n.first_order,
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
        return [_tree_node(r) for r in rows]

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

    def _scores(self, level: str, q_text, q_vis) -> tuple[list[str], np.ndarray]:
        ix = self._index.level(level)
        s = fused_scores(q_text, q_vis, ix.text, ix.vis, ix.has_vis, self.config.w_text, self.config.w_visual)
        return ix.ids, s

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
        for lvl in levels:
            i, s = self._scores(lvl, q_text, q_vis)
            ids.extend(i)
            parts.append(s)
        if not ids:
            return []
        scores = np.concatenate(parts)
        top = np.argsort(-scores, kind="stable")[:k]
        return [(ids[i], float(scores[i])) for i in top]

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


def _tree_node(r) -> TreeNode:
    return TreeNode(
        node_id=r[0], level=r[1], parent_id=r[2], label=short_label(r[3] or ""), n_members=r[4] or 0,
        t_start=r[5], t_end=r[6], first_order=r[7], last_order=r[8],
    )
