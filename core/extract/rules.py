"""Rule-based attribute extraction (the default, offline extractor).

A record is a measured quantity attached to a label or to a unit that names it.
`RuleExtractor.extract` scans three kinds of text of a round:

- dialogue utterances (prose): "Label: value unit", "my X was/is Y unit",
  "I slept 7h 12m", "I ran 8.2 km in 45 minutes", "a distance of 5 km",
  "7 hours of sleep", "blood pressure 128/84", "Sleep/Wake: 23:10/06:40";
- image captions (prose, same rules);
- OCR text (structured): one visual row per line, cells separated by " | ",
  tabs or runs of spaces; besides the prose rules it pairs a label cell with
  a value cell to its right ("label left / value right"), a row of labels
  with the row of values below ("label above value") and a value row with the
  label row below ("big number, caption under it"), and accepts unitless
  numbers next to a label.

Distractors are not records: a number with neither a label nor a unit ("3
meetings tomorrow", "call me at 5", "2 kids"), ordinals ("18th", "Round 3"),
years, phone numbers, and percentages or times nobody labelled ("I 100%
agree"). In prose a unitless number needs an explicit link to its label
("Score: 85", "my score was 85", "a score of 85").

Provenance: every Observation's [start, end) span indexes the value in the
text it came from (utterance text, caption or OCR text), so
``text[start:end] == raw_value``. For a fraction ("128/84") each part is its
own observation with its own span.

Durations are normalized to minutes (raw text kept); other units keep their
own canonical spelling (see normalize.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.config import Config, DEFAULT
from core.extract.normalize import (
    STRONG_UNITS,
    UNIT_DEFAULT_ATTRIBUTE,
    UnitInfo,
    canonical_text,
    normalize_attribute,
    parse_unit,
    split_label_unit,
)
from core.model import Observation, Round

# --------------------------------------------------------------------------- values

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+"
_MONTHS = {m: i + 1 for i, m in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split())}
_MONTH_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
             r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")

# unit spellings, longest first, as a regex alternative (case-insensitive, whole token)
_UNIT_WORDS = [
    "mg/dl", "mmol/l", "mmhg", "km/h", "kph", "mph", "min/km", "min/mi", "/km", "/mi", "bpm", "rpm",
    "kcals", "kcal", "calories", "calorie", "cals", "cal", "kj",
    "kilometers", "kilometres", "kilometer", "kilometre", "kms", "km", "miles", "mile", "mi",
    "meters", "metres", "meter", "metre", "feet", "foot", "ft", "yards", "yard", "yds", "yd",
    "kilograms", "kilogram", "kilos", "kilo", "kgs", "kg", "pounds", "pound", "lbs", "lb",
    "grams", "gram", "mg", "g", "ounces", "ounce", "oz",
    "hours", "hour", "hrs", "hr", "h", "minutes", "minute", "mins", "min", "seconds", "second",
    "secs", "sec", "ms", "s",
    "percent", "pct", "%", "°c", "ºc", "°f", "ºf", "celsius", "fahrenheit",
    "ml", "liters", "litres", "liter", "litre", "l",
    "steps", "reps", "sets", "laps", "floors", "cups", "cup", "glasses", "servings", "serving",
    "pages", "points", "pts", "watts", "w", "usd", "dollars", "dollar", "bucks", "euros", "euro",
    "iu", "units", "degrees", "deg", "x", "m",
]
_UNIT_ALT = "|".join(re.escape(u) for u in _UNIT_WORDS)
_PHONE = re.compile(r"(?<!\w)(?:\+?\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?!\w)")

_VALUE_PATTERNS: list[tuple[str, re.Pattern]] = [
    # 23:10/06:40 (two times under a "Label_a/Label_b" label)
    ("clock_pair", re.compile(r"(?<![\w:.])(\d{1,2}:\d{2})\s?/\s?(\d{1,2}:\d{2})(?![\w:])")),
    # 1:05:30 / 6:45 pm / 23:10
    ("clock", re.compile(r"(?<![\w:.])(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap]\.?m\.?))?(?![\w:])"
                         r"(?:\s?(/\s?km|/\s?mi|min/km|min/mi|per\s+km|per\s+mile)\b)?", re.I)),
    # 7h 12m, 7 hrs 12 min, 1 hour and 5 minutes, 2h, 45m 10s
    ("compound", re.compile(
        r"(?<![\w.])(\d+(?:\.\d+)?)\s*(h|hrs?|hours?)\.?\s*(?:and\s+)?(\d{1,2})\s*(m|mins?|minutes?)\b\.?"
        r"(?:\s*(\d{1,2})\s*(s|secs?|seconds?)\b)?", re.I)),
    ("minsec", re.compile(r"(?<![\w.])(\d+)\s*(m|mins?|minutes?)\s*(?:and\s+)?(\d{1,2})\s*(s|secs?|seconds?)\b", re.I)),
    # 11pm, 6 am
    ("ampm", re.compile(r"(?<![\w.:])(\d{1,2})\s*([ap])\.?m\.?(?![a-z])", re.I)),
    # dates
    ("iso_date", re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")),
    ("num_date", re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{2,4})(?![\d/])")),
    ("mdy_date", re.compile(rf"(?<![\w])({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?(?![\w])", re.I)),
    ("dmy_date", re.compile(rf"(?<![\w])(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})(?:,?\s+(\d{{4}}))?(?![\w])", re.I)),
    # 128/84 (mmHg)
    ("fraction", re.compile(rf"(?<![\w./])(\d+(?:\.\d+)?)\s?/\s?(\d+(?:\.\d+)?)(?![\w/.])(?:\s?({_UNIT_ALT})(?![\w/]))?", re.I)),
    # $45, € 12.50, $1.2k
    ("currency", re.compile(r"([$€£¥])\s?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(k|K)?(?![\w])")),
    # 8.2 km, 10,432 steps, 82%, 52
    ("number", re.compile(rf"(?<![\w.,/:$€£¥])({_NUM})(?:[ \u00a0]?({_UNIT_ALT})(?![\w/%])|(?![\w]))", re.I)),
]


@dataclass(frozen=True)
class Value:
    """A value mention: text[start:end] is `raw`."""

    start: int
    end: int
    raw: str
    kind: str  # number, time, date
    number: float | None = None
    unit: UnitInfo | None = None
    parts: tuple["Value", ...] = ()  # the two sides of a fraction
    clock: bool = False  # written h:mm[:ss]: a time of day or a duration, decided by the label
    ordinal: bool = False


def _to_float(s: str) -> float:
    return float(s.replace(",", ""))


def _clock_value(m: re.Match, start: int, end: int, raw: str) -> Value:
    h, mnt, sec, ampm = m.group(1), m.group(2), m.group(3), m.group(4)
    pace = m.group(5) if (m.re.groups or 0) >= 5 else None
    if pace and not ampm and sec is None:  # "5:32 /km": minutes and seconds per distance
        unit = parse_unit("min/mi" if re.search(r"mi(?:le)?$", pace.lower()) else "min/km")
        return Value(start, end, raw, "number", int(h) + int(mnt) / 60, unit)
    if ampm:
        return Value(start, end, raw, "time")
    if sec is not None:  # h:mm:ss -> duration
        return Value(start, end, raw, "number", int(h) * 60 + int(mnt) + int(sec) / 60,
                     parse_unit("min"), clock=True)
    return Value(start, end, raw, "time", clock=True)


def scan_values(text: str) -> list[Value]:
    """Every value mention in `text`, left to right, without overlaps (first pattern wins).

    Phone numbers are masked first; ordinals ("18th") and years are returned
    flagged/unitless so the caller can reject them without a label.
    """
    taken = [False] * len(text)
    for m in _PHONE.finditer(text):
        for i in range(m.start(), m.end()):
            taken[i] = True
    out: list[Value] = []

    def free(a: int, b: int) -> bool:
        return not any(taken[a:b])

    for kind, pat in _VALUE_PATTERNS:
        for m in pat.finditer(text):
            a, b = m.start(), m.end()
            raw = text[a:b]
            # trailing spaces/dots matched by optional groups are not part of the value
            while b > a and text[b - 1] in " .":
                if text[b - 1] == "." and re.search(r"\b[a-z]\.[a-z]\.$", text[a:b], re.I):
                    break  # "p.m."
                b -= 1
            raw = text[a:b]
            if not free(a, b):
                continue
            v = _make_value(kind, m, a, b, raw, text)
            if v is None:
                continue
            out.append(v)
            for i in range(a, b):
                taken[i] = True
    out.sort(key=lambda v: v.start)
    return out


def _make_value(kind: str, m: re.Match, a: int, b: int, raw: str, text: str) -> Value | None:
    if kind == "clock":
        h, mnt = int(m.group(1)), int(m.group(2))
        if mnt > 59:
            return None
        return _clock_value(m, a, b, raw)
    if kind == "clock_pair":
        parts = []
        for g in (1, 2):
            sub = _VALUE_PATTERNS[1][1].match(m.group(g))
            if sub is None or int(sub.group(2)) > 59:
                return None
            s0 = a + m.start(g) - m.start()
            parts.append(_clock_value(sub, s0, s0 + len(m.group(g)), m.group(g)))
        return Value(a, b, raw, "time", parts=tuple(parts), clock=True)
    if kind == "compound":
        mins = _to_float(m.group(1)) * 60 + int(m.group(3)) + (int(m.group(5)) / 60 if m.group(5) else 0)
        return Value(a, b, raw, "number", mins, parse_unit("min"))
    if kind == "minsec":
        return Value(a, b, raw, "number", int(m.group(1)) + int(m.group(3)) / 60, parse_unit("min"))
    if kind == "ampm":
        if not 1 <= int(m.group(1)) <= 12:
            return None
        return Value(a, b, raw, "time")
    if kind in ("iso_date", "num_date", "mdy_date", "dmy_date"):
        return Value(a, b, raw, "date")
    if kind == "fraction":
        x, y = m.group(1), m.group(2)
        unit = parse_unit(m.group(3)) if m.group(3) else None
        pa = Value(a + m.start(1) - m.start(), a + m.end(1) - m.start(), x, "number", _to_float(x), unit)
        pb = Value(a + m.start(2) - m.start(), a + m.end(2) - m.start(), y, "number", _to_float(y), unit)
        return Value(a, b, raw, "number", _to_float(x), unit, parts=(pa, pb))
    if kind == "currency":
        n = _to_float(m.group(2)) * (1000 if m.group(3) else 1)
        return Value(a, b, raw, "number", n, parse_unit(m.group(1)))
    if kind == "number":
        num, unit_raw = m.group(1), m.group(2)
        after = text[b:b + 3]
        if re.match(r"[-–]\d", after):
            return None  # a range or an id: "9-5", "3-2"
        if unit_raw in ("s", "S") and text[m.end(1):m.end(1) + 1] == unit_raw and num.isdigit() and \
                int(num) % 10 == 0 and (len(num) == 4 or re.search(r"(?:the|early|mid|late|')\s*$", text[:a], re.I)):
            return None  # a decade: "the 1900s", "the 90s"
        if re.match(r"(st|nd|rd|th)\b", after, re.I):
            return Value(a, b + 2, text[a:b + 2], "number", _to_float(num), None, ordinal=True)
        unit = parse_unit(unit_raw) if unit_raw else None
        n = _to_float(num)
        if unit is not None and unit.factor != 1.0:
            n = n * unit.factor
        return Value(a, b, raw, "number", n, unit)
    return None


# --------------------------------------------------------------------------- labels

_CONNECT = {
    ":", "=", "-", "–", "~", "≈", "was", "is", "were", "are", "be", "been", "of", "at", "to", "about",
    "around", "approximately", "approx", "roughly", "nearly", "almost", "over", "under", "just", "only",
    "averaged", "averaging", "hit", "reached", "measured", "read", "reads", "clocked", "logged",
    "totaled", "totalled", "came", "in", "stood", "sits", "sat", "stayed", "dropped", "rose", "went",
    "climbed", "fell", "a", "an", "the", "now", "still", "again", "only", "exactly", "like",
    "by", "from", "up", "down", "out",
}
# connectors that do not by themselves tie a value to the words before it
_WEAK_CONNECT = {"a", "an", "the", "about", "around", "approximately", "approx", "roughly", "nearly", "almost",
                 "over", "under", "just", "only", "~", "≈", "-", "–", "now", "still", "again", "exactly", "like",
                 "by", "from", "up", "down", "out", "in", "to", "at", "went", "stayed", "sat"}
_DETERMINERS = {"my", "our", "your", "his", "her", "their", "the", "today's", "todays", "this",
                "yesterday's", "tonight's", "last", "its"}
_PRONOUNS = {"i", "you", "he", "she", "we", "they", "it", "me", "him", "us", "them", "that", "which",
             "who", "there", "here", "what", "i'm", "i've", "it's", "that's", "we're", "you're"}
_BOUNDARY_WORDS = {
    "and", "but", "or", "so", "then", "while", "because", "if", "when", "after", "before", "during",
    "with", "for", "on", "into", "than", "as", "since", "until", "per", "each", "every", "not", "no",
    "have", "had", "has", "got", "get", "did", "do", "does", "made", "make", "saw", "see", "took",
    "take", "need", "want", "think", "feel", "felt", "bought", "ate", "drank", "set", "keep", "kept",
    "maybe", "probably", "also", "too", "very", "really", "all", "some", "many", "much", "more", "less",
    "can", "could", "will", "would", "should", "might", "must", "let's", "lets", "let", "is", "was",
    "are", "were", "be", "been", "about", "around", "like", "just", "only", "of", "at", "to", "in",
    "by", "from", "a", "an", "the", "my", "our", "your", "his", "her", "their", "this", "these",
    "those", "showing", "shows", "with", "out", "back", "off", "away", "home", "won", "lost", "scored",
    "earned", "wow", "yes", "yeah", "oh", "hey", "hi", "ok", "okay",
}
# nouns that never name a measured quantity (counts of people/things, ordinals, ids)
NON_QUANTITY = {
    "round", "game", "match", "day", "week", "month", "year", "chapter", "page", "room", "number",
    "phone", "call", "meeting", "meetings", "kid", "kids", "child", "children", "son", "daughter",
    "friend", "friends", "wife", "husband", "mom", "dad", "brother", "sister", "family", "people",
    "person", "item", "items", "question", "questions", "option", "options", "step", "part", "level",
    "session", "episode", "season", "version", "gate", "seat", "table", "line", "flight", "bus",
    "train", "route", "apartment", "floor", "grade", "class", "lesson", "unit", "task", "tasks", "id",
    "no", "issue", "ticket", "order", "slide", "figure", "section", "stage", "phase", "turn", "hand",
    "player", "team", "track", "song", "list", "top", "times", "things", "platform", "terminal", "aisle",
    "exit", "lane", "stop", "car", "door", "channel", "volume", "years", "months", "weeks", "days",
}
_ACTIVITY_VERBS = {
    "ran": "run", "run": "run", "jogged": "jog", "walked": "walk", "walk": "walk", "hiked": "hike",
    "cycled": "cycle", "biked": "bike", "rode": "ride", "swam": "swim", "rowed": "row", "slept": "sleep",
    "napped": "nap", "meditated": "meditation", "studied": "study", "practiced": "practice",
    "practised": "practice", "worked": "work", "read": "reading", "drove": "drive", "commuted": "commute",
    "trained": "training", "lifted": "lift", "stretched": "stretch", "played": "play", "fasted": "fast",
    "burned": "burned", "burnt": "burned", "spent": "spending", "paid": "cost", "earned": "earnings",
    "weighed": "weight", "weigh": "weight", "scored": "score", "ate": "intake", "consumed": "intake", "drank": "drink",
}
_WORD = re.compile(r"\([^()]{1,12}\)|[A-Za-z][A-Za-z0-9'’]*(?:/[A-Za-z][A-Za-z0-9]*)*|[:=~≈–-]|[^\sA-Za-z]")
_CLAUSE_BREAK = re.compile(r"[.!?;]\s|[.!?;]$|\n|\||\t|,\s|\s{2,}|\s[-–]\s|\bbut\b|\bwhile\b|\bthough\b", re.I)
_SENTENCE_BREAK = re.compile(r"[.!?;]\s|\n|\|")


_TIME_WORDS = {"today", "tonight", "morning", "evening", "afternoon", "night", "yesterday", "week",
               "weekend", "month", "year", "now", "earlier", "later", "ago", "recently"}
# exercise words -> the activity they name ("Ran 6.5 km", "bike ride log", "took the road bike out")
EXERCISE = {
    "ran": "run", "run": "run", "runs": "run", "running": "run", "jog": "run", "jogged": "run",
    "jogging": "run", "rode": "ride", "ride": "ride", "riding": "ride", "cycled": "ride", "cycle": "ride",
    "cycling": "ride", "biked": "ride", "bike": "ride", "biking": "ride", "walked": "walk", "walk": "walk",
    "walking": "walk", "hiked": "hike", "hike": "hike", "hiking": "hike", "swam": "swim", "swim": "swim",
    "swimming": "swim", "rowed": "row", "rowing": "row",
}
_EXERCISE_RE = re.compile(r"\b(" + "|".join(sorted(EXERCISE, key=len, reverse=True)) + r")\b", re.I)
_TRAILER = re.compile(r"\s*(?:on average|avg|average|total|in total|today|tonight|this morning|this evening|"
                      r"last night|yesterday)?\s*$", re.I)


@dataclass(frozen=True)
class Label:
    text: str  # as written
    strong: bool  # linked to the value by structure (colon, "my X was", layout) not just adjacency
    verb: str | None = None  # an activity verb of the clause ("ran" -> run)
    average: bool = False  # "HR averaged 147", "heart rate around 157 on average"


def _clause_start(text: str, pos: int) -> int:
    start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, pos):
        if m.end() <= pos:
            start = m.end()
    return start


def left_label(text: str, value: Value, values: list[Value], *, structured: bool) -> Label:
    """The label written before `value` in its clause ("" when none) and the clause's activity verb."""
    cs = _clause_start(text, value.start)
    # an earlier value in the same clause ends the label search (but not the verb search)
    prev_end = cs
    for v in values:
        if v.end <= value.start and v.end > prev_end:
            prev_end = v.end
    verb = None
    ss = 0
    for m in _SENTENCE_BREAK.finditer(text, 0, value.start):
        ss = m.end()
    for w in re.findall(r"[A-Za-z]+", text[ss:value.start]):
        if w.lower() in _ACTIVITY_VERBS:
            verb = _ACTIVITY_VERBS[w.lower()]
    tokens = [(m.group(0), m.start() + prev_end) for m in _WORD.finditer(text[prev_end:value.start])]
    i = len(tokens) - 1
    strong = False
    skipped = 0
    # connectors between label and value: "was", ":", "of", "at", ...
    average = bool(re.match(r"\s*(?:on average|avg\b|average\b)", text[value.end:], re.I))
    while i >= 0 and tokens[i][0].lower() in _CONNECT and skipped < 4:
        if tokens[i][0] in (":", "=") or tokens[i][0].lower() not in _WEAK_CONNECT:
            strong = True  # "X was", "X: ", "X came out at", "X averaged": a verb links label and value
        if tokens[i][0].lower() in ("averaged", "averaging"):
            average = True
        i -= 1
        skipped += 1
    words: list[tuple[str, int]] = []
    skipped_time = 0
    while i >= 0 and len(words) < 5:
        w = tokens[i][0]
        lw = w.lower().replace("’", "'")
        if w.startswith("(") and not words and (parse_unit(w.strip("()")) is not None or w.strip("()").isalpha()):
            words.append((w, tokens[i][1]))  # "Sleep Time (hrs): 5.5": the unit belongs to the label
            i -= 1
            continue
        if not re.match(r"[A-Za-z]", w) or lw in _PRONOUNS:
            break
        if (not words and strong and not skipped_time and lw in _TIME_WORDS and i > 0
                and tokens[i - 1][0].lower() in ("last", "this")):
            # "Sleep last night: 8.3 h": after a colon/verb "last night" only dates the record
            skipped_time = 2
            i -= 2
            continue
        if not words and lw in _TIME_WORDS and not structured:
            break  # "ran 6.5 km this morning in 37 minutes": "morning" does not name the 37 minutes
        if lw in _BOUNDARY_WORDS or lw in _DETERMINERS:
            if lw in ("in", "of", "to", "per") and words:
                ext = _extend_label(tokens, i, structured)
                if ext is not None:
                    words.append((tokens[i][0], tokens[i][1]))
                    words.extend(ext[0])
                    i = ext[1]
                    strong = strong or ext[2]
                    continue
            break
        if lw in _ACTIVITY_VERBS and not words:
            break
        if lw in _ACTIVITY_VERBS:
            break
        words.append((w, tokens[i][1]))
        i -= 1
    if skipped_time and not (i < 0 and prev_end == cs):
        # "... along the river today: 115 minutes": skipped time words need a label that starts the clause
        return Label("", False, verb, average)
    if i < 0 and words and prev_end == cs:
        if structured:
            strong = True  # the label starts the line/cell: "Steps 10,432"
        else:
            # a clause that is only "label value" ("..., score 69, ...") is a record
            m = _CLAUSE_BREAK.search(text, value.end)
            rest = text[value.end:m.start() if m else len(text)]
            strong = strong or bool(_TRAILER.fullmatch(rest))
    words.reverse()
    if not words:
        return Label("", False, verb, average)
    a = words[0][1]
    b = words[-1][1] + len(words[-1][0])
    return Label(text[a:b], strong, verb, average)


def _extend_label(tokens: list[tuple[str, int]], i: int, structured: bool):
    """Extend a label over "in"/"of"/"to" ("time in range", "minutes of exercise") when the words before
    it start the line/cell (structured text) or follow a determiner ("my time in range was 82%").
    Returns (words in reverse order, new index, strong) or None."""
    j = i - 1
    ext: list[tuple[str, int]] = []
    while j >= 0 and len(ext) < 3:
        w = tokens[j][0]
        lw = w.lower()
        if not re.match(r"[A-Za-z]", w) or lw in _PRONOUNS or lw in _BOUNDARY_WORDS or lw in _ACTIVITY_VERBS:
            break
        ext.append(tokens[j])
        j -= 1
    if not ext:
        return None
    if j < 0 or tokens[j][0] in (":", "="):
        return ext, j, True  # the label starts the clause/line or follows a colon
    if j >= 0 and tokens[j][0].lower() in _DETERMINERS:
        return ext, j, True
    return None


def right_label(text: str, value: Value) -> str:
    """A label written after a value that starts its clause: "69% time in range, ..." -> "time in range"."""
    cs = _clause_start(text, value.start)
    colon = text.rfind(":", cs, value.start)
    if colon >= 0:
        cs = colon + 1  # "CGM numbers for today: 69% time in range"
    if text[cs:value.start].strip(" :-"):
        return ""
    m = _CLAUSE_BREAK.search(text, value.end)
    rest = text[value.end:m.start() if m else len(text)].strip()
    if not rest or len(rest.split()) > 4 or not re.fullmatch(r"[A-Za-z][A-Za-z '-]*", rest):
        return ""
    words = rest.lower().split()
    if words[0] in _PRONOUNS or words[0] in _BOUNDARY_WORDS - {"in", "of"} or words[0] in _ACTIVITY_VERBS:
        return ""
    if any(w in _PRONOUNS or w in ("is", "was", "are", "were", "have", "had", "will") for w in words):
        return ""
    return rest


def of_label(text: str, value: Value) -> str:
    """The noun after "<value> of": "7 hours of sleep" -> "sleep", "3 sets of squats" -> "squats"."""
    m = re.match(r"\s+of\s+((?:[A-Za-z][A-Za-z'-]*\s?){1,3})", text[value.end:])
    if not m:
        return ""
    words = []
    for w in m.group(1).split():
        if w.lower() in _BOUNDARY_WORDS or w.lower() in _PRONOUNS or w.lower() in ("last", "today", "tonight", "yesterday"):
            break
        words.append(w)
    return " ".join(words[:2])


# --------------------------------------------------------------------------- extraction

_TIME_LABEL_WORDS = {"bedtime", "bed", "wake", "woke", "alarm", "start", "end", "started", "ended",
                     "departure", "arrival", "sunrise", "sunset", "onset", "lights", "asleep", "dinner",
                     "lunch", "breakfast", "meal"}
_DURATION_LABEL_WORDS = {"duration", "elapsed", "moving", "pace", "split", "lap", "finish", "total",
                         "chip", "gun", "race", "run", "workout", "session", "length"}
_COLORS = ("red|orange|yellow|green|blue|purple|violet|pink|black|white|gray|grey|brown|gold|silver|"
           "teal|navy|beige|maroon")
_WIN = re.compile(r"(?:(?P<who>\b[A-Z][a-z]+|\bI\b|\bWe\b|\bwe\b)\s+won\b(?=\s+(?:the|this|that|today'?s|again|it)\b\s*"
                  r"(?:game|round|match|hand|race|set|game|final|tournament)?|\s*[.!,;]|\s*$|"
                  r"\s+(?:by\s+)?\d+\s*(?:points?|pts)\b)"
                  r"|\bwinner\s+(?:was|is)\s+(?P<who2>[A-Z][a-z]+|me))")
_TEXT_FIELD = re.compile(r"^[ \t\-•*]*(?P<label>[A-Za-z][A-Za-z0-9 /&'()%-]{0,40}?)\s*:\s*(?P<value>[^:\n|]{1,40}?)\s*$")


@dataclass(frozen=True)
class Found:
    """An extracted attribute-value pair in one text (before provenance is attached)."""

    attribute: str
    raw: str
    start: int
    end: int
    kind: str
    number: float | None
    unit: str | None
    label: str


def _is_year(v: Value) -> bool:
    return v.unit is None and v.number is not None and float(v.number).is_integer() and 1900 <= v.number <= 2100 and "," not in v.raw


def _label_ok(label: str, v: Value) -> bool:
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", label)]
    if not words:
        return False
    head = words[-1]
    if v.unit is None and (head in NON_QUANTITY or words[0] in NON_QUANTITY):
        return False
    return True


class RuleExtractor:
    """Offline extractor over dialogue, captions and OCR text (see module docstring).

    `extract(round, ocr)` never raises on odd text: a pattern that does not
    parse yields no observation.
    """

    name = "rules"

    def __init__(self, config: Config = DEFAULT):
        self.config = config

    def run(self, round: Round, ocr: dict[str, str] | None = None, images=None):
        """`extract` wrapped in an ExtractionResult (no fallback, no tokens); `images` is unused."""
        from core.extract import ExtractionResult

        return ExtractionResult(tuple(self.extract(round, ocr)))

    def extract(self, round: Round, ocr: dict[str, str] | None = None) -> list[Observation]:
        """Observations of one round: dialogue first (utterance order), then per image caption and OCR."""
        out: list[Observation] = []
        for i, u in enumerate(round.dialogue):
            assistant = u.speaker.strip().lower() in ("assistant", "agent", "bot", "ai", "system")
            for f in extract_text(u.text, structured=False, speaker=u.speaker, assistant=assistant):
                out.append(_obs(round, f, source="dialogue", speaker=u.speaker, utterance_index=i))
        for img in round.images:
            if img.caption:
                for f in extract_text(img.caption, structured=False):
                    out.append(_obs(round, f, source="caption", image_id=img.image_id))
            text = (ocr or {}).get(img.image_id)
            if text:
                for f in extract_text(text, structured=True):
                    out.append(_obs(round, f, source="ocr", image_id=img.image_id))
        return out


def _obs(round: Round, f: Found, **prov) -> Observation:
    return Observation(round_id=round.round_id, attribute=f.attribute, raw_value=f.raw, number=f.number,
                       unit=f.unit, value_kind=f.kind, start=f.start, end=f.end, label=f.label,
                       extractor="rules", text_value=canonical_text(f.raw) if f.kind == "text" else None, **prov)


_QUESTION_START = re.compile(
    r"\s*(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|how|what|why|when|which|who|"
    r"whom|any|isn't|aren't|wasn't|don't|doesn't|is it|should i)\b", re.I)


def _in_question(text: str, pos: int) -> bool:
    """True when `pos` lies in an interrogative sentence ("Is 145 bpm too high for an easy run?")."""
    start = 0
    for m in _SENTENCE_BREAK.finditer(text, 0, pos):
        start = m.end()
    m = re.compile(r"[.!?\n]").search(text, pos)
    return bool(m and m.group(0) == "?" and _QUESTION_START.match(text[start:]))


def extract_text(text: str, *, structured: bool, speaker: str | None = None,
                 assistant: bool = False) -> list[Found]:
    """All attribute-value pairs in one text.

    `structured` for OCR (layout pairing, unitless values). `assistant` for
    the assistant's turns: they restate, convert and advise ("350°F is about
    175°C"), so only values tied to a label by structure count there.
    Values inside questions ("Is 145 bpm too high?") are never records.
    """
    values = [v for v in scan_values(text) if structured or not _in_question(text, v.start)]
    found: list[Found] = []
    used: set[int] = set()  # value starts already turned into observations
    exercise = _EXERCISE_RE.search(text)
    # a distance and a duration in one text describe one workout even when no exercise word names it
    dims = {v.unit.dimension for v in values if v.unit is not None}
    workout = exercise is not None or {"distance", "duration"} <= dims or "pace" in dims
    if structured:
        found.extend(_layout_pairs(text, values, used))
    found.extend(_colored_items(text, values, used))
    for v in values:
        if v.start in used:
            continue
        got = _from_value(text, v, values, structured, workout)
        if assistant and got and not left_label(text, v, values, structured=False).strong:
            continue
        found.extend(got)
    if exercise and any(f.attribute in ("distance", "duration") for f in found):
        # the activity the distance/duration belongs to, as written ("Ran", "bike")
        found.append(Found("activity", exercise.group(0), exercise.start(), exercise.end(), "text", None, None,
                           "activity"))
    found.extend(_text_fields(text, structured))
    found.extend(_winners(text, speaker))
    # one observation per span and attribute
    seen: set[tuple[str, int]] = set()
    out = []
    for f in sorted(found, key=lambda f: f.start):
        if (f.attribute, f.start) in seen:
            continue
        seen.add((f.attribute, f.start))
        out.append(f)
    return out


_MODIFIERS = {"average", "max", "min", "mean", "peak", "lowest", "highest", "daily", "total", "resting",
              "fasting", "current", "morning", "evening", "night", "weekly", "active"}
# quantities whose unit is never in doubt: a unitless number under such a label gets it
_IMPLIED_UNIT = {"heart_rate": "bpm", "steps": "steps", "calories": "kcal"}


def _value_found(attr_label: str, v: Value, *, label_raw: str, verb: str | None = None,
                 average: bool = False) -> Found | None:
    """A Found for `v` named by `attr_label` (None when the name normalizes to nothing)."""
    label, label_unit = split_label_unit(attr_label)
    unit = v.unit
    number = v.number
    kind = v.kind
    if v.clock and kind == "time":
        lw = set(re.findall(r"[a-z]+", label.lower()))
        if label_unit is not None and label_unit.dimension == "duration" or lw & _DURATION_LABEL_WORDS:
            # "Moving time: 45:10" is a duration (mm:ss when the label's unit says minutes, else h:mm)
            a, b = (int(x) for x in v.raw.split(":")[:2])
            minutes_first = (label_unit is not None and label_unit.factor == 1.0) or a >= 24 or bool(
                lw & {"pace", "split", "lap"})
            number = a + b / 60 if minutes_first else a * 60 + b
            unit, kind = parse_unit("min/km" if "pace" in lw else "min"), "number"
    if unit is None and label_unit is not None and kind == "number" and number is not None:
        unit = label_unit
        number = number * label_unit.factor
    if unit is None and kind == "number":
        named = parse_unit(label.strip().lower())
        if named is not None and named.unit in UNIT_DEFAULT_ATTRIBUTE and named.dimension in ("count", "energy"):
            unit = named  # "Steps: 10,432", "Calories 520": the label is the unit
    dim = unit.dimension if unit else None
    name = normalize_attribute(label, value_kind=kind, dimension=dim)
    if name is None:
        return None
    if name in _MODIFIERS and unit is not None and unit.unit in UNIT_DEFAULT_ATTRIBUTE:
        # "average 141 mg/dL": the modifier names which glucose; the unit names the quantity
        name = normalize_attribute(f"{name} {UNIT_DEFAULT_ATTRIBUTE[unit.unit]}", value_kind=kind, dimension=dim) or name
    if average and kind == "number" and not name.startswith("average"):
        name = "average_" + name
    if unit is None and kind == "number":
        for suffix, u in _IMPLIED_UNIT.items():
            if name.endswith(suffix):
                unit = parse_unit(u)
    if kind == "time" and not name.endswith("time") and name not in ("bedtime",):
        name = name + "_time"
    return Found(name, v.raw, v.start, v.end, kind, number if kind == "number" else None,
                 unit.unit if unit and kind == "number" else None, label_raw)


def _exercise_name(label: str, unit: UnitInfo | None, verb: str | None, exercise) -> str | None:
    """ "distance"/"duration" when the value is a distance or duration of an exercise, else None."""
    if unit is None or unit.dimension not in ("distance", "duration"):
        return None
    words = set(re.findall(r"[a-z]+", label.lower()))
    # the sentence's own verb decides ("Slept 6h 57m" in a text about a run is still sleep)
    if words & set(EXERCISE) or (not label and (verb in EXERCISE.values() or (exercise and verb is None))):
        return unit.dimension
    return None


def _from_value(text: str, v: Value, values: list[Value], structured: bool, exercise=None) -> list[Found]:
    if v.ordinal or (v.kind == "number" and v.unit is None and not v.parts and _is_year(v)):
        return []
    lab = left_label(text, v, values, structured=structured)
    if v.parts:
        return _fraction(v, lab, structured)
    unit = v.unit
    label = lab.text
    strong = lab.strong
    if not label:
        ofl = of_label(text, v)
        if ofl and (unit is not None or v.kind == "number"):
            # "7 hours of sleep", "a total of 8,000 steps" is handled by the unit below
            label, strong = ofl, unit is not None
            if unit is None:
                return []  # "3 of them"
    if not label and (unit is None or unit.unit not in STRONG_UNITS) and v.kind == "number":
        rl = right_label(text, v)  # "69% time in range"
        if rl:
            label, strong = rl, True
    if label and not _label_ok(label, v):
        label = ""
    if v.clock and v.kind == "time" and not label and (lab.verb or exercise) and \
            re.search(r"\b(?:in|for)\s*$", text[:v.start]):
        # "ran 5.2 km in 28:45": a clock-style duration of the clause's activity
        a, b = (int(x) for x in v.raw.split(":")[:2])
        minutes = a + b / 60 if a >= 24 else a * 60 + b
        dv = Value(v.start, v.end, v.raw, "number", minutes, parse_unit("min"))
        name = "duration" if (lab.verb in EXERCISE.values() or exercise) else f"{lab.verb} duration"
        f = _value_found(name, dv, label_raw="")
        return [f] if f else []
    if v.kind in ("time", "date"):
        if not label or not (strong or structured or v.kind == "date" or _time_label(label) or (
                v.clock and set(re.findall(r"[a-z]+", label.lower())) & _DURATION_LABEL_WORDS)):
            if v.kind == "date" and structured and not label:
                f = _value_found("date", v, label_raw="")
                return [f] if f else []
            return []
        f = _value_found(label, v, label_raw=label)
        return [f] if f else []
    # numbers
    if label and normalize_attribute(label) is None:
        label = ""  # "a total of 8,000 steps": nothing left of the label; the unit names it
    after = re.match(r"\s+([a-z]+)", text[v.end:], re.I)
    if after and after.group(1).lower() in EXERCISE and not lab.strong:
        label = ""  # "a 7.5 km run": the exercise after the value names it, not the words before
    ex_name = _exercise_name(label, unit, lab.verb, exercise)
    if ex_name and (not label or set(re.findall(r"[a-z]+", label.lower())) & set(EXERCISE)):
        f = _value_found(ex_name, v, label_raw=label)
        return [f] if f else []
    if label:
        f = _value_found(label, v, label_raw=label, average=lab.average)
        if f is None:
            return []
        if not (strong or structured) and (f.unit is None or f.unit not in STRONG_UNITS):
            # "we saw 3 deer", "the recipe needs 6 cups": only adjacency ties the number to the words
            # before it, and no unit names a measured quantity
            return []
        return [f]
    if unit is None:
        return []
    if lab.verb and unit.dimension in ("duration", "distance", "currency", "energy", "mass"):
        base = {"duration": "duration", "distance": "distance", "currency": "", "energy": "calories", "mass": ""}[unit.dimension]
        name_src = f"{lab.verb} {base}".strip() if unit.dimension != "energy" else (
            "calories burned" if lab.verb == "burned" else "calories intake" if lab.verb == "intake" else "calories")
        if lab.verb == "weight" and unit.dimension == "mass":
            name_src = "weight"
        f = _value_found(name_src, v, label_raw="")
        return [f] if f else []
    if lab.verb and unit.dimension == "count" and unit.unit not in STRONG_UNITS:
        # "I read 40 pages" -> pages (reading is a stop word), "did 3 sets" has no verb here
        f = _value_found(f"{lab.verb} {unit.unit}", v, label_raw="")
        return [f] if f else []
    if unit.unit in STRONG_UNITS and unit.unit in UNIT_DEFAULT_ATTRIBUTE:
        if unit.dimension in ("duration",) and not structured:
            return []  # "for 20 minutes" with no activity named is not a record
        f = _value_found(UNIT_DEFAULT_ATTRIBUTE[unit.unit], v, label_raw="", average=lab.average)
        return [f] if f else []
    return []


_ITEM_NOUNS = "card|ball|tile|piece|chip|token|die|domino|cube|marble|block"
_ITEM = re.compile(
    rf"(?:(?P<own>\bmy|\b[A-Z][a-z]+(?:'s|’s))\s+)?(?:\b(?:a|an|the|another)\s+)?\b(?P<color>{_COLORS})\s+"
    rf"(?P<num>\d{{1,2}})(?![\d:/%]|[.,]\d)(?:\s+(?P<noun>{_ITEM_NOUNS})s?\b)?", re.I)
_NOT_NAMES = {"round", "game", "then", "and", "the", "today", "tonight", "my", "a", "an", "it", "this", "that",
              "first", "next", "last", "finally", "also", "so", "but", "he", "she", "they", "we", "you"}


def _colored_items(text: str, values: list[Value], used: set[int]) -> list[Found]:
    """Coloured numbered items ("Sam put down a red 1 and I answered with a green 3"): colour and number
    per owner; the owner is "my" (the speaker) or another person, who is recorded as "opponent"."""
    out: list[Found] = []
    named_other = False
    for m in _ITEM.finditer(text):
        own = m.group("own")
        owner: str | None = None
        owner_span = None
        if own:
            owner = "me" if own.lower() == "my" else own[:-2]
            owner_span = (m.start("own"), m.start("own") + len(owner)) if owner != "me" else None
        else:
            cs = _clause_start(text, m.start())
            ss = max(cs, max((x.end() for x in re.finditer(r"\band\b|;|,", text[:m.start()])), default=0))
            for w in re.finditer(r"\b(I|[A-Z][a-z]+)\b", text[ss:m.start()]):
                if w.group(1) == "I":
                    owner, owner_span = "me", None
                elif w.group(1).lower() not in _NOT_NAMES and w.group(1).lower() not in _COLORS.split("|"):
                    owner, owner_span = w.group(1), (ss + w.start(1), ss + w.end(1))
        noun = (m.group("noun") or "").lower()
        prefix = "my" if owner == "me" else "opponent" if owner else ""
        base = "_".join(x for x in (prefix, noun) if x)
        cname = f"{base}_color" if base else "color"
        vname = f"{base}_value" if base else "number"
        out.append(Found(cname, m.group("color"), m.start("color"), m.end("color"), "text", None, None, m.group(0)))
        out.append(Found(vname, m.group("num"), m.start("num"), m.end("num"), "number", float(m.group("num")), None,
                         m.group(0)))
        for v in values:
            if m.start("num") <= v.start < m.end("num") + 1:
                used.add(v.start)
        if owner_span and not named_other:
            named_other = True
            out.append(Found("opponent", text[owner_span[0]:owner_span[1]], owner_span[0], owner_span[1], "text",
                             None, None, "opponent"))
    return out


def _time_label(label: str) -> bool:
    return bool(set(re.findall(r"[a-z]+", label.lower())) & _TIME_LABEL_WORDS)


_BP = {"blood_pressure", "bp"}


def _fraction(v: Value, lab: Label, structured: bool) -> list[Found]:
    """"Label_a/Label_b: x/y" -> two attributes; "blood pressure 128/84" -> systolic/diastolic."""
    a, b = v.parts
    label = lab.text
    if not label or (v.kind != "number" and "/" not in label):
        return []
    if "/" in label:
        la, lb = label.rsplit(" ", 1)[-1].split("/", 1) if " " in label else label.split("/", 1)
        prefix = label.rsplit(" ", 1)[0] + " " if " " in label else ""
        fa = _value_found(prefix + la, a, label_raw=label)
        fb = _value_found(prefix + lb, b, label_raw=label)
        return [f for f in (fa, fb) if f]
    name = normalize_attribute(label)
    if name in _BP or (name or "").endswith("blood_pressure"):
        unit = a.unit or parse_unit("mmHg")
        a2 = Value(a.start, a.end, a.raw, "number", a.number, unit)
        b2 = Value(b.start, b.end, b.raw, "number", b.number, unit)
        return [f for f in (_value_found(f"{label} systolic", a2, label_raw=label),
                            _value_found(f"{label} diastolic", b2, label_raw=label)) if f]
    if not (lab.strong or structured):
        return []
    # "Tasks done: 7/10": the numerator, out of the denominator
    f = _value_found(label, Value(v.start, v.end, v.raw, "number", a.number, a.unit), label_raw=label)
    if f is None:
        return []
    return [Found(f.attribute, f.raw, f.start, f.end, f.kind, a.number, a.unit.unit if a.unit else f"/{b.raw}", label)]


def _text_fields(text: str, structured: bool) -> list[Found]:
    """"Label: value" lines/cells whose value is a short text ("Mood: calm", "Winner: Sam")."""
    out = []
    offset = 0
    for line in text.split("\n"):
        cells = [(m.group(0), offset + m.start()) for m in re.finditer(r"[^|\t]+", line)]
        for cell, base in cells:
            m = _TEXT_FIELD.match(cell)
            if not m or re.search(r"\d", m.group("value")):
                continue
            val = m.group("value").strip()
            label = m.group("label").strip()
            if len(label.split()) > 4 or len(val.split()) > 4 or not re.search(r"[A-Za-z]", val):
                continue
            if val.lower() in ("yes", "no") and not structured:
                continue
            if not structured and (label.lower().split()[0] in _PRONOUNS or len(label.split()) > 3):
                continue
            name = normalize_attribute(label, value_kind="text")
            if name is None or name in NON_QUANTITY:
                continue
            s = base + m.start("value")
            out.append(Found(name, cell[m.start("value"):m.start("value") + len(val)], s, s + len(val), "text", None, None, label))
        offset += len(line) + 1
    return out


def _winners(text: str, speaker: str | None) -> list[Found]:
    out = []
    for m in _WIN.finditer(text):
        g = "who" if m.group("who") else "who2"
        who = m.group(g)
        # "we won" does not say who; "I won" names the speaker (kept as written, the span must match)
        if who.lower() == "we" or (who.lower() in ("i", "me") and not speaker):
            continue
        out.append(Found("winner", who, m.start(g), m.end(g), "text", None, None, "won"))
    return out


# --------------------------------------------------------------------------- OCR layout

@dataclass(frozen=True)
class _Cell:
    text: str
    start: int
    values: tuple[Value, ...]
    is_label: bool  # letters only, no value
    is_value: bool  # one value and (almost) nothing else


_CELL_SPLIT = re.compile(r"\s*\|\s*|\t+|\s{2,}")


def _cells(text: str, values: list[Value]) -> list[list[_Cell]]:
    rows: list[list[_Cell]] = []
    offset = 0
    for line in text.split("\n"):
        row = []
        pos = 0
        parts = []
        for m in _CELL_SPLIT.finditer(line):
            parts.append((pos, m.start()))
            pos = m.end()
        parts.append((pos, len(line)))
        for a, b in parts:
            seg = line[a:b]
            lead = len(seg) - len(seg.lstrip())
            seg = seg.strip()
            if not seg:
                continue
            s = offset + a + lead
            vs = tuple(v for v in values if v.start >= s and v.end <= s + len(seg))
            rest = seg
            for v in sorted(vs, key=lambda v: -v.start):
                rest = rest[: v.start - s] + rest[v.end - s:]
            rest_words = re.findall(r"[A-Za-z]{2,}", rest)
            is_value = len(vs) == 1 and not rest_words and not vs[0].ordinal
            is_label = not vs and bool(re.search(r"[A-Za-z]{2,}", seg)) and not re.search(r"\d", seg) \
                and len(seg.split()) <= 6
            row.append(_Cell(seg, s, vs, is_label, is_value))
        rows.append(row)
        offset += len(line) + 1
    return rows


def _layout_pairs(text: str, values: list[Value], used: set[int]) -> list[Found]:
    """Label/value pairs from the visual layout (label left of value, above it, or below it)."""
    rows = [r for r in _cells(text, values) if r]
    out: list[Found] = []

    def pair(label_cell: _Cell, value_cell: _Cell) -> None:
        v = value_cell.values[0]
        if v.start in used or v.ordinal or _is_year(v) and v.kind == "number":
            return
        lab = label_cell.text.strip(" :")
        if not _label_ok(lab, v):
            return
        if v.parts:
            fs = _fraction(v, Label(lab, True), True)
        else:
            f = _value_found(lab, v, label_raw=lab)
            fs = [f] if f else []
        if fs:
            used.add(v.start)
            out.extend(fs)

    # label left / value right within a row
    for row in rows:
        for c1, c2 in zip(row, row[1:]):
            if c1.is_label and c2.is_value and c2.values[0].start not in used:
                pair(c1, c2)

    def vertical(label_first: bool) -> list[tuple[_Cell, _Cell]]:
        pairs: list[tuple[_Cell, _Cell]] = []
        taken: set[int] = set()
        for r1, r2 in zip(rows, rows[1:]):
            top, bottom = (r1, r2)
            lrow, vrow = (top, bottom) if label_first else (bottom, top)
            labels = [c for c in lrow if c.is_label and c.start not in taken]
            vals = [c for c in vrow if c.is_value and c.values[0].start not in used and c.start not in taken]
            if labels and len(labels) == len(lrow) and len(vals) == len(vrow) == len(labels):
                for lc, vc in zip(labels, vals):
                    pairs.append((lc, vc))
                    taken.update((lc.start, vc.start))
        return pairs

    # label above value, or value above label ("7h 12m" over "Sleep"): the reading that pairs more cells
    above, below = vertical(True), vertical(False)
    # a tie usually means a title row over "value above label" cards: then the last row is a label
    # that only the value-above reading consumes
    last = rows[-1][-1].start if rows else -1
    prefer_below = len(below) > len(above) or (
        len(below) == len(above) and any(lc.start == last for lc, _ in below)
        and not any(lc.start == last or vc.start == last for lc, vc in above))
    for lc, vc in (below if prefer_below else above):
        pair(lc, vc)
    return out
