"""Frozen results of the hierarchy's write and read APIs."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class InsertResult:
    """What one `Hierarchy.insert` did.

    similarity / gap_hours compare the new event with the episode that was open
    before it (None when there was none); closed_episode is the episode closed
    by this round and topic_id the topic it joined (new_topic when founded).
    skipped is True when the round was already an event (insert is idempotent).
    """

    event_id: str
    episode_id: str
    opened_episode: bool
    closed_episode: str | None = None
    topic_id: str | None = None
    new_topic: bool = False
    similarity: float | None = None
    gap_hours: float | None = None
    skipped: bool = False


@dataclass(frozen=True)
class TreeNode:
    """A node as a tree view needs it (no embeddings): enough to draw a sunburst."""

    node_id: str
    level: str
    parent_id: str | None
    label: str
    n_members: int
    t_start: datetime | None
    t_end: datetime | None
    first_order: int
    last_order: int


@dataclass(frozen=True)
class NodeInfo:
    """Everything stored about a node except its embeddings.

    closed: for an episode, False while it is the current one (it may then be
    attached to a topic provisionally, see Hierarchy.finalize); for a topic,
    False while it holds the current episode.
    """

    node_id: str
    level: str
    parent_id: str | None
    description: str
    label: str
    t_start: datetime | None
    t_end: datetime | None
    first_order: int
    last_order: int
    n_members: int
    closed: bool
    round_id: str | None
    image_ids: tuple[str, ...]
    has_visual: bool


@dataclass(frozen=True)
class LocatedEvent:
    """An event matching a query, with its fixed window of surrounding events (by round order)."""

    event_id: str
    round_id: str
    score: float
    round_order: int
    time: datetime | None
    episode_id: str | None
    context: tuple[str, ...]  # event ids in round order, the event itself included
