"""The words of a build's progress: elapsed time, what is left from the stage's own rate, restarts."""
from __future__ import annotations

from ui.build_progress import StageClock, clock


def test_clock_reads_minutes_and_hours():
    assert clock(0) == "0:00"
    assert clock(41.4) == "0:41"
    assert clock(174) == "2:54"
    assert clock(3723) == "1:02:03"
    assert clock(-3) == "0:00"


def test_a_stage_says_elapsed_and_what_is_left_at_its_rate():
    c = StageClock()
    c.update("ocr", 0, 60, now=100.0)
    assert c.line("ocr", "Images OCR'd") == "Images OCR'd: 0/60 · 0:00 · starting"
    c.update("ocr", 10, 60, now=130.0)  # 3 s an image, 50 to go
    assert c.line("ocr", "Images OCR'd") == "Images OCR'd: 10/60 · 0:30 · about 2:30 left"
    c.update("ocr", 60, 60, now=280.0)
    assert c.line("ocr", "Images OCR'd") == "Images OCR'd: 60/60 · 3:00"
    assert c.finished("ocr")


def test_a_finished_stage_that_starts_again_is_timed_from_its_new_start():
    c = StageClock()
    c.update("rounds", 5, 5, now=10.0)
    c.update("rounds", 1, 4, now=50.0)
    c.update("rounds", 2, 4, now=52.0)
    assert c.line("rounds", "Rounds") == "Rounds: 2/4 · 0:02 · about 0:02 left"
