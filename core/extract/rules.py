"""Rule-based attribute extraction (the default, offline extractor), without domain vocabulary.

A record is a measured quantity attached to a label, a unit, a verb or a
counted noun. `RuleExtractor.extract` scans three kinds of text of a round:

- dialogue utterances (prose): "Label: value unit", "my X was/is Y unit",
  "a X of Y", "7 hours of study", "Label_a/Label_b: x/y";
- image captions (prose, same rules, read as descriptions: no tense needed);
- OCR text (structured): one visual row per line, cells separated by " | ",
  tabs or runs of spaces; besides the prose rules it pairs a label cell with
  a value cell to its right ("label left / value right"), a row of labels
  with the row of values below ("label above value") and a value row with the
  label row below ("big number, caption under it"), and accepts unitless
  numbers next to a label.

General mechanisms replace word lists of one domain (every word list comes
from core/lexicon.py: grammar words and units only):

- a value with a unit and no label is named by its clause's verb lemma and
  the unit's dimension ("studied 2h" -> study_duration, "spent $12" ->
  spend_amount); when one text holds several such values of different
  dimensions ("I cycled 8.2 km in 45 minutes") each is named by its dimension
  (distance, duration) and what was done becomes a text field `activity`
  (the verb, the noun after the value, a bare list item or the heading);
- "N <plural noun>" in a record clause (past tense, first person or a named
  subject, nothing irrealis) or in a log line ("25 scales, 40 minutes") is a
  count named after the noun; the subject of such a clause is a text field
  named by the verb's agent noun ("Sam won 17 points" -> points, winner=Sam);
- "<possessive|subject> ... <word> N" ("my yellow 8", "Sam played red 1")
  gives <owner>_value (owner my/other), the word before it as
  <owner>_value_qualifier and the other person as `other`;
- "x/y" under "La/Lb" gives two fields, under one label label + label_2, or
  the numerator "out of" y when x <= y;
- identifiers ("#48213907", "Ref 55301982", "INV-2024-0117", long bare
  integers) are text, never numbers.

Distractors are not records: numbers with neither a label nor a unit ("call
me at 5"), counts in plans, wishes or the present ("3 meetings tomorrow",
"We have 28 open tickets", "2 kids"), ordinals, years, phone numbers,
changes ("27 percent higher than last month"), heading numbers ("Round 3:")
and percentages or times nobody labelled ("I 100% agree").

Provenance: every Observation's [start, end) span indexes the value in the
text it came from (utterance text, caption or OCR text), so
``text[start:end] == raw_value``. For a fraction ("128/84") each part is its
own observation with its own span.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from core.config import Config, DEFAULT
from core.extract.normalize import (
    RATE_INITIALS,
    UnitInfo,
    active_lexicon,
    canonical_text,
    normalize_attribute,
    count_rate,
    parse_unit,
    split_label_unit,
    use_lexicon,
)
from core.lexicon import Lexicon, agent_noun, load as load_lexicon
from core.model import Observation, Round

# --------------------------------------------------------------------------- values

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+"
_MONTH_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
             r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_PHONE = re.compile(r"(?<!\w)(?:\+?\d{1,3}[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?!\w)")
_CLOCK = re.compile(r"(?<![\w:.])(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap]\.?m\.?))?(?![\w:])"
                    r"(?:\s?(/\s?km|/\s?mi|min/km|min/mi|per\s+km|per\s+mile)\b)?", re.I)
# identifiers: "#48213907", "No. 4821", alphanumeric codes "INV-2024-0117", "A7X-22", "AB12345"
_IDENT = re.compile(r"(?<![\w#])#\s?\d[\d-]*(?![\w])"
                    r"|(?<![\w-])(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+(?![\w-])"
                    r"|(?<![\w-])[A-Z]{1,4}\d{3,}[A-Z0-9]*(?![\w-])")
# single-letter unit spellings that are safe after a number ("7 h", "5 m", "3 g", "2 l", "5x", "200 w")
_SHORT_UNITS = {"h", "s", "m", "g", "l", "x", "w", "c", "f"}


@lru_cache(maxsize=16)
def _patterns(lex: Lexicon) -> list[tuple[str, re.Pattern]]:
    spellings = {u.lower() for u in lex.units if (len(u) > 1 or u.lower() in _SHORT_UNITS or not u.isalnum())
                 and u.lower() not in ("in", "st", "no", "a", "am", "pm")}
    spellings = {s for s in spellings if not any(c in s for c in lex_currency(lex))}
    def spelled(u: str) -> str:
        # a rate per a number of units is also printed with a space before the unit ("7.9 l/100 km")
        m = re.fullmatch(r"(.*/\d+)([a-z].*)", u)
        return re.escape(m[1]) + r"\s?" + re.escape(m[2]) if m else re.escape(u)
    # (and a count's initial per a time, "bps", "wpm", after the lexicon's own: "mph" is a speed)
    alt = "|".join(spelled(u) for u in sorted(spellings, key=len, reverse=True)) + "|" + RATE_INITIALS
    unit_alt = rf"(?:(?:{alt})(?:/(?:{alt}))?|/(?:{alt}))"
    cur = "".join(re.escape(c) for c in lex_currency(lex))
    # what a count is per: the lexicon's units of time and its calendar nouns ("bubbles/s", "visits per day")
    per_alt = "|".join(re.escape(u) for u in sorted({u.lower() for u, (_, dim, _) in lex.units.items()
                                                      if dim == "duration"} | set(lex.calendar_nouns),
                                                     key=len, reverse=True))
    return [
        ("ident", _IDENT),
        ("clock_pair", re.compile(r"(?<![\w:.])(\d{1,2}:\d{2})\s?/\s?(\d{1,2}:\d{2})(?![\w:])")),
        ("clock", _CLOCK),
        ("compound", re.compile(
            r"(?<![\w.])(\d+(?:\.\d+)?)\s*(h|hrs?|hours?)\.?\s*(?:and\s+)?(\d{1,2})\s*(m|mins?|minutes?)\b\.?"
            r"(?:\s*(\d{1,2})\s*(s|secs?|seconds?)\b)?", re.I)),
        ("minsec", re.compile(r"(?<![\w.])(\d+)\s*(m|mins?|minutes?)\s*(?:and\s+)?(\d{1,2})\s*(s|secs?|seconds?)\b",
                              re.I)),
        ("ampm", re.compile(r"(?<![\w.:])(\d{1,2})\s*([ap])\.?m\.?(?![a-z])", re.I)),
        ("iso_date", re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")),
        ("num_date", re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{2,4})(?![\d/])")),
        ("mdy_date", re.compile(rf"(?<![\w])({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?(?![\w])",
                                re.I)),
        ("dmy_date", re.compile(rf"(?<![\w])(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})(?:,?\s+(\d{{4}}))?(?![\w])",
                                re.I)),
        ("fraction", re.compile(rf"(?<![\w./])(\d+(?:\.\d+)?)\s?/\s?(\d+(?:\.\d+)?)(?![\w/.])"
                                rf"(?:\s?({unit_alt})(?![\w/]))?", re.I)),
        # (a price per unit after the sign: "1.558 €/L", "€2.10/kg")
        ("currency", re.compile(rf"([{cur}])\s?((?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?)(k|K)?"
                                rf"(?:\s?/\s?({alt})(?![\w/]))?(?![\w/])"
                                rf"|((?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?)\s?([{cur}])"
                                rf"(?:\s?/\s?({alt})(?![\w/]))?(?![\w/])", re.I)),
        # a count per time: "1.2bubbles/s", "4 drops per minute", "12 visits/day" (a word the lexicon has no
        # unit for before a time; `count_rate` decides)
        ("count_rate", re.compile(rf"(?<![\w.,/:#{cur}])({_NUM})\s?([A-Za-z]{{3,}})(?:\s?/\s?|\s+per\s+)"
                                  rf"({per_alt})(?![\w/])", re.I)),
        # (a number is read whole: "7.9l/…" is never the "7" before its decimals)
        ("number", re.compile(rf"(?<![\w.,/:#{cur}])({_NUM})(?:[ \u00a0]?({unit_alt})(?![\w/%])|(?![\w]|\.\d))", re.I)),
        # "31d", "2d": a number and one lower-case letter the lexicon has no unit for (the letter of a unit
        # it lacks); a value that needs a label like any bare number ("day streak | 31d")
        ("number_letter", re.compile(r"(?<![\w.,/:#-])(\d{1,4})([b-eijnoqr-wyz])(?![\w'-])")),
        # "3.4bps", "12pcs": a number and the letters of a unit the lexicon lacks, glued; the number is read (a
        # value that needs a label like any bare number), the letters are no label
        ("number_glued", re.compile(rf"(?<![\w.,/:#{cur}-])({_NUM})([A-Za-z]{{2,5}})(?![\w'/-])")),
        ("word_number", re.compile(r"(?<![\w'-])(" + "|".join(sorted(lex.number_words, key=len, reverse=True))
                                   + r")(?![\w'-])", re.I)),
    ]


def lex_currency(lex: Lexicon) -> str:
    """The currency symbols of the lexicon's unit table ("$€£¥₹")."""
    return "".join(sorted({k for k, (u, d, f) in lex.units.items() if d == "currency" and len(k) == 1
                           and not k.isalnum()}))


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
    ident: bool = False  # an identifier ("#4821", "INV-2024-0117", "48213907"): a text value, never a number
    bare_int: bool = False  # an integer written without separators, decimals or unit ("204")
    word: bool = False  # written as a word ("seven")


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

    for kind, pat in _patterns(active_lexicon()):
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
    if kind == "ident":
        if re.fullmatch(r"\d{1,2}-\d{1,2}", raw) or re.fullmatch(r"(?i)\d+(?:-\d+)*-?[a-z]{1,3}", raw):
            return None  # a range "9-5" or a hyphenated quantity "14-year"
        if raw[0].isdigit() and not re.search(r"[A-Za-z]", raw) :
            return None
        if not raw.startswith("#") and not re.search(r"[A-Z]", raw) and len(re.sub(r"\D", "", raw)) < 3:
            return None  # "covid-19", "14-year-old": words with a number, not codes
        return Value(a, b, raw, "text", ident=True)
    if kind == "clock":
        h, mnt = int(m.group(1)), int(m.group(2))
        if mnt > 59:
            return None
        return _clock_value(m, a, b, raw)
    if kind == "clock_pair":
        parts = []
        for g in (1, 2):
            sub = _CLOCK.match(m.group(g))
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
        if m.group(2) is not None:
            n = _to_float(m.group(2)) * (1000 if m.group(3) else 1)
            return Value(a, b, raw, "number", n, parse_unit(m.group(1) + (f"/{m.group(4)}" if m.group(4) else "")))
        return Value(a, b, raw, "number", _to_float(m.group(5)),
                     parse_unit(m.group(6) + (f"/{m.group(7)}" if m.group(7) else "")))
    if kind == "number_letter":
        if parse_unit(m.group(2)) is not None or re.match(r"(?:st|nd|rd|th)\b", text[a + len(m.group(1)):], re.I):
            return None
        return Value(a, b, raw, "number", float(m.group(1)), None, bare_int=True)
    if kind == "number_glued":
        if re.fullmatch(r"(?:st|nd|rd|th|am|pm)", m.group(2), re.I) or parse_unit(m.group(2)) is not None:
            return None  # an ordinal, a clock time, or a unit the number pattern reads
        return Value(a, b, raw, "number", _to_float(m.group(1)), None)
    if kind == "word_number":
        n = active_lexicon().number_words.get(raw.lower())
        # "Games: seven", "my puzzles was six": a number word, only ever taken with a strong label
        return None if n is None else Value(a, b, raw, "number", float(n), None, bare_int=True, word=True)
    if kind == "count_rate":
        unit = count_rate(m.group(2), m.group(3))
        return None if unit is None else Value(a, b, raw, "number", _to_float(m.group(1)), unit)
    if kind == "number":
        num, unit_raw = m.group(1), m.group(2)
        after = text[b:b + 3]
        if re.match(r"[-–+]\d", after):
            return None  # a range or an id: "9-5", "3-2"
        if unit_raw in ("s", "S") and text[m.end(1):m.end(1) + 1] == unit_raw and num.isdigit() and \
                int(num) % 10 == 0 and (len(num) == 4 or re.search(r"(?:the|early|mid|late|')\s*$", text[:a], re.I)):
            return None  # a decade: "the 1900s", "the 90s"
        if re.match(r"(st|nd|rd|th)\b", after, re.I):
            return Value(a, b + 2, text[a:b + 2], "number", _to_float(num), None, ordinal=True)
        if unit_raw in ("c", "f"):  # "5 c": only a capital C/F means degrees
            return Value(a, a + len(num), num, "number", _to_float(num), None, bare_int=num.isdigit())
        unit = parse_unit(unit_raw) if unit_raw else None
        if unit is None and unit_raw:
            return None
        n = _to_float(num)
        bare = unit is None and re.fullmatch(r"\d+", num) is not None
        if bare and len(num) >= 7:
            return Value(a, b, raw, "text", ident=True)  # a long bare integer is a code, not a quantity
        if unit is not None and unit.factor != 1.0:
            n = n * unit.factor
        return Value(a, b, raw, "number", n, unit, bare_int=bare)
    return None


# --------------------------------------------------------------------------- labels

_WORD = re.compile(r"\([^()]{1,12}\)|[A-Za-z][A-Za-z0-9'’]*(?:-[A-Za-z][A-Za-z0-9'’]*)*(?:/[A-Za-z][A-Za-z0-9]*)*[.\u2024]?|[:=~≈–-]|[^\sA-Za-z]")
# a period before a lower-case word abbreviates ("My vol. was 55 L", "the opp. was Keiko"), it ends nothing
_CLAUSE_BREAK = re.compile(r"[!?;]\s|\.\s(?-i:(?![a-z]))|(?<=[A-Za-z]{5})\.\s|(?<![A-Za-z])\.\s|[.!?;]$|\n|\||\t|,\s|\s{2,}|\s[-–—/]\s|\bbut\b|\bwhile\b|\bthough\b", re.I)
_SENTENCE_BREAK = re.compile(r"[!?;]\s|\.\s(?![a-z])|(?<=[A-Za-z]{5})\.\s|(?<![A-Za-z])\.\s|\n|\|")
_TRAILER_WORDS = r"on average|avg|average|total|in total|today|tonight|this morning|this evening|last night|yesterday"
_TRAILER = re.compile(rf"\s*(?:{_TRAILER_WORDS})?\s*$", re.I)


@dataclass(frozen=True)
class Label:
    text: str  # as written
    strong: bool  # linked to the value by structure (colon, "my X was", layout) not just adjacency
    verb: str | None = None  # lemma of the clause's last past-tense verb before the value (not a light verb)
    average: bool = False  # "HR averaged 147", "heart rate around 157 on average"


def _low(w: str) -> str:
    return w.lower().replace("’", "'").rstrip(".\u2024")


def _clause_start(text: str, pos: int) -> int:
    start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, pos):
        if m.end() <= pos:
            start = m.end()
    return start


def _sentence_start(text: str, pos: int) -> int:
    ss = 0
    for m in _SENTENCE_BREAK.finditer(text, 0, pos):
        ss = m.end()
    return ss


def _sentence_end(text: str, pos: int) -> int:
    m = re.compile(r"[!?;](?:\s|$)|\.(?:\s(?![a-z])|$)|(?<=[A-Za-z]{5})\.\s|(?<![A-Za-z])\.\s|\n|\|").search(text, pos)
    return m.start() if m else len(text)


def _is_verb(w: str, lex: Lexicon) -> bool:
    """A past-tense verb form that is not a connective linking a label ("slept", "played", "put")."""
    lw = _low(w)
    return lex.is_past(lw) and lw not in lex.connectives and lw not in lex.auxiliaries


def clause_verb(text: str, pos: int) -> str | None:
    """Lemma of the last past-tense, non-light verb of the sentence before `pos` ("I watered 5 L" -> water)."""
    lex = active_lexicon()
    verb = None
    for w in re.findall(r"[A-Za-z']+", text[_sentence_start(text, pos):pos]):
        lw = _low(w)
        if _is_verb(lw, lex) and lw not in lex.light_verbs:
            verb = lex.lemma(lw)
    return verb


def left_label(text: str, value: Value, values: list[Value], *, structured: bool, lists: bool = True) -> Label:
    """The label written before `value` in its clause ("" when none) and the clause's verb."""
    lex = active_lexicon()
    cs = _clause_start(text, value.start)
    # an earlier value in the same clause ends the label search (but not the verb search)
    prev_end = cs
    for v in values:
        if v.end <= value.start and v.end > prev_end:
            prev_end = v.end
    verb = clause_verb(text, value.start)
    tokens = [(m.group(0), m.start() + prev_end) for m in _WORD.finditer(text[prev_end:value.start])]
    i = len(tokens) - 1
    strong = False
    skipped = 0
    average = bool(re.match(r"\s*(?:on average|avg\b|average\b)", text[value.end:], re.I))
    # connectors between label and value: "was", ":", "of", "at", ...
    while i >= 0 and _low(tokens[i][0]) in lex.connectives and skipped < 4:
        lw = _low(tokens[i][0])
        if _particle_label(tokens, i):
            break
        if tokens[i][0] in (":", "=") or lw not in lex.weak_connectives:
            strong = True  # "X was", "X: ", "X came out at", "X averaged": a verb links label and value
        if lw in ("averaged", "averaging"):
            average = True
        i -= 1
        skipped += 1
    words: list[tuple[str, int]] = []
    skipped_time = 0
    if i >= 0 and _particle_label(tokens, i) and _low(tokens[i][0]) in lex.connectives | lex.boundary_words:
        words.append(tokens[i])  # "UP: 76%", "OUT 3 L": the particle is the whole label
        i -= 1
        strong = True
    while i >= 0 and len(words) < 5:
        w = tokens[i][0]
        lw = _low(w)
        if w.startswith("(") and not words and (parse_unit(w.strip("()")) is not None or w.strip("()").isalpha()):
            words.append((w, tokens[i][1]))  # "Study Time (hrs): 5.5": the unit belongs to the label
            i -= 1
            continue
        if w == "%" and not words and i > 0 and re.match(r"[A-Za-z]", tokens[i - 1][0]):
            words.append((w, tokens[i][1]))  # "measured the change % at 29 pct"
            i -= 1
            continue
        if not re.match(r"[A-Za-z]", w) or lw in lex.pronouns:
            break
        if (not words and strong and not skipped_time and lw in lex.time_words and i > 0
                and _low(tokens[i - 1][0]) in ("last", "this")):
            # "Study last night: 2.3 h": after a colon/verb "last night" only dates the record
            skipped_time = 2
            i -= 2
            continue
        if not words and lw in lex.time_words and not structured:
            break  # "hiked 6.5 km this morning in 37 minutes": "morning" does not name the 37 minutes
        if not words and lw in ("last", "next", "first") and i > 0 and \
                _low(tokens[i - 1][0]) in ("since", "until", "till", "before", "after"):
            # "days since last: 6 d": "since last" ends the label (a time since the last one), it names nothing
            words.extend([(w, tokens[i][1]), (tokens[i - 1][0], tokens[i - 1][1])])
            i -= 2
            continue
        if (not words and i > 0 and (lw in lex.circumstance_prepositions or lw in lex.prepositions)
                and re.match(r"[A-Za-z]", tokens[i - 1][0]) and _low(tokens[i - 1][0]) not in lex.boundary_words
                and _low(tokens[i - 1][0]) not in lex.determiners and _low(tokens[i - 1][0]) not in lex.pronouns
                and ((i + 1 < len(tokens) and tokens[i + 1][0] in (":", "="))
                     or (i == len(tokens) - 1 and lists and _list_item_label(text, tokens[i][1], value, values)))):
            # "Peak after: 5.4 hrs", "Time since: 3 d": a preposition right before the colon has no object
            # there, so it belongs to the label's name; so in a list item that is only "<noun> <preposition>
            # <value>" ("growth 209 percent, temp 19.5 C, peak after 4.1 hrs")
            words.append((w, tokens[i][1]))
            i -= 1
            continue
        if lw in lex.boundary_words or lw in lex.determiners:
            if words and lw in lex.determiners and i > 0 and _low(tokens[i - 1][0]) in lex.connectives \
                    and _low(tokens[i - 1][0]) not in lex.weak_connectives:
                strong = True  # "Measured the clutch at 3", "logged my weight at 80"
            if words and lw in ("my", "our") and skipped and value.kind == "number" and len(words) <= 2:
                strong = True  # "my rating at 1567": the speaker's own reading
            # ("on" too, unless it dates the reading: "days on board", not "temperature on Monday")
            if (lw in ("in", "of", "to", "per") or (lw == "on" and not any(
                    _low(x[0]) in lex.time_words or _low(x[0]) in lex.calendar_nouns or x[0][:1].isdigit()
                    for x in words))) and words:
                ext = _extend_label(tokens, i, structured)
                if ext is not None:
                    words.append((tokens[i][0], tokens[i][1]))
                    words.extend(ext[0])
                    i = ext[1]
                    strong = strong or ext[2]
                    continue
            break
        if _is_verb(lw, lex) and not (structured and w[:1].isupper()):
            prev = _low(tokens[i - 1][0]) if i > 0 else ""
            colon_next = i + 1 < len(tokens) and tokens[i + 1][0] in (":", "=")
            at_start = i == 0 or not re.match(r"[A-Za-z]", tokens[i - 1][0])
            if (colon_next or (strong and skipped)) and not words and at_start:
                # "Sold: 24", "Paid: $45", "won came in at 3": a verb form that opens its clause right before
                # a colon or a linking verb is the label (two finite verbs do not follow each other)
                words.append((w, tokens[i][1]))
                i -= 1
                continue
            # (or a record list's item that is only "<noun> <participle> <value>": "Changed: 12.2 l; share changed
            # 31 percent; Conditioner: 10 mL")
            listed = (lists and not structured and not words and i > 0
                      and _clause_start(text, tokens[i][1]) <= tokens[i - 1][1]
                      and _item_ends_clause(text, value) and _record_list(text, value, values))
            if not ((strong or skipped or listed) and not words and re.match(r"[a-z]", prev) and prev not in lex.pronouns
                    and prev not in lex.boundary_words and prev not in lex.determiners and not _is_verb(prev, lex)):
                break  # "I burned 450 kcal": the verb is not part of a label
            # "my minutes spent was 40m", "distance covered: 5 km": a participle inside the label
        if not structured and not strong and _proper_noun(text, w, tokens[i][1]):
            break  # "The book Steps to Freedom costs 12 dollars": a title or a name is not a label
        words.append((w, tokens[i][1]))
        i -= 1
    if skipped_time and not (i < 0 and prev_end == cs):
        # "... along the river today: 115 minutes": skipped time words need a label that starts the clause
        return Label("", False, verb, average)
    after_colon = i >= 0 and words and not structured and (tokens[i][0] in (":", "=") or (
        _low(tokens[i][0]) == "and" and _record_list(text, value, values)))  # "..., and frames extracted at 14"
    if (i < 0 and words and prev_end == cs) or after_colon:
        if structured:
            strong = True  # the label starts the line/cell: "Steps 10,432"
        else:
            # a clause that is only "label value" ("..., score 69, ...") in a list of records is a record
            m = _CLAUSE_BREAK.search(text, value.end)
            rest = text[value.end:m.start() if m else len(text)]
            # (one letter after the value is the symbol of a unit the lexicon lacks: "board days 5 d"; a
            # calendar noun counts the value: "interval 3 days")
            strong = strong or ((bool(_TRAILER.fullmatch(rest)) or re.match(r"\s+and\b", rest) is not None
                                 or re.fullmatch(r"\s?[a-z]\.?\s*", rest) is not None
                                 or rest.strip().lower() in lex.calendar_nouns) and (
                value.unit is not None or not value.bare_int or (lists and _record_list(text, value, values))))
    words.reverse()
    if not words:
        return Label("", False, verb, average)
    a = words[0][1]
    b = words[-1][1] + len(words[-1][0])
    return Label(text[a:b].rstrip("."), strong, verb, average)


def _particle_label(tokens: list[tuple[str, int]], i: int) -> bool:
    """Token i, a word of two letters or more that opens the clause, is a label by its form: before a colon
    ("UP: 76%", "Out: 3 L") or in capitals right before the value ("UP 214%"). Grammar reads "up" and "out"
    as links between a label and its value ("came out at 3"); a particle that starts the clause links
    nothing."""
    w = tokens[i][0]
    return i == 0 and re.fullmatch(r"[A-Za-z]{2,}", w) is not None and (
        (i + 1 < len(tokens) and tokens[i + 1][0] in (":", "=")) or (w.isupper() and i == len(tokens) - 1))


def _list_item_label(text: str, prep_at: int, value: Value, values: list[Value]) -> bool:
    """The clause of `value` is an item of a record list that is only one or two plain words, the
    preposition at `prep_at` and the value ("peak after 4.1 hrs" between commas or lines)."""
    lex = active_lexicon()
    cs = _clause_start(text, value.start)
    cs = max(cs, text.rfind("\n", 0, value.start) + 1)
    words = text[cs:prep_at].split()
    return (1 <= len(words) <= 2 and all(re.fullmatch(r"[A-Za-z][A-Za-z'-]*", w) and _low(w) not in lex.pronouns
                                         and _low(w) not in lex.boundary_words and _low(w) not in lex.determiners
                                         and not _is_verb(_low(w), lex) for w in words)
            and _item_ends_clause(text, value) and _record_list(text, value, values))


def _proper_noun(text: str, w: str, pos: int) -> bool:
    """A Titlecase word inside a sentence (not its first word, not after a colon): a name or a title."""
    if not (len(w) > 1 and w[0].isupper() and w[1:].replace("'", "").replace("’", "").islower()):
        return False
    before = text[:pos].rstrip()
    return bool(before) and not re.search(r"[.!?:;(\n|\t]$", before) and before[-1] != "\u2022"


def _item_ends_clause(text: str, value: Value) -> bool:
    """Nothing but a trailer ("today", "in total") follows `value` to its clause's end."""
    m = _CLAUSE_BREAK.search(text, value.end)
    return bool(_TRAILER.fullmatch(text[value.end:m.start() if m else len(text)]))


def _record_list(text: str, value: Value, values: list[Value]) -> bool:
    """True when `value` is an item of a list of measurements: its sentence has a colon before it, or another
    value with a unit ("Study last night: 2.3 h, ..., quiz score 78"; not "Room 204, gate 12, flight 447")."""
    # (a period before a lower-case word abbreviates, as everywhere here: "Ducks at 16, gs. came in at 3")
    ss = max(text.rfind("\n", 0, value.start), max((m.end() - 1 for m in re.finditer(r"[.!?]\s(?![a-z])",
                                                                                     text[:value.start])),
                                                  default=-1)) + 1
    m = re.compile(r"[.!?](?:\s(?![a-z])|$)|\n").search(text, value.end)
    se = m.start() if m else len(text)
    ls = text.rfind("\n", 0, value.start) + 1
    if re.search(r":(?!\d)", text[min(ls, ss):value.start]) or re.search(r"[;—]", text[ss:se]):
        return True
    if any(v is not value and ss <= v.start < se and v.unit is not None and v.kind == "number" for v in values):
        return True
    # another value of the sentence tied to its label by a colon or a linking word: "..., move count 82,
    # Rating: 1576", "12 games played, wins came in at 2" (three bare numbers alone still are no list)
    if any(v is not value and ss <= v.start < se and v.kind == "number" and not v.word and re.search(
            r"(?:[A-Za-z]\s*:|\b(?:was|were|is|are|at))\s*$", text[ss:v.start], re.I) for v in values):
        return True
    # a line of its own that is only "label value" in a message of several lines ("Dabblers: 8\nGS 7")
    ls, le = text.rfind("\n", 0, value.start) + 1, text.find("\n", value.end)
    line = text[ls:le if le >= 0 else len(text)]
    return "\n" in text.strip() and re.fullmatch(r"\s*[A-Za-z][\w .'-]{0,30}\s+\S+\s*", line) is not None


def _item_pair(text: str, value: Value) -> bool:
    """The clause of `value` is only "label value", the label 1-3 plain words ("wins seven" between
    semicolons), so the words before the value can only name it."""
    lex = active_lexicon()
    cs = _clause_start(text, value.start)
    cs = max(cs, text.rfind(":", cs, value.start) + 1)  # "Mite count: VM twelve": the item after a heading
    m = _CLAUSE_BREAK.search(text, value.end)
    if text[value.end:m.start() if m else len(text)].strip(" ."):
        return False
    words = text[cs:value.start].split()
    # (a word may end in the abbreviation mark the list-item rule puts there: "eps․ two")
    return 1 <= len(words) <= 3 and all(re.fullmatch(r"[A-Za-z][A-Za-z'-]*․?", w) and _low(w) not in lex.pronouns
                                        and _low(w) not in lex.determiners and _low(w) not in lex.connectives
                                        and _low(w) not in lex.boundary_words for w in words)


def _extend_label(tokens: list[tuple[str, int]], i: int, structured: bool):
    """Extend a label over "in"/"of"/"to" ("time in range", "minutes of exercise") when the words before
    it start the line/cell (structured text) or follow a determiner ("my time in range was 82%").
    Returns (words in reverse order, new index, strong) or None."""
    lex = active_lexicon()
    j = i - 1
    ext: list[tuple[str, int]] = []
    while j >= 0 and len(ext) < 3:
        w = tokens[j][0]
        lw = _low(w)
        # ("no." with its period is the abbreviation of "number": "no. of items at 6")
        abbreviated_number = lw == "no" and w.endswith((".", "\u2024"))
        if not abbreviated_number and (not re.match(r"[A-Za-z]", w) or lw in lex.pronouns
                                       or lw in lex.boundary_words or _is_verb(lw, lex)):
            break
        if w[0].isupper() and w[1:].islower() and j > 0 and not structured:
            return None  # "The book Steps to Freedom": a title
        ext.append(tokens[j])
        j -= 1
    if not ext:
        return None
    if j < 0 or tokens[j][0] in (":", "=") or (j == 0 and _low(tokens[j][0]) == "and" and not any(
            _low(x[0]) in lex.connectives for x in ext)):
        return ext, j, True  # the label starts the clause/line (or the list item after "and") or follows a colon
    if j >= 0 and _low(tokens[j][0]) in lex.determiners:
        return ext, j, True
    return None


# a clause that goes on after a linking word: what follows a value up to it is all that may name it
_CLAUSE_GOES_ON = re.compile(r"\s(?:and|but|then)\s")


def right_label(text: str, value: Value) -> str:
    """A label written after a value that starts its clause: "69% time in range, ..." -> "time in range"."""
    lex = active_lexicon()
    cs = _clause_start(text, value.start)
    colon = text.rfind(":", cs, value.start)
    if colon >= 0:
        cs = colon + 1  # "CGM numbers for today: 69% time in range"
    last = re.search(r"(?<=[\d%A-Za-z.])\s+and\s+$", text[cs:value.start])
    if last:
        cs += last.start()  # "..., wind at 14 kph and 3.2 mm rain": the last item starts after "and"
    if text[cs:value.start].strip(" :-") not in ("", "and", "And"):
        return ""
    m = _CLAUSE_BREAK.search(text, value.end)
    rest = text[value.end:m.start() if m else len(text)]
    rest = _CLAUSE_GOES_ON.split(rest)[0].strip()
    # an abbreviation period inside the label: "61 pct hum. rel."; a rate: "three moves/game"; a formula: "26 mg/L NO3"
    if not rest or len(rest.split()) > 4 or not re.fullmatch(
            r"[A-Za-z][A-Za-z0-9'-]*(?:/[A-Za-z][A-Za-z0-9]*)?[.\u2024]?(?:\s[A-Za-z][A-Za-z'-]*[.\u2024]?)*(?:\s?%)?", rest):
        return ""
    words = rest.lower().split()
    if len(rest.rstrip(".")) == 1:
        return ""  # "Board days: 5 d": one letter after a number is a unit's symbol, not a label
    if words[0] in lex.pronouns or words[0] in lex.boundary_words - {"in", "of"} or words[0] in lex.comparatives:
        return ""
    if (len(words) == 1 and value.unit is None and not value.parts and (value.bare_int or value.word)
            and _done_after(text, value)):
        return rest  # "eight solved, 1946 PR", "12 sold": a bare count and what happened that many times
    if words in (["total"], ["in", "total"]) and value.unit is not None and value.unit.dimension == "currency":
        return "total"  # "94.80 USD total, tax $1.30": a receipt's total, as the receipt prints it
    if _TRAILER.fullmatch(" " + rest) or _is_verb(words[0], lex) or words[0] in lex.time_words:
        return ""  # "115 minutes total", "121/79 mmHg noted": no label after the value
    # (a participle closing a noun is part of the label: "three lessons done", as "pages read" is)
    if any(w in lex.pronouns or w in lex.auxiliaries and not (0 < k == len(words) - 1 and lex.is_past(w))
           for k, w in enumerate(words)):
        return ""
    return rest


def _done_after(text: str, value: Value) -> str | None:
    """The past participle that alone follows a value to its clause's end ("49 mins listened", "12 sold"):
    what was done, or None (also for verbs of writing a value down: "72 kg noted")."""
    lex = active_lexicon()
    m = _CLAUSE_BREAK.search(text, value.end)
    # (the clause may go on after "and": "702 minutes elapsed and the type was PLA")
    rest = _CLAUSE_GOES_ON.split(text[value.end:m.start() if m else len(text)])[0].strip()
    if not re.fullmatch(r"[a-z]+", rest) or not lex.is_past(rest) or rest in lex.connectives \
            or rest in lex.reporting_verbs:
        return None
    return rest


def of_label(text: str, value: Value) -> str:
    """The noun after "<value> of": "7 hours of study" -> "study", "3 sets of squats" -> "squats", "69 days
    of day streak" -> "day streak" (a count of days is no unit the scanner attaches)."""
    lex = active_lexicon()
    rest = text[value.end:]
    counted = re.match(r"\s+([a-z]+)(?=\s+of\s)", rest, re.I)
    if counted and value.unit is None and counted.group(1).lower() in lex.calendar_nouns:
        rest = rest[counted.end():]
    m = re.match(r"\s+of\s+((?:[A-Za-z][A-Za-z'-]*\s?){1,3})", rest)
    if not m:
        return ""
    words = []
    found = m.group(1).split()
    for k, w in enumerate(found):
        lw = w.lower()
        if lw in lex.time_words and not words and k + 1 < len(found) and _plain_word(found[k + 1], lex):
            words.append(w)  # a time word naming the thing: "69 days of day streak", "20 min of morning yoga"
            continue
        if lw in lex.boundary_words or lw in lex.pronouns or lw in lex.time_words or lw in lex.determiners:
            break
        words.append(w)
    return " ".join(words[:2])


def _plain_word(word: str, lex) -> bool:
    lw = word.lower()
    return not (lw in lex.boundary_words or lw in lex.pronouns or lw in lex.time_words or lw in lex.determiners)


# --------------------------------------------------------------------------- extraction

_TEXT_FIELD = re.compile(r"^[ \t\-•*]*(?P<label>[A-Za-z#][A-Za-z0-9 /&'().%#-]{0,40}?)\s*[:=]\s*(?P<value>[^:\n|]{1,40}?)\s*$")
# dimension -> the name of an unlabelled value of that dimension
_DIM_NAMES = {"currency": "amount", "duration_ms": "duration_ms"}


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
    dim: str | None = None  # set on values named only by their unit (no label): renamed by the text's shape
    verb: str | None = None
    tentative: bool = False  # kept only when the text holds unit-named values of several dimensions


def _is_year(v: Value) -> bool:
    return v.unit is None and v.number is not None and float(v.number).is_integer() and 1900 <= v.number <= 2100 \
        and "," not in v.raw


def _label_words(label: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z#]+", label)]


def _identifier_label(label: str) -> bool:
    """A label that announces a code: "Order No.", "Ref", "ID", "Invoice #", "Tracking number"."""
    words = _label_words(label) + (["#"] if label.rstrip(" :.").endswith("#") else [])
    return bool(words) and words[-1] in active_lexicon().identifier_words


def _label_ok(label: str, v: Value) -> bool:
    return bool(_label_words(label))


def _dim_name(dim: str, unit: str | None = None) -> str:
    """The name of a value known only by its unit: its dimension's word, or a count rate's own words
    ("3.4 mites/day" -> "mites day", as the label "mites/day" is named)."""
    if dim == "count_per_duration" and unit:
        return unit.replace("/", " ")
    return _DIM_NAMES.get(dim, dim)


class RuleExtractor:
    """Offline extractor over dialogue, captions and OCR text (see module docstring).

    `extract(round, ocr)` never raises on odd text: a pattern that does not
    parse yields no observation. `config.lexicon` names a JSON file extending
    the built-in vocabulary (core/lexicon.py); "" = built-in.
    """

    name = "rules"

    def __init__(self, config: Config = DEFAULT):
        self.config = config
        self.lexicon = load_lexicon(getattr(config, "lexicon", "") or "")

    def run(self, round: Round, ocr: dict[str, str] | None = None, images=None):
        """`extract` wrapped in an ExtractionResult (no fallback, no tokens); `images` is unused."""
        from core.extract import ExtractionResult

        return ExtractionResult(tuple(self.extract(round, ocr)))

    def extract(self, round: Round, ocr: dict[str, str] | None = None) -> list[Observation]:
        """Observations of one round: dialogue first (utterance order), then per image caption and OCR."""
        with use_lexicon(self.lexicon):
            out: list[Observation] = []
            for i, u in enumerate(round.dialogue):
                assistant = u.speaker.strip().lower() in ("assistant", "agent", "bot", "ai", "system")
                for f in extract_text(u.text, structured=False, speaker=u.speaker, assistant=assistant):
                    out.append(_obs(round, f, source="dialogue", speaker=u.speaker, utterance_index=i))
            for img in round.images:
                if img.caption:
                    for f in extract_text(img.caption, structured=False, descriptive=True):
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


def _in_question(text: str, pos: int) -> bool:
    """True when `pos` lies in an interrogative sentence ("Is 145 bpm too high for an easy run?")."""
    lex = active_lexicon()
    start = _sentence_start(text, pos)
    m = re.compile(r"[.!?\n]").search(text, pos)
    if not (m and m.group(0) == "?"):
        return False
    first = re.match(r"\s*([A-Za-z']+)", text[start:])
    return bool(first and first.group(1).lower() in lex.question_words)


def _irrealis(text: str, pos: int) -> bool:
    """The sentence around `pos` is a plan, wish or condition ("I have 3 meetings tomorrow", "Let's meet")."""
    lex = active_lexicon()
    ss, se = _sentence_start(text, pos), _sentence_end(text, pos)
    words = {_low(w) for w in re.findall(r"[A-Za-z']+", text[ss:se])}
    return bool(words & lex.irrealis_words) or bool(re.search(r"'ll\b", text[ss:se]))


_SUBJ_VERB = re.compile(r"(?:^|(?<=[\s;:,.(]))(?:(?P<subj>[A-Za-z][a-z']*)\s+)?(?:(?:'ve|'d|have|has|had|just|also|then|finally)\s+)*"
                        r"(?P<verb>[A-Za-z]+)(?:\s+(?:up|down|out|in|back|off|with|on|at|for|a|an|the|another|over|from|to))*"
                        r"\s*,?\s*$")


def record_subject(text: str, pos: int, *, descriptive: bool = False) -> tuple[str | None, str | None, int | None]:
    """(subject as written or None, verb lemma, subject start) when the words right before `pos` are a record
    clause "<subject> <past verb> [particles] ..." ("I won 4 points", "Sam won, 17 points", "Watched 4
    episodes"); (None, None, None) when they are not (present tense, a plan, "we", no verb)."""
    lex = active_lexicon()
    ss = _sentence_start(text, pos)
    cs = max(ss, max((m.end() for m in re.finditer(r"[;:]\s|\band\b|,\s(?=\S+\s)", text[ss:pos])), default=0) + ss
                 if re.search(r"[;:]\s|\band\b", text[ss:pos]) else ss)
    head = text[cs:pos]
    m = _SUBJ_VERB.search(head)
    if m and not lex.is_past(m.group("verb")) and re.search(r",\s*$", head) and not (
            descriptive and m.group("verb").endswith("ing")):
        m, cs = None, max(cs, head.rfind(",") + cs)
        head = ""
    if not m and not head.strip(" ,") and cs > ss:
        # an item of a list whose verb opens the sentence: "Logged 1 of clutch, 7 chicks"
        first = re.match(r"\s*(?:(?P<subj>I|[A-Z][a-z]+)\s+)?(?P<verb>[A-Za-z]+)\b", text[ss:cs])
        if first and lex.is_past(first.group("verb")) and first.group("verb").lower() not in lex.auxiliaries:
            subj = first.group("subj")
            if subj is None or _low(subj) in lex.first_person:
                return (subj or ""), lex.lemma(first.group("verb")), (ss + first.start("subj") if subj else None)
        return None, None, None
    if not m:
        return None, None, None
    verb = _low(m.group("verb"))
    if not (lex.is_past(verb) or descriptive and verb.endswith("ing")) or verb in lex.auxiliaries - {"had", "did"}:
        return None, None, None
    subj = m.group("subj")
    before = head[:m.start("subj") if subj else m.start("verb")].strip(" ,;:(")
    if subj is None:
        if before and not re.search(r"[.!?:;]$", before):
            return None, None, None
        return "", lex.lemma(verb), None
    ls = _low(subj)
    if ls not in lex.first_person and before and not re.search(r"[.!?:;,]$", before):
        return None, None, None  # "The book Steps to Freedom sold 300 copies": the subject is not a person
    if ls in lex.plural_first_person or ls in ("you", "they", "it", "there", "this", "that"):
        return None, None, None
    if ls in lex.first_person or ls in ("he", "she") or (subj[0].isupper() and ls not in lex.determiners
                                                          and ls not in lex.boundary_words):
        return subj, lex.lemma(verb), cs + m.start("subj")
    if ls in lex.time_words or ls in lex.boundary_words:
        return "", lex.lemma(verb), None
    return None, None, None


_PLURAL_IRREGULAR = {"people", "children", "men", "women", "feet", "teeth", "mice", "geese", "fish", "sheep"}


def _plural(w: str) -> bool:
    lw = w.lower()
    return lw in _PLURAL_IRREGULAR or (len(lw) > 2 and lw.endswith("s") and not lw.endswith(("ss", "us", "is")))


def _count_noun(text: str, v: Value) -> tuple[str, int] | None:
    """The counted noun after a bare number ("17 points", "28 open tickets", "4 episodes"): (words, end)."""
    lex = active_lexicon()
    m = re.match(r"[ \u00a0]+((?:[a-z][a-z-]*\s+){0,2}?)([A-Za-z][a-z-]*)(?![\w'])", text[v.end:])
    if not m:
        return None
    noun = m.group(2)
    mods = m.group(1).split()
    if not _plural(noun) or noun.lower() in lex.calendar_nouns or parse_unit(noun) is not None:
        return None
    if any(w in lex.boundary_words or w in lex.determiners or w in lex.pronouns or w in lex.prepositions
           for w in mods + [noun.lower()]):
        return None
    return " ".join(mods + [noun]), v.end + m.end()


def _item_label(text: str, v: Value) -> str:
    """The words after a value up to the end of its list item ("1409 my rating" -> "my rating")."""
    lex = active_lexicon()
    m = re.match(r"\s+([A-Za-z][A-Za-z' -]{0,40}?)\s*(?=[,;\n|]|\s+and\s|\s[—–]\s|[.!?]?\s*$)", text[v.end:])
    if not m:
        return ""
    words = [w for w in m.group(1).split() if _low(w) not in lex.determiners]
    if not 1 <= len(words) <= 3 or any(_low(w) in lex.pronouns or _low(w) in lex.boundary_words for w in words):
        return ""
    return " ".join(words)


def _log_line(text: str, v: Value, values: list[Value]) -> bool:
    """A line (after an optional "heading:") made only of "<number> <word(s)>" items: "25 scales, 40 minutes"."""
    ls = text.rfind("\n", 0, v.start) + 1
    le = text.find("\n", v.end)
    line = text[ls:le if le >= 0 else len(text)]
    body = line.split(":", 1)[1] if ":" in line and line.index(":") < v.start - ls else line
    body = re.sub(r"^\s*[A-Za-z]+\s+\d{1,3}\s+[—–-]\s+", "", body)  # "Day 6 — ..."
    items = [x.strip() for x in re.split(r"[,;]|\band\b|\s[—–]\s", body) if x.strip()]
    if len(items) < 2 or any(len(x.split()) > 4 for x in items):
        return False
    numeric = [x for x in items if re.match(r"[~≈]?\s?[$€£¥₹]?\d", x)]
    return len(numeric) >= 2 and len(numeric) * 2 >= len(items)


def _letter_item(text: str, v: Value, values: list[Value]) -> str | None:
    """In a log line of "<number> <label>" items ("5 games played, 2 w, 1293 b-rating"), a lower-case letter
    after a number whose unit is written as a capital ("w" for W, watts) is the item's label, as "games
    played" is the first's: the letter; None otherwise (a line of readings with units, "5 g" of grams)."""
    if v.kind != "number" or v.unit is None or v.parts:
        return None
    m = re.fullmatch(r"[\d.,]+\s?([a-z])", v.raw)
    if m is None or m.group(1).upper() != v.unit.unit or not _log_line(text, v, values):
        return None
    ls, le = text.rfind("\n", 0, v.start) + 1, text.find("\n", v.end)
    le = le if le >= 0 else len(text)
    labelled = [w for w in values if w is not v and ls <= w.start < le and w.kind == "number" and w.unit is None
                and re.match(r"\s+[A-Za-z]", text[w.end:])]
    return m.group(1) if labelled else None


def _value_found(attr_label: str, v: Value, *, label_raw: str, average: bool = False, dim_name: bool = False,
                 verb: str | None = None) -> Found | None:
    """A Found for `v` named by `attr_label` (None when the name normalizes to nothing)."""
    lex = active_lexicon()
    label, label_unit = split_label_unit(attr_label)
    unit = v.unit
    number = v.number
    kind = v.kind
    if v.clock and kind == "time":
        lw = set(_label_words(label))
        first = int(v.raw.split(":")[0]) if re.match(r"\d+:\d", v.raw) else 0
        if label_unit is not None and label_unit.dimension == "duration" or lw & lex.duration_label_words or \
                (first >= 24 and not v.parts):
            # "Moving time: 45:10" is a duration (mm:ss when the label's unit says minutes, else h:mm)
            a, b = (int(x) for x in v.raw.split(":")[:2])
            minutes_first = (label_unit is not None and label_unit.factor == 1.0) or a >= 24
            number = a + b / 60 if minutes_first else a * 60 + b
            unit, kind = parse_unit("min"), "number"
    if unit is not None and unit.unit == "m" and set(_label_words(label)) & lex.duration_words - {"length"}:
        unit, number = parse_unit("min"), v.number  # "minutes spent: 15m": m is minutes under a time label
    if label_unit is not None and label_unit.unit == "m" and set(_label_words(label)) & lex.duration_words - {"length"}:
        label_unit = parse_unit("min")  # "Minutes (m)": m is minutes in a label that says so
    if unit is None and label_unit is not None and kind == "number" and number is not None:
        unit = label_unit
        number = number * label_unit.factor
    dim = unit.dimension if unit else None
    name = normalize_attribute(label, value_kind=kind, dimension=dim)
    if name is None:
        return None
    if name in lex.modifiers and unit is not None and kind == "number":
        name = f"{name}_{_dim_name(unit.dimension)}"  # "average 141 mg/dL" -> average_concentration
    if average and kind == "number" and not name.startswith(("average", "avg", "mean")):
        name = "average_" + name
    if kind == "time" and not name.endswith("time"):
        name = name + "_time"
    return Found(name, v.raw, v.start, v.end, kind, number if kind == "number" else None,
                 unit.unit if unit and kind == "number" else None, label_raw,
                 dim=(unit.dimension if dim_name and unit else None), verb=verb)


def _unit_named(v: Value, lab: Label, text: str, structured: bool, descriptive: bool) -> list[Found]:
    """A value with a unit and no label: named by the clause's verb and the unit's dimension."""
    lex = active_lexicon()
    unit = v.unit
    if unit is None or unit.dimension in lex.weak_dimensions or unit.unit.lower() in ("x",):
        return []
    subj, verb, _ = record_subject(text, v.start, descriptive=descriptive)
    if verb in lex.light_verbs:
        verb = None  # "got back from a 6.8 km run": a light verb names nothing
    verb = lab.verb or verb
    if not structured and not descriptive and not _log_line(text, v, [v]):
        # prose: a record clause (past tense, not a plan, not "we") or a list after a heading
        ss = _sentence_start(text, v.start)
        if _irrealis(text, v.start):
            return []
        head = text[ss:v.start]
        we = bool(re.search(r"\b(?:we|we've|they|you)\b", head, re.I))
        if we:
            return []
        tentative = not (verb or re.search(r":(?!\d)", head) or _sentence_has_unit_list(text, v))
    else:
        tentative = False
    dname = _dim_name(unit.dimension, unit.unit)
    name = f"{verb} {dname}" if verb and unit.dimension != "duration" else (f"{verb}" if verb else dname)
    f = _value_found(name, v, label_raw="", average=lab.average, dim_name=True, verb=verb)
    return [replace(f, tentative=tentative)] if f else []


def _heading(text: str, v: Value, values: list[Value]) -> bool:
    """The label before "<label>: v" heads a list of several unlabelled values of different dimensions
    ("Ride log: 46.2 km, 115 minutes, avg heart rate 134") rather than naming `v` alone."""
    m = re.search(r":\s*$", text[:v.start])
    if not m:
        return False
    se = _sentence_end(text, v.end)
    dims = set()
    prev = m.end()
    for w in sorted(values, key=lambda x: x.start):
        if w.start < v.start or w.start >= se:
            continue
        gap = text[prev:w.start]
        words = [x.lower() for x in re.findall(r"[A-Za-z]+", gap)]
        if w.unit is not None and w.kind == "number" and all(x in active_lexicon().prepositions for x in words):
            dims.add(w.unit.dimension)
        prev = w.end
    return len(dims) >= 2


def _sentence_has_unit_list(text: str, v: Value) -> bool:
    """The sentence is a list of measurements ("46.2 km, 115 minutes, avg heart rate 134")."""
    ss, se = _sentence_start(text, v.start), _sentence_end(text, v.end)
    return len(re.findall(r",", text[ss:se])) >= 1 and re.search(r":(?!\d)", text[max(0, ss - 1):se]) is not None


def _from_value(text: str, v: Value, values: list[Value], structured: bool, descriptive: bool) -> list[Found]:
    lex = active_lexicon()
    if v.ident:
        return []  # codes are text fields only when a label names them (_identifiers)
    if v.ordinal:
        return []
    letter = _letter_item(text, v, values) if not structured else None
    if letter is not None:
        digits = re.match(r"[\d.,]+", v.raw)
        bare = replace(v, unit=None, raw=digits.group(0), end=v.start + digits.end())
        f = _value_found(letter, bare, label_raw=letter)
        return [f] if f else []
    if v.kind == "number" and v.unit is None and not v.parts and _is_year(v):
        yl = left_label(text, v, values, structured=structured)
        # "..., 1946 PR" in a line of readings: a short label after the value, beside other values
        rl = right_label(text, v) if not structured and len([x for x in values if x.kind == "number"]) >= 2 else ""
        if (not yl.strong and not (rl and len(rl.split()) <= 2)) or re.search(
                r"\b(?:in|since|from|of|by|until|year|born)\W*$", text[:v.start], re.I):
            return []  # "We moved here in 2019": a year; "measured the PR at 2048" is a reading
    if v.kind == "number" and re.match(r"\s*:(?!\d)|\s+[—–]\s", text[v.end:]) and not v.parts and v.unit is None:
        return []  # a heading number: "Round 3: ...", "Day 12 — ..."
    if v.unit is None and re.match(r"\s+(\w+)\s+ago\b", text[v.end:]):
        return []  # "3 days ago": a relative date
    after = re.match(r"\s+([a-z]+)\s+than\b|\s+([a-z]+er)\b", text[v.end:], re.I)
    if after and ((after.group(1) or after.group(2) or "").lower() in lex.comparatives):
        return []  # "27 percent higher than last month": a change, not a reading
    if not structured and not descriptive and v.kind == "number":
        if _irrealis(text, v.start):
            return []  # "My train leaves at 7:45 tomorrow, platform 3": a plan, not a record
        if v.unit is None and not v.parts and (v.number or 0) <= 24 and re.search(
                r"\b(?:is|are|am|'s|'re|be|will)\b[^,;.:]*\bat\s*$", text[_clause_start(text, v.start):v.start], re.I):
            return []  # "the retro is at 4": a time of day without its colon, not a quantity
    if v.kind == "number" and v.unit is None and not v.parts:
        idl = _ident_prefix(text, v)
        if idl:
            return _as_identifier(idl, v)  # "Order No. 48213", "Customer ID 771203"
    if not structured and v.unit is not None:
        ur = re.sub(r"^[\d.,\s$€£¥₹+-]+", "", v.raw)
        if len(ur) > 2 and ur.isalpha() and ur[0].isupper() and ur[1:].islower() and _proper_noun(text, ur, v.end - len(ur)):
            return []  # "a book called 24 Hours in the Garden": a title, not a duration
    if v.word and (not re.search(r"(?::|\b(?:was|is|were|are|at))\s*$", text[:v.start], re.I)
                   or re.match(r"\s+of\b", text[v.end:])) and not (
            not descriptive and _record_list(text, v, values) and (right_label(text, v) or _item_pair(text, v) or (
                re.match(r"\s+of\b", text[v.end:]) and re.search(r"\b[a-z]+ed\s*$", text[:v.start], re.I)))):
        # a number word needs an explicit link: "Games: seven", "my puzzles was six", "Clutch at eight", a
        # label after it in a list of measurements ("Checkup: seven leaves, 12 cm tall", "logged five of X"),
        # or a list item that is only "label number" ("Played: 25; wins seven; rating: 1343")
        return []
    lab = left_label(text, v, values, structured=structured)
    if lab.text and _identifier_label(lab.text) and v.kind == "number" and v.unit is None:
        return _as_identifier(lab.text, v)
    if lab.text and (v.unit is not None or v.kind == "number" and not v.parts) and (
            v.unit is not None and _heading(text, v, values) or (
            re.search(r":\s*$", text[:v.start]) and right_label(text, v) and (
                v.unit is not None or right_label(text, v).split()[0].lower() not in lex.calendar_nouns))):
        # "Morning run: 6.5 km in 37 minutes, ...", "Boiler check: 3.11 m³ gas used": the label is a heading
        lab = Label("", False, lab.verb, lab.average)
    if v.parts:
        return _fraction(v, lab, structured)
    unit = v.unit
    label = lab.text
    strong = lab.strong
    lead = re.search(r"([A-Za-z]+)\s*$", text[:v.start])
    logged = bool(lead and _low(lead.group(1)) in lex.connectives and _low(lead.group(1)) not in lex.weak_connectives
                  and lex.is_past(lead.group(1)))
    if not label:
        ofl = of_label(text, v)
        if ofl and (unit is not None or logged):
            label, strong = ofl, True  # "7 hours of study", "2 liters of water", "logged 1562 of PR"
    elif logged and of_label(text, v):
        label, strong = of_label(text, v), True  # "Extraction day: Logged 2.55 kg of yield"
    if not label and v.kind == "number" and _log_line(text, v, values):
        il = _item_label(text, v)  # "Day 6 — 55 moves, 1409 my rating, 48m session"
        if il:
            label, strong = il, True
    if not label and unit is None and v.kind == "number":
        rl = right_label(text, v)  # "69% time in range"
        if rl and (structured or _record_list(text, v, values)):
            label, strong = rl, True
    if not label and unit is not None and v.kind == "number":
        rl = right_label(text, v)  # "10.64 kg yield", "19.6% moisture", "3ml dechlor": the label after the value
        if rl and (structured or _record_list(text, v, values) or unit.dimension not in lex.weak_dimensions):
            label, strong = rl, True
    if label and not _label_ok(label, v):
        label = ""
    if v.clock and v.kind == "time" and not label and re.search(r"\b(?:in|for)\s*$", text[:v.start]):
        # "paddled 5.2 km in 28:45": a clock-style duration
        subj, verb, _ = record_subject(text, v.start)
        verb = lab.verb or verb
        a, b = (int(x) for x in v.raw.split(":")[:2])
        minutes = a + b / 60 if a >= 24 else a * 60 + b
        dv = Value(v.start, v.end, v.raw, "number", minutes, parse_unit("min"))
        if verb or structured:
            f = _value_found(verb or "duration", dv, label_raw="", dim_name=True, verb=verb)
            return [f] if f else []
        return []
    if v.kind in ("time", "date"):
        return _time_or_date(text, v, label, strong, structured, lab)
    if v.kind != "number":
        return []
    if label and normalize_attribute(label) is None:
        label = ""
    if label:
        if v.bare_int and v.unit is None and not (strong or structured):
            return []
        f = _value_found(label, v, label_raw=label, average=lab.average)
        if f is None:
            return []
        if not (strong or structured) and (unit is None or unit.dimension in lex.weak_dimensions
                                           or unit.unit.lower() in lex.weak_units):
            # "we saw 3 deer": only adjacency ties the number to the words before it, and no unit names it
            return []
        if not structured and not strong and _irrealis(text, v.start):
            return []
        return [f]
    if unit is None:
        return []
    done = _done_after(text, v) if not (structured or descriptive) and not lab.verb else None
    if done is not None:
        lab = Label(lab.text, lab.strong, lex.lemma(done), lab.average)  # "49 mins listened": listened 49 mins
    return _unit_named(v, lab, text, structured, descriptive)


def _time_or_date(text: str, v: Value, label: str, strong: bool, structured: bool, lab: Label) -> list[Found]:
    if v.kind == "date":
        if label and (strong or structured):
            f = _value_found(label, v, label_raw=label)
            return [f] if f else []
        if structured and not label:
            f = _value_found("date", v, label_raw="")
            return [f] if f else []
        return []
    if label and (strong or structured):
        f = _value_found(label, v, label_raw=label)
        return [f] if f else []
    # prose: "I woke up at 6:45 am", "went to bed at 11pm": a past first-person clause says when
    if structured or _irrealis(text, v.start) or not re.search(r"\bat\s*$", text[:v.start]):
        return []
    subj, verb, _ = record_subject(text, _clause_verb_end(text, v.start))
    if subj is None or (subj and _low(subj) not in active_lexicon().first_person):
        return []
    name = label or lab.verb or verb
    if not name:
        return []
    f = _value_found(name, v, label_raw=label)
    return [f] if f else []


def _clause_verb_end(text: str, pos: int) -> int:
    """The position right after the first past verb of the clause before `pos` (so record_subject sees
    "I woke" in "I woke up at 6:45")."""
    lex = active_lexicon()
    cs = _clause_start(text, pos)
    for m in re.finditer(r"[A-Za-z']+", text[cs:pos]):
        if _is_verb(m.group(0), lex):
            return cs + m.end()
    return pos


def _ident_prefix(text: str, v: Value) -> str | None:
    """The label of an identifier written right before `v`: "[Order] No.", "Customer ID", "Ref:" -> the label."""
    ls = max(text.rfind(c, 0, v.start) for c in "\n|;,!?") + 1
    m = re.search(r"((?:[A-Za-z]+\s+){0,2}?)([A-Za-z]+|#)\.?\s*[:#]?\s*$", text[ls:v.start])
    if not m or m.group(2).lower() not in active_lexicon().identifier_words:
        return None
    words = [w for w in m.group(1).split() if w.lower() not in active_lexicon().stop_words
             and w.lower() not in active_lexicon().boundary_words and not _is_verb(w, active_lexicon())]
    return " ".join(words + [m.group(2)])


def _as_identifier(label: str, v: Value) -> list[Found]:
    name = normalize_attribute(label, value_kind="text") or "id"
    return [Found(name, v.raw, v.start, v.end, "text", None, None, label)]


def _identifiers(text: str, values: list[Value], used: set[int]) -> list[Found]:
    """Codes after a label ("Order #48213907", "Invoice: INV-2024-0117", "Ref 55301982") as text fields."""
    out = []
    for v in values:
        if not v.ident or v.start in used or _in_question(text, v.start):
            continue
        ls = max(text.rfind("\n", 0, v.start), _clause_start(text, v.start) - 1 if "\n" not in text else -1) + 1
        segs = [x for x in re.split(r"\s*\|\s*|\t+|\s{2,}", text[ls:v.start])]
        while len(segs) > 1 and not segs[-1].strip():
            segs.pop()
        before = segs[-1].strip() if segs else ""
        m = re.search(r"([A-Za-z][A-Za-z .#'-]{0,30}?)\s*[:=]?\s*$", before)
        if not m or not re.search(r"[A-Za-z]", m.group(1)):
            continue
        words = [w for w in re.findall(r"[A-Za-z#]+\.?", m.group(1))][-3:]
        label = " ".join(words)
        name = normalize_attribute(label, value_kind="text")
        if v.raw.startswith("#") and name and not name.endswith("number"):
            name = f"{name}_number"
        if name is None:
            continue
        used.add(v.start)
        out.append(Found(name, v.raw, v.start, v.end, "text", None, None, label))
    return out


def _counts(text: str, values: list[Value], used: set[int], structured: bool, descriptive: bool) -> list[Found]:
    """ "N <plural noun>" in a record clause or a log line: a count named after the noun, and who did it."""
    lex = active_lexicon()
    out: list[Found] = []
    agents = 0
    for v in values:
        if v.start in used or v.kind != "number" or v.unit is not None or v.parts or v.ident or v.ordinal or v.word:
            continue  # number words count only under an explicit label ("a photo of two children" is no record)
        if _is_year(v) or v.number is None or v.number < 0:
            continue
        cn = _count_noun(text, v)
        if cn is None:
            continue
        noun, _ = cn
        subj, verb, sstart = record_subject(text, v.start, descriptive=descriptive or structured)
        ls = max(text.rfind("\n", 0, v.start), max((m.end() - 1 for m in re.finditer(r"[.!?]\s", text[:v.start])),
                                                  default=-1)) + 1
        log = _log_line(text, v, values) or (re.search(r":(?!\d)\s", text[ls:v.start]) is not None
                                             and not _irrealis(text, v.start))
        if not (log or structured or descriptive):
            if subj is None or _irrealis(text, v.start) or _in_question(text, v.start):
                continue
        elif subj is None and not log and not (structured or descriptive):
            continue
        name = normalize_attribute(noun, value_kind="number")
        if name is None:
            continue
        used.add(v.start)
        out.append(Found(name, v.raw, v.start, v.end, "number", v.number, None, noun))
        if subj and verb and verb not in lex.light_verbs and sstart is not None and agents == 0:
            agents += 1
            out.append(Found(agent_noun(verb), subj, sstart, sstart + len(subj), "text", None, None, verb))
    return out


_OWNED = re.compile(r"(?:(?P<own>\b[A-Za-z]+(?:'s|’s)?)\s+)(?:(?P<det>a|an|the|another)\s+)?"
                    r"(?P<mod>[a-z][a-z-]+)\s+(?P<num>\d{1,3})(?![\d:/%.,]\d|[\w%:/])"
                    r"(?=\s*(?:[.,;!?)]|$)|\s+(?P<next>[a-z]+)\b)")


def _owned_values(text: str, values: list[Value], used: set[int]) -> list[Found]:
    """ "<owner> [det] <word> N" in a record clause: "my yellow 8 against Sam's yellow 1", "Sam put down a red 1
    and I answered with a green 3", "I played a green 3, Sam played red 1". Each number is <owner>_value
    (my / other), the word before it <owner>_value_qualifier, the other person `other`."""
    lex = active_lexicon()
    out: list[Found] = []
    named_other = False
    for m in _OWNED.finditer(text):
        own, mod = m.group("own"), m.group("mod")
        lmod = mod.lower()
        if (lmod in lex.boundary_words or lmod in lex.determiners or lmod in lex.prepositions or lmod in lex.pronouns
                or _is_verb(lmod, lex) or lmod in lex.time_words or parse_unit(lmod) is not None):
            continue
        n0 = m.start("num")
        nxt = (m.group("next") or "").lower()
        if nxt and nxt not in lex.boundary_words and nxt not in lex.prepositions:
            continue  # "my 2 kids": the number counts the noun after it
        if any(v.start == n0 and (v.unit is not None or v.kind != "number") for v in values) or n0 in used:
            continue
        if _irrealis(text, n0) or _in_question(text, n0):
            continue
        lown = _low(own)
        owner: str | None = None
        other_span = None
        if lown in lex.possessives or lown.endswith(("'s", "’s")):
            if lown == "my":
                owner = "my"
            elif lown.endswith(("'s", "’s")) and own[0].isupper():
                owner, other_span = "other", (m.start("own"), m.start("own") + len(own) - 2)
            else:
                continue
        else:
            # the verb of the clause and its subject decide the owner ("I answered with a green 3")
            cs = max(_clause_start(text, n0), max((x.end() for x in re.finditer(r"\band\b|;|,|:", text[:n0])), default=0))
            seg = text[cs:n0]
            if not any(_is_verb(w, lex) for w in re.findall(r"[A-Za-z']+", seg)):
                continue
            subj = re.match(r"\s*(I|[A-Z][a-z]+)\b", seg)
            if not subj:
                continue
            if subj.group(1) == "I":
                owner = "my"
            elif subj.group(1).lower() not in lex.determiners and subj.group(1).lower() not in lex.boundary_words \
                    and subj.group(1).lower() not in lex.pronouns:
                owner, other_span = "other", (cs + subj.start(1), cs + subj.end(1))
            else:
                continue
        out.append(Found(f"{owner}_value", m.group("num"), n0, m.end("num"), "number", float(m.group("num")), None,
                         m.group(0)))
        out.append(Found(f"{owner}_value_qualifier", mod, m.start("mod"), m.end("mod"), "text", None, None,
                         m.group(0)))
        used.add(n0)
        if other_span and not named_other:
            named_other = True
            out.append(Found("other", text[other_span[0]:other_span[1]], other_span[0], other_span[1], "text",
                             None, None, "other"))
    return out


def _fraction(v: Value, lab: Label, structured: bool) -> list[Found]:
    """"La/Lb: x/y" -> two attributes; "Label: x/y" -> label and label_2, or x out of y when x <= y."""
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
    if not (lab.strong or structured or v.unit is not None):
        return []
    if (a.number or 0) <= (b.number or 0) and a.unit is None:
        # "Tasks done: 7/10": the numerator, out of the denominator
        f = _value_found(label, Value(v.start, v.end, v.raw, "number", a.number, a.unit), label_raw=label)
        if f is None:
            return []
        return [Found(f.attribute, f.raw, f.start, f.end, f.kind, a.number, f"/{b.raw}", label)]
    fa = _value_found(label, a, label_raw=label)
    if fa is None:
        return []
    fb = _value_found(label, b, label_raw=label)
    if fb is not None:
        fb = replace(fb, attribute=f"{fa.attribute}_2")
    return [f for f in (fa, fb) if f]


def _text_fields(text: str, structured: bool) -> list[Found]:
    """"Label: value" lines/cells whose value is a short text ("Variety: Monstera", "Result: win")."""
    lex = active_lexicon()
    out = []
    offset = 0
    for line in text.split("\n"):
        cell_re = r"(?:[^|\t ]| (?! ))+" if structured else r"(?:[^|\t.!?;,]|\.(?=\S)|,(?=\S))+?(?=\s+and\s|[|\t.!?;,]\s|[|\t!?;]|\.$|$)"
        # " / " separates items as a semicolon does ("Seeds: 1.3 kg / Seed type: nyjer"); "km/h" is one word
        items = line if structured else re.sub(r"(?<=\s)/(?=\s)", ";", line)
        cells = [(m.group(0), offset + m.start()) for m in re.finditer(cell_re, items)]
        for cell, base in cells:
            m = _TEXT_FIELD.match(cell)
            if not m and not structured:
                # "Returned today: Genre: mystery": a "label: value" after a heading colon
                for h in re.finditer(r":\s", cell):
                    m = _TEXT_FIELD.match(cell[h.end():])
                    if m:
                        base, cell = base + h.end(), cell[h.end():]
                        break
            if not m or re.search(r"\d", m.group("value")) or any(
                    _low(w) in lex.number_words for w in m.group("value").split()):
                continue
            val = m.group("value").strip().rstrip(".")
            label = m.group("label").strip()
            if len(label.split()) > 4 or len(val.split()) > 4 or not re.search(r"[A-Za-z]", val):
                continue
            if val.lower() in ("yes", "no") and not structured:
                continue
            lw = label.lower().split()
            if not structured and (lw[0] in lex.pronouns or len(lw) > 3 or lw[-1] in lex.record_words):
                continue
            if not structured and _is_verb(lw[0], lex) and any(w in lex.determiners for w in lw):
                continue  # "Played a match: ...": a heading sentence, not a label
            if not structured and any(_low(w) in lex.pronouns or _low(w) in lex.auxiliaries for w in val.split()):
                continue  # "Note: I was tired" is a sentence, not a value
            s = base + m.start("value")
            vwords = val.split()
            k = 0 if structured or not re.match(r"\s*,", text[s + len(val):]) else _split_item(vwords)
            if k and normalize_attribute(" ".join(vwords[:k]), value_kind="text"):
                # "Club night: BOARD Table A, 38 moves": the colon ends a heading, the item has its own label
                label = " ".join(vwords[:k])
                skip = val.index(vwords[k], len(label))
                s, val = s + skip, val[skip:]
            name = normalize_attribute(label, value_kind="text")
            if name is None:
                continue
            out.append(Found(name, text[s:s + len(val)], s, s + len(val), "text", None, None, label))
        offset += len(line) + 1
    return out


# (a label word ending in a period is an abbreviation only before a lower-case word: "the opp. rating was
# ...", not "my repertoire. The opening was ...")
_COPULA = re.compile(r"(?:^|(?<=[\s,;:(]))(?P<det>[Tt]he|[Mm]y|[Oo]ur)\s+(?P<label>[A-Za-z][\w.'-]*(?:(?<!\.)\s+[A-Za-z][\w.'-]*|(?<=\.)\s+[a-z][\w.'-]*){0,2}?)"
                     r"\s+(?:was|were)\s+(?P<value>[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*){0,2}?)"
                     r"(?=[ \t]*(?:[,;.!?)\n]|$)|\s+(?:and|but|with|so)\b)")


def _copula_texts(text: str, values: list[Value], found: list[Found] = ()) -> list[Found]:
    """ "the seed type was peanuts", "the opp. was Keiko": a short text value, in a line that carries a record
    (a heading colon or a number), so "The pride event was awesome!" stays conversation."""
    lex = active_lexicon()
    out = []
    # a message of several lines with measured values is a record ("Club night! the opening was sicilian\nmoves 38\n...")
    lines_with_values = len({text.count("\n", 0, f.start) for f in found if f.kind == "number"})
    for m in _COPULA.finditer(text):
        ls, le = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        le = len(text) if le < 0 else le
        if not (re.search(r"[A-Za-z]:\s", text[ls:m.start()]) or lines_with_values >= 2 or any(
                ls <= v.start < le and v.kind == "number" and not v.word for v in values)):
            continue
        label, val = m.group("label"), m.group("value")
        lw = [_low(w) for w in label.split()]
        # "Table A", "Court B": a capital letter after a name is part of the name, not the article
        vw = [_low(w) for k, w in enumerate(val.split()) if not (k and re.fullmatch(r"[A-Z]", w))]
        if any(w in lex.pronouns or w in lex.boundary_words or w in lex.auxiliaries for w in lw):
            continue
        if any(w in lex.determiners or w in lex.pronouns or w in lex.boundary_words or w in lex.hedges
               or w in lex.comparatives or w in lex.auxiliaries or w.endswith("ly") or w in lex.number_words
               or _is_verb(w, lex) or w.endswith("ing") for w in vw):
            continue  # "the game was really close", "my day was going well": not a value
        if lw[-1] in lex.record_words or lw[-1] in lex.time_words:
            continue
        name = normalize_attribute(label, value_kind="text")
        if name is None:
            continue
        out.append(Found(name, val, m.start("value"), m.end("value"), "text", None, None, label))
    return out


def _split_item(words: list[str]) -> int:
    """How many leading words of a text item of a record list are its label, by their case (0: no label):
    "BOARD Table A" -> 1 (a capitalised label), "sensor Mast B", "opening line Caro" -> the lower-case
    words before a name, "Court Seven B" -> 1 (a capitalised word before a name of several words)."""
    def upper_initial(w: str) -> bool:
        return w[:1].isupper() or w[:1].isdigit() or w == "&"
    if len(words) < 2 or "&" in words[1:2]:
        return 0  # (a name joined by "&" is one name: "Pine & Co")
    if len(words[0]) > 1 and words[0].isalpha() and words[0].isupper() and not all(w.isupper() for w in words[1:]):
        return 1
    k = 0
    while k < len(words) and words[k].islower():
        k += 1
    if 0 < k < len(words) and upper_initial(words[k]):
        return k  # "pot Peace lily": a name in sentence case after the label
    if len(words) >= 3 and words[0][0].isupper() and words[0][1:].islower() and all(upper_initial(w) for w in words[1:]):
        return 1
    return 0


# a dash entry (a log line "Day 6 — …"): a short heading before a dash, then two or more items set apart by commas ("Day 6 — Keiko, win, 55 mv")
_DASH_ENTRY = re.compile(r"\s*[^,—–\n]{1,30}\s[—–]\s[^,\n]+(?:,[^,\n]+)+")


def _log_line_abbreviations(text: str) -> str:
    """In a log line, a short word with a period before a lower-case word abbreviates a label ("Day 3 — 46
    percent rel. humidity, 20.9 °C room temperature"): the period (as a one-dot leader, same length) does
    not end a sentence there. Other lines are left as they are."""
    out = []
    for line in text.split("\n"):
        cand = re.sub(r"\b([A-Za-z]{2,4})\.(?=[ \t]+[a-z])", "\\1\u2024", line)
        out.append(cand if cand != line and _DASH_ENTRY.fullmatch(cand.strip()) else line)
    return "\n".join(out)


def _list_texts(text: str, found: list[Found]) -> list[Found]:
    """Short text items of a record list, without a colon: "Week 3 — sicilian, 38 moves, 25 min clock",
    "Club night: BOARD Table A, 38 moves and colour white". A list is a sentence or line with two or more
    measured values; an item is 1-4 words with no digit, verb, pronoun or determiner. Its label comes from
    case (`_split_item`); an item without one is the `item` the entry is about (the whole item is the value)
    when it opens the list or closes it after "and"."""
    lex = active_lexicon()
    out: list[Found] = []
    spans = [(f.start, f.end) for f in found]
    numeric = [f for f in found if f.kind == "number"]
    # a list is a sentence (items between commas, semicolons and "and") or a message of lines
    # (" / " separates items too: "Irrigation: 735 ml / pot Monstera"; "km/h" is one word)
    segments = [(m.start(), m.end(), r"(?:[^,;:/]|/(?!\s)|(?<!\s)/)+") for m in re.finditer(r"[^\n.!?]+(?:[.!?](?=\S)[^\n.!?]*)*", text)]
    if len({text.count("\n", 0, f.start) for f in numeric}) >= 2:
        segments.append((0, len(text), r"(?:[^,;:\n/]|/(?!\s)|(?<!\s)/)+"))
    for ss, se, item_re in segments:
        inside = [f.start for f in numeric if ss <= f.start < se]
        # one value is enough where items are set apart by " / " or ";" or it has a label and a colon
        # ("Irrigation: 735 ml / pot Monstera", "Irrigation: 242 ml, pot Calathea")
        # ... or it is a log line: a heading before a dash and two or more items set apart by commas ("Day 7 —
        # Keiko, draw, 47 length", "Day 4 — 11.9 grams flakes, brine shrimp": the entry's texts beside its one
        # labelled value)
        listed = bool(inside) and (re.search(r"\s/\s|;\s", text[ss:se]) is not None
                                   or any(re.search(r"[A-Za-z]:\s*$", text[ss:p]) for p in inside)
                                   or _DASH_ENTRY.match(text[ss:se]) is not None)
        if (len(inside) < 2 and not listed) or _in_question(text, ss) or _irrealis(text, ss):
            continue
        body_start = ss
        # a heading colon ("Club night: ...") is not followed by a value; a label colon is ("Rating: 1542")
        heading = next((c for c in re.finditer(r":\s", text[ss:min(inside)])
                        if not re.match(r"\s*[-+$€£¥₹]?\d", text[ss + c.end():])), None)
        if heading is not None:
            body_start = ss + heading.end()  # the heading before the colon is not an item
        items: list[tuple[str, int, bool]] = []  # (text, start, after "and")
        headed = False  # the list follows a heading before a dash ("Day 3 — ...")
        for it in re.finditer(item_re, text[body_start:se]):
            pos = body_start + it.start()
            after_and = False
            for k, part in enumerate(re.split(r"\s+(and|[—–-])\s+", it.group(0))):
                p0 = text.index(part, pos) if part else pos
                pos = p0 + len(part)
                if k % 2:
                    after_and = part == "and"
                    if part != "and" and len(items) <= 1:
                        items.clear()  # "Day 3 — ...": a heading before a dash
                        headed = True
                    continue
                items.append((part, p0, after_and))
        bare: list[tuple[Found, bool]] = []  # unlabelled text items, and whether one stands at the list's edge
        for n, (part, p0, after_and) in enumerate(items):
            item = part.strip().rstrip(".")
            if not item:
                continue
            i0 = p0 + part.index(item)
            i1 = i0 + len(item)
            words = item.split()
            if not 1 <= len(words) <= 4 or not re.fullmatch(r"[A-Za-z][A-Za-z' -]*(?:\s&\s[A-Za-z][A-Za-z' -]*)?", item):
                continue
            # ("Mast A", "Nordlys AS": a capital letter or an acronym after a name is part of it, no grammar word)
            lw = [_low(w) for k, w in enumerate(words) if not (k and (re.fullmatch(r"[A-Z]", w) or (
                len(w) >= 2 and w.isupper())))]
            if any(w in lex.pronouns or w in lex.auxiliaries or w in lex.determiners or w in lex.time_words
                   or w in lex.boundary_words or w in lex.number_words or w in lex.record_words
                   or _is_verb(w, lex) for w in lw) or (len(lw) == 1 and parse_unit(lw[0]) is not None):
                continue
            if any(s0 < i1 and i0 < s1 for s0, s1 in spans):
                continue  # already a value or a label
            if any(f.label and f.start >= i1 and text[i1:f.start].strip(" :") == "" for f in found):
                continue  # the label of the value after it
            if any(f.label and f.end <= i0 and text[f.end:i0].strip() == "" and "\n" not in text[f.end:i0]
                   for f in found):
                continue  # "38 moves", "25 min clock": words right after a value name it (on its line)
            if any(f.label and f.end <= i0 and "\n" not in text[f.end:i0] and
                   re.sub(r"\s+", " ", text[f.end:i1]).strip().lower().endswith(f.label.lower())
                   and len(text[f.end:i1].strip()) <= len(f.label) for f in found):
                continue  # the end of the label written after a value ("71pct rel. humidity")
            k = _split_item(words)
            if k:
                label = " ".join(words[:k])
                v0 = i0 + item.index(words[k], len(label))
                name = normalize_attribute(label, value_kind="text")
                if name:
                    out.append(Found(name, text[v0:i1], v0, i1, "text", None, None, label))
                    continue
            if len(words) > 3:
                continue
            # the thing an entry is about opens the list, closes it after "and", or closes a list of three
            # or more items as a name ("Day 4 — 54.7 cm height, 37 new leaves, Fiddle leaf fig")
            closing_name = n == len(items) - 1 and len(items) >= 3 and words[0][:1].isupper()
            bare.append((Found("item", item, i0, i1, "text", None, None, ""),
                         n == 0 or (n == len(items) - 1 and after_and) or closing_name))
        placed = [f for f, at_edge in bare if at_edge]
        # ... or is the one text among three or more items of values ("Day 3 — 1358 gr fill, peanuts, 5 d gap"),
        # or beside one value in an entry under a heading ("Day 4 — 11.9 grams flakes, brine shrimp")
        if not placed and len(bare) == 1 and (len(items) >= 3 or (headed and len(items) == 2)):
            placed = [bare[0][0]]
        if len(placed) == 1 and len(items) >= 3:
            # further unlabelled texts of a list of three or more items are further fields of the entry, in
            # order ("Day 7 — Aurelie, draw, 27 length": the second text is another field, not noise); field
            # alignment joins them with the fields that hold the same values elsewhere
            rest = [f for f, _ in bare if f is not placed[0] and len(f.raw.split()) <= 2]
            placed += [replace(f, attribute=f"item_{k}") for k, f in enumerate(rest[:2], start=2)]
        out.extend(placed)
    return out


def _activity(text: str, dim_founds: list[Found]) -> Found | None:
    """What was done, for values named by their dimension: a bare list item ("Quick log: run, 6.4 km"), the
    noun after a value ("a 6.8 km hike"), the clause's verb ("Paddled 46.2 km") or the heading ("Canoe trip:")."""
    lex = active_lexicon()
    first = min(f.start for f in dim_founds)
    ss = _sentence_start(text, first)
    se = _sentence_end(text, max(f.end for f in dim_founds))
    seg = text[ss:se]

    def ok(w: str) -> bool:
        lw = _low(w)
        return (len(lw) > 2 and lw not in lex.boundary_words and lw not in lex.stop_words and lw not in lex.pronouns
                and lw not in lex.time_words and lw not in lex.record_words and lw not in lex.modifiers
                and lw not in lex.light_verbs and parse_unit(lw) is None and lw not in lex.determiners)

    # 1. a bare one-word item of a list after a colon
    if ":" in seg:
        for m in re.finditer(r"(?:(?<=:)|(?<=,))\s*([A-Za-z]+)\s*(?=,)", seg):
            if ok(m.group(1)):
                return Found("activity", m.group(1), ss + m.start(1), ss + m.end(1), "text", None, None, "activity")
    # 2. the noun right after a value: "a 6.8 km run", "a 10.5 kilometre run along the river"
    for f in dim_founds:
        m = re.match(r"\s+([a-z]+)\b(?=\s*(?:[.,;!)]|$|\s(?:along|in|on|at|with|through|around|to|from|today)\b))",
                     text[f.end:])
        if m and ok(m.group(1)) and not _is_verb(m.group(1), lex) and not _plural(m.group(1)):
            s = f.end + m.start(1)
            return Found("activity", m.group(1), s, s + len(m.group(1)), "text", None, None, "activity")
    # 3. the clause's own verb ("Hiked", "Paddled", "I swam")
    for m in re.finditer(r"[A-Za-z']+", text[ss:first]):
        w = m.group(0)
        if _is_verb(w, lex) and _low(w) not in lex.light_verbs:
            return Found("activity", w, ss + m.start(), ss + m.end(), "text", None, None, "activity")
    # 4. the heading's last content word ("Morning run:", "Bike ride today:", "Ride log:")
    colon = seg.find(":")
    if 0 <= colon < first - ss:
        for m in reversed(list(re.finditer(r"[A-Za-z']+", seg[:colon]))):
            if ok(m.group(0)) and "'" not in m.group(0):
                return Found("activity", m.group(0), ss + m.start(), ss + m.end(), "text", None, None, "activity")
    return None


_LOWER_AFTER_PERIOD = re.compile(r"\.[ \t]+([a-z])")


def _sentence_case(text: str) -> str:
    """'Fed the fish. feed amount 7.5 g': a period after a clause of three or more words that starts with
    a capital (its last word of three or more letters; "Game report: The opp. was" is two) ends it, whatever the case of the next word, which is
    capitalised here (a period before a lower-case word otherwise abbreviates: "My vol. was 55 L"; so does
    one right after a value's label: "71pct rel. humidity"). Same length: every span still indexes the
    original text."""
    out = None
    for m in _LOWER_AFTER_PERIOD.finditer(text):
        before = re.split(r"[.!?\n]\s|[,;:]", text[:m.start()])[-1].split()
        # (not a label's abbreviation right after a value: "Day 4 — 71pct rel. humidity")
        after_value = re.search(r"\d", before[-2]) is not None and parse_unit(before[-1]) is None \
            if len(before) >= 2 else False
        # (nor a label abbreviated before the word that links it to its value: "Measured the vol. at 29.89 ltr")
        linked = re.match(r"(?:at|was|were|is|of|came in at|came to)\s+[-+$€£¥₹]?\d", text[m.start(1):]) is not None
        if len(before) >= 3 and before[0][:1].isupper() and before[-1].isalpha() and len(before[-1]) >= 3 \
                and not after_value and not linked:
            out = out or list(text)
            out[m.start(1)] = m[1].upper()
    return "".join(out) if out is not None else text


def extract_text(text: str, *, structured: bool, speaker: str | None = None,
                 assistant: bool = False, descriptive: bool = False) -> list[Found]:
    """All attribute-value pairs in one text.

    `structured` for OCR (layout pairing, unitless values). `descriptive` for
    captions (they describe what an image shows: no tense needed).
    `assistant` for the assistant's turns: they restate, convert and advise
    ("350°F is about 175°C"), so only values tied to a label by structure count
    there. Values inside questions ("Is 145 bpm too high?") are never records.
    """
    original = text
    if structured:
        # "TEMP. 22.5", "Moist. 38 %": in OCR a period after a word and before a number abbreviates the
        # label, it does not end a sentence (same length, so every span still indexes `original`)
        text = re.sub(r"(?<=[A-Za-z])\.(?=[ \t]+[-+$€£¥₹]?\d)", "\u2024", text)
        # OCR reads the litre sign "l" as "I" or "1": "12.2I", "13.3 1" after a decimal number is "12.2l", "13.3 l"
        text = re.sub(r"(?<=\d\.\d)I(?![\w.])|(?<=\d\.\d\d)I(?![\w.])", "l", text)
        text = re.sub(r"(?<=\d\.\d )1(?![\w.,/:])|(?<=\d\.\d\d )1(?![\w.,/:])", "l", text)
        # ("3.9 I" alone in its box, the capital after a space: not the pronoun of a sentence)
        text = re.sub(r"(?<=\d\.\d )I(?=[ \t]*(?:\||$))|(?<=\d\.\d\d )I(?=[ \t]*(?:\||$))", "l", text, flags=re.M)
        # ("232 1": a box of a whole number of three digits or more and a lone "1", a tile's "232 l")
        text = re.sub(r"(?:(?<=^)|(?<=\|)|(?<=\| ))(\d{3,}) 1(?=[ \t]*(?:\||$))", r"\1 l", text, flags=re.M)
        text = text.replace("(I)", "(l)")  # ... and a label's unit "(l)" as "(I)": "Watered (I) | 0.73"
    else:
        text = _sentence_case(_log_line_abbreviations(text))
        # "Bottling: btl. 38; Priming: 99 g": a short word with a period that opens a list item and is
        # followed by a number abbreviates the item's label (not a unit: "5 km. 3 days later" ends a sentence);
        # a number word too, when it ends the item ("eps. two")
        words_alt = "|".join(sorted(active_lexicon().number_words, key=len, reverse=True))
        text = re.sub(r"(?:(?<=^)|(?<=[;,:]\s)|(?<=\s/\s))([A-Za-z]{2,4})\.(?=[ \t]+(?:[-+]?\d|(?i:"
                      + words_alt + r")(?:[,;]|\s*$)))",
                      lambda m: m.group(1) + ("." if parse_unit(m.group(1)) is not None else "\u2024"), text)
    values = [v for v in scan_values(text) if structured or not _in_question(text, v.start)]
    found: list[Found] = []
    used: set[int] = set()  # value starts already turned into observations
    if structured:
        found.extend(_layout_pairs(text, values, used))
    found.extend(_identifiers(text, values, used))
    if not assistant:
        found.extend(_owned_values(text, values, used))
        found.extend(_counts(text, values, used, structured, descriptive))
    for v in values:
        if v.start in used:
            continue
        got = _from_value(text, v, values, structured, descriptive)
        if assistant and got and not left_label(text, v, values, structured=False, lists=False).strong:
            continue
        found.extend(got)
    found = _name_by_shape(text, found)
    # (a "label: value" reading whose value is the caption of a number the layout paired is no text field:
    # "recipe: o.g." over "lager 1.056" holds the recipe "lager" and the o.g. 1.056, not the recipe "o.g.")
    captions = {f.label.lower().strip(" .:") for f in found if f.kind == "number" and f.label} if structured else set()
    found.extend(f for f in _text_fields(text, structured) if f.raw.lower().strip(" .:") not in captions)
    if not structured and not assistant and not descriptive:
        taken = {(f.start, f.end) for f in found}
        found.extend(f for f in _copula_texts(text, values, found) if (f.start, f.end) not in taken)
        found.extend(_list_texts(text, found))
    # one observation per span and attribute
    seen: set[tuple[str, int]] = set()
    out = []
    for f in sorted(found, key=lambda f: f.start):
        if (f.attribute, f.start) in seen:
            continue
        seen.add((f.attribute, f.start))
        if text is not original:
            f = replace(f, raw=original[f.start:f.end], label=f.label.replace("\u2024", "."))
        out.append(f)
    return out


def _name_by_shape(text: str, found: list[Found]) -> list[Found]:
    """Values named only by their unit: when one text holds several of different dimensions ("8.2 km in 45
    minutes") each is named by its dimension and what was done is a text field `activity`; a single one
    keeps its verb ("studied 2h" -> study_duration)."""
    groups: dict[str | None, list[Found]] = {}
    for f in found:
        if f.dim is not None:
            groups.setdefault(f.verb, []).append(f)
    multi = {verb for verb, fs in groups.items() if len({f.dim for f in fs}) >= 2}
    # (in a log line the value is an item of the entry, not a passing mention: "Day 6 — Keiko, win, 55 mv")
    entry = _DASH_ENTRY.fullmatch(text.strip()) is not None
    out = []
    for f in found:
        if f.dim is not None:
            if f.verb not in multi:
                if f.tentative and not entry:
                    continue
            else:
                f = replace(f, attribute=normalize_attribute(_dim_name(f.dim, f.unit), dimension=f.dim) or f.attribute)
        out.append(f)
    for verb in multi:
        act = _activity(text, groups[verb])
        if act is not None:
            out.append(act)
    return out


# --------------------------------------------------------------------------- OCR layout

@dataclass(frozen=True)
class _Cell:
    text: str
    start: int
    values: tuple[Value, ...]
    is_label: bool  # letters only, no value
    is_value: bool  # one value and (almost) nothing else
    absorbs: tuple[int, ...] = ()  # starts of the scanned values this cell's value stands for


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
            if seg.count(")") > seg.count("("):  # ") Rain (mm)": a bracket of the box before, read into this one
                seg = re.sub(r"^\s*\)", " ", seg)
            lead = len(seg) - len(seg.lstrip())
            seg = seg.strip()
            if not seg or re.fullmatch(r"[()\[\]{}|]+", seg):  # empty, or a bracket OCR read as a box
                continue
            if re.fullmatch(r"[.,:;'`\u00b7_]+", seg):  # the period of "puzzles." read as a box of its own
                continue
            s = offset + a + lead
            vs = tuple(v for v in values if v.start >= s and v.end <= s + len(seg))
            rest = seg
            for v in sorted(vs, key=lambda v: -v.start):
                rest = rest[: v.start - s] + rest[v.end - s:]
            rest_words = re.findall(r"[A-Za-z]{2,}", rest)
            is_value = len(vs) == 1 and not rest_words and not vs[0].ordinal and not re.search(r"\w[:=]\s*$", rest)
            # a number and the noun it counts ("18 days", "4 eps" under "Streak | Episodes"): a value box too
            counted = len(vs) == 1 and vs[0].kind == "number" and vs[0].unit is None and not vs[0].ordinal \
                and len(rest_words) == 1 and re.fullmatch(r"[A-Za-z]+\.?", seg[vs[0].end - s:].strip()) is not None
            is_value = is_value or counted
            # a label cell: words and no value, or values only inside parentheses ("Tax (21%)", "Items (3)")
            # or between words ("Zone 2 temp"); digits inside words are fine ("CO2", "PM2.5")
            inner = all(re.search(r"\([^()]*$", line[:v.start - offset]) or (
                v.bare_int and re.search(r"[A-Za-z]\s+$", line[:v.start - offset])
                and re.match(r"\s+[A-Za-z]", line[v.end - offset:])) for v in vs)
            # a word of two letters or more, digits inside allowed ("h2o %", "CO2", "PM2.5")
            # (or a letter and digits, a name's: "H20 %:" as OCR reads "H2O %:", "B12")
            # (or letters with periods: "O.G.", "A.B.V.")
            # (or a capital letter with a period or colon alone on its line, as a screen prints a short caption
            # over its value: "W.\n2")
            is_label = (not vs or inner) and bool(re.search(r"[A-Za-z]{2,}|[A-Za-z]\d+[A-Za-z]|\b[A-Za-z]\d+\b|(?:[A-Za-z]\.){2,}", seg)
                                                  or (re.fullmatch(r"[A-Z][.:]", seg.strip()) is not None
                                                      and seg.strip() == line.strip())) \
                and len(re.sub(r"\([^()]*\)", " ", seg).split()) <= 6 \
                and not re.search(r"\w[:=]\s*\S", seg)
            row.append(_Cell(seg, s, vs, is_label, is_value))
        rows.append(_unit_led_texts(text, _currency_boxes(text, row)))
        offset += len(line) + 1
    return rows


def _unit_led_texts(text: str, row: list[_Cell]) -> list[_Cell]:
    """A unit OCR read into the next box ("22.37 | USD Joao" under "Price: | With:"): the unit goes back to
    the bare number before it and the box keeps its text, when the number has no unit and the unit is
    followed by words (a box that is only a unit is the number's unit box, `_unit_cells`)."""
    out: list[_Cell] = []
    for c in row:
        prev = out[-1] if out else None
        m = re.match(r"(\S+)\s+(?=[A-Za-z])", c.text) if not c.values else None
        unit = parse_unit(m.group(1)) if m else None
        if prev is not None and unit is not None and prev.is_value and prev.values[0].kind == "number" \
                and prev.values[0].unit is None and not prev.values[0].ident:
            v = prev.values[0]
            end = c.start + m.end(1)
            out[-1] = _Cell(text[prev.start:end], prev.start, (replace(v, end=end, raw=text[v.start:end], unit=unit),),
                            False, True, prev.absorbs)
            rest = c.text[m.end():]
            out.append(_Cell(rest, c.start + m.end(), (), c.is_label, False))
            continue
        out.append(c)
    return out


def _currency_boxes(text: str, row: list[_Cell]) -> list[_Cell]:
    """A currency sign OCR read as a box of its own before its number ("TOTAL: | $ | 319.04") joins the
    number's box: one value in that currency, spanning both."""
    out: list[_Cell] = []
    signs = lex_currency(active_lexicon())
    for c in row:
        prev = out[-1] if out else None
        if prev is not None and not prev.values and len(prev.text) == 1 and prev.text in signs \
                and c.is_value and c.values[0].kind == "number" and c.values[0].unit is None:
            v = c.values[0]
            raw = text[prev.start:v.end]
            merged = Value(prev.start, v.end, raw, "number", v.number, parse_unit(prev.text))
            out[-1] = _Cell(raw, prev.start, (merged,), False, True, (v.start,))
            continue
        out.append(c)
    return out


def _unit_cells(rows: list[list[_Cell]]) -> dict[int, tuple[int, str]]:
    """Number boxes followed in their row by a box that is only a unit ("410 | g", "12.5 | min"): the
    number box's start -> (the unit box's start, the unit as written)."""
    out = {}
    for row in rows:
        for c, d in zip(row, row[1:]):
            if not (c.is_value and c.values[0].kind == "number" and c.values[0].unit is None) or d.values:
                continue
            word = d.text.strip(" .:")
            if word and len(word.split()) == 1 and parse_unit(word) is not None:
                out[c.start] = (d.start, word)
    return out


def _layout_pairs(text: str, values: list[Value], used: set[int]) -> list[Found]:
    """Label/value pairs from the visual layout (label left of value, above it, or below it)."""
    rows = [r for r in _cells(text, values) if r]
    out: list[Found] = []

    texts_used: set[int] = set()
    labels_used: set[int] = set()  # label cells that named a value: a label names one value
    units_after = _unit_cells(rows)  # "weight. | 410 | g": the unit in a box of its own after the number
    labels_used.update(c for c, _ in units_after.values())

    def pair_text(label_cell: _Cell, text_cell: _Cell) -> None:
        """ "Customer. | Quill Books", "OPP.\nAurelie": a text value in a cell next to / under its label."""
        if text_cell.start in texts_used or label_cell.start in labels_used:
            return
        name = normalize_attribute(label_cell.text.strip(" :."), value_kind="text")
        label = label_cell.text.strip(" :")
        if name is None:
            # a caption of grammar words only ("With: | Joao"): no name, the record's unlabelled text as a log
            # line leaves it ("... with Joao"), named as the text extractor names one
            if any(f.attribute == "item" for f in out):
                return
            name, label = "item", ""
        texts_used.add(text_cell.start)
        labels_used.add(label_cell.start)
        out.append(Found(name, text_cell.text, text_cell.start, text_cell.start + len(text_cell.text), "text", None,
                         None, label))

    def pair(label_cell: _Cell, value_cell: _Cell) -> None:
        if not value_cell.values:
            pair_text(label_cell, value_cell)
            return
        v = value_cell.values[0]
        if v.start in used or v.ordinal or label_cell.start in labels_used:
            return
        lab = label_cell.text.strip(" :")
        if not _label_ok(lab, v):
            return
        unit_box = units_after.get(value_cell.start)
        if (v.ident or _identifier_label(lab)) and not v.parts and v.unit is None and unit_box is None:
            fs = _as_identifier(lab, v)
        elif v.parts:
            fs = _fraction(v, Label(lab, True), True)
        else:
            # the unit's own box reads as the label's unit ("weight (g)"), so the number is converted alike
            f = _value_found(f"{lab} ({unit_box[1]})" if unit_box else lab, v, label_raw=lab)
            fs = [f] if f else []
        if fs:
            used.add(v.start)
            used.update(value_cell.absorbs)
            labels_used.add(label_cell.start)
            used.update(x.start for x in label_cell.values)  # "Zone 2 temp": the 2 belongs to the label
            out.extend(fs)

    def text_cell(c: _Cell) -> bool:
        return (not c.values and bool(re.search(r"[A-Za-z]", c.text)) and len(c.text.split()) <= 4
                and not c.text.rstrip().endswith((":", ".")))

    def labelish(c: _Cell) -> bool:
        return c.is_label and (c.text.rstrip().endswith((":", ".")) or (c.text.isupper() and len(c.text) > 1))

    # label left / value right within a row (not in a row of values under a row of as many labels)
    def grid_row(k: int) -> bool:
        """Row k holds the values of a grid: a row of as many labels lies above or below it and row k is only
        values and short texts ("north | 12.4 mm" over "Wind dir | Rainfall")."""
        row = rows[k]
        if not any(c.is_value for c in row) or not all(c.is_value or text_cell(c) for c in row):
            return False
        # the label row is a row of captions ("GENRE: | BOOKS:"), or the image has a row of values only under or
        # over a row of labels (a grid, not "Author | Ann Lee" in a key/value table)
        return any(0 <= j < len(rows) and len(rows[j]) == len(row) and all(c.is_label for c in rows[j])
                   and (all(labelish(c) for c in rows[j]) or values_grid) for j in (k - 1, k + 1)) or captions_below(k)

    def captions_row(k: int) -> bool:
        """Row k+1 is as many captions as row k has boxes, and is no header of a row of values after it."""
        j = k + 1
        if not 0 <= k < j < len(rows) or len(rows[j]) != len(rows[k]) \
                or not all(c.is_label and not c.values for c in rows[j]):
            return False
        after = rows[j + 1] if j + 1 < len(rows) else []
        # (a date alone after them is the screen's footer as often as a caption's value)
        return not (len(after) == len(rows[j]) and any(c.is_value and c.values[0].kind != "date" for c in after))

    # tiles: a row of values only over a row of as many captions ("30min" over "Time") ...
    tiles = {k for k, r in enumerate(rows) if all(c.is_value for c in r) and captions_row(k)}

    def captions_below(k: int) -> bool:
        """... make another row of values and short names over captions one too ("London System | 22" over
        "Variation | Lines reviewed"): each box is the value of the caption under it, not a key and its value
        (a key/value table has no row of values alone over captions)."""
        row = rows[k]
        return len(row) >= 2 and any(c.is_value for c in row) and all(c.is_value or text_cell(c) for c in row) \
            and captions_row(k) and bool(tiles - {k})

    values_grid = any(len(r) >= 2 and all(c.is_value for c in r) and any(
        0 <= j < len(rows) and len(rows[j]) == len(r) and all(c.is_label for c in rows[j]) for j in (k - 1, k + 1))
        for k, r in enumerate(rows))

    def counted_split(c: _Cell, vs: list[Value]) -> list[_Cell] | None:
        """A box of values whose only words are calendar nouns right after a bare number ("6 days 5.6"):
        one cell per value, each with the noun that counts it; None otherwise."""
        cells, pos, end = [], c.start, c.start + len(c.text)
        for k, v in enumerate(vs):
            if text[pos:v.start].strip():
                return None
            stop = vs[k + 1].start if k + 1 < len(vs) else end
            noun = text[v.end:stop].strip()
            if noun and not (v.unit is None and not v.parts and noun.lower() in active_lexicon().calendar_nouns):
                return None
            cells.append(_Cell(text[v.start:v.end + (text[v.end:stop].index(noun) + len(noun) if noun else 0)],
                               v.start, (v,), False, True))
            pos = stop
        return cells if any(len(x.text) > len(x.values[0].raw) for x in cells) else None

    def split_values(row: list[_Cell], trailing_text: bool = False) -> list[_Cell]:
        """Cells OCR merged ("16 11", "0.09 mg/L 6 mg/L") split into one cell per value; with `trailing_text`
        also a word after the last value ("320 12.5 EUR mystery" -> 320, 12.5 EUR, mystery)."""
        out_row = []
        for c in row:
            vs = sorted(c.values, key=lambda v: v.start)
            tail = ""
            if trailing_text and vs and not c.is_value:
                m = re.fullmatch(r"\s+([A-Za-z][A-Za-z-]*)", text[vs[-1].end:c.start + len(c.text)])
                tail = m.group(1) if m else ""
            rest = re.sub("|".join(re.escape(v.raw) for v in vs), " ", c.text) if vs else c.text
            if tail:
                rest = rest[:rest.rindex(tail)]
            counted = counted_split(c, vs) if not tail and len(vs) >= 2 and not c.is_value else None
            if counted is not None:
                out_row.extend(counted)  # "6 days 5.6" under "period. | daily drop.": "6 days", "5.6"
            elif c.is_value or len(vs) < (1 if tail else 2) or re.search(r"[A-Za-z]{2,}", rest):
                out_row.append(c)
            else:
                out_row.extend(_Cell(v.raw, v.start, (v,), False, True) for v in vs)
                if tail:
                    t0 = c.start + len(c.text) - len(tail)
                    out_row.append(_Cell(tail, t0, (), True, False))
        return out_row

    leading_split: set[int] = set()  # ids of the cells split_leading made (a reading that needs them is weaker)

    def split_leading(row: list[_Cell], n: int) -> list[_Cell]:
        """A text and a value OCR merged into one box ("Tank B 12" under "Tank | Depth") split into a text
        cell and a value cell, from the left, until the row has `n` cells."""
        out_row: list[_Cell] = []
        extra = n - len(row)
        for c in row:
            vs = c.values
            # (never a code after the word that announces it: "Order #31067346" is one cell)
            if extra > 0 and len(vs) == 1 and not c.is_value and not vs[0].parts and not vs[0].ident \
                    and not _identifier_label(text[c.start:vs[0].start]):
                head = text[c.start:vs[0].start]
                tail = text[vs[0].end:c.start + len(c.text)]
                # (the value may keep a letter or two of a unit the lexicon lacks: "fat balls 5 d")
                short = re.fullmatch(r"\s+[a-z]{1,2}\.?\s*", tail) is not None and vs[0].unit is None
                if re.fullmatch(r"[A-Za-z][A-Za-z .'&-]*\s+", head) and (not tail.strip() or short) \
                        and len(head.split()) <= 4:
                    kept = text[vs[0].start:c.start + len(c.text)].rstrip() if short else vs[0].raw
                    pieces = (_Cell(head.strip(), c.start, (), False, False), _Cell(kept, vs[0].start, (vs[0],), False, True))
                    leading_split.update(id(x) for x in pieces)
                    out_row.extend(pieces)
                    extra -= 1
                    continue
            out_row.append(c)
        return out_row

    def split_mixed(row: list[_Cell], n: int) -> list[_Cell]:
        """Boxes OCR merged across values and texts ("1313.93 USD Pine & Co 39.7 hrs" under "AMOUNT: |
        BILL TO: | HRS:") cut at every value's ends, when that gives exactly `n` cells and each text
        between values is a short name; else `row` unchanged."""
        out_row: list[_Cell] = []
        for c in row:
            vs = sorted(c.values, key=lambda v: v.start)
            if c.is_value or not vs:
                out_row.append(c)
                continue
            pos, end = c.start, c.start + len(c.text)
            for v in vs + [None]:
                stop = v.start if v is not None else end
                gap = text[pos:stop]
                if gap.strip():
                    g0 = pos + len(gap) - len(gap.lstrip())
                    out_row.append(_Cell(gap.strip(), g0, (), False, False))
                if v is not None:
                    out_row.append(_Cell(v.raw, v.start, (v,), False, True))
                    pos = v.end
        pieces = [c for c in out_row if c not in row]
        if len(out_row) != n or not all(c.is_value or (text_cell(c) and re.fullmatch(r"[A-Za-z][A-Za-z .'&-]*", c.text))
                                       for c in pieces):
            return row
        leading_split.update(id(c) for c in pieces)
        return out_row

    def split_words(row: list[_Cell], n: int, mark: bool = True) -> list[_Cell]:
        """Two text values OCR merged into one box ("Keiko win | 56 | 1564" under "opp. | outcome: | length: |
        rating:") split at the spaces, when it is the row's one box of several words and that gives exactly
        `n` cells; else `row` unchanged."""
        multi = [c for c in row if text_cell(c) and len(c.text.split()) >= 2]
        if len(multi) != 1 or len(row) - 1 + len(multi[0].text.split()) != n:
            return row
        c = multi[0]
        pieces = [_Cell(m.group(0), c.start + m.start(), (), False, False) for m in re.finditer(r"\S+", c.text)]
        if any(len(x.text) < 2 for x in pieces):
            return row  # "Hive A", "Tank B": a name with its letter, not two values
        if mark:
            leading_split.update(id(x) for x in pieces)
        k = row.index(c)
        return row[:k] + pieces + row[k + 1:]

    def split_labels(labels: list[_Cell], n: int, words: bool = False) -> list[_Cell]:
        """Label cells OCR merged into one box, split into `n` labels at the ends of their units in
        parentheses ("Chlorine (ppm) Acid (pH)"), or of those and abbreviations ("Net (KG) Fr."), else, with `words` (OCR merged the values below as well:
        "GP Won" over "23 6"), at the spaces between words when there are exactly as many; unchanged when
        neither gives `n` labels ("Wind Gust" over "14 | 22" may be one label), or in the first row (a
        title: "Station Two" over "14 | 22")."""
        need = n - len(labels)
        if labels and rows and labels[0].start < (rows[1][0].start if len(rows) > 1 else len(text)):
            return labels
        # (then also after an abbreviation's period, or before letters with periods: "Net (KG) Fr. Moisture
        # (pct)" over three values, "STYLE O.G. | VOL." over three)
        for pattern in (r"(?<=\))\s+(?=\S)", r"(?:(?<=\))|(?<=[A-Za-z]\.))\s+(?=\S)|\s+(?=(?:[A-Za-z]\.){2,})") + (
                (r"(?<![(\[])\s+(?![^(]*\))(?=\S)",) if words else ()):
            cuts = [(c, m) for c in labels for m in re.finditer(pattern, c.text)]
            if len(cuts) == need:
                out_row = []
                for c in labels:
                    pos = 0
                    for m in [m for cc, m in cuts if cc is c] + [None]:
                        end = m.start() if m else len(c.text)
                        piece = c.text[pos:end]
                        out_row.append(_Cell(piece, c.start + pos, (), True, False))
                        pos = m.end() if m else pos
                return out_row
        return labels

    def split_colon(row: list[_Cell]) -> list[_Cell]:
        """Two captions OCR read as one box, the first closed by its colon ("recipe: o.g." beside "volume (mL)",
        "mash (deg C)"), split in two label cells, in a row whose other boxes are all captions; else `row`."""
        odd = [c for c in row if not c.is_label]
        if len(row) < 2 or len(odd) != 1 or odd[0].values:
            return row
        c = odd[0]
        m = re.fullmatch(r"([A-Za-z][A-Za-z .'/-]*?:)\s+([A-Za-z][A-Za-z .'()/-]*)", c.text)
        if m is None or len(m[1].split()) > 3 or len(m[2].split()) > 3:
            return row
        k = row.index(c)
        return row[:k] + [_Cell(m[1], c.start, (), True, False),
                          _Cell(m[2], c.start + m.start(2), (), True, False)] + row[k + 1:]

    captioned = [split_colon(r) for r in rows]

    def unit_caption(c: _Cell) -> bool:
        """A caption that names a unit in brackets ("Interval (d)", "Seed (kg)"): its box holds a number."""
        return re.search(r"\([^()]+\)$", c.text.strip(" :.")) is not None

    def short_row_fits(labels: list[_Cell], vrow: list[_Cell]) -> bool:
        """Each box of a row shorter than its captions fits the caption over it, read from the left: a
        word never under a caption with a unit, a number one its label takes."""
        return all((not text_cell(vc) or not unit_caption(lc)) and
                   (not vc.is_value or _label_ok(lc.text.strip(" :"), vc.values[0]))
                   for lc, vc in zip(labels, vrow))

    def vertical(label_first: bool) -> list[tuple[_Cell, _Cell]]:
        pairs: list[tuple[_Cell, _Cell]] = []
        taken: set[int] = set()
        text_rows: list[list[tuple[_Cell, _Cell]]] = []
        for k, (top, bottom) in enumerate(zip(captioned, captioned[1:])):
            lrow, vrow = (top, bottom) if label_first else (bottom, top)
            # (a capital letter beside other captions is a caption too: "Games | W" under "8 | 10")
            labels = [c for c in lrow if (c.is_label or (re.fullmatch(r"[A-Z]\.?:?", c.text) is not None and any(
                d.is_label for d in lrow))) and c.start not in taken]
            merged = any(len(c.values) >= 2 and not c.is_value for c in vrow)  # "14 16.7" under "Fr. | Moisture"
            if labels and len(labels) == len(lrow) and (len(vrow) < len(labels) or merged):
                vrow = split_values(vrow)
                if len(vrow) < len(labels):
                    vrow = split_values(vrow, trailing_text=True)  # "320 12.5 EUR mystery"
                if len(vrow) < len(labels):
                    vrow = split_leading(vrow, len(labels))  # "Tank B 12" under "Tank | Depth"
                if len(vrow) < len(labels):
                    vrow = split_mixed(vrow, len(labels))  # "1313.93 USD Pine & Co 39.7 hrs" under three labels
                if len(vrow) < len(labels):
                    words = split_words(vrow, len(labels))  # "Keiko win | 56 | 1564" under four labels
                    # (never a word under a caption with a unit: "fat balls" over "Mix type | Interval (d)" is one
                    # name, and the interval's box is empty)
                    if not any(text_cell(vc) and unit_caption(lc) for lc, vc in zip(labels, words)):
                        vrow = words
            if labels and len(labels) == len(lrow) and all(c.is_value or text_cell(c) for c in vrow) \
                    and len(vrow) > len(labels):
                labels = split_labels(labels, len(vrow), merged)  # "Chlorine (ppm) Acid (pH) Water (°C)" over 3 values
                lrow = labels
            vals = [c for c in vrow if c.is_value and c.values[0].start not in used and c.start not in taken]
            # a text value shares a row with a number ("north | 12.4 mm" over "Wind dir | Rainfall")
            # (in a grid: a key/value row "Loan time | 14 days" over "Branch | North" is no row of values)
            # (a row that starts with a value is no key/value row either: "1418.45 USD | Ann Lee" over two labels)
            texts = [c for c in vrow if (label_first or vals and (values_grid or all(labelish(c) for c in labels)
                                                                  or vrow[0].is_value or captions_below(k)))
                     and text_cell(c) and c.start not in taken]
            if labels and len(labels) == len(lrow) and vals and len(vals) + len(texts) == len(vrow) == len(labels):
                for lc, vc in zip(labels, vrow):
                    pairs.append((lc, vc))
                    taken.update((lc.start, vc.start))
            elif label_first and labels and len(labels) == len(lrow) and vals and \
                    2 <= len(vrow) == len(vals) + len(texts) < len(labels) and short_row_fits(labels, vrow):
                # a row of values shorter than the captions over it: the last boxes are empty and OCR reads
                # nothing there ("0.99 | peanuts" under "Seed (kg) | Mix type | Interval (d)"); read from the left
                for lc, vc in zip(labels, vrow):
                    pairs.append((lc, vc))
                    taken.update((lc.start, vc.start))
            elif not label_first and len(vrow) == len(labels) == len(lrow) >= 2 and all(labelish(c) for c in labels) \
                    and all(text_cell(c) and not labelish(c) for c in vrow):
                # a row of names over a row of captions ("Dev | draw" over "Opp. | Res."), in an image read as
                # values over their captions: kept only when this reading pairs numbers too (below)
                text_rows.append([(lc, vc) for lc, vc in zip(labels, vrow)])
        if pairs and text_rows:
            for row_pairs in text_rows:
                if not any(lc.start in taken or vc.start in taken for lc, vc in row_pairs):
                    pairs.extend(row_pairs)
                    taken.update(x.start for p in row_pairs for x in p)
        return pairs

    def dangling(pairs: list[tuple[_Cell, _Cell]]) -> int:
        """Label rows a reading leaves unpaired between the title (first row) and its first pair: a
        label right under the title that names nothing is a sign of the wrong reading."""
        line_row = {text.count("\n", 0, r[0].start): k for k, r in enumerate(rows)}
        paired = {line_row.get(text.count("\n", 0, c.start), 0) for p in pairs for c in p}
        if not paired:
            return 0
        return sum(1 for k in range(1, min(paired)) if all(c.is_label for c in rows[k]))

    kv_rows = sum(1 for r in rows if len(r) == 2 and r[0].is_label and r[1].is_value)
    for k, row in enumerate(rows):
        above_row = rows[k - 1] if k else []
        if len(row) > 2 and len(above_row) == len(row) and all(c.is_label for c in above_row):
            continue
        if len(above_row) > len(row) >= 2 and all(c.is_label for c in above_row) and (
                len(split_values(row)) == len(above_row) or len(split_words(row, len(above_row), False)) == len(above_row)):
            # "sourdough | 399 g | 219 degC 60 mins", "Keiko win | 56 | 1564" under four labels: values of the row above
            continue
        if 0 < len(above_row) < len(row) and all(c.is_label for c in above_row) and \
                len(split_labels(above_row, len(row))) == len(row):
            continue  # "1434 | peanuts | 5" under "Seed (g) Seed type: | Days since (days)": three labels
        if len(row) >= 2 and grid_row(k):
            continue
        for c1, c2 in zip(row, row[1:]):
            # (a capital letter is a label in a table of label | value rows: "W | 3" under "GAMES PLAYED | 5")
            letter = len(row) == 2 and kv_rows >= 2 and re.fullmatch(r"[A-Z]\.?:?", c1.text) is not None
            if (c1.is_label or letter) and c2.is_value and c2.values[0].start not in used:
                pair(c1, c2)
    # "Customer. | Quill Books" in a key/value table (another row pairs a label with a value)
    kv_table = sum(1 for r in rows if len(r) == 2 and r[0].is_label and r[1].is_value) >= 1
    for k, row in enumerate(rows):
        nxt = rows[k + 1] if k + 1 < len(rows) else []
        # (a row of labels over a row of values: also when OCR merged two values into one box, "21.36 | 14 16.7")
        header = len(nxt) == len(row) and all(c.is_value or (len(c.values) >= 2 and not re.search(r"[A-Za-z]{2,}", c.text))
                                              for c in nxt)
        # (or labels OCR merged in fewer boxes than the values below: "SPP. | IND. COUNT TIME (min)" over 3)
        header = header or (len(nxt) > len(row) and all(c.is_label for c in row) and any(c.is_value for c in nxt)
                            and len(split_labels(row, len(nxt))) == len(nxt))
        # (or words OCR merged into fewer boxes over a row that starts with a value: "FOOD KIND | COUNT" over
        # "9.0g | bloodworms | 20" is three captions, not the food kind "COUNT")
        header = header or (len(nxt) > len(row) and all(c.is_label for c in row) and nxt[0].is_value
                            and len(split_labels(row, len(nxt), True)) == len(nxt))
        # (or a row of printed captions, capitals but for a unit in brackets, over a row of values: "SPECIES SEEN |
        # BIRDS COUNT TIME (mins)" over "16 | 49 | 51" is captions however they split, not a key and its text)
        header = header or (len(nxt) >= len(row) and nxt and nxt[0].is_value and all(c.is_value or text_cell(c) for c in nxt)
                            and all(c.is_label and re.sub(r"\([^()]*\)", "", c.text).strip().isupper() for c in row))
        if len(row) == 2 and row[0].is_label and text_cell(row[1]) and not header and (kv_table or labelish(row[0])) \
                and not any(0 <= j < len(rows) and len(rows[j]) == 2 and grid_row(j) for j in (k - 1, k + 1)):
            pair_text(row[0], row[1])  # (not the caption row of a grid: "Air temp | Humidity" under values)

    # label above value, or value above label ("7h 12m" over "Study"): the reading that pairs more cells
    above, below = vertical(True), vertical(False)
    # a tie: the reading that leaves no label between the title and the first pair; then a title row over
    # "value above label" boxes, where the last row is a label that only the value-above reading consumes
    last = rows[-1][-1].start if rows else -1
    da, db = dangling(above), dangling(below)
    # (of two readings pairing as many cells, the one that needs no text split off a value)
    sa, sb = (sum(1 for _, vc in r if id(vc) in leading_split) for r in (above, below))
    # (tiles of two or more columns, a row of values alone over captions that close the image, read every box
    # value over caption: a row of names over captions before them is no row of labels left dangling, "Tomasz |
    # loss" over "vs | res.")
    def names_over_captions(k: int) -> bool:
        a, b = rows[k], rows[k + 1]
        return len(a) == len(b) >= 2 and all(text_cell(c) and not labelish(c) for c in a) \
            and all(c.is_label and not c.values for c in b)
    name_tiles = [k for k in range(1, len(rows) - 1) if names_over_captions(k)] \
        if any(len(rows[k]) >= 2 for k in tiles) else []
    prefer_below = len(below) > len(above) or (len(below) == len(above) and (sb < sa or sb == sa and (
        bool(name_tiles) and db > da or db < da or db == da and (any(lc.start == last for lc, _ in below)
                                                              and not any(lc.start == last or vc.start == last
                                                                          for lc, vc in above)))))
    for lc, vc in (below if prefer_below else above):
        pair(lc, vc)
    if prefer_below and below:
        # ... and that row's names are the values of the captions under them
        for k in name_tiles:
            if not {c.start for c in rows[k] + rows[k + 1]} & (texts_used | labels_used):
                for lc, vc in zip(rows[k + 1], rows[k]):
                    pair_text(lc, vc)
    if prefer_below and below:
        # a box whose value is a name, read like the image's other boxes (value over its caption), before
        # a caption is read as the label of the line under it: "Haruka" over "teacher", "Joao" over
        # "Teacher.", "oak box" over "Nest box", below "32 mins | $ 37.20" over "duration | paid"
        last_pair = max(lc.start for lc, _ in below)
        for k in range(1, len(rows) - 1):
            a, b = rows[k], rows[k + 1]
            if len(a) == len(b) == 1 and a[0].start > last_pair and text_cell(a[0]) and not labelish(a[0]) \
                    and b[0].is_label and not b[0].values and a[0].start not in texts_used | labels_used:
                pair_text(b[0], a[0])
    # "OPP.\nAurelie", "Variation:\nNajdorf": a label line over a text line in one column; in a column of
    # labels over their values ("Flakes / 11.1 gr / Kind / pellets / Seen / 10") any label line after a pair
    consumed = {vc.start for _, vc in above} if not prefer_below else set()
    for k in range(len(rows) - 1):
        a, b = rows[k], rows[k + 1]
        after = rows[k + 2] if k + 2 < len(rows) else []
        in_column = k > 0 and len(rows[k - 1]) == 1 and rows[k - 1][0].start in consumed and a[0].is_label
        if (len(a) == len(b) == 1 and (labelish(a[0]) or in_column) and text_cell(b[0]) and not (b[0].text.isupper() and a[0].text.isupper()
                and not a[0].text.rstrip().endswith((":", "."))) and not (len(after) == 1 and after[0].is_value)):
            pair_text(a[0], b[0])
    return out
