"""Absolute and relative time expressions resolved against the history's span."""
from __future__ import annotations

from datetime import date

import pytest

from core.planning.dates import find_time_range, parse_date

NOW = date(2026, 4, 26)  # a Sunday
FIRST = date(2026, 1, 3)


@pytest.mark.parametrize("question,start,end", [
    ("How long did I sleep in March?", date(2026, 3, 1), date(2026, 3, 31)),
    ("average heart rate during February", date(2026, 2, 1), date(2026, 2, 28)),
    ("what about in December", date(2025, 12, 1), date(2025, 12, 31)),  # most recent December before now
    ("steps in March 2025", date(2025, 3, 1), date(2025, 3, 31)),
    # asked on a Sunday the current Monday-Sunday week is complete: it is "last week"
    ("last week", date(2026, 4, 20), date(2026, 4, 26)),
    ("this week", date(2026, 4, 20), date(2026, 4, 26)),
    ("over the past week", date(2026, 4, 20), date(2026, 4, 26)),
    ("in the last 10 days", date(2026, 4, 17), date(2026, 4, 26)),
    ("in the last two weeks", date(2026, 4, 13), date(2026, 4, 26)),
    ("last month", date(2026, 3, 1), date(2026, 3, 31)),
    ("the first two weeks of February", date(2026, 2, 1), date(2026, 2, 14)),
    ("the second week of March", date(2026, 3, 8), date(2026, 3, 14)),
    ("the last week of January", date(2026, 1, 25), date(2026, 1, 31)),
    ("the first half of March", date(2026, 3, 1), date(2026, 3, 15)),
    ("between March 3 and March 10", date(2026, 3, 3), date(2026, 3, 10)),
    ("from 2026-02-10 to 2026-02-20", date(2026, 2, 10), date(2026, 2, 20)),
    ("from January to February", date(2026, 1, 1), date(2026, 2, 28)),
    ("since April 2", date(2026, 4, 2), NOW),
    ("since March", date(2026, 3, 1), NOW),
    ("before February 1st", FIRST, date(2026, 1, 31)),
    ("on 2026-03-05", date(2026, 3, 5), date(2026, 3, 5)),
    ("on March 5th", date(2026, 3, 5), date(2026, 3, 5)),
    ("on 14 March 2026", date(2026, 3, 14), date(2026, 3, 14)),
    ("yesterday", date(2026, 4, 25), date(2026, 4, 25)),
    ("last Monday", date(2026, 4, 20), date(2026, 4, 20)),
])
def test_time_ranges(question, start, end):
    tr = find_time_range(question, NOW, FIRST)
    assert tr is not None, question
    assert (tr.start, tr.end) == (start, end), tr


@pytest.mark.parametrize("question", [
    "How long did I sleep on average?",
    "What may I have eaten?",  # "may" the verb is not the month
    "Which run was the longest?",
    "I want to march on",
])
def test_no_time_range(question):
    assert find_time_range(question, NOW, FIRST) is None


def test_parse_date_rejects_impossible_days():
    assert parse_date("February 30, 2026") is None
    assert parse_date("2026-13-01") is None
    assert parse_date("3/5/2026") == date(2026, 3, 5)
    assert parse_date("Dec 24", NOW) == date(2025, 12, 24)


def test_last_week_on_a_weekday_is_the_previous_calendar_week():
    wednesday = date(2026, 4, 22)
    tr = find_time_range("What was my average resting heart rate last week?", wednesday, FIRST)
    assert (tr.start, tr.end) == (date(2026, 4, 13), date(2026, 4, 19))


@pytest.mark.parametrize("question,start,end", [
    ("How many minutes did I train from March 16 to the end of March?", date(2026, 3, 16), date(2026, 3, 31)),
    ("steps from March 3 until the end of the month", date(2026, 3, 3), date(2026, 3, 31)),
    ("distance from April 2 to today", date(2026, 4, 2), NOW),
])
def test_from_a_day_to_the_end_of_a_month_or_now(question, start, end):
    tr = find_time_range(question, NOW, FIRST)
    assert tr is not None and (tr.start, tr.end) == (start, end), tr
