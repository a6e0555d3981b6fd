"""Dates in questions and tool arguments: absolute and relative ranges.

`find_time_range(question, now, first)` finds the first time expression in a
question ("in March", "last week", "the first two weeks of February",
"between March 3 and March 10", "since April 2", "on 2026-03-05", ...) and
resolves it against the history's time span: `now` is the time of the latest
round, `first` the earliest. Month names without a year mean their most recent
occurrence not after `now`. Nothing here guesses: an expression it does not
recognise is simply not matched (the caller then uses the whole history).
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

MONTHS = {
    name.lower(): i
    for i in range(1, 13)
    for name in (calendar.month_name[i], calendar.month_abbr[i])
}
MONTHS["sept"] = 9
WEEKDAYS = {calendar.day_name[i].lower(): i for i in range(7)}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3,
}
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
            "fifth": 5, "5th": 5}

_MONTH_RE = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM_RE = r"(?:\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
# One calendar date: ISO, "March 5(th)(, 2026)", "5(th) (of) March( 2026)", "3/5/2026" (month first).
_DATE_RE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}"
    r"|" + _MONTH_RE + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_RE + r"(?:,?\s+\d{4})?"
    r"|\d{1,2}/\d{1,2}/\d{4})"
)
_DAY_OR_MONTH_RE = r"(?:" + _DATE_RE + r"|" + _MONTH_RE + r"(?:\s+\d{4})?)"


@dataclass(frozen=True)
class TimeRange:
    """An inclusive range of calendar days plus the words that named it."""

    start: date
    end: date
    phrase: str  # the matched words, e.g. "in March"
    label: str  # how an answer names it, e.g. "in March 2026"

    def days(self) -> int:
        return (self.end - self.start).days + 1


def _num(word: str) -> int:
    word = word.lower().strip()
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def _month_year(month: int, year: int | None, now: date) -> int:
    if year is not None:
        return year
    return now.year if month <= now.month else now.year - 1


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def fmt_day(d: date) -> str:
    """'March 5, 2026' (what answers print)."""
    return f"{calendar.month_name[d.month]} {d.day}, {d.year}"


def parse_date(text: str, now: date | None = None) -> date | None:
    """One calendar date from text ('2026-03-05', 'March 5th, 2026', '5 March', '3/5/2026').

    A date without a year takes the most recent such day not after `now`
    (or the current year when `now` is None). Returns None when the text is
    not a date or names an impossible day.
    """
    s = text.strip().lower().rstrip(".")
    try:
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[t ][\d:.]+)?", s)
        if m:
            return date(int(m[1]), int(m[2]), int(m[3]))
        m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", s)
        if m:
            return date(int(m[3]), int(m[1]), int(m[2]))
        m = re.fullmatch(r"(" + _MONTH_RE + r")\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?", s)
        if m:
            month, day, year = MONTHS[m[1].rstrip(".")], int(m[2]), m[3]
        else:
            m = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_RE + r")(?:,?\s+(\d{4}))?", s)
            if not m:
                return None
            month, day, year = MONTHS[m[2].rstrip(".")], int(m[1]), m[3]
        if year is not None:
            return date(int(year), month, day)
        ref = now or date.today()
        d = date(ref.year, month, day)
        return d if d <= ref else date(ref.year - 1, month, day)
    except ValueError:
        return None


def parse_datetime_value(value: object) -> date | datetime | None:
    """A date or datetime from a tool argument (date/datetime object or string); None if not one."""
    if isinstance(value, datetime) or isinstance(value, date):
        return value
    if not isinstance(value, str) or len(value) > 64:
        return None
    s = value.strip()
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", s):
        return parse_date(s)
    try:
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
        return dt.replace(tzinfo=None)
    except ValueError:
        return parse_date(s)


def _day_or_month(text: str, now: date) -> tuple[date, date] | None:
    """A single day, or a whole month when the text names only a month."""
    d = parse_date(text, now)
    if d is not None:
        return d, d
    m = re.fullmatch(r"(" + _MONTH_RE + r")(?:\s+(\d{4}))?", text.strip().lower())
    if m:
        month = MONTHS[m[1].rstrip(".")]
        year = _month_year(month, int(m[2]) if m[2] else None, now)
        return date(year, month, 1), _month_end(year, month)
    return None


def find_time_range(question: str, now: date | datetime, first: date | datetime | None = None) -> TimeRange | None:
    """The first time expression in `question`, resolved against the history span; None if none."""
    if isinstance(now, datetime):
        now = now.date()
    if isinstance(first, datetime):
        first = first.date()
    first = first or date(now.year - 10, 1, 1)
    q = question.lower()
    for finder in _FINDERS:
        found = finder(q, now, first)
        if found is not None:
            return found
    return None


def _to_end(q: str, now: date, first: date) -> TimeRange | None:
    """'from March 16 to the end of March / of the month', 'from March 16 until now/today'."""
    m = re.search(r"\b(?:from|between|since)\s+(" + _DATE_RE + r")\s+(?:to|until|till|through|and)\s+"
                  r"(?:the\s+end\s+of\s+(?:the\s+month|(" + _MONTH_RE + r")(?:\s+(\d{4}))?)|(now|today))\b", q)
    if not m:
        return None
    start = parse_date(m[1], now)
    if start is None:
        return None
    if m[4]:
        end = now
    elif m[2]:
        month = MONTHS[m[2].rstrip(".")]
        end = _month_end(int(m[3]) if m[3] else start.year, month)
    else:
        end = _month_end(start.year, start.month)
    if end < start:
        return None
    return TimeRange(start, end, m[0], f"from {fmt_day(start)} to {fmt_day(end)}")


def _between(q: str, now: date, first: date) -> TimeRange | None:
    m = re.search(
        r"\b(?:between|from)\s+(" + _DAY_OR_MONTH_RE + r")\s+(?:and|to|until|till|through|-)\s+(" + _DAY_OR_MONTH_RE + r")",
        q,
    )
    if not m:
        return None
    a, b = _day_or_month(m[1], now), _day_or_month(m[2], now)
    if a is None or b is None:
        return None
    start, end = a[0], b[1]
    if end < start and not re.search(r"\d{4}", m[1]):  # "from December to February": the December before
        start = start.replace(year=start.year - 1)
    return TimeRange(start, end, m[0], f"between {fmt_day(start)} and {fmt_day(end)}")


def _part_of_month(q: str, now: date, first: date) -> TimeRange | None:
    m = re.search(
        r"\b(?:the\s+)?(first|second|third|fourth|last|1st|2nd|3rd|4th)\s+(?:(" + _NUM_RE + r")\s+)?(weeks?|days?|half)\s+(?:of|in)\s+("
        + _MONTH_RE + r")(?:\s+(\d{4}))?",
        q,
    )
    if not m:
        return None
    month = MONTHS[m[4].rstrip(".")]
    year = _month_year(month, int(m[5]) if m[5] else None, now)
    end_of_month = _month_end(year, month)
    unit = m[3]
    count = _num(m[2]) if m[2] else 1
    if unit == "half":
        half = 15
        start, end = (date(year, month, 1), date(year, month, half)) if m[1] == "first" else (
            date(year, month, half + 1), end_of_month)
    else:
        span = 7 * count if unit.startswith("week") else count
        if m[1] == "last":
            start, end = end_of_month - timedelta(days=span - 1), end_of_month
        else:
            k = ORDINALS[m[1]] if m[2] is None else 1  # "second week" vs "first two weeks"
            start = date(year, month, 1) + timedelta(days=(k - 1) * span)
            end = min(start + timedelta(days=span - 1), end_of_month)
    return TimeRange(start, end, m[0], f"{fmt_day(start)} to {fmt_day(end)}")


def _since_before(q: str, now: date, first: date) -> TimeRange | None:
    m = re.search(r"\b(since|after|before|until|till|up to)\s+(" + _DAY_OR_MONTH_RE + r")\b", q)
    if not m:
        return None
    span = _day_or_month(m[2], now)
    if span is None:
        return None
    word = m[1]
    if word == "since":
        start, end = span[0], now
    elif word == "after":
        start, end = span[1] + timedelta(days=1), now
    elif word == "before":
        start, end = first, span[0] - timedelta(days=1)
    else:
        start, end = first, span[1]
    if end < start:
        return None
    return TimeRange(start, end, m[0], f"{word} {m[2]}" if word != "up to" else f"up to {m[2]}")


def _relative(q: str, now: date, first: date) -> TimeRange | None:
    m = re.search(r"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(last|past|previous)\s+(" + _NUM_RE + r")\s+(days?|weeks?|months?)\b", q)
    if m:
        n = _num(m[2])
        unit = m[3]
        days = n if unit.startswith("day") else 7 * n if unit.startswith("week") else 30 * n
        start = now - timedelta(days=days - 1)
        return TimeRange(start, now, m[0], f"in the last {n} {unit}")
    m = re.search(r"\b(last|this|past|previous)\s+(week|month|year)\b", q)
    if m:
        which, unit = m[1], m[2]
        if which == "past":  # rolling window ending now
            days = {"week": 7, "month": 30, "year": 365}[unit]
            return TimeRange(now - timedelta(days=days - 1), now, m[0], f"in the past {unit}")
        if unit == "week":
            monday = now - timedelta(days=now.weekday())
            if which == "this":
                return TimeRange(monday, now, m[0], "this week")
            if now.weekday() == 6:
                # asked on a Sunday (e.g. at the end of a history that ends on one): the week just completed
                return TimeRange(monday, now, m[0], "last week")
            return TimeRange(monday - timedelta(days=7), monday - timedelta(days=1), m[0], "last week")
        if unit == "month":
            if which == "this":
                return TimeRange(now.replace(day=1), now, m[0], "this month")
            prev_end = now.replace(day=1) - timedelta(days=1)
            return TimeRange(prev_end.replace(day=1), prev_end, m[0], "last month")
        if which == "this":
            return TimeRange(date(now.year, 1, 1), now, m[0], "this year")
        return TimeRange(date(now.year - 1, 1, 1), date(now.year - 1, 12, 31), m[0], "last year")
    m = re.search(r"\b(yesterday|today|tonight|last night)\b", q)
    if m:
        d = now if m[1] in ("today", "tonight") else now - timedelta(days=1)
        return TimeRange(d, d, m[0], m[1])
    m = re.search(r"\b(?:on\s+)?(last\s+)?(" + "|".join(WEEKDAYS) + r")\b", q)
    if m:
        back = (now.weekday() - WEEKDAYS[m[2]]) % 7
        if m[1] and back == 0:
            back = 7
        d = now - timedelta(days=back)
        return TimeRange(d, d, m[0], f"on {calendar.day_name[d.weekday()]}, {fmt_day(d)}")
    return None


def _single_day(q: str, now: date, first: date) -> TimeRange | None:
    m = re.search(r"\b(?:on|at|for|of)?\s*(" + _DATE_RE + r")\b", q)
    if not m:
        return None
    d = parse_date(m[1], now)
    if d is None:
        return None
    return TimeRange(d, d, m[0].strip(), f"on {fmt_day(d)}")


def _month(q: str, now: date, first: date) -> TimeRange | None:
    m = re.search(r"\b(?:in|during|of|for|over|throughout|across|with|than|versus|vs\.?)\s+(?:the\s+month\s+of\s+)?("
                  + _MONTH_RE + r")(?:\s+(\d{4}))?\b", q)
    if not m:
        # a bare month name; "may" and "march" are also verbs, so they need a year
        bare = "|".join(calendar.month_name[i].lower() for i in range(1, 13) if i not in (3, 5))
        m = re.search(r"\b(" + bare + r")(?:\s+(\d{4}))?\b|\b(march|may)\s+(\d{4})\b", q)
        if m and m[1] is None:
            m = re.search(r"\b(march|may)\s+(\d{4})\b", q)
    if m:
        month = MONTHS[m[1].rstrip(".")]
        year = _month_year(month, int(m[2]) if m[2] else None, now)
        return TimeRange(date(year, month, 1), _month_end(year, month), m[0],
                         f"in {calendar.month_name[month]} {year}")
    m = re.search(r"\b(?:in|during)\s+(\d{4})\b", q)
    if m:
        y = int(m[1])
        return TimeRange(date(y, 1, 1), date(y, 12, 31), m[0], f"in {y}")
    return None


_FINDERS = (_to_end, _between, _part_of_month, _since_before, _relative, _single_day, _month)
