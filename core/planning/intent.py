"""Question analysis for the rule-based planner: intent, time scope, event clause, conditions.

`analyze(question, now, first)` splits a question into what it asks
(aggregate, extreme, count, latest/first, trend, value, list, yes/no, when,
or plain retrieval), the time range it names (resolved by dates.py), an
event clause ("on the day I ran the half marathon") that must be located
first, and numeric conditions ("longer than 8 km"). Nothing here knows any
table or column: the words left in `target_text` are matched against the
metadata afterwards.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from .dates import NUMBER_WORDS, TimeRange, find_time_range

_SUPER_DESC = ("most", "highest", "longest", "maximum", "biggest", "largest", "furthest", "farthest",
               "heaviest", "peak", "best", "greatest", "top", "hottest", "warmest", "fastest")
_SUPER_ASC = ("least", "lowest", "shortest", "minimum", "smallest", "fewest", "lightest", "worst", "slowest",
              "coldest", "coolest", "bottom")
SUPERLATIVE_BASE = {"longest": "long", "shortest": "long", "furthest": "far", "farthest": "far",
                    "heaviest": "heavy", "lightest": "heavy", "fastest": "fast", "slowest": "fast", "hottest": "hot",
                    "coldest": "cold", "warmest": "warm", "coolest": "cold", "biggest": "big", "smallest": "big",
                    "largest": "big"}
_AVG = r"\b(average|avg|mean|typical(?:ly)?|usually|on average|per (?:day|night|week|session|run))\b"
_SUM = r"\b(total|in total|altogether|combined|sum|cumulative(?:ly)?|overall|all together)\b"
_TREND = (r"\b(trend\w*|chang\w*|increas\w*|decreas\w*|go(?:ne|ing)? (?:up|down)|went (?:up|down)|improv\w*|"
          r"worsen\w*|(?:get|getting|got) (?:better|worse)|evolv\w*|progress\w*|over time|ris(?:e|en|ing)|rose|"
          r"fall(?:en|ing)?|fell|drop\w*|declin\w*|grow\w*|grew)\b")
_LATEST = (r"\b(latest|most recent(?:ly)?|last (?:recorded|time|reading|measurement|entry|value|logged)|"
           r"current(?:ly)?|right now|these days|recently|now|last)\b")
_FIRST = r"\b(first|earliest|initial(?:ly)?|at the (?:start|beginning)|originally|starting)\b"
_COMPARATORS = [
    (r"more than|greater than|higher than|longer than|bigger than|heavier than|farther than|further than|"
     r"larger than|later than|over|above|exceeding|beyond|in excess of", ">"),
    (r"at least|no less than|not less than|minimum of", ">="),
    (r"less than|fewer than|lower than|shorter than|smaller than|lighter than|earlier than|under|below|"
     r"beneath", "<"),
    (r"at most|no more than|not more than|maximum of|up to", "<="),
    (r"exactly|equal to|equals", "="),
]
_NUM = r"(-?\d+(?:\.\d+)?|" + "|".join(sorted((w for w in NUMBER_WORDS if " " not in w and len(w) > 2),
                                               key=len, reverse=True)) + r")"


@dataclass(frozen=True)
class EventClause:
    relation: str  # day | day_after | day_before | week | since | after | before
    text: str  # what to locate, e.g. "I ran the half marathon"
    phrase: str  # the words removed from the question


@dataclass(frozen=True)
class Condition:
    op: str  # > >= < <= =
    number: float
    unit: str | None
    phrase: str
    context: str  # the words just before the comparator (which quantity it is about)


@dataclass(frozen=True)
class Analysis:
    question: str
    kind: str  # aggregate | extreme | count | latest | first | trend | value | list | yesno | when | retrieval
    op: str | None = None  # Compute operator where one applies
    order: str | None = None  # Rank order for extremes
    top_n: int = 1
    asks_date: bool = False
    event: EventClause | None = None
    time_range: TimeRange | None = None
    conditions: tuple[Condition, ...] = ()
    target_text: str = ""
    how_many_noun: str | None = None


def _num(s: str) -> float:
    s = s.lower()
    return float(s) if re.fullmatch(r"-?\d+(?:\.\d+)?", s) else float(NUMBER_WORDS[s])


def find_event_clause(q: str) -> EventClause | None:
    """'on the day I ran the half marathon' -> EventClause('day', 'I ran the half marathon')."""
    patterns = [
        (r"\b(?:on|during|for|of|in)?\s*the\s+(?:day|night|date|morning|evening)\s+(after|before)\s+(?:the\s+day\s+)?"
         r"((?:i|we|my|our)\b.+)", "day_{}"),
        (r"\b(?:on|during|for|of|in)?\s*the\s+(?:day|night|date|morning|evening)\s+(?:that\s+|when\s+|on\s+which\s+)?"
         r"((?:i|we|my|our)\b.+)", "day"),
        (r"\b(?:in|during|over|for)?\s*the\s+week\s+(?:that\s+|when\s+|in\s+which\s+)?((?:i|we|my|our)\b.+)", "week"),
        (r"\b(since|after|before)\s+((?:i|we|my|our)\b.+)", "{}"),
    ]
    for pat, rel in patterns:
        m = re.search(pat, q, flags=re.IGNORECASE)
        if m:
            if rel == "day_{}":
                relation, text = f"day_{m[1].lower()}", m[2]
            elif rel == "{}":
                relation, text = m[1].lower(), m[2]
            else:
                relation, text = rel, m[1]
            text = text.strip().rstrip("?.! ")
            return EventClause(relation, text, m[0])
    # "... when I ran the marathon?" (not a question that starts with "when")
    m = re.search(r"(?<!^)\b(?:when|while)\s+((?:i|we)\s+.+)", q.strip(), flags=re.IGNORECASE)
    if m and not re.match(r"\s*when\b", q, flags=re.IGNORECASE):
        return EventClause("day", m[1].strip().rstrip("?.! "), m[0])
    return None


def find_conditions(q: str) -> list[Condition]:
    """Numeric conditions such as 'longer than 8 km' or 'at least 7 hours'."""
    out = []
    for words, op in _COMPARATORS:
        for m in re.finditer(r"\b(" + words + r")\s+" + _NUM + r"\s*([a-z%°/]+)?", q, flags=re.IGNORECASE):
            before = q[: m.start()].split()[-4:]
            unit = m[3].lower() if m[3] else None
            if unit in ("and", "or", "in", "on", "during", "for", "times", "of", "the"):
                unit = None
            out.append(Condition(op, _num(m[2]), unit, m[0], " ".join(before)))
    # a shorter comparator inside a longer one ("over" in "no more than") is dropped
    out.sort(key=lambda c: -len(c.phrase))
    kept: list[Condition] = []
    for c in out:
        if not any(c.phrase in k.phrase for k in kept):
            kept.append(c)
    return kept


def _top_n(q: str) -> int:
    m = re.search(r"\btop\s+" + _NUM + r"\b|\b" + _NUM + r"\s+(?:highest|lowest|longest|shortest|best|worst|"
                  r"biggest|smallest|most|least)\b", q)
    if m:
        return max(1, min(10, int(_num(m[1] or m[2]))))
    return 1


def _remove(text: str, phrase: str) -> str:
    return re.sub(re.escape(phrase), " ", text, count=1, flags=re.IGNORECASE) if phrase else text


def analyze(question: str, now: date | datetime, first: date | datetime | None = None) -> Analysis:
    """Classify a question's intent and pull out its time scope, event clause and conditions."""
    q = " ".join(question.strip().split())
    event = find_event_clause(q)
    rest = _remove(q, event.phrase) if event else q
    tr = find_time_range(rest, now, first)
    rest = _remove(rest, tr.phrase) if tr else rest
    conditions = tuple(find_conditions(rest))
    for c in conditions:
        rest = _remove(rest, c.phrase)
    low = rest.lower()
    qlow = q.lower()
    asks_date = bool(re.search(r"\b(which|what)\s+(day|date|night|morning|evening|week|month|time)\b|^\s*when\b|"
                               r"\bon which\b|\bwhat day\b", qlow))
    common = dict(question=question, event=event, time_range=tr, conditions=conditions, asks_date=asks_date)

    def target(*patterns: str) -> str:
        t = low
        for p in patterns:
            t = re.sub(p, " ", t)
        return " ".join(t.split())

    hm = re.search(r"\bhow\s+(many|much)\s+(\w+)?", low)
    how_noun = hm[2] if hm and hm[2] else None
    if re.search(r"\bhow\s+(?:many\s+times|often)\b|\bnumber\s+of\s+(?:times|days|nights|sessions|entries|records)\b"
                 r"|\bcount\b", low):
        return Analysis(kind="count", op="count", target_text=target(r"\bhow\s+many\s+times\b", r"\bhow often\b"),
                        how_many_noun=how_noun, **common)
    sup_text = re.sub(r"\bmost\s+(?:recent(?:ly)?|often|likely|frequently)\b|\bat (?:least|most)\b", " ", low)
    sup_desc = [w for w in _SUPER_DESC if re.search(r"\b" + w + r"\b", sup_text)]
    sup_asc = [w for w in _SUPER_ASC if re.search(r"\b" + w + r"\b", sup_text)]
    if sup_desc or sup_asc:
        order = "desc" if sup_desc and not sup_asc else "asc" if sup_asc and not sup_desc else (
            "desc" if sup_text.find(sup_desc[0]) < sup_text.find(sup_asc[0]) else "asc")
        # "longest" still says which quantity (long -> duration); "highest" says nothing
        text = low
        for w in sup_desc + sup_asc:
            text = re.sub(r"\b" + w + r"\b", SUPERLATIVE_BASE.get(w, " "), text)
        return Analysis(kind="extreme", order=order, top_n=_top_n(low), target_text=" ".join(text.split()),
                        how_many_noun=how_noun, **common)
    if re.search(_TREND, low):
        return Analysis(kind="trend", op="change", target_text=target(_TREND), how_many_noun=how_noun, **common)
    if re.search(_AVG, low):
        return Analysis(kind="aggregate", op="avg", target_text=target(_AVG), how_many_noun=how_noun, **common)
    if re.search(_SUM, low):
        return Analysis(kind="aggregate", op="sum", target_text=target(_SUM), how_many_noun=how_noun, **common)
    if re.search(_FIRST, low) and not re.search(r"\bfirst\s+(?:time|day)\s+(?:i|we)\b", low):
        return Analysis(kind="first", op="first", target_text=target(_FIRST), **common)
    if re.search(_LATEST, low):
        return Analysis(kind="latest", op="latest", target_text=target(_LATEST), **common)
    if how_noun and hm[1] == "many":
        # "how many hours/km/steps" asks for a quantity; "how many days/runs" for a count:
        # the planner decides once it knows the columns and units (kind "how_many")
        return Analysis(kind="how_many", op="sum", target_text=low, how_many_noun=how_noun, **common)
    if re.search(r"^\s*(?:which|what)\s+(?:days?|dates?|nights?|times?|sessions?)\b|^\s*list\b|\bon which days\b",
                 qlow) and conditions:
        return Analysis(kind="list", target_text=low, **common)
    if re.search(r"^\s*(?:did|have|has|was there|were there|do|does|had)\b", qlow) and conditions:
        return Analysis(kind="yesno", target_text=low, **common)
    if asks_date and re.match(r"\s*when\b", qlow) and not conditions:
        return Analysis(kind="when", target_text=low, **common)
    if re.search(r"\bhow\s+(?:long|much|far|many|heavy|fast|high|low)\b|\bwhat\s+(?:was|is|were)\s+(?:my|the|our)\b"
                 r"|\bhow\s+\w+\s+(?:was|were|did)\b", low) or conditions:
        return Analysis(kind="value", op=None, target_text=low, how_many_noun=how_noun, **common)
    return Analysis(kind="retrieval", target_text=low, **common)
