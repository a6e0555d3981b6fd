"""Question analysis for the rule-based planner: intent, time scope, event clause, conditions.

`analyze(question, now, first)` splits a question into what it asks
(aggregate, extreme, count, latest/first, trend, value, list, yes/no, when,
or plain retrieval), the time range it names (resolved by dates.py), an
event clause ("on the day I repotted the monstera") that must be located
first, and numeric conditions ("longer than 8 km"). Nothing here knows any
table or column: the words left in `target_text` are matched against the
metadata afterwards.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from ..lexicon import BUILTIN
from .dates import NUMBER_WORDS, TimeRange, find_time_range

_SUPER_DESC = ("most", "highest", "longest", "maximum", "biggest", "largest", "furthest", "farthest",
               "heaviest", "best", "greatest", "hottest", "warmest", "fastest")
_SUPER_ASC = ("least", "lowest", "shortest", "minimum", "smallest", "fewest", "lightest", "worst", "slowest",
              "coldest", "coolest")
SUPERLATIVE_BASE = {"longest": "long", "shortest": "long", "furthest": "far", "farthest": "far",
                    "heaviest": "heavy", "lightest": "heavy", "fastest": "fast", "slowest": "fast", "hottest": "hot",
                    "coldest": "cold", "warmest": "warm", "coolest": "cold", "biggest": "big", "smallest": "big",
                    "largest": "big"}
# "per X" asks for an average over X's records ("per harvest", "per night", "per item")
_AVG = (r"\b(average|avg|mean|typical(?:ly)?|usually|on average|per (?!cent\b)(?:[a-z]+))\b|"
        r"^\s*(averaged)\b|\bdid\s+(?:i|we)\s+(average)\b")
PER = re.compile(r"\b(?:per|for each|for every|each)\s+(?!cent\b)([a-z]+)")
_SUM = r"\b(total|in total|altogether|combined|sum|cumulative(?:ly)?|overall|all together|add(?:ing|ed)? up|summ(?:ing|ed)(?: up)?)\b"
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
_NUM = r"(\d{1,2}:\d{2}(?!\d)|-?\d+(?:\.\d+)?|" + "|".join(sorted((w for w in NUMBER_WORDS if " " not in w and len(w) > 2),
                                               key=len, reverse=True)) + r")"


@dataclass(frozen=True)
class EventClause:
    relation: str  # day | day_after | day_before | week | since | after | before
    text: str  # what to locate, e.g. "I repotted the monstera"
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
    # kind "compare": the reference period (time_range is the period asked about)
    baseline: TimeRange | None = None
    # the records the question is about ("over all my harvests", "did my last invoice show"): a hint
    # for the table, not part of the measured quantity
    records: str | None = None
    # kind "versus": the other party ("did I score more points than Leo") and the comparison word
    other: str | None = None
    more: bool = True


def _num(s: str) -> float:
    s = s.lower()
    if re.fullmatch(r"\d{1,2}:\d{2}", s):  # "5:30 per km": minutes and seconds
        a, b = s.split(":")
        return int(a) + int(b) / 60
    return float(s) if re.fullmatch(r"-?\d+(?:\.\d+)?", s) else float(NUMBER_WORDS[s])


def find_event_clause(q: str) -> EventClause | None:
    """'on the day I repotted the monstera' -> EventClause('day', 'I repotted the monstera')."""
    patterns = [
        (r"\b(?:on|during|for|of|in)?\s*the\s+(?:day|night|date|morning|evening)\s+(after|before)\s+(?:the\s+day\s+)?"
         r"((?:i|we|my|our)\b.+)", "day_{}"),
        (r"\b(?:on|during|for|of|in)?\s*the\s+(?:day|night|date|morning|evening)\s+(?:that\s+|when\s+|on\s+which\s+)?"
         r"((?:i|we|my|our)\b.+)", "day"),
        (r"\b(?:in|during|over|for)?\s*the\s+week\s+(?:that\s+|when\s+|in\s+which\s+)?((?:i|we|my|our)\b.+)", "week"),
        (r"\b(since|after|before)\s+((?:i|we|my|our)\b.+)", "{}"),
    ]
    patterns += [
        # "the day of my dentist appointment", "the night of the Midnight Owls concert"
        (r"\b(?:on|during|for|of|in)?\s*the\s+(?:day|night|date|morning|evening)\s+of\s+((?:my|our|the)\s+.+)", "day"),
        # "after signing up for the Riverside 10K", "since getting my new bike"
        (r"\b(since|after|before)\s+((?!the\b|my\b)[a-z]+ing\b.+)", "{}"),
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
            text, phrase = _clause_end(text, m[0])
            if find_conditions(text):
                continue  # "when I slept over 7.5 hours" is a condition on the rows, not an event
            return EventClause(relation, text, phrase)
    # "... when I repotted the monstera?" (not a question that starts with "when")
    m = re.search(r"(?<!^)\b(?:when|while)\s+((?:i|we)\s+.+)", q.strip(), flags=re.IGNORECASE)
    if m and not re.match(r"\s*when\b", q, flags=re.IGNORECASE):
        text, phrase = _clause_end(m[1], m[0])
        if not find_conditions(text):
            return EventClause("day", text, phrase)
    return None


_ORDER_OPENER = re.compile(r"^\s*(?:did|does|do|was|were|is|are|has|have|had)\b", re.IGNORECASE)


def order_clauses(question: str, event: EventClause | None) -> tuple[str, str] | None:
    """The two events a question about their order names, (A, B): "Did I repot the fern before the
    trip?" -> ("I repot the fern", "the trip"); "Did Ana visit Rome before or after Milan?" ->
    ("Ana visit Rome", "Milan"). Only a yes/no question (or a "before or after" one); B is the event
    clause when the question has one. None for any other question or when a side is empty."""
    q = " ".join(question.strip().split())
    if not _ORDER_OPENER.match(q):
        return None
    either = re.search(r"\b(?:before|after)\s+or\s+(?:before|after)\b", q, re.IGNORECASE)
    if either:
        at, b = either.start(), q[either.end():]
    elif event is not None and event.relation in ("before", "after"):
        at, b = q.lower().find(event.phrase.strip().lower()), event.text
    else:
        m = re.search(r"\s(?:before|after|prior to)\s+(?!or\b)(?=\S)", q, re.IGNORECASE)
        if not m:
            return None
        at, b = m.start(), q[m.end():]
    a = _ORDER_OPENER.sub("", q[:max(at, 0)]).strip(" ,")
    b = re.split(r"[?]|\.\s", b)[0].strip(" ,.")
    if at <= 0 or not re.search(r"[A-Za-z]{3}", a) or not re.search(r"[A-Za-z]{3}", b):
        return None
    return a, b


@dataclass(frozen=True)
class OrderChoice:
    """A question asking which of two events came first (or last): the two clauses to locate, the two
    options to answer with, and whether the earlier one is asked for."""

    sides: tuple[str, str]
    options: tuple[str, str]
    first: bool


_EARLY = r"first|earlier|earliest|sooner|before"
_LATE = r"later|last|latest|second|afterwards?"
_WHICH_ORDER = re.compile(r"^\s*which(?:\s+(?:one|event|thing|of\s+(?:these|the\s+two|them)))?\s+(?P<mid>.*?)\s*\b"
                          r"(?P<when>" + _EARLY + "|" + _LATE + r")\b(?P<rest>[^:]*?)\s*[:,]\s*(?P<a>.+?)\s*,?\s+or\s+"
                          r"(?P<b>.+?)\s*[?.]?\s*$", re.IGNORECASE)
_DID_FIRST = re.compile(r"^\s*(?:did|was|were|has|had)\s+(?P<a>.+?)\s+(?P<when>" + _EARLY + "|" + _LATE +
                        r")\s*,?\s+or\s+(?:did|was|were|has|had)?\s*(?P<b>.+?)\s+(?:" + _EARLY + "|" + _LATE +
                        r")\s*[?.]?\s*$", re.IGNORECASE)


def order_choice(question: str) -> OrderChoice | None:
    """The two events of a question asking which came first or last: "Which came first: A or B?",
    "Which happened earlier: A or B?", "Which did Liam buy first: the bike or the helmet?" (the sides
    keep the question's subject and verb: "Liam buy the bike"), "Did she do A first, or did she do B
    first?". None for any other question or when an option is empty."""
    q = " ".join(question.strip().split())
    m = _WHICH_ORDER.match(q)
    if m:
        a, b = m["a"].strip(" ,"), m["b"].strip(" ,")
        # "which did Liam purchase": the options are what Liam purchased
        did = re.match(r"(?:did|does|do|was|were|has|had)\s+(.+)$", m["mid"].strip(), re.IGNORECASE)
        ctx = did[1].strip() if did else ""
        sides = (f"{ctx} {a}".strip(), f"{ctx} {b}".strip())
    else:
        m = _DID_FIRST.match(q)
        if not m:
            return None
        a, b = m["a"].strip(" ,"), m["b"].strip(" ,")
        sides = (a, b)
    if not re.search(r"[A-Za-z]{3}", a) or not re.search(r"[A-Za-z]{3}", b):
        return None
    return OrderChoice(sides, (a, b), re.fullmatch(_EARLY, m["when"], re.IGNORECASE) is not None)


def _clause_end(text: str, phrase: str) -> tuple[str, str]:
    """An event clause ends at a comma or the question mark: 'I got my road bike, what was ...'."""
    cut = re.split(r"\s*[,;?]\s*", text, maxsplit=1)[0]
    if len(cut) < len(text):
        phrase = phrase[: len(phrase) - len(text) + len(cut)]
    return cut.strip().rstrip("?.! "), phrase


_UNIT_AFTER = r"\s*((?:min(?:utes?)?\s*)?(?:/|per\s+)(?:km|kilomet\w*|mi|miles?)\b|[a-z%°€$£]+(?:/\d*[a-z]+)?|/[a-z]+)?"
_OR_MORE = [(r"or\s+(?:more|higher|above|greater|longer|over|better|up)", ">="),
            (r"or\s+(?:less|fewer|lower|below|under|shorter|worse)", "<=")]


def _context(q: str, start: int) -> str:
    """The words before a comparator back to the clause start (at most 8): which quantity it is about."""
    head = re.split(r"[,;:?]|\b(?:where|when|with|while|on\s+(?:days?|nights?)|and)\b", q[:start],
                    flags=re.IGNORECASE)[-1]
    # "on how many sessions was the games under 9": the quantity is what follows the clause's verb, when
    # anything does ("days my commute was under 40 minutes": then it is what comes before)
    after = re.split(r"\b(?:was|were|is|are|had|has|have)\b", head, flags=re.IGNORECASE)[-1]
    if re.search(r"\bhow\s+many\b", head, re.I) and re.search(r"[a-z]{2}", after, re.I):
        head = after
    return " ".join(head.split()[-8:])


def _unit(raw: str | None) -> str | None:
    if not raw:
        return None
    unit = " ".join(raw.lower().split())
    if unit in ("and", "or", "in", "on", "during", "for", "times", "of", "the", "a", "an", "than", "to", "at"):
        return None
    if re.match(r"(?:min(?:utes?)?\s*)?(?:/|per\s+)(?:km|kilomet)", unit):
        return "min/km"
    if re.match(r"(?:min(?:utes?)?\s*)?(?:/|per\s+)(?:mi|mile)", unit):
        return "min/mi"
    return unit


def find_conditions(q: str) -> list[Condition]:
    """Numeric conditions such as 'longer than 8 km', 'at least 7 hours', '78 or more', 'under 5:30 per km'."""
    out = []
    for words, op in _COMPARATORS:
        for m in re.finditer(r"\b(" + words + r")\s+" + _NUM + _UNIT_AFTER, q, flags=re.IGNORECASE):
            unit = _unit(m[3])
            of = re.match(r"\s+of\s+((?:[a-z]+\s?){1,2})", q[m.end():], flags=re.IGNORECASE) if unit else None
            if of and not re.match(r"(?:the|my|a|an)\b", of[1], flags=re.IGNORECASE):
                # "more than 8 hours of study": the words after "of" name the quantity
                out.append(Condition(op, _num(m[2]), unit, m[0] + of[0].rstrip(), of[1].strip()))
                continue
            out.append(Condition(op, _num(m[2]), unit, m[0], _context(q, m.start())))
    for m in re.finditer(r"\b(faster|quicker|slower)\s+than\s+" + _NUM + _UNIT_AFTER, q, flags=re.IGNORECASE):
        unit = _unit(m[3])
        # faster pace or time = fewer minutes; faster speed = more km/h
        low_is_fast = unit is None or unit.startswith("min") or ":" in m[2] or unit in ("h", "hours", "s", "seconds")
        fast = m[1].lower() in ("faster", "quicker")
        out.append(Condition("<" if fast == low_is_fast else ">", _num(m[2]), unit, m[0], _context(q, m.start())))
    for words, op in _OR_MORE:
        for m in re.finditer(r"\b" + _NUM + _UNIT_AFTER + r"\s+" + words + r"\b", q, flags=re.IGNORECASE):
            if _unit(m[2]) == "or":
                continue
            unit = _unit(m[2]) if not (m[2] or "").lower().startswith("or") else None
            # "a puzzle score of 78 or more": the quantity is named before "of"
            out.append(Condition(op, _num(m[1]), unit, m[0], _context(q, m.start())))
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


_HOW_STOP = frozenset("did do does have has had was were is are i we my our you it the a an of in on at during "
                      "for from to with since after before between over than that which per each every "
                      "across among".split())
_COMPARE_WORDS = (r"\b(?:higher or lower|lower or higher|more or less|less or more|better or worse|"
                  r"up or down|down or up|increase(?:d)? or decrease(?:d)?|decrease(?:d)? or increase(?:d)?|"
                  r"go(?:ne)?|went|compared?(?: with| to)?|than|versus|vs\.?|was|were|did|my|the|from|to|and|"
                  r"between|in|during)\b")


# words that end a record noun: prepositions and comparatives here, and any past-tense verb form (the
# lexicon's irregular verbs and regular "-ed" forms: "how many games I won", "my rounds played")
_NOUN_ENDERS = frozenset("goes beyond above below over under more less than".split())


def _verbish(w: str) -> bool:
    return w in _NOUN_ENDERS or BUILTIN.is_past(w)


# "did I <verb> more <quantity> than <other party>": the user's total against another party's (the
# party is resolved later against the text columns' values, any name)
_VERSUS = re.compile(r"\b(?:did|do|have|has|had|was|were)\s+(?:i|we)\s+(?:\w+\s+){1,2}?(?P<cmp>more|fewer|less)\s+"
                     r"(?P<noun>[a-z]+(?:\s+[a-z]+)?)\s+(?:(?:at|in|on|from|of)\s+[a-z]+\s+)?than\s+"
                     r"(?!(?:i|we|usual|before|last|the|my|a|an)\b)(?P<other>[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]*)?)",
                     re.IGNORECASE)


def _how_many_noun(low: str) -> str | None:
    """The counted noun: 'how many bike rides did I' -> 'rides', 'how many of my runs' -> 'runs',
    'how many harvest logs do I have' -> 'logs', 'how many hours' -> 'hours'."""
    m = re.search(r"\bhow\s+many\s+(?:of\s+(?:my|our|the)\s+)?(.*)", low)
    if not m:
        return None
    words = []
    for w in re.findall(r"[a-z%]+(?:-[a-z]+)?", m[1]):  # "tune-ups", "fill-ups": one word
        if w in _HOW_STOP or _verbish(w) or (words and w.endswith("ed")):
            break
        words.append(w)
        if len(words) == 3:
            break
    return words[-1] if words else None


def _comparison(q: str, now, first) -> tuple[TimeRange, TimeRange, tuple[str, ...]] | None:
    """Two periods compared: 'higher or lower in March than in January', 'compared with January, ...
    in March', 'go up or down from February to March'. Returns (baseline, target, phrases): the
    baseline is the period after than/compared with/from/between, else the earlier one."""
    low = q.lower()
    if not re.search(r"\b(?:higher or lower|lower or higher|more or less|better or worse|up or down|"
                     r"increase(?:d)? or decrease(?:d)?|compared?\s+(?:with|to)|than|versus|vs)\b", low):
        return None
    from .dates import _DAY_OR_MONTH_RE, _day_or_month  # one parser for both periods

    m = re.search(r"\b(?:from|between)\s+(" + _DAY_OR_MONTH_RE + r")\s+(?:and|to|until|till|through|-)\s+("
                  + _DAY_OR_MONTH_RE + r")", low)
    if m:
        a, b = _day_or_month(m[1], _d(now)), _day_or_month(m[2], _d(now))
        if a and b and a[0] != b[0]:
            ra = TimeRange(a[0], a[1], m[1], m[1])
            rb = TimeRange(b[0], b[1], m[2], m[2])
            return ra, rb, (m[0],)
    first_r = find_time_range(q, now, first)
    if first_r is None:
        return None
    rest = _remove(q, first_r.phrase)
    second_r = find_time_range(rest, now, first)
    if second_r is None or (second_r.start, second_r.end) == (first_r.start, first_r.end):
        return None
    def marked(r: TimeRange) -> bool:
        i = low.find(r.phrase.lower())
        if i < 0:
            return False
        # the words before the period's name, the phrase's own preposition included ("compared with March")
        before = (low[max(0, i - 30):i] + low[i:i + len(r.phrase)]).rsplit(" ", 1)[0] + " "
        return bool(re.search(r"\b(?:than|compared?\s+(?:with|to)|versus|vs\.?)\s*(?:in|to|with|during)?\s*$", before))
    if marked(first_r) and not marked(second_r):
        base, tgt = first_r, second_r
    elif marked(second_r) and not marked(first_r):
        base, tgt = second_r, first_r
    else:
        base, tgt = (first_r, second_r) if first_r.start <= second_r.start else (second_r, first_r)
    return base, tgt, (first_r.phrase, second_r.phrase)


# (a record noun is one to three words, never a pronoun: "all the chess games I won" is "chess games")
_RECORDS = [
    # "over all my harvests", "across every invoice", "among all of the games"
    r"\b(?:over|across|among|in|for|from|of|on)\s+(?:all\s+(?:of\s+)?|every\s+|each\s+)(?:my\s+|our\s+|the\s+)?"
    r"(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})",
    # "adding up every invoice", "summing all my harvests"
    r"\b(?:(?:adding|add|sum)\s+up|summing(?:\s+up)?)\s+(?:all\s+(?:of\s+)?|every\s+|each\s+)?(?:my\s+|our\s+|the\s+)?"
    r"(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})",
    # "what X did my last harvest show", "what did the first invoice say"
    r"\b(?:did|do|does)\s+(?:my|our|the)\s+(?:(?P<q>last|latest|first|earliest|most\s+recent)\s+)?"
    r"(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})\s+(?:show|have|record|log|read|say|list|give)\b",
    # "across my harvests in May", "on harvests with ...", "in my light cycles"
    r"\b(?:across|among)\s+(?:my|our|the)\s+(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})",
    r"\b(?:on|for|in)\s+(?:my\s+|our\s+|the\s+)?(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})\s+(?:with|where|that\s+had|having)\b",
    # "first X in my harvests", "latest X of my invoices"
    r"\b(?:in|of|from|on)\s+(?:my|our)\s+(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})\s*$",
    # "which harvest had the most ...", "which invoice showed the lowest ..."
    r"^(?:which|what)\s+(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})\s+(?:had|has|showed|shows|recorded|logged)"
    r"(?=\s+(?:the\s+)?(?:most|least|highest|lowest|largest|smallest|biggest|fewest|best|worst)\b)",
    # a change between two records: "from my first harvest to my last", "since the first invoice"
    r"\b(?:from|since)\s+(?:my|our|the)\s+(?:very\s+)?(?:first|earliest)\s+"
    r"(?P<r>[a-z]+(?:-[a-z]+)?(?:\s+(?!(?:i|we|you|he|she|they|it)\b)[a-z]+(?:-[a-z]+)?){0,2})(?=\s*(?:to|until|till|and)\b|\s*,|\s*$)",
]
_QUALIFIERS = frozenset("first last latest earliest recent next previous newest oldest".split())
_NOT_RECORDS = frozenset("history memory logs records data entries time day days week month year total life".split())


def _records_phrase(low: str) -> tuple[str, tuple[int, int], str | None] | None:
    """(records noun phrase, the span of `low` to drop from the target, the operator it says) for phrases
    that name the rows a question is about; plain English prepositions and determiners, no domain words.
    Only that span goes: the same noun said before it is what is asked ("mean lessons across all my
    lessons")."""
    for pat in _RECORDS:
        m = re.search(pat, low.rstrip("?.! "))
        if not m:
            continue
        r = m["r"].strip()
        quals = [w for w in r.split() if w in _QUALIFIERS]
        ws = [w for w in r.split() if w not in _HOW_STOP and not _verbish(w) and w not in _QUALIFIERS]
        # a record noun is a plural or a noun phrase ending in one ("water changes"), or after did/do
        if not ws or (len(ws) == 1 and ws[0] in _NOT_RECORDS) or ws[-1] in ("history", "memory"):
            continue
        # "did my last harvest show": the qualifier stays (it is the operator), the rest goes
        q = m.groupdict().get("q") or (" ".join(quals) if quals else None)
        if m[0].startswith(("add", "sum")):
            # "adding up every market day": the phrase goes, the operator it said stays
            q = "in total"
        whole = q is not None or "show" in m[0] or m[0].startswith(("did", "add", "sum"))
        return " ".join(ws), (m.span() if whole else m.span("r")), q
    return None


def _d(x):
    return x.date() if isinstance(x, datetime) else x


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
    if conditions:
        # "When the tax was over 14.74 USD, what was my mean total?": the clause before the comma held the
        # condition; what is asked comes after it
        m = re.match(r"\s*(?:when|whenever|if|on days when|on days where)\b([^,?]*),\s*(?=\S)", rest, re.I)
        if m and any(c.context and c.context.lower() in m[1].lower() for c in conditions):
            rest = rest[m.end():]
    low = rest.lower()
    said = low  # as asked, before a records phrase is taken out ("which language did my listening session have")
    qlow = q.lower()
    asks_date = bool(re.search(r"\b(which|what)\s+(day|date|night|morning|evening|week|month)\b|^\s*when\b|"
                               r"\bon which\b|\bwhat day\b|\b(?:give|tell|name)\s+(?:me\s+)?the\s+(?:day|date)\b", qlow))
    # "what time did I leave" asks a time of day; "what time did my last session show" and "on average, what
    # time ..." ask the duration a record holds
    asks_date = asks_date or bool(re.search(r"\b(which|what)\s+time\b", qlow) and not re.search(
        r"\b(?:show|shows|showed|read|reads|say|says|said|display|displayed|give|gave)\b|" + _AVG + "|" + _SUM, qlow))
    common = dict(question=question, event=event, time_range=tr, conditions=conditions, asks_date=asks_date)

    def target(*patterns: str, once: bool = False) -> str:
        """The question without the operator words (only their first occurrence when `once`: in "the
        total total" or "how much total in total" the other "total" is the quantity's name)."""
        t = low
        for p in patterns:
            t = re.sub(p, " ", t, count=1 if once else 0)
        return " ".join(t.split())

    hm = re.search(r"\bhow\s+(many|much)\s+(\w+)?", low)
    how_noun = _how_many_noun(low) if hm and hm[1] == "many" else (hm[2] if hm and hm[2] else None)
    if hm and hm[1] == "much" and how_noun in _HOW_STOP:
        how_noun = None
    nm = re.search(r"\b(?:the\s+)?number\s+of\s+(?!times\b)(.*)", low)
    if nm and not hm:
        # "the number of harvests" is "how many harvests"
        how_noun = _how_many_noun("how many " + nm[1])
        low = low[:nm.start()] + " how many " + nm[1]
        hm = re.search(r"\bhow\s+(many|much)\s+(\w+)?", low)
    records = _records_phrase(low)
    if records:
        (a, b) = records[1]
        low = " ".join((low[:a] + f" {records[2] or ''} " + low[b:]).split())
        common["records"] = records[0]
    vs = _VERSUS.search(rest)
    if vs:
        # "did I score more points than Leo": the user's total against another party's
        return Analysis(kind="versus", op="sum", target_text=vs["noun"].lower(), how_many_noun=how_noun,
                        other=vs["other"], more=vs["cmp"].lower() == "more", **common)
    compare = _comparison(q, now, first)
    if compare is not None:
        base, tgt, phrases = compare
        t = low
        for ph in phrases:
            t = t.replace(ph.lower(), " ")
        t = re.sub(_COMPARE_WORDS, " ", t)
        common_c = dict(common, time_range=tgt)
        return Analysis(kind="compare", op="avg", target_text=" ".join(t.split()), how_many_noun=how_noun,
                        baseline=base, **{k: v for k, v in common_c.items()})
    if conditions and re.search(r"^\s*(?:did|have|has|had|was|were|is|are|do|does)\b", qlow) and \
            re.search(r"\bever\b|\bany\b|\bat all\b", qlow):
        # "Did my time in range ever drop below 55%?": a yes/no about matching rows, not a trend
        return Analysis(kind="yesno", target_text=low, how_many_noun=how_noun, **common)
    if re.search(r"\bhow\s+(?:many\s+times|often)\b|\bnumber\s+of\s+times\b|^\s*count\b", low):
        return Analysis(kind="count", op="count", target_text=target(r"\bhow\s+many\s+times\b", r"\bhow often\b"),
                        how_many_noun=how_noun, **common)
    sup_text = re.sub(r"\bmost\s+(?:recent(?:ly)?|often|likely|frequently)\b|\bat (?:least|most)\b|"
                      r"\bon top of\b", " ", low)
    sup_desc = [w for w in _SUPER_DESC if re.search(r"\b" + w + r"\b", sup_text)]
    sup_asc = [w for w in _SUPER_ASC if re.search(r"\b" + w + r"\b", sup_text)]
    if sup_desc or sup_asc:
        order = "desc" if sup_desc and not sup_asc else "asc" if sup_asc and not sup_desc else (
            "desc" if sup_text.find(sup_desc[0]) < sup_text.find(sup_asc[0]) else "asc")
        # "longest" still says which quantity (long -> duration); "highest" says nothing
        text = low
        # "which day did I study the least": most/least after a verb, with no noun, asks for an amount
        text = re.sub(r"\b(?:the\s+)?(?:most|least)\s*(?=$|[?.!,]|\b(?:in|on|during|last|this|over|since)\b)",
                      " much ", text)
        for w in sup_desc + sup_asc:
            text = re.sub(r"\b" + w + r"\b", SUPERLATIVE_BASE.get(w, " "), text)
        return Analysis(kind="extreme", order=order, top_n=_top_n(low), target_text=" ".join(text.split()),
                        how_many_noun=how_noun, **common)
    strong_trend = bool(re.search(_TREND, low)) and bool(re.search(
        r"\btrend\w*|\bover time\b|\b(?:or|and)\s+(?:de|in)creas\w*|\bor\s+(?:fall\w*|fell|dropp?\w*|down|up|declin\w*|"
        r"ris\w*|rose|worse\w*|better|improv\w*|go(?:ne)?\s+(?:up|down))|\bhow\s+(?:has|have|did)\b.*\b(?:chang|evolv|develop|"
        r"progress)\w*|\b(?:gone|going|go|went|getting|gotten|got)\s+(?:up|down|better|worse)\b|"
        r"^\s*(?:has|have|did|is|are)\b.*\b(?:increas|decreas|ris|fall|drop|declin|improv|grow|grew|rose|fell)\w*", low))
    if strong_trend:
        return Analysis(kind="trend", op="change", target_text=target(_TREND), how_many_noun=how_noun, **common)
    avg_subject = how_noun and hm[1] == "many" and any(re.search(
        r"\b(?:avg|average|mean)\s+(?!(?:when|if|on|in|for|during|while|across|over)\b)\w+(?:\s+\w+)?\s*$",
        c.context, re.I) for c in conditions)
    if re.search(_AVG, low) and not avg_subject:
        # (not "how many drives had an avg speed under 68 km/h": the average names the quantity a
        # condition is on, right before it; the question counts records)
        return Analysis(kind="aggregate", op="avg", target_text=target(_AVG), how_many_noun=how_noun, **common)
    if how_noun and hm[1] == "many" and \
            not re.search(r"\b(?:the|my|our)\s+(?:latest|last|first|most recent|earliest)\b", low):
        # "how many <records> (in total)" counts rows, "how many <units> (in total)" sums a column: the
        # planner decides from the noun once it knows the columns and units (kind "how_many")
        return Analysis(kind="how_many", op="sum", target_text=target(_SUM, once=True), how_many_noun=how_noun, **common)
    # "the first total", "my latest sum": an ordinal names which record; "total" is the quantity's name
    ordinal_total = re.search(r"\b(?:first|earliest|initial|latest|last|most\s+recent)\s+(?:total|sum)\b", low) or (
        # "what total did my last order show", "the total of my first expense": one record, named by an
        # ordinal, has a total; only "in total", "altogether" or a sum of records adds
        re.search(r"(?:\b(?:the|my|our)\s+|^\s*)(?:first|earliest|initial|latest|last|most\s+recent)\s+(?!(?:\d+|two|three|four|"
                  r"five|six|seven|eight|nine|ten|few|several|couple)\b)[a-z-]+\b(?<!s)", said)
        and not re.search(r"\bin total\b|\baltogether\b|\bcombined\b|\bsum\b|\bcumulative", said))
    if re.search(_SUM, low) and not ordinal_total:
        return Analysis(kind="aggregate", op="sum", target_text=target(_SUM, once=True), how_many_noun=how_noun, **common)
    if re.search(_FIRST, low) and not re.search(r"\bfirst\s+(?:time|day)\s+(?:i|we)\b", low):
        return Analysis(kind="first", op="first", target_text=target(_FIRST), **common)
    if re.search(_LATEST, low):
        return Analysis(kind="latest", op="latest", target_text=target(_LATEST), **common)
    # (a "when" question asks for a date: "When did my fall fashion shopping take place?" is no trend)
    if re.search(_TREND, low) and not (asks_date and re.match(r"\s*when\b", qlow)):
        return Analysis(kind="trend", op="change", target_text=target(_TREND), how_many_noun=how_noun, **common)
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
                 r"|\bhow\s+\w+\s+(?:was|were|did)\b"
                 r"|^\s*(?:what|which)\s+(?:\w+\s+){1,3}(?:did|do|does|was|were|is|had)\s+(?:i|we|my|our)\b",
                 low + "\n" + said, re.M) or conditions:
        return Analysis(kind="value", op=None, target_text=low, how_many_noun=how_noun, **common)
    return Analysis(kind="retrieval", target_text=low, **common)
