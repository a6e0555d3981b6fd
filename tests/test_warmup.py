"""Models load in the background from app start; whoever needs one waits for it, and a person is told."""
from __future__ import annotations

import threading

import pytest

from ui.warmup import Warmup, WarmupStatus


def test_loaders_run_in_order_in_the_background_and_get_waits_for_its_result():
    gate = threading.Event()
    order: list[str] = []

    def slow():
        gate.wait(10)
        order.append("text")
        return "encoder"

    w = Warmup([("text", "the text encoder", slow), ("ocr", "OCR", lambda: order.append("ocr") or "ocr-engine")])
    w.start()
    w.start()  # once per process
    status = w.status()
    assert status.loading == "the text encoder" and not status.ready
    assert status.text(now=status.started + 7).startswith("Loading the text encoder… (7 s since the app started)")
    assert not w.is_ready("text")
    gate.set()
    assert w.get("text") == "encoder" and w.get("ocr") == "ocr-engine"
    assert order == ["text", "ocr"]
    done = w.status()
    assert done.ready and [name for name, _ in done.done] == ["text", "ocr"]
    assert done.text().startswith("Models ready (text ")


def test_a_failing_loader_is_reported_reraised_and_does_not_stop_the_next():
    def broken():
        raise OSError("weights missing")

    w = Warmup([("text", "the text encoder", broken), ("ocr", "OCR", lambda: "ocr-engine")])
    w.start()
    assert w.get("ocr") == "ocr-engine"
    with pytest.raises(OSError, match="weights missing"):
        w.get("text")
    assert "failed: text: OSError: weights missing" in w.status().text()


def test_get_before_start_loads_only_what_is_asked_in_the_callers_thread():
    calls: list[str] = []
    w = Warmup([("a", "A", lambda: calls.append("a") or 1), ("b", "B", lambda: calls.append("b") or 2)])
    assert w.get("b") == 2 and calls == ["b"]
    assert w.status() == WarmupStatus(None, None, w.status().done, ()) and w.status().text().startswith("Models load")
