"""ui.formatting: stored values shown by their column's unit (display only, sortable columns)."""
from __future__ import annotations

from datetime import date, datetime, time

import pandas as pd

from ui.formatting import column_format, format_value


# ---------------------------------------------------------------------- one value
def test_a_duration_per_distance_reads_as_minutes_and_seconds_per_unit():
    assert format_value(5.8667, "min/km") == "5:52 /km"
    assert format_value(9.5, "min/mi") == "9:30 /mi"
    assert format_value(105.0, "s/100m") == "1:45 /100m"  # seconds over a counted length


def test_a_fractional_duration_reads_as_a_clock_and_a_whole_one_as_a_number():
    assert format_value(5.8667, "min") == "5:52 min"
    assert format_value(90.5, "min") == "1:30:30 h"
    assert format_value(7.4167, "h") == "7:25 h"
    assert format_value(408.0, "min") == "408 min"
    assert format_value(12.34, "s") == "12.3 s"  # seconds keep their decimals


def test_numbers_are_rounded_grouped_and_carry_their_unit():
    assert format_value(5.8667) == "5.87"
    assert format_value(141.0, "mg/dL") == "141 mg/dL"
    assert format_value(12345.6, "kcal") == "12,346 kcal"
    assert format_value(0.012345) == "0.0123"
    assert format_value(33.2, "%") == "33.2 %"
    assert format_value(-0.0) == "0"


def test_a_unit_that_is_no_duration_per_length_is_no_clock():
    assert format_value(12.5, "km/h") == "12.5 km/h"
    assert format_value(2.25, "mg/dL") == "2.25 mg/dL"
    assert format_value(3.5, "kg/km") == "3.5 kg/km"


def test_dates_read_as_dates_and_missing_values_as_nothing():
    assert format_value(date(2025, 3, 3)) == "3 Mar 2025"
    assert format_value(datetime(2025, 3, 3, 7, 30)) == "3 Mar 2025 07:30"
    assert format_value(None, "min/km") == ""
    assert format_value(float("nan"), "km") == ""
    assert format_value(pd.NaT) == ""
    assert format_value("run") == "run"


# ---------------------------------------------------------------------- a whole column
def test_a_pace_column_becomes_sortable_times_of_the_same_length():
    stored = pd.Series([5.7, 6.05, 5.8667, None, 11.0])
    fmt = column_format("min/km", stored)
    assert fmt.kind == "clock" and "m:ss" in fmt.pattern and "/km" in fmt.pattern
    shown = fmt.values(stored)
    assert list(shown) == [time(0, 5, 42), time(0, 6, 3), time(0, 5, 52), None, time(0, 11, 0)]
    # sorting the shown times orders the rows as sorting the stored paces does (11:00 after 5:42)
    order = sorted(range(5), key=lambda i: (shown[i] is None, shown[i] or time()))
    assert order == sorted(range(5), key=lambda i: (pd.isna(stored[i]), 0 if pd.isna(stored[i]) else stored[i]))
    assert list(stored) [:3] == [5.7, 6.05, 5.8667]  # the stored values are unchanged


def test_a_number_column_stays_numeric_with_a_rounded_format_and_its_unit():
    stored = pd.Series([6.5, 7.6, None, 12.25])
    fmt = column_format("km", stored)
    assert fmt.kind == "number" and fmt.pattern == "%,.2f km"
    assert fmt.values(stored) is stored
    assert column_format(None, pd.Series([141.0, 1500.0])).pattern == "%,.0f"
    assert column_format("%", pd.Series([33.2])).pattern == "%,.1f %%"  # printf escapes the unit
    assert column_format("min", pd.Series([408.0, 382.0])).kind == "number"  # whole minutes


def test_a_column_that_cannot_be_a_clock_stays_a_number():
    # a day or more does not fit a time of day: the column keeps its numbers
    assert column_format("h", pd.Series([30.5, 2.0])).kind == "number"
    assert column_format("min/km", pd.Series([-1.5])).kind == "number"


def test_date_and_text_columns():
    assert column_format(None, pd.Series(pd.to_datetime(["2025-03-03", "2025-03-04"]))).pattern == "D MMM YYYY"
    assert "HH:mm" in column_format(None, pd.Series(pd.to_datetime(["2025-03-03 07:30"]))).pattern
    assert column_format(None, pd.Series(["a", None])).kind == "text"
