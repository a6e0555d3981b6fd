"""Date and time strings found in history files -> date / naive datetime.

Times keep their wall-clock value: an offset such as "+01:00" or "Z" is
dropped, because a diary's "08:15" means 08:15 where it was written, and mixing
aware and naive datetimes would break chronological ordering downstream.
Every parser returns None for text it cannot read; callers raise the
InputError that names the place.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time

_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d %B %Y", "%d %B, %Y", "%B %d, %Y", "%B %d %Y",
                 "%d %b %Y", "%d %b, %Y", "%b %d, %Y", "%b %d %Y")
_CLOCK_FORMATS = ("%H:%M", "%H:%M:%S", "%I:%M %p", "%I:%M:%S %p", "%I %p", "%I:%M%p", "%I%p")
# LoCoMo: "1:56 pm on 8 May, 2023"
_LOCOMO = re.compile(r"\s*(?P<clock>.+?)\s+on\s+(?P<date>.+?)\s*\Z", re.IGNORECASE)


def parse_date(text: str) -> date | None:
    """An ISO date ("2024-03-10"), an ISO datetime's date part, or "8 May, 2023"-style text."""
    t = text.strip()
    if not t:
        return None
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(t, fmt).date()
        except ValueError:
            pass
    dt = _iso_datetime(t)
    return dt.date() if dt else None


def parse_clock(text: str) -> time | None:
    """A time of day: "08:15", "08:15:30", "1:56 pm", "9 AM"."""
    t = " ".join(text.strip().split())
    for fmt in _CLOCK_FORMATS:
        try:
            return datetime.strptime(t.upper(), fmt).time()
        except ValueError:
            pass
    return None


def parse_datetime(text: str, default_date: date | None = None) -> datetime | None:
    """A moment: ISO datetime, a bare date (midnight), LoCoMo's "1:56 pm on 8 May, 2023",
    or a time of day combined with `default_date` when one is given."""
    t = text.strip()
    if not t:
        return None
    dt = _iso_datetime(t)
    if dt is not None:
        return dt
    d = parse_date(t)
    if d is not None:
        return datetime.combine(d, time())
    m = _LOCOMO.match(t)
    if m:
        clock, d = parse_clock(m["clock"]), parse_date(m["date"])
        if clock is not None and d is not None:
            return datetime.combine(d, clock)
    if default_date is not None:
        clock = parse_clock(t)
        if clock is not None:
            return datetime.combine(default_date, clock)
    return None


def _iso_datetime(t: str) -> datetime | None:
    if not t[:1].isdigit():
        return None
    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        try:  # "2025-02-03 08:15" with a space and no seconds is common in hand-written files
            dt = datetime.strptime(t, "%Y-%m-%d %H:%M")
        except ValueError:
            return None
    return dt.replace(tzinfo=None)
