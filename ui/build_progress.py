"""What a build's progress says to a person: per stage done/total, time spent and an estimate of what is left.

Plain functions over (stage, done, total) events and clock readings, so the words are tested without
Streamlit; the Upload page draws them.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def clock(seconds: float) -> str:
    """A duration as m:ss (h:mm:ss from an hour on); negative durations read as 0:00."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


@dataclass
class StageClock:
    """Remembers when each stage reported first and last, to say elapsed and (from its own rate) left."""

    started: dict[str, float] = field(default_factory=dict)
    state: dict[str, tuple[int, int, float]] = field(default_factory=dict)  # stage -> (done, total, at)

    def update(self, stage: str, done: int, total: int, now: float) -> None:
        before = self.state.get(stage)
        if before is None or (before[0] >= before[1] and done < total):
            self.started[stage] = now  # first report, or a finished stage starts again (the next file)
        self.state[stage] = (done, total, now)

    def line(self, stage: str, label: str) -> str:
        """e.g. "Images OCR'd: 12/63 · 0:41 · about 2:54 left"; a finished stage says how long it took."""
        done, total, at = self.state[stage]
        spent = at - self.started[stage]
        text = f"{label}: {done}/{total} · {clock(spent)}"
        if done >= total:
            return text
        if done > 0 and spent > 0:
            return text + f" · about {clock(spent / done * (total - done))} left"
        return text + " · starting"

    def finished(self, stage: str) -> bool:
        done, total, _ = self.state[stage]
        return done >= total
