"""A realistic memory for the planning tests, built directly in a real DuckDB file.

The analytic tables follow the materialization contract (schemas rows, one
table per schema with source / round_order / time / captions + attribute
columns, the memory_tables view); the retrieval memory is a `nodes` table of
events (one per round), weekly episodes and two topics, embedded with the
HashEmbedder fake. The Python lists SLEEP and WORKOUTS hold the same values,
so tests can compute expected results independently of SQL.
"""
from __future__ import annotations

import hashlib
import json
import random
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from core.store import Store

START = date(2026, 1, 3)
QUALITIES = ("good", "fair", "poor")
ACTIVITIES = ("run", "swim", "yoga", "cycle")


def _sleep_rows() -> list[dict]:
    rng = random.Random(7)
    rows, d = [], START
    while len(rows) < 40:
        rows.append({"day": d, "sleep_hours": round(rng.uniform(5.0, 9.4), 1),
                     "deep_sleep": None if len(rows) % 9 == 4 else float(rng.randint(40, 120)),
                     "quality": rng.choice(QUALITIES)})
        d += timedelta(days=rng.choice((2, 3, 3, 3)))
    return rows


def _workout_rows() -> list[dict]:
    rng = random.Random(11)
    rows, d = [], START + timedelta(days=1)
    while len(rows) < 28:
        act = ACTIVITIES[len(rows) % 4]
        dist = None if act == "yoga" else round(rng.uniform(2.0, 15.0) if act != "swim" else rng.uniform(0.5, 2.5), 1)
        rows.append({"day": d, "activity": act, "distance_km": dist, "duration_min": float(rng.randint(20, 110)),
                     "avg_heart_rate": float(rng.randint(95, 165))})
        d += timedelta(days=rng.choice((3, 4, 5)))
    return rows


SLEEP = _sleep_rows()
WORKOUTS = _workout_rows()
# the half marathon: a run on 2026-03-14 (the workout and sleep rows that day are set below)
MARATHON_DAY = date(2026, 3, 14)
STORIES = [
    (datetime(2026, 1, 20, 18, 0), "I adopted a grey kitten today and named her Miso. She loves the window sill."),
    (datetime(2026, 2, 21, 23, 0), "My sister's wedding was amazing, we danced all night at the lake house."),
    (datetime(2026, 3, 14, 13, 0), "I ran the Riverside half marathon this morning and finished in 1 hour 58 minutes!"),
    (datetime(2026, 4, 6, 9, 0), "Started my new job at the Sunrise bakery; the sourdough starter is called Bubbles."),
]


def _adjust_marathon():
    for r in WORKOUTS:
        if r["day"] == MARATHON_DAY:
            r.update(activity="run", distance_km=21.1, duration_min=118.0, avg_heart_rate=158.0)
            break
    else:
        WORKOUTS.append({"day": MARATHON_DAY, "activity": "run", "distance_km": 21.1, "duration_min": 118.0,
                         "avg_heart_rate": 158.0})
        WORKOUTS.sort(key=lambda r: r["day"])
    if not any(r["day"] == MARATHON_DAY for r in SLEEP):
        SLEEP.append({"day": MARATHON_DAY, "sleep_hours": 6.2, "deep_sleep": 55.0, "quality": "poor"})
        SLEEP.sort(key=lambda r: r["day"])


_adjust_marathon()


def build_memory(path: Path, embedder) -> Path:
    """Create the fixture memory at `path` (a DuckDB file) and return the path."""
    store = Store(path)
    con = store.con
    rounds = []  # (round_id, session_id, time, text, kind, row)
    for r in SLEEP:
        t = datetime.combine(r["day"], datetime.min.time()) + timedelta(hours=7, minutes=30)
        text = f"user: Slept {r['sleep_hours']} hours last night, quality {r['quality']}.\nassistant: Noted your sleep."
        rounds.append([None, t, text, "sleep", r])
    for r in WORKOUTS:
        t = datetime.combine(r["day"], datetime.min.time()) + timedelta(hours=19)
        dist = f" {r['distance_km']} km" if r["distance_km"] is not None else ""
        text = (f"user: Did a {r['activity']} workout{dist} in {r['duration_min']:.0f} minutes, "
                f"average heart rate {r['avg_heart_rate']:.0f} bpm.\nassistant: Great workout!")
        rounds.append([None, t, text, "workout", r])
    for t, story in STORIES:
        rounds.append([None, t, f"user: {story}\nassistant: That sounds wonderful!", "story", None])
    rounds.sort(key=lambda x: x[1])
    sessions: dict[date, str] = {}
    for i, x in enumerate(rounds, start=1):
        sid = sessions.setdefault(x[1].date(), f"S{len(sessions) + 1}")
        x[0] = f"{sid}:R{sum(1 for y in rounds[:i] if y[1].date() == x[1].date())}"
    con.execute("BEGIN TRANSACTION")
    for d, sid in sessions.items():
        con.execute("INSERT INTO sessions VALUES (?, ?, 'fixture', NULL)", [sid, d])
    for order, (rid, t, text, kind, row) in enumerate(rounds, start=1):
        dialogue = [line.split(": ", 1) for line in text.splitlines()]
        con.execute("INSERT INTO rounds (round_id, session_id, round_order, index_in_session, time, dialogue, text, "
                    "content_hash, source) VALUES (?, ?, ?, 0, ?, ?, ?, ?, 'fixture')",
                    [rid, rid.split(":")[0], order, t, json.dumps(dialogue), text, hashlib.sha1(text.encode()).hexdigest()])
        if row is not None:
            row["round_id"], row["round_order"], row["time"] = rid, order, t
    con.execute("CREATE TABLE sleep_log(source VARCHAR, round_order INTEGER, time TIMESTAMP, captions VARCHAR, "
                "sleep_hours DOUBLE, deep_sleep DOUBLE, quality VARCHAR)")
    for r in SLEEP:
        con.execute("INSERT INTO sleep_log VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [r["round_id"], r["round_order"], r["time"], None, r["sleep_hours"], r["deep_sleep"], r["quality"]])
    con.execute("CREATE TABLE workout(source VARCHAR, round_order INTEGER, time TIMESTAMP, captions VARCHAR, "
                "activity VARCHAR, distance_km DOUBLE, duration_min DOUBLE, avg_heart_rate DOUBLE)")
    for r in WORKOUTS:
        con.execute("INSERT INTO workout VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [r["round_id"], r["round_order"], r["time"], "a fitness app screenshot", r["activity"],
                     r["distance_km"], r["duration_min"], r["avg_heart_rate"]])
    schemas = [
        (1, ["sleep_hours", "deep_sleep", "quality"], "sleep_log", "Nightly sleep records: hours slept, "
         "deep sleep minutes and sleep quality.",
         [{"name": "sleep_hours", "dtype": "DOUBLE", "unit": "hours", "description": "hours slept"},
          {"name": "deep_sleep", "dtype": "DOUBLE", "unit": "min", "description": "deep sleep duration"},
          {"name": "quality", "dtype": "VARCHAR", "unit": None, "description": "sleep quality rating"}]),
        (2, ["activity", "distance_km", "duration_min", "avg_heart_rate"], "workout", "Workout sessions: "
         "activity type, distance, duration and average heart rate.",
         [{"name": "activity", "dtype": "VARCHAR", "unit": None, "description": "type of workout"},
          {"name": "distance_km", "dtype": "DOUBLE", "unit": "km", "description": "distance covered"},
          {"name": "duration_min", "dtype": "DOUBLE", "unit": "min", "description": "workout duration"},
          {"name": "avg_heart_rate", "dtype": "DOUBLE", "unit": "bpm", "description": "average heart rate"}]),
    ]
    for sid, attrs, name, desc, cols in schemas:
        con.execute("INSERT INTO schemas VALUES (?, ?, ?, ?, ?, 1, 1)",
                    [sid, json.dumps(attrs), name, desc, json.dumps(cols)])
    con.execute("CREATE VIEW memory_tables AS "
                "SELECT s.table_name, s.description, CASE s.table_name "
                "WHEN 'sleep_log' THEN (SELECT count(*) FROM sleep_log) "
                "WHEN 'workout' THEN (SELECT count(*) FROM workout) END AS n_rows FROM schemas s")
    # retrieval memory: one event per round, weekly episodes, two topics
    episodes: dict[str, list] = {}
    for order, (rid, t, text, kind, row) in enumerate(rounds, start=1):
        wk = f"E{t.isocalendar()[1]:02d}"
        episodes.setdefault(wk, []).append((rid, t, text, order, kind))
    topic_of = {}
    for wk, evs in episodes.items():
        topic_of[wk] = "T-life" if any(e[4] == "story" for e in evs) else "T-health"
    for tid, desc in (("T-health", "sleep and workout logs"), ("T-life", "life events and stories")):
        members = [w for w in episodes if topic_of[w] == tid]
        con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, n_members) "
                    "VALUES (?, 'topic', NULL, ?, ?, ?)", [tid, desc, embedder.encode([desc])[0].tolist(), len(members)])
    for wk, evs in episodes.items():
        desc = " ".join(e[2].splitlines()[0].removeprefix("user: ") for e in evs)[:400]
        con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, t_start, t_end, first_order, "
                    "last_order, n_members, closed) VALUES (?, 'episode', ?, ?, ?, ?, ?, ?, ?, ?, true)",
                    [wk, topic_of[wk], desc, embedder.encode([desc])[0].tolist(), evs[0][1], evs[-1][1], evs[0][3],
                     evs[-1][3], len(evs)])
        for rid, t, text, order, _ in evs:
            con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, t_start, t_end, "
                        "first_order, last_order, n_members, closed, round_id) "
                        "VALUES (?, 'event', ?, ?, ?, ?, ?, ?, ?, 1, true, ?)",
                        [f"ev:{rid}", wk, text, embedder.encode([text])[0].tolist(), t, t, order, order, rid])
    con.execute("COMMIT")
    store.close()
    return path


def checksum(con: duckdb.DuckDBPyConnection) -> dict:
    """Every table's and view's row count and content hash, plus the column lists (to detect any change)."""
    out = {}
    for name, kind in con.execute("SELECT table_name, table_type FROM information_schema.tables "
                                  "WHERE table_schema = 'main' ORDER BY table_name").fetchall():
        ident = '"' + name.replace('"', '""') + '"'
        rows = con.execute(f"SELECT * FROM {ident}").fetchall()
        cols = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                           "ORDER BY ordinal_position", [name]).fetchall()
        out[name] = (kind, len(rows), hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest(), tuple(cols))
    return out


@pytest.fixture
def memory_path(tmp_path, embedder) -> Path:
    return build_memory(tmp_path / "memory.duckdb", embedder)


def test_fixture_memory_is_consistent(memory_path):
    con = duckdb.connect(str(memory_path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM sleep_log").fetchone()[0] == len(SLEEP) >= 40
        assert con.execute("SELECT count(*) FROM workout").fetchone()[0] == len(WORKOUTS)
        n_rounds = con.execute("SELECT count(*) FROM rounds").fetchone()[0]
        assert n_rounds == len(SLEEP) + len(WORKOUTS) + len(STORIES)
        assert con.execute("SELECT count(*) FROM nodes WHERE level = 'event'").fetchone()[0] == n_rounds
        # every analytic row's source is a stored round at the same time
        bad = con.execute("SELECT count(*) FROM sleep_log s LEFT JOIN rounds r ON r.round_id = s.source "
                          "WHERE r.time IS DISTINCT FROM s.time").fetchone()[0]
        assert bad == 0
        assert dict(con.execute("SELECT table_name, n_rows FROM memory_tables").fetchall()) == {
            "sleep_log": len(SLEEP), "workout": len(WORKOUTS)}
    finally:
        con.close()
