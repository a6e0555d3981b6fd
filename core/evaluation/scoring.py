"""Scoring a predicted answer against a gold answer, by answer kind.

Pure functions, no I/O. Answer kinds (the `answer_kind` field of the demo
benchmark, data/demo/demo.json):

- "number":  the first number in the prediction (dates masked out; a number
  whose unit matches the gold's unit is preferred) is within `tolerance` of
  the gold number. `tolerance` is ABSOLUTE, in the gold's unit (gold "6.93 h",
  tolerance 0.05 accepts 6.88..6.98 h). None means: exact for an integer gold,
  half a unit of the gold's last decimal otherwise ("6.93" -> 0.005).
  Durations are understood ("7h 12m" = 7.2 h, "6 hours 56 minutes",
  "5:12 /km" = 5.2 min/km) and converted between h / min / s when both sides
  carry a time unit; likewise mg / g / kg and mL / L. "7,5" is 7.5; "1,450" is 1450; "72%" is 72; small number
  words ("seven") count.
- "date":    the first date in the prediction has the gold's month and day,
  and the gold's year when both give one ("2026-03-14", "March 14",
  "14 Mar 2026", "Saturday, March 14th", "3/14/2026", "14.03.2026").
- "updown":  direction words (increased / rose / higher / went up vs
  decreased / fell / dropped / lower / went down; a negation just before
  flips it), else "from X to Y".
- "yesno":   the first yes-like or no-like word.
- "text":    SQuAD token F1 (lower case, no punctuation, no articles).
- "refusal": the prediction contains a refusal phrase ("not mentioned",
  "no information", "cannot find", "don't know", ...).

A refusal never scores for a non-refusal question, whatever its words.
Also here: token_f1, bleu1, LoCoMo F1 by category, evidence recall.
"""
from __future__ import annotations

import math
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

ANSWER_KINDS = ("number", "date", "updown", "yesno", "text", "refusal")

# ---------------------------------------------------------------- refusals

_REFUSAL_PATTERNS = [
    r"not mentioned", r"never mentioned", r"no mention", r"wasn'?t mentioned", r"was not mentioned",
    r"no information", r"no info\b", r"not available", r"no (?:data|record|records|evidence)",
    r"not recorded", r"never recorded", r"not in (?:the |my )?(?:memory|history|records?|conversation)",
    r"can ?not find", r"can'?t find", r"could ?n[o']t find", r"unable to (?:find|determine|answer|tell)",
    r"don'?t know", r"do not know", r"not sure", r"\bunknown\b", r"not specified", r"not provided",
    r"don'?t have (?:any |that |this )?(?:information|record|data|details)",
    r"do not have (?:any |that |this )?(?:information|record|data|details)",
    r"no (?:such|relevant) ", r"cannot (?:be )?(?:answered|determined)", r"can'?t (?:answer|tell|say)",
    r"there is no (?:information|record|mention|data)", r"not enough information", r"insufficient information",
    r"\bn/?a\b",
]
_REFUSAL_RE = re.compile("|".join(_REFUSAL_PATTERNS), re.IGNORECASE)


def is_refusal(text: str) -> bool:
    """True when `text` declines to answer ("Not mentioned", "I don't know", "no information", ...)."""
    return bool(_REFUSAL_RE.search(_ascii_quotes(text or "")))


def _ascii_quotes(s: str) -> str:
    return s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')


# ---------------------------------------------------------------- text normalization

_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD normalization: lower case, drop punctuation and the articles a/an/the, collapse spaces."""
    s = _ascii_quotes(str(s)).lower()
    s = "".join(ch if ch not in _PUNCT else " " for ch in s)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _f1_tokens(pred: list[str], gold: list[str]) -> float:
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 between the normalized prediction and gold, in [0, 1] (1.0 when both are empty)."""
    return _f1_tokens(normalize_answer(prediction).split(), normalize_answer(gold).split())


def bleu1(prediction: str, gold: str) -> float:
    """Sentence BLEU-1 on normalized tokens: clipped unigram precision times the brevity penalty."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return 1.0 if not pred and not ref else 0.0
    overlap = sum((Counter(pred) & Counter(ref)).values())
    precision = overlap / len(pred)
    bp = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return precision * bp


# ---------------------------------------------------------------- LoCoMo F1

def _locomo_normalize(s: str) -> str:
    # LoCoMo's evaluation: drop commas, lower, strip punctuation, drop a/an/the/and.
    s = _ascii_quotes(str(s)).replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = re.sub(r"\b(a|an|the|and)\b", " ", s)
    return " ".join(s.split())


def _stem(word: str) -> str:
    # A light suffix stripper standing in for NLTK's PorterStemmer (not a
    # dependency here): enough to match plural / past / gerund forms.
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


def _locomo_f1_single(prediction: str, gold: str) -> float:
    p = [_stem(w) for w in _locomo_normalize(prediction).split()]
    g = [_stem(w) for w in _locomo_normalize(gold).split()]
    if not p or not g:
        return 0.0
    return _f1_tokens(p, g)


def locomo_f1(prediction: str, gold: str | int, category: int) -> float:
    """LoCoMo QA F1 for one question, by its category.

    1 (multi-hop): gold and prediction are split at commas; the mean over gold
    parts of the best F1 against any prediction part. 2, 4: plain F1.
    3: F1 against the gold's first part before ';'. 5 (adversarial): 1.0 if the
    prediction is a refusal (is_refusal), else 0.0. Tokens are normalized as in
    LoCoMo (no punctuation, no a/an/the/and) and lightly stemmed.
    This is the engine's own LoCoMo scorer (its `score`/`correct`); the benchmark
    figures use benchmarks.locomo_score, LoCoMo's rules with NLTK's Porter stemmer.
    Raises ValueError for a category outside 1..5.
    """
    gold = str(gold)
    prediction = str(prediction or "")
    if category == 5:
        return 1.0 if is_refusal(prediction) else 0.0
    if category == 1:
        preds = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in gold.split(",") if g.strip()] or [gold]
        return sum(max(_locomo_f1_single(p, g) for p in preds) for g in golds) / len(golds)
    if category == 3:
        return _locomo_f1_single(prediction, gold.split(";")[0].strip())
    if category in (2, 4):
        return _locomo_f1_single(prediction, gold)
    raise ValueError(f"locomo_f1: category must be 1..5, got {category!r}")


# ---------------------------------------------------------------- evidence

def evidence_recall(returned_rounds: Iterable[str], clue_rounds: Iterable[str]) -> float | None:
    """Fraction of the gold clue rounds found among the returned rounds; None when there are no clues."""
    clues = {str(c) for c in clue_rounds}
    if not clues:
        return None
    returned = {str(r) for r in returned_rounds}
    return len(clues & returned) / len(clues)


# ---------------------------------------------------------------- dates

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS = [
    # 2026-03-14, 2026/03/14
    ("ymd", re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")),
    # March 14th, 2026 / Mar 14 / Saturday, March 14
    ("mdy", re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}}){_ORD}\b(?:,?\s+(\d{{4}})\b)?", re.IGNORECASE)),
    # 14 Mar 2026 / 14th of March
    ("dmy", re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH_ALT})\b\.?(?:,?\s+(\d{{4}})\b)?", re.IGNORECASE)),
    # 3/14/2026, 14.03.2026, 3/14
    ("num", re.compile(r"\b(\d{1,2})([/.])(\d{1,2})(?:\2(\d{4}|\d{2}))?\b")),
]


@dataclass(frozen=True)
class _Date:
    year: int | None
    month: int
    day: int
    start: int
    end: int


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def find_dates(text: str) -> list[_Date]:
    """All dates in `text`, in order of position (overlapping matches dropped)."""
    found: list[_Date] = []
    taken: list[tuple[int, int]] = []
    for kind, rx in _DATE_PATTERNS:
        for m in rx.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            if kind == "ymd":
                y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
            elif kind == "mdy":
                mo, d = _MONTHS[m.group(1).lower()], int(m.group(2))
                y = int(m.group(3)) if m.group(3) else None
            elif kind == "dmy":
                d, mo = int(m.group(1)), _MONTHS[m.group(2).lower()]
                y = int(m.group(3)) if m.group(3) else None
            else:
                a, b = int(m.group(1)), int(m.group(3))
                sep = m.group(2)
                if m.group(4) is None and sep == ".":
                    continue  # "7.5" is a decimal, not a date
                # US month/day with '/', day.month with '.'; swap when impossible.
                mo, d = (a, b) if sep == "/" else (b, a)
                if not _valid(mo, d):
                    mo, d = d, mo
                y = None
                if m.group(4):
                    y = int(m.group(4))
                    y = y + 2000 if y < 100 else y
            if not _valid(mo, d):
                continue
            found.append(_Date(y, mo, d, m.start(), m.end()))
            taken.append((m.start(), m.end()))
    found.sort(key=lambda x: x.start)
    return found


def _date_matches(pred: _Date, gold: _Date) -> bool:
    if (pred.month, pred.day) != (gold.month, gold.day):
        return False
    return pred.year is None or gold.year is None or pred.year == gold.year


# ---------------------------------------------------------------- numbers

_UNIT_WORDS = [
    (r"m3|m³|cubic met(?:er|re)s?", "m3"),  # (before "m", minutes)
    (r"h|hr|hrs|hour|hours", "h"),
    (r"m|min|mins|minute|minutes", "min"),
    (r"s|sec|secs|second|seconds", "s"),
    (r"%|percent|per cent|pct", "%"),
    (r"bpm|beats per minute|beats/min", "bpm"),
    (r"mg/dl|mg / dl|mgdl", "mg/dL"),
    (r"km|kms|kilometers|kilometres|k", "km"),
    (r"points|point|pts|pt", "points"),
    (r"dollars|dollar|usd|\$", "USD"),
    (r"mg|milligrams?", "mg"),
    (r"g|grams?", "g"),
    (r"kg|kgs|kilos?|kilograms?", "kg"),
    (r"ml|millilit(?:er|re)s?", "mL"),
    (r"l|lit(?:er|re)s?", "L"),
]
_UNIT_RE = re.compile(r"\s*(" + "|".join(f"(?:{p})" for p, _ in _UNIT_WORDS) + r")(?![a-z])", re.IGNORECASE)
_TIME_UNITS = {"h": 60.0, "min": 1.0, "s": 1.0 / 60.0}  # in minutes
# one quantity said in another unit of its dimension is the same answer ("20355 mL" for "20.36 L")
_FAMILIES = (_TIME_UNITS, {"mg": 0.001, "g": 1.0, "kg": 1000.0}, {"mL": 1.0, "L": 1000.0, "m3": 1e6})

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "once": 1, "twice": 2,
    "none": 0,
}
_DURATION_RE = re.compile(
    r"(\d+(?:[.,]\d+)?)\s*(?:h|hr|hrs|hours?)\.?\s*(?:and\s+)?(\d{1,2})\s*(?:m|min|mins|minutes?)\b", re.IGNORECASE)
_CLOCK_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])(\s*(?:am|pm|a\.m\.|p\.m\.))?", re.IGNORECASE)
_NUM_RE = re.compile(r"(?<![\w.])([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:[.,]\d+)?)(?![\d])")
_WORD_NUM_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number found in text, with its unit (canonical, or None) and position."""

    value: float
    unit: str | None
    start: int


def _unit_at(text: str, pos: int) -> str | None:
    m = _UNIT_RE.match(text, pos)
    if not m:
        return None
    word = m.group(1).lower()
    for pattern, canon in _UNIT_WORDS:
        if re.fullmatch(pattern, word, re.IGNORECASE):
            return canon
    return None


def _parse_number_token(tok: str) -> float:
    tok = tok.strip()
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", tok):
        return float(tok.replace(",", ""))
    if re.fullmatch(r"[-+]?\d+,\d{1,2}", tok):  # decimal comma: "7,5"
        return float(tok.replace(",", "."))
    return float(tok.replace(",", ""))


def find_numbers(text: str) -> list[Quantity]:
    """Numbers in `text` (dates excluded), in order, each with a canonical unit when one follows.

    Understands "7h 12m" (7.2 h), "5:12" (5.2 min, or min/km before "/km";
    clock times with am/pm are skipped), decimal commas, thousands separators,
    percentages and the number words zero..twenty.
    """
    text = _ascii_quotes(text or "")
    chars = list(text)
    for d in find_dates(text):
        chars[d.start:d.end] = " " * (d.end - d.start)
    masked = "".join(chars)
    out: list[Quantity] = []

    def blank(a: int, b: int) -> None:
        nonlocal masked
        masked = masked[:a] + " " * (b - a) + masked[b:]

    for m in list(_DURATION_RE.finditer(masked)):
        out.append(Quantity(_parse_number_token(m.group(1)) + int(m.group(2)) / 60.0, "h", m.start()))
        blank(m.start(), m.end())
    for m in list(_CLOCK_RE.finditer(masked)):
        if m.group(3):  # a clock time, never an answer number here
            blank(m.start(), m.end())
            continue
        rest = masked[m.end():m.end() + 12].lower()
        unit = "min/km" if re.match(r"\s*(?:min\s*)?(?:/|per)\s*(?:km|kilomet)", rest) else "min"
        out.append(Quantity(int(m.group(1)) + int(m.group(2)) / 60.0, unit, m.start()))
        blank(m.start(), m.end())
    for m in _NUM_RE.finditer(masked):
        try:
            value = _parse_number_token(m.group(1))
        except ValueError:
            continue
        if re.match(r"\s*(?:am|pm|a\.m\.|p\.m\.|o'clock)", masked[m.end():m.end() + 8], re.IGNORECASE):
            continue  # "call me at 5 pm": a clock time, not an answer number
        # A currency sign before the number is its unit.
        unit = "USD" if m.start() > 0 and masked[m.start() - 1] == "$" else _unit_at(masked, m.end())
        out.append(Quantity(value, unit, m.start()))
    for m in _WORD_NUM_RE.finditer(masked):
        out.append(Quantity(float(_NUMBER_WORDS[m.group(1).lower()]), _unit_at(masked, m.end()), m.start()))
    out.sort(key=lambda q: q.start)
    return out


def _convert(q: Quantity, to_unit: str | None) -> float | None:
    """q's value in to_unit when both are units of one dimension (time, mass, volume) or the units agree;
    None when incompatible."""
    if to_unit is None or q.unit is None or q.unit == to_unit:
        return q.value
    for family in _FAMILIES:
        if q.unit in family and to_unit in family:
            return q.value * family[q.unit] / family[to_unit]
    if {q.unit, to_unit} == {"min", "min/km"}:
        return q.value
    return None


def _default_tolerance(gold_text: str, value: float) -> float:
    m = re.search(r"\d+[.,](\d+)", gold_text)
    if not m or "," in m.group(0) and len(m.group(1)) == 3:
        return 1e-9 * max(1.0, abs(value))
    return 0.5 * 10 ** (-len(m.group(1))) + 1e-9


def _score_number(prediction: str, gold: str, tolerance: float | None) -> float:
    golds = find_numbers(gold)
    if not golds:
        raise ValueError(f"score_answer: gold {gold!r} has no number for kind 'number'")
    g = golds[0]
    cands = find_numbers(prediction)
    if not cands:
        return 0.0
    same_unit = [c for c in cands if c.unit is not None and _convert(c, g.unit) is not None and g.unit is not None]
    chosen = same_unit[0] if same_unit else cands[0]
    value = _convert(chosen, g.unit)
    if value is None:
        return 0.0
    tol = _default_tolerance(gold, g.value) if tolerance is None else float(tolerance) + 1e-9
    return 1.0 if abs(value - g.value) <= tol else 0.0


# ---------------------------------------------------------------- up/down and yes/no

_UP = r"up|increas\w*|rose|risen|rise|rises|rising|higher|grew|grown|climb\w*|gain\w*|went up|upward\w*"
_DOWN = r"down|decreas\w*|fell|fallen|fall|falls|falling|dropp?\w*|declin\w*|lower\w*|reduc\w*|sank|downward\w*|dipped"
_DIR_RE = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\b", re.IGNORECASE)
_NEG_RE = re.compile(r"\b(?:not|no|never|didn't|didnt|did not|hasn't|hasn't|wasn't|isn't|n't)\s+(?:\w+\s+)?$", re.IGNORECASE)
_FROM_TO_RE = re.compile(r"from\s+(?P<a>[^\s]+(?:\s*\w+)?)\s+to\s+(?P<b>[^\s]+)", re.IGNORECASE)


def _direction(text: str) -> str | None:
    text = _ascii_quotes(text or "")
    for m in _DIR_RE.finditer(text):
        d = "up" if m.group("up") else "down"
        if _NEG_RE.search(text[max(0, m.start() - 24):m.start()]):
            d = "down" if d == "up" else "up"
        return d
    m = _FROM_TO_RE.search(text)
    if m:
        a, b = find_numbers(m.group("a")), find_numbers(m.group("b"))
        if a and b and a[0].value != b[0].value:
            return "up" if b[0].value > a[0].value else "down"
    return None


_YES_RE = re.compile(r"\b(yes|yeah|yep|yup|correct|indeed|true|affirmative|did|was|were)\b", re.IGNORECASE)
_NO_RE = re.compile(r"\b(no|nope|not|never|false|didn't|didnt|wasn't|weren't|isn't|hasn't|haven't|don't|doesn't)\b", re.IGNORECASE)


def _yesno(text: str) -> str | None:
    text = _ascii_quotes(text or "")
    # Explicit yes/no words first; only then fall back to auxiliaries ("it did", "it was not").
    strong = re.search(r"\b(yes|yeah|yep|yup|no|nope)\b", text, re.IGNORECASE)
    if strong:
        return "yes" if strong.group(1).lower() in {"yes", "yeah", "yep", "yup"} else "no"
    n = _NO_RE.search(text)
    y = _YES_RE.search(text)
    if n and (not y or n.start() <= y.end() + 1 or n.start() < y.start()):
        return "no"
    if y:
        return "yes"
    return None


# ---------------------------------------------------------------- kinds and the scorer

def infer_kind(gold: str) -> str:
    """Guess the answer kind of a gold answer: refusal, yesno, updown, date, number, else text."""
    g = (gold or "").strip()
    low = normalize_answer(g)
    if is_refusal(g):
        return "refusal"
    if low in {"yes", "no"} or re.match(r"^(yes|no)\b", low) and len(low.split()) <= 3:
        return "yesno"
    if low in {"up", "down", "increased", "decreased", "increase", "decrease", "higher", "lower", "rose", "fell",
               "went up", "went down"}:
        return "updown"
    dates = find_dates(g)
    if len(dates) == 1:
        rest = (g[:dates[0].start] + g[dates[0].end:]).strip(" ,.")
        rest = re.sub(r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b", "", rest, flags=re.IGNORECASE).strip(" ,.")
        if not rest:
            return "date"
    nums = find_numbers(g)
    if len(nums) == 1:
        rest = _NUM_RE.sub(" ", g)
        rest = re.sub(r"(?i)\b(about|approximately|around|roughly)\b", " ", rest)
        rest = _UNIT_RE.sub(" ", " " + rest)
        rest = re.sub(r"(?i)\b(per|of|in|hours?|minutes?|/km|min/km)\b", " ", rest)
        if not re.sub(r"[\s/$%.,:]", "", rest):
            return "number"
    if _DURATION_RE.fullmatch(g):
        return "number"
    return "text"


def score_answer(prediction: str, gold: str, kind: str | None = None, tolerance: float | None = None) -> float:
    """Score `prediction` against `gold` in [0, 1] for the answer kind (inferred from gold when None/"").

    number/date/updown/yesno/refusal give 0.0 or 1.0; text gives token F1.
    Raises ValueError for an unknown kind, or a gold that does not fit its kind
    (e.g. kind "number" and no number in gold).
    """
    prediction = "" if prediction is None else str(prediction)
    gold = str(gold)
    kind = kind or infer_kind(gold)
    if kind not in ANSWER_KINDS:
        raise ValueError(f"score_answer: unknown answer kind {kind!r} (expected one of {', '.join(ANSWER_KINDS)})")
    if kind == "refusal":
        return 1.0 if is_refusal(prediction) else 0.0
    if is_refusal(prediction):
        return 0.0
    if kind == "number":
        return _score_number(prediction, gold, tolerance)
    if kind == "date":
        gd = find_dates(gold)
        if not gd:
            raise ValueError(f"score_answer: gold {gold!r} has no date for kind 'date'")
        pd = find_dates(prediction)
        return 1.0 if pd and _date_matches(pd[0], gd[0]) else 0.0
    if kind == "updown":
        g = _direction(gold)
        if g is None:
            raise ValueError(f"score_answer: gold {gold!r} is not an up/down answer")
        return 1.0 if _direction(prediction) == g else 0.0
    if kind == "yesno":
        g = _yesno(gold)
        if g is None:
            raise ValueError(f"score_answer: gold {gold!r} is not a yes/no answer")
        return 1.0 if _yesno(prediction) == g else 0.0
    return token_f1(prediction, gold)
