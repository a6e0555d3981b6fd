"""The plan graph shows whole words: long goals and table names wrap, nothing is cut mid-word."""
from __future__ import annotations

import re

from ui import charts


def _labels(dot: str) -> list[str]:
    return [m.replace("\\n", " ") for m in re.findall(r'label="((?:[^"\\]|\\.)*)"', dot)]


def test_a_long_goal_and_table_name_wrap_at_spaces_and_keep_every_word():
    goal = "Compute the average of sleep_duration_minutes_total over daily_sleep_summary_log rows in March"
    dot = charts.plan_dot([{"goal": goal, "tool": "Compute"}], question="How long did I sleep on average in March 2025?")
    step = next(lab for lab in _labels(dot) if lab.startswith("1. Compute"))
    assert "daily_sleep_summary_log" in step and "sleep_duration_minutes_total" in step
    assert step.split(" ", 2)[2].split() == goal.split()[: len(step.split()) - 2]
    q = next(lab for lab in _labels(dot) if "How long" in lab)
    assert q.split() == "How long did I sleep on average in March 2025?".split()


def test_wrap_label_limits_lines_and_says_words_were_left_out():
    lines = charts.wrap_label("word " * 60, width=20, max_lines=3)
    assert len(lines) == 3 and lines[-1].endswith("…")
    assert all(len(line) <= 22 for line in lines)
    assert charts.wrap_label("a_very_long_table_name_without_spaces", width=10) == ["a_very_long_table_name_without_spaces"]
