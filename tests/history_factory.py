"""Small realistic MemEye histories written to disk for build tests (no third-party data)."""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path


def write_health_history(folder: Path, *, n_sessions: int = 6, rounds_per_session: int = 4, seed: int = 3,
                         start: datetime = datetime(2026, 2, 20, 8, 0)) -> Path:
    """A MemEye file whose sleep and workout records recur, plus small talk; returns its path."""
    rng = random.Random(seed)
    sessions = []
    for s in range(1, n_sessions + 1):
        day = start + timedelta(days=2 * (s - 1))
        dialogues = []
        for k in range(1, rounds_per_session + 1):
            t = day + timedelta(minutes=10 * k)
            kind = k % 4
            if kind == 1:
                user = (f"Morning! My sleep score was {rng.randint(60, 95)} and I slept "
                        f"{rng.randint(5, 8)}h {rng.randint(0, 59)}m. Resting heart rate {rng.randint(48, 62)} bpm.")
            elif kind == 2:
                user = f"I ran {rng.randint(30, 120) / 10:.1f} km in {rng.randint(20, 70)} minutes today."
            elif kind == 3:
                user = f"I have {rng.randint(2, 5)} meetings tomorrow, any tips to stay focused?"
            else:
                user = "We went to the new Thai place near the park for dinner."
            dialogues.append({"round": f"S{s}:R{k}", "time": t.isoformat(), "user": user,
                              "assistant": "Noted, thanks for sharing."})
        sessions.append({"session_id": f"S{s}", "date": day.date().isoformat(), "dialogues": dialogues})
    doc = {"character_profile": {"name": "Test user"}, "multi_session_dialogues": sessions,
           "human-annotated QAs": [{"question": "What was my average sleep score?", "answer": "77",
                                    "clue": ["S1:R1"], "query_type": "average"}]}
    path = folder / "history.json"
    path.write_text(json.dumps(doc, indent=1))
    return path
