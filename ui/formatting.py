"""Display formatting of stored values by their column's unit; the stored values never change.

Rules (one place, so every page reads the same):
- a duration per distance (a time unit over a length, e.g. min/km, min/mi, s/100m; decided from the
  dimensions of core.units, not from a list) is a clock per unit: 5.8667 min/km -> "5:52 /km";
- a duration in minutes or hours that has a fraction is a clock, because "7:25 h" reads better
  than "7.4167 h": values in minutes read m:ss (h:mm:ss from one hour up), values in hours read h:mm;
  whole durations and durations in seconds stay numbers ("408 min", "12.3 s");
- other numbers keep every integer digit and at least three significant digits, drop trailing
  zeros, group thousands ("5.87", "1,235", "0.0123") and carry their unit after the value;
- dates and times read as dates ("3 Mar 2025", "3 Mar 2025 07:30" when the time is not midnight).

`column_format` gives the same decision for a whole column as a sortable spec: a clock column is
shown as time-of-day values (they sort by length, as a person sorting by pace expects: fastest
first), a number column keeps its numbers with a printf format, so sorting stays numeric.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, time

import pandas as pd

from core.units import unit_info

_SIG = 3  # significant digits a number keeps at least
_DAY = 24 * 3600.0


@dataclass(frozen=True)
class Clock:
    """How a unit reads as a clock: seconds in one stored unit, the clock's pattern, its suffix."""
    seconds_per_unit: float
    minutes_only: bool  # h:mm (a value in hours) rather than m:ss
    suffix: str  # "/km" for a duration per distance, "" for a duration (its length picks "min" or "h")


def _per_count(text: str) -> tuple[float, str]:
    """'100m' -> (100.0, 'm'): a leading count of a denominator unit; (1.0, text) without one."""
    digits = len(text) - len(text.lstrip("0123456789."))
    if 0 < digits < len(text):
        try:
            return float(text[:digits]), text[digits:]
        except ValueError:
            return 1.0, text
    return 1.0, text


def clock_of(unit: str | None) -> Clock | None:
    """The clock a unit reads as, or None: a duration over a length ('min/km', 's/100m') always;
    a duration in minutes or hours ('min', 'h') as a candidate (see needs_clock). Never fails."""
    if not unit:
        return None
    u = unit.strip()
    if u.count("/") == 1:
        num, den = (p.strip() for p in u.split("/"))
        top = unit_info(num) if num else unit_info("min")  # "/km" is a per-km duration in minutes
        _, den_unit = _per_count(den)
        bottom = unit_info(den_unit)
        if top is None or bottom is None or top.dimension != "duration" or bottom.dimension != "distance":
            return None
        return Clock(top.factor * 60.0, False, f"/{den}")
    info = unit_info(u)
    if info is None or info.dimension != "duration" or info.factor < 1.0:
        return None  # seconds keep their decimals: a fraction of a second is a measurement, not a clock
    return Clock(info.factor * 60.0, info.factor >= 60.0, "")


def _is_missing(value) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def needs_clock(unit: str | None, values) -> Clock | None:
    """The clock a column of `values` in `unit` reads as: always for a duration per distance, for a
    duration only when some value has a fraction, never when a value is negative or a day or more."""
    clock = clock_of(unit)
    nums = [float(v) for v in values if not _is_missing(v) and isinstance(v, (int, float))]
    if clock is None or not nums:
        return None
    if any(n < 0 or n * clock.seconds_per_unit >= _DAY for n in nums):
        return None
    if not clock.suffix and all(float(n).is_integer() for n in nums):
        return None
    return clock


def as_time(value, clock: Clock) -> time | None:
    """A stored number as a time of day of the same length (5.8667 min -> 00:05:52), rounded to the
    second (to the minute for a clock in hours); None for a missing value."""
    if _is_missing(value):
        return None
    secs = round(float(value) * clock.seconds_per_unit / (60 if clock.minutes_only else 1))
    secs *= 60 if clock.minutes_only else 1
    secs = min(int(secs), int(_DAY) - 1)
    return time(secs // 3600, secs % 3600 // 60, secs % 60)


def clock_text(value, clock: Clock) -> str:
    """'5:52 /km', '5:52 min', '1:02:05 h', '7:25 h' (a duration reads in min below an hour, in h
    from one up); '' for a missing value."""
    t = as_time(value, clock)
    if t is None:
        return ""
    if clock.minutes_only:
        body = f"{t.hour}:{t.minute:02d}"
    elif t.hour:
        body = f"{t.hour}:{t.minute:02d}:{t.second:02d}"
    else:
        body = f"{t.minute}:{t.second:02d}"
    suffix = clock.suffix or ("h" if clock.minutes_only or t.hour else "min")
    return f"{body} {suffix}"


def decimals_for(value: float) -> int:
    """Decimals that keep every integer digit and at least three significant digits (5.8667 -> 2,
    141.0 -> 0, 0.012345 -> 4)."""
    if value == 0 or not math.isfinite(value):
        return 0
    magnitude = math.floor(math.log10(abs(value)))  # 2 for 141, -2 for 0.0123
    return max(0, _SIG - 1 - magnitude)


def number_text(value: float, unit: str | None = None) -> str:
    """'5.87', '1,235 kcal', '33.2 %'; trailing zeros dropped; '' for a missing value."""
    if _is_missing(value):
        return ""
    v = float(value)
    body = f"{v:,.{decimals_for(v)}f}"
    if "." in body:
        body = body.rstrip("0").rstrip(".")
    if body in ("-0", ""):
        body = "0"
    return f"{body} {unit}" if unit else body


def date_text(value) -> str:
    """'3 Mar 2025', or '3 Mar 2025 07:30' when the time of day is not midnight; '' for a missing value."""
    if _is_missing(value):
        return ""
    ts = pd.Timestamp(value)
    day = f"{ts.day} {ts.strftime('%b %Y')}"
    return day if (ts.hour, ts.minute, ts.second) == (0, 0, 0) else f"{day} {ts.strftime('%H:%M')}"


def format_value(value, unit: str | None = None) -> str:
    """The display text of one stored value in `unit`: a clock for a duration per distance or a
    fractional duration, a rounded number with its unit, a date for a date, the text itself
    otherwise; '' (never 'None') for a missing value. Never fails."""
    if _is_missing(value):
        return ""
    if isinstance(value, (datetime, date, pd.Timestamp)):
        return date_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    clock = needs_clock(unit, [value])
    return clock_text(value, clock) if clock else number_text(value, unit)


@dataclass(frozen=True)
class ColumnFormat:
    """How one table column is shown, sortably: kind 'clock' (values become times of day of the same
    length, `pattern` is a momentJS format), 'number' (values stay numbers, `pattern` is printf),
    'date' (`pattern` momentJS) or 'text' (no pattern)."""
    kind: str
    pattern: str | None
    clock: Clock | None = None

    def values(self, column: pd.Series) -> pd.Series:
        """The column as shown: times for a clock, the stored values otherwise."""
        if self.kind == "clock":
            return column.map(lambda v: as_time(v, self.clock)).astype(object)
        return column


def _printf_escape(text: str) -> str:
    return text.replace("%", "%%")


def column_format(unit: str | None, column: pd.Series) -> ColumnFormat:
    """The display of a whole column by its unit and values, following the module's rules; numbers
    get the decimals their smallest non-zero magnitude needs (one format per column). Never fails."""
    if pd.api.types.is_datetime64_any_dtype(column):
        has_time = any(not _is_missing(v) and (v.hour, v.minute, v.second) != (0, 0, 0) for v in column)
        return ColumnFormat("date", "D MMM YYYY HH:mm" if has_time else "D MMM YYYY")
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return ColumnFormat("text", None)
    clock = needs_clock(unit, list(column))
    if clock is not None:
        if clock.minutes_only:
            pattern = "H:mm"
        else:
            longest = max(float(v) for v in column if not _is_missing(v)) * clock.seconds_per_unit
            pattern = "H:mm:ss" if longest >= 3600 else "m:ss"
        suffix = clock.suffix or ("h" if pattern.startswith("H") else "min")
        return ColumnFormat("clock", f"{pattern} [{suffix}]", clock)
    nums = [abs(float(v)) for v in column if not _is_missing(v)]
    fractional = [n for n in nums if not n.is_integer()]
    decimals = max((decimals_for(n) for n in fractional), default=0)
    decimals = min(decimals, max((len(repr(n).split(".")[1]) for n in fractional), default=0))
    suffix = f" {_printf_escape(unit)}" if unit else ""
    return ColumnFormat("number", f"%,.{decimals}f{suffix}")
