"""A table's description for people, composed from its metadata (never stored: the stored description
is what the planner embeds and stays as it is).

"30 records from 3 Mar to 28 Apr 2025, one per round that reports them; columns: distance (km),
pace (min/km), heart rate (bpm). 12 of them were read from images." No word of any one domain: it
reads the same for a table of anything.
"""
from __future__ import annotations

from datetime import date, datetime

import pandas as pd


def plain_name(column: str) -> str:
    """'average_heart_rate' -> 'average heart rate'."""
    return " ".join(column.replace("_", " ").split())


def column_words(columns: list[dict]) -> str:
    """'distance (km), pace (min/km), activity': each column in plain words with its unit."""
    parts = []
    for c in columns:
        unit = c.get("unit")
        parts.append(f"{plain_name(c['name'])} ({unit})" if unit else plain_name(c["name"]))
    return ", ".join(parts)


def _day(value) -> date | None:
    if value is None:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    ts = pd.Timestamp(value)
    return ts.date()


def span_words(first, last) -> str:
    """'on 3 Mar 2025', 'from 3 to 28 Mar 2025', 'from 3 Mar to 28 Apr 2025',
    'from 28 Dec 2024 to 3 Jan 2025'; '' when either end is unknown."""
    a, b = _day(first), _day(last)
    if a is None or b is None:
        return ""
    a, b = min(a, b), max(a, b)
    if a == b:
        return f"on {a.day} {a:%b %Y}"
    if (a.year, a.month) == (b.year, b.month):
        return f"from {a.day} to {b.day} {b:%b %Y}"
    if a.year == b.year:
        return f"from {a.day} {a:%b} to {b.day} {b:%b %Y}"
    return f"from {a.day} {a:%b %Y} to {b.day} {b:%b %Y}"


def people_description(n_rows: int, first: datetime | date | None, last: datetime | date | None,
                       from_images: int, columns: list[dict]) -> str:
    """The description of an analytic table for a person: how many records, over which days, what
    each row is, its columns in plain words with units, and how many rows were read from images.
    `columns` are the schema's column dicts (name, unit). Raises ValueError on a negative count."""
    if n_rows < 0 or from_images < 0:
        raise ValueError(f"people_description: counts must not be negative (rows {n_rows}, "
                         f"from images {from_images})")
    if n_rows == 0:
        head = "No records yet"
    else:
        head = f"{n_rows:,} record{'s' if n_rows != 1 else ''}"
        span = span_words(first, last)
        head = f"{head} {span}" if span else head
        head += ", one per round that reports them" if n_rows != 1 else ", from one round"
    text = f"{head}; columns: {column_words(columns)}." if columns else f"{head}."
    if from_images:
        if from_images >= n_rows:
            text += " All of them were read from images." if n_rows != 1 else " It was read from an image."
        else:
            verb = "was" if from_images == 1 else "were"
            text += f" {from_images:,} of them {verb} read from images."
    return text
