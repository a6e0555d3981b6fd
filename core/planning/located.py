"""Which located event a clause of a question means: the EventLocate unit that shares most of the
clause's words, and whether it matches the clause at all. Read by the planner (an event clause
scopes a computation: "on the day I repotted the monstera") and by the answerer (two located
events ordered in time: "did A happen before B?")."""
from __future__ import annotations

import re
from typing import Sequence

from .scoring import tokens

EVENT_MIN_OVERLAP = 0.34  # share of the event clause's words an located event must contain ...
EVENT_MIN_SCORE = 0.55  # ... unless its relevance is at least this


def event_supported(unit_text: str, score: float | None, event_text: str, ignore: frozenset[str] = frozenset()) -> bool:
    """Does a located event plausibly match the event clause (shared words or a high score)? Words in
    `ignore` (tokens of the memory's people's names) are not asked for."""
    want = set(tokens(event_text)) - ignore
    if not want:
        return True
    have = set(tokens(unit_text))
    return len(want & have) / len(want) >= EVENT_MIN_OVERLAP or (score or 0.0) >= EVENT_MIN_SCORE


def _event_part(text: str) -> str:
    """The located round itself, without the [before]/[after] context EventLocate adds."""
    m = re.search(r"\[event\]\s*(.*?)(?:\n\[after\]|$)", text, flags=re.S)
    return m[1] if m else text


def best_event(units: Sequence, event_text: str, records: frozenset[str] | set[str] = frozenset()):
    """The located event that shares most of the clause's words; on a tie a one-off round before a
    recurring record (a row of an analytic table: "Bike ride today" vs "I bought a road bike"),
    then the highest score."""
    want = set(tokens(event_text))

    def key(u):
        have = set(tokens(_event_part(u.text)))
        rid = dict(u.data).get("round_id") if u.data else None
        return (len(want & have) / len(want) if want else 0.0, rid not in records, u.score or 0.0)
    return max(units, key=key)
