"""Models load once per process, in the background from the moment the app starts.

The first question of a browser session used to wait 16–69 s on a greyed page while MiniLM loaded and the
memory's metadata was embedded. `Warmup` loads the text encoder, then OCR, then indexes the default
memory's planning metadata in one daemon thread; `resources.text_encoder()` / `ocr_engine()` take the
result (waiting for it if needed) and the sidebar and pages say what is still loading and for how long.
Dependencies are passed in, so the sequencing is tested without Streamlit or models.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class WarmupStatus:
    """What the background loading has done: `loading` names the step under way (None when idle or done)."""

    started: float | None
    loading: str | None
    done: tuple[tuple[str, float], ...]  # (step, seconds it took), in order
    errors: tuple[tuple[str, str], ...]  # (step, "Type: message")

    @property
    def ready(self) -> bool:
        return self.started is not None and self.loading is None

    def text(self, now: float | None = None) -> str:
        """One line for a person: what is loading and since when, or how long each part took."""
        if self.started is None:
            return "Models load when first needed."
        if self.loading is not None:
            since = (now if now is not None else time.monotonic()) - self.started
            return f"Loading {self.loading}… ({since:.0f} s since the app started)"
        parts = [f"{step} {sec:.1f} s" for step, sec in self.done]
        text = "Models ready" + (f" ({', '.join(parts)})" if parts else "")
        if self.errors:
            text += "; failed: " + "; ".join(f"{step}: {err}" for step, err in self.errors)
        return text


class Warmup:
    """Runs the loaders one after another in a daemon thread; `get(name)` waits for a loader's result.

    `loaders`: (name, what a person reads while it loads, function) in order. A loader that raises is
    recorded (status().errors) and its `get` re-raises the error; the later loaders still run. `get`
    before `start` loads that one part in the caller's thread.
    """

    def __init__(self, loaders: list[tuple[str, str, Callable[[], object]]]):
        self._loaders = loaders
        self._results: dict[str, object] = {}
        self._errors: dict[str, BaseException] = {}
        self._events = {name: threading.Event() for name, _, _ in loaders}
        self._lock = threading.Lock()
        self._started: float | None = None
        self._loading: str | None = None
        self._done: list[tuple[str, float]] = []
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start loading in the background (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._started = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="adamm-warmup", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for name, label, load in self._loaders:
            self._load(name, label, load)

    def _load(self, name: str, label: str, load: Callable[[], object]) -> None:
        with self._lock:
            if self._events[name].is_set():
                return
            self._loading = label
        t0 = time.monotonic()
        try:
            self._results[name] = load()
        except BaseException as e:  # recorded and re-raised to whoever needs it; the thread goes on
            self._errors[name] = e
        with self._lock:
            self._done.append((name, time.monotonic() - t0))
            self._loading = None
            self._events[name].set()

    def get(self, name: str) -> object:
        """The loader's result, waiting for the background thread; raises what the loader raised."""
        if self._thread is None:
            label, load = next((lab, f) for n, lab, f in self._loaders if n == name)
            self._load(name, label, load)
        self._events[name].wait()
        if name in self._errors:
            raise self._errors[name]
        return self._results[name]

    def is_ready(self, name: str) -> bool:
        return self._events[name].is_set()

    def status(self) -> WarmupStatus:
        with self._lock:
            return WarmupStatus(self._started, self._loading, tuple(self._done),
                                tuple((n, f"{type(e).__name__}: {e}") for n, e in self._errors.items()))
