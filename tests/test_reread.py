"""A second reading with the history's own labels (core/reread.py): a list item the extractor cannot split
("seed type sunflower hearts") is read with the label other rounds print with a colon."""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.formats import read_file
from core.reread import KnownLabel, find_items
from core.store import Store

SEED = KnownLabel("seed type", "seed_type", "seed_type", "text")
DUCKS = KnownLabel("ducks", "ducks", "ducks", "number")


def test_items_that_start_with_a_known_label_are_found_with_a_value_of_its_kind():
    text = "Refilled the feeder. Seeds: 0.29 kg; seed type sunflower hearts; Interval: 1 days"
    ((kl, la, lb, va, vb),) = find_items(text, [SEED])
    assert kl is SEED and text[la:lb] == "seed type" and text[va:vb] == "sunflower hearts"
    text = "Waterbirds on the lake. ducks 31, gs. 32, temp -1.5 C"
    ((_, _, _, va, vb),) = find_items(text, [DUCKS, SEED])
    assert text[va:vb] == "31"
    # not the start of an item, not a value of the label's kind, or a sentence of grammar words
    assert find_items("I bought the seed type sunflower hearts yesterday", [SEED]) == []
    assert find_items("Feeder: seed type 12", [SEED]) == []
    assert find_items("Ducks everywhere; ducks were loud", [DUCKS]) == []
    assert find_items("Notes: seed type was my choice", [SEED]) == []


def _feeder(folder):
    sessions = []
    start = datetime(2026, 3, 1, 9, 0)
    kinds = ["nyjer", "peanuts", "fat balls", "sunflower hearts"]
    for s in range(1, 15):
        t = start + timedelta(days=s)
        kind = kinds[s % 4]
        if s % 2:
            user = f"Refilled the feeder. Seeds: {0.2 + s / 10:.2f} kg, Seed type: {kind}, Interval: {1 + s % 4} days"
        else:  # the same record, its type written without a colon, all in lower case
            user = f"Feeder: Seeds: {0.2 + s / 10:.2f} kg; seed type {kind}; Interval: {1 + s % 4} days"
        rounds = [{"round": f"S{s}:R1", "time": t.isoformat(), "user": user, "assistant": "Logged."},
                  {"round": f"S{s}:R2", "time": (t + timedelta(hours=1)).isoformat(),
                   "user": "Grey morning, a robin on the fence.", "assistant": "Lovely."}]
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": rounds})
    path = folder / "feeder.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    return path


def _types_in_table(store) -> list:
    (table,) = [t for (t,) in store.con.execute("SELECT table_name FROM memory_tables").fetchall()]
    cols = [c for (c,) in store.con.execute(f"SELECT column_name FROM (DESCRIBE \"{table}\")").fetchall()]
    col = next(c for c in cols if "type" in c)
    return [v for (v,) in store.con.execute(f'SELECT "{col}" FROM "{table}"').fetchall()]


def test_a_build_fills_the_field_where_the_item_had_no_colon(tmp_path):
    path = _feeder(tmp_path)
    deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as s:
        build(s, read_file(path), deps, DEFAULT)
        types = _types_in_table(s)
        labels = s.con.execute("SELECT DISTINCT label FROM observations WHERE attribute = 'seed_type'").fetchall()
    kinds = {"nyjer", "peanuts", "fat balls", "sunflower hearts"}
    assert len(types) == 14 and set(types) == kinds  # every refill's type, with a colon or without
    assert ("seed type",) in labels  # stored with the label as written
    with Store(tmp_path / "off.duckdb") as s:
        build(s, read_file(path), deps, replace(DEFAULT, reread_labels=False))
        off = _types_in_table(s)
    # without the second reading: gaps, and whole items ("seed type nyjer") where the text had no colon
    assert sum(t in kinds for t in off) < 14


def test_a_count_may_come_before_its_known_label():
    text = "Waterbirds on the lake. 67 ducks and Gs.: 17."
    ((kl, la, lb, va, vb),) = find_items(text, [DUCKS])
    assert text[la:lb] == "ducks" and text[va:vb] == "67"
    assert find_items("Saw 67 ducks today", [DUCKS]) == []  # not an item of a list
