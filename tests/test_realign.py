"""Late re-alignment (core/realign.py): one kind of record named two ways becomes one table."""
from __future__ import annotations

import json
import zlib
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from core.align import FieldStats, LabelText, recompute_field_stats, undo_alias
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.formats import read_file
from core.realign import (groups, pairing, plan_anchored_lone_joins, plan_label_moves, plan_lone_joins, plan_merges,
                          plan_rejoins, plan_text_joins, realign)
from core.store import Store


def unlike_names(a, b):
    """A label similarity under which two different names are unlike."""
    return 1.0 if a == b else 0.2


def with_texts(s, first, text_a, text_b):
    """The stats `s` with round-text vectors: `text_a` for the fields in `first`, `text_b` for the rest."""
    return {k: replace(v, text=text_a if k in first else text_b) for k, v in s.items()}


def stats(name, unit, lo, hi, rounds, companions, kind="number"):
    return FieldStats(name, kind, unit, {"kg": "mass", "EUR": "currency", "€": "currency", "mL": "volume",
                                         "L": "volume"}.get(unit, unit),
                      lo, hi, rounds, companions)


def two_tills():
    # till A: qty sold (count), takings (EUR), unsold (count); till B: items, revenue, remaining
    return {
        "qty_sold": stats("qty_sold", None, 30, 60, 6, {"takings": 6, "unsold": 6}),
        "takings": stats("takings", "€", 150, 400, 6, {"qty_sold": 6, "unsold": 6}),
        "unsold": stats("unsold", None, 2, 12, 6, {"qty_sold": 6, "takings": 6}),
        "items": stats("items", None, 35, 55, 4, {"revenue": 4, "remaining": 4}),
        "revenue": stats("revenue", "€", 180, 350, 4, {"items": 4, "remaining": 4}),
        "remaining": stats("remaining", None, 3, 10, 4, {"items": 4, "revenue": 4}),
    }


def close_pairs(a, b):  # a stand-in for the text encoder: these names mean much the same
    same = [{"takings", "revenue"}, {"qty_sold", "items"}, {"unsold", "remaining"}]
    return 0.7 if {a, b} in same else 0.2 if a != b else 1.0


def test_groups_are_fields_with_their_usual_company():
    gs = groups(two_tills())
    assert frozenset({"qty_sold", "takings", "unsold"}) in gs and frozenset({"items", "revenue", "remaining"}) in gs


def test_two_tills_pair_one_to_one_by_unit_range_and_meaning():
    s = two_tills()
    p = pairing(frozenset({"items", "revenue", "remaining"}), frozenset({"qty_sold", "takings", "unsold"}), s,
                close_pairs)
    assert p == {"items": "qty_sold", "revenue": "takings", "remaining": "unsold"}
    merges = plan_merges(s, close_pairs)
    # the field with fewer rounds joins the other
    assert {(m.source, m.target) for m in merges} == {("items", "qty_sold"), ("revenue", "takings"),
                                                      ("remaining", "unsold")}
    assert all("late re-alignment" in m.evidence["reason"] for m in merges)


def test_no_merge_when_two_to_join_were_together_or_names_are_unlike_or_kept():
    s = two_tills()
    together = dict(s)
    together["items"] = stats("items", None, 35, 55, 4, {"revenue": 4, "remaining": 4, "qty_sold": 1})
    assert plan_merges(together, close_pairs) == []
    # nothing close and everything unlike: two quantities are not enough (three are: see below)
    two = {k: stats(k, v.unit, v.vmin, v.vmax, v.rounds, {c: n for c, n in v.companions.items()
                                                          if c not in ("unsold", "remaining")})
           for k, v in s.items() if k not in ("unsold", "remaining")}
    assert plan_merges(two, lambda a, b: 0.2 if a != b else 1.0) == []
    assert {m.source for m in plan_merges(s, close_pairs, keep=frozenset({"revenue"}))} == {"items", "remaining"}


def test_no_merge_when_the_pairing_is_not_settled():
    # two count fields with overlapping ranges on each side: which is which?
    s = {
        "wins": stats("wins", None, 1, 9, 5, {"draws": 5}),
        "draws": stats("draws", None, 0, 8, 5, {"wins": 5}),
        "victories": stats("victories", None, 2, 7, 3, {"ties": 3}),
        "ties": stats("ties", None, 1, 6, 3, {"victories": 3}),
    }
    assert plan_merges(s) == []


def _tills(folder: Path) -> Path:
    """A market stall: the old till prints "Qty sold / Takings / Unsold", the new one from day 7
    "Items sold / Revenue / Remaining" — never both on one day. Its first report also has a line
    no other has, so alignment, deciding each label when it is first seen, cannot read that report
    as a till report: every label starts a field of its own."""
    sessions = []
    start = datetime(2026, 6, 1, 18, 0)
    for s in range(1, 13):
        t = start + timedelta(days=s)
        if s <= 6:
            user = f"Till report. Qty sold: {30 + 2 * s}, Takings: {150 + 20 * s} EUR, Unsold: {2 + s % 5}"
        else:
            user = f"Till report. Items sold: {35 + s}, Revenue: {160 + 15 * s} EUR, Remaining: {3 + s % 4}"
            if s == 7:  # the new till's first report has a line no other report has: no record read online
                user += ", Card payments: 9"
        rounds = [{"round": f"S{s}:R1", "time": t.isoformat(), "user": user, "assistant": "Logged."},
                  {"round": f"S{s}:R2", "time": (t + timedelta(hours=2)).isoformat(),
                   "user": "Rain all afternoon, quiet street.", "assistant": "Sounds calm."}]
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": rounds})
    path = folder / "stall.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    return path


class Meaning(HashEmbedder):
    """Hash vectors, except that these till words mean much the same (cosine about 0.6: too little
    for alignment to merge a label on its own, enough for a record read as a whole)."""

    SAME = {"items sold": "qty sold", "revenue": "takings", "remaining": "unsold"}

    def encode(self, texts):
        def rand(t):
            v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim)
            return v / np.linalg.norm(v)

        out = []
        for t in texts:
            v = rand(t)
            if t in self.SAME or t in self.SAME.values():
                v = np.sqrt(0.6) * rand("meaning:" + self.SAME.get(t, t)) + np.sqrt(0.4) * v
            out.append(v)
        return np.array(out, dtype=np.float32)


def test_a_build_puts_both_tills_in_one_table_and_a_person_can_undo(tmp_path):
    deps = BuildDeps(Meaning(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as s:
        build(s, read_file(_tills(tmp_path)), deps, DEFAULT)
        tables = [t for (t,) in s.con.execute("SELECT table_name FROM memory_tables").fetchall()]
        assert len(tables) == 1, tables
        rows = s.con.execute(f'SELECT count(*) FROM "{tables[0]}"').fetchone()[0]
        assert rows == 12  # every till report, whichever till printed it
        events = s.con.execute("SELECT raw_attribute, field FROM field_events WHERE kind = 'realign'").fetchall()
        assert len(events) == 3
        undo_alias(s, events[0][0], DEFAULT)
        assert s.con.execute("SELECT count(*) FROM observations WHERE attribute = ?", [events[0][0]]).fetchone()[0] == 6


def test_a_field_both_devices_print_alike_anchors_the_rest():
    # library desk A: loans and fines; desk B: lendings and fines; "fines" alike on both
    s = {
        "loans": stats("loans", None, 20, 40, 5, {"fines": 5}),
        "fines": stats("fines", "€", 1, 9, 9, {"loans": 5, "lendings": 4}),
        "lendings": stats("lendings", None, 22, 38, 4, {"fines": 4}),
    }
    unlike = lambda a, b: 0.4 if a != b else 1.0  # noqa: E731  (no close name: the shared field decides)
    assert [(m.source, m.target) for m in plan_merges(s, unlike)] == [("lendings", "loans")]
    # without the shared field, names as loose as these are not enough
    s2 = {"loans": stats("loans", None, 20, 40, 5, {"fines": 5}),
          "fines": stats("fines", "€", 1, 9, 5, {"loans": 5}),
          "lendings": stats("lendings", None, 22, 38, 4, {"penalties": 4}),
          "penalties": stats("penalties", "€", 1, 9, 4, {"lendings": 4})}
    assert plan_merges(s2, unlike) == []


def test_with_a_field_in_common_pairs_with_units_may_be_unlike_in_name():
    # scale A: harvest (kg), water content (%), frames; scale B: net (kg), moisture (%), frames
    s = {
        "harvest": stats("harvest", "kg", 2, 21, 19, {"frames": 19, "water_content": 17}),
        "water_content": stats("water_content", "%", 16, 20, 17, {"frames": 17, "harvest": 17}),
        "frames": stats("frames", None, 4, 20, 24, {"harvest": 19, "water_content": 17, "net": 5, "moisture": 5}),
        "net": stats("net", "kg", 7, 21, 5, {"frames": 5, "moisture": 5}),
        "moisture": stats("moisture", "%", 16, 20, 5, {"frames": 5, "net": 5}),
    }
    sim = lambda a, b: 1.0 if a == b else 0.45 if {a, b} == {"moisture", "water_content"} else 0.2  # noqa: E731
    assert {(m.source, m.target) for m in plan_merges(s, sim)} == {("net", "harvest"), ("moisture", "water_content")}
    # two pairs unlike in name, both quantities with units of one dimension: the shared field vouches
    far = lambda a, b: 1.0 if a == b else 0.2  # noqa: E731
    assert {(m.source, m.target) for m in plan_merges(s, far)} == {("net", "harvest"), ("moisture", "water_content")}
    # ... bare counts are no such evidence: two unlike pairs of them are too many
    counts = {k: replace(v, unit=None, dimension=None) if k in ("harvest", "net", "water_content", "moisture") else v
              for k, v in s.items()}
    assert plan_merges(counts, far) == []
    # ... nor a unit of another dimension on one side
    grams = dict(s, net=replace(s["net"], unit="mL", dimension="volume"))
    assert plan_merges(grams, far) == []
    # without the shared field one pair must be close in name
    apart = {k: v for k, v in s.items() if k != "frames"}
    apart = {k: stats(k, v.unit, v.vmin, v.vmax, v.rounds, {c: n for c, n in v.companions.items() if c != "frames"})
             for k, v in apart.items()}
    assert plan_merges(apart, sim) == []


def test_without_a_field_in_common_a_pair_close_in_name_vouches_for_an_unlike_one():
    # device A: H2O (mL), SM (%); device B: irrigation (mL), soil moisture (%): "sm" is its initials
    s = {
        "h2o": stats("h2o", "mL", 134, 741, 7, {"sm": 5}),
        "sm": stats("sm", "%", 14, 59, 5, {"h2o": 5}),
        "irrigation": stats("irrigation", "mL", 129, 848, 7, {"soil_moisture": 7}),
        "soil_moisture": stats("soil_moisture", "%", 13, 54, 7, {"irrigation": 7}),
    }
    unlike = unlike_names
    assert {(m.source, m.target) for m in plan_merges(s, unlike)} == {("h2o", "irrigation"), ("sm", "soil_moisture")}


def test_ranges_in_two_units_of_one_dimension_are_compared_converted():
    # "Mix volume 2500 ml" on one device, "dilution 2.5 L" on the other, each beside a dose in mL
    s = {
        "mix_volume": stats("mix_volume", "mL", 1600, 3100, 3, {"dose": 3}),
        "dose": stats("dose", "mL", 3, 14, 9, {"mix_volume": 3, "dilution": 6}),
        "dilution": stats("dilution", "L", 1.3, 5.0, 6, {"dose": 6}),
    }
    sim = lambda a, b: 1.0 if a == b else 0.4 if {a, b} == {"mix_volume", "dilution"} else 0.2  # noqa: E731
    assert [(m.source, m.target) for m in plan_merges(s, sim)] == [("mix_volume", "dilution")]
    # the same numbers read as litres on both sides do not overlap
    s["mix_volume"] = stats("mix_volume", "L", 1600, 3100, 3, {"dose": 3})
    assert plan_merges(s, sim) == []


def test_an_unlike_pair_is_not_vouched_for_by_the_encoder_alone():
    # openings (lines reviewed, session minutes) and puzzles (solved, minutes spent): two kinds of record whose
    # durations the encoder finds alike only because both names end in "duration"
    s = {
        "lines": stats("lines", None, 5, 30, 25, {"session_duration": 25}),
        "session_duration": stats("session_duration", "min", 10, 60, 25, {"lines": 25}),
        "solved": stats("solved", None, 4, 40, 26, {"minutes_spent_duration": 15}),
        "minutes_spent_duration": stats("minutes_spent_duration", "min", 5, 45, 15, {"solved": 15}),
    }
    sim = lambda a, b: 1.0 if a == b else 0.6 if a.endswith("duration") and b.endswith("duration") else 0.2  # noqa: E731
    assert plan_merges(s, sim) == []


def test_three_quantities_pairing_by_kind_unit_and_range_need_no_name_evidence_when_their_rounds_read_alike():
    # a till's photo (qty sold, takings €, left over) and the text (units, revenue €, unsold)
    s = {
        "qty_sold": stats("qty_sold", None, 18, 50, 8, {"takings": 8, "left_over": 7}),
        "takings": stats("takings", "€", 58, 341, 8, {"qty_sold": 8, "left_over": 7}),
        "left_over": stats("left_over", None, 2, 11, 7, {"qty_sold": 7, "takings": 7}),
        "units": stats("units", None, 9, 56, 17, {"revenue": 17, "unsold": 13}),
        "revenue": stats("revenue", "€", 48, 404, 17, {"units": 17, "unsold": 13}),
        "unsold": stats("unsold", None, 0, 10, 13, {"units": 13, "revenue": 13}),
    }
    unlike = unlike_names
    photo, text, other = (1.0, 0.2, 0.0), (0.8, 0.6, 0.0), (0.3, 0.0, 0.95)  # cosines 0.82 and 0.30
    market = with_texts(s, ("qty_sold", "takings", "left_over"), photo, text)
    assert {(m.source, m.target) for m in plan_merges(market, unlike)} == {
        ("qty_sold", "units"), ("takings", "revenue"), ("left_over", "unsold")}
    # the same shapes from rounds that read otherwise (a receipt's total, tax, items beside a payment's): apart
    apart = with_texts(s, ("qty_sold", "takings", "left_over"), photo, other)
    assert plan_merges(apart, unlike) == []
    assert plan_merges(s, unlike) == []  # no texts: no evidence beyond the shapes


def test_three_quantities_each_in_a_unit_of_its_own_pair_whatever_their_rounds_read():
    # a water change told in the text ("34.1l removed, 44% pct, 10 ML cond") and shown on an app's screen
    # ("Volume changed (l) | Share changed (percent) | Dechlor (mL)"): L, % and mL leave no choice
    s = {
        "removed": stats("removed", "L", 6.4, 39.4, 29, {"pct": 29, "cond": 17}),
        "pct": stats("pct", "%", 11, 49, 29, {"removed": 29, "cond": 17}),
        "cond": stats("cond", "mL", 2, 11, 17, {"removed": 17, "pct": 17}),
        "volume_changed": stats("volume_changed", "L", 8, 33.8, 6, {"share_changed": 6, "dechlor": 4}),
        "share_changed": stats("share_changed", "%", 16, 49, 6, {"volume_changed": 6, "dechlor": 4}),
        "dechlor": stats("dechlor", "mL", 3, 9, 4, {"volume_changed": 4, "share_changed": 4}),
    }
    typical = {"removed": 27, "pct": 28, "cond": 10, "volume_changed": 20, "share_changed": 24, "dechlor": 5}
    sized = {k: replace(v, median=typical[k]) for k, v in s.items()}
    apart = with_texts(sized, ("removed", "pct", "cond"), (1.0, 0.2, 0.0), (0.3, 0.0, 0.95))  # cosine 0.30
    assert {(m.source, m.target) for m in plan_merges(apart, unlike_names)} == {
        ("volume_changed", "removed"), ("share_changed", "pct"), ("dechlor", "cond")}
    # two of a side in one unit (a receipt's total and tax, both $) could pair by chance: rounds must read alike
    shared_unit = {k: replace(v, unit="L", dimension="volume") if k in ("cond", "dechlor") else v
                   for k, v in apart.items()}
    assert plan_merges(shared_unit, unlike_names) == []
    # nor do they pair when one side's typical values are another size (a tank's changes, a pond's refills)
    pond = {k: replace(v, median=v.median * 10) if k in ("volume_changed", "dechlor") else v for k, v in apart.items()}
    assert plan_merges(pond, unlike_names) == []


def test_a_count_rate_printed_by_its_initial_is_the_rate_named_in_full_beside_it():
    from core.units import read_beside

    assert read_beside("bps", ["bubbles/s"]) == "bubbles/s" and read_beside("bps", ["beads/min"]) == "bps"
    assert read_beside("bps", ["bubbles/s", "beads/s"]) == "bps"  # two rates of that initial: no telling
    assert read_beside("mph", ["miles/h"]) == "mph"  # a known unit is what it is
    # a tank's light cycle in the text ("9.4hrs light on, 44% intensity, 1.8 bubbles/s") and on a screen
    # ("Lights | 7.8hrs", "Brightness | 36 percent", "CO2 | 3.5bps")
    s = {
        "light": stats("light", "min", 390, 582, 18, {"intensity": 18, "bubbles": 12}),
        "intensity": stats("intensity", "%", 38, 95, 18, {"light": 18, "bubbles": 12}),
        "bubbles": stats("bubbles", "bubbles/s", 1.5, 3.7, 12, {"light": 12, "intensity": 12}),
        "lights": stats("lights", "min", 396, 546, 4, {"brightness": 4, "co2": 3}),
        "brightness": stats("brightness", "%", 36, 81, 4, {"lights": 4, "co2": 3}),
        "co2": stats("co2", "bps", 1.7, 3.5, 3, {"lights": 3, "brightness": 3}),
    }
    texts = with_texts(s, ("light", "intensity", "bubbles"), (1.0, 0.2, 0.0), (0.8, 0.6, 0.0))  # cosine 0.82
    assert {(m.source, m.target) for m in plan_merges(texts, unlike_names)} == {
        ("lights", "light"), ("brightness", "intensity"), ("co2", "bubbles")}


def test_a_count_whose_label_brackets_name_the_noun_counted_fits_a_bare_count():
    # a bank app's "payment: | days late (days) | bank fee:" and a second app's "Credit: | Overdue days: | Charge:"
    # printing "1 d": the brackets' "days" is no measure, so the bare count is the same quantity
    s = {
        "payment": stats("payment", "$", 254, 2882, 6, {"days_late": 6, "bank_fee": 4}),
        "days_late": stats("days_late", "days", 4, 18, 6, {"payment": 6, "bank_fee": 4}),
        "bank_fee": stats("bank_fee", "$", 1.3, 5.7, 4, {"payment": 4, "days_late": 4}),
        "credit": stats("credit", "$", 2334, 2432, 2, {"overdue_days": 2, "charge": 2}),
        "overdue_days": stats("overdue_days", None, 1, 6, 2, {"credit": 2, "charge": 2}),
        "charge": stats("charge", "$", 8.4, 11.3, 2, {"credit": 2, "overdue_days": 2}),
    }
    texts = with_texts(s, ("payment", "days_late", "bank_fee"), (1.0, 0.2, 0.0), (0.8, 0.6, 0.0))  # cosine 0.82

    def close(a, b):  # "credit" / "payment" and "overdue days" / "days late" mean much the same
        return 0.7 if {a, b} in ({"credit", "payment"}, {"overdue_days", "days_late"}) else unlike_names(a, b)
    assert {(m.source, m.target) for m in plan_merges(texts, close)} == {
        ("credit", "payment"), ("overdue_days", "days_late"), ("charge", "bank_fee")}
    # a measure's unit beside a bare count stays apart (a weight in kg is no count left unsaid)
    measured = {k: replace(v, unit="kg", dimension="mass") if k == "days_late" else v for k, v in texts.items()}
    assert ("overdue_days", "days_late") not in {(m.source, m.target) for m in plan_merges(measured, close)}


def test_a_contrast_word_does_not_part_the_one_place_a_quantity_fits_beside_two_more_that_pair():
    # a water meter told in the text (meter m³, usage m³, flow L/min) and shown on its screen (reading m³,
    # used L, max flow L/min): "max flow" is the only place "flow" fits, and the rest pairs by its shape
    def flowing(name, lo, hi, rounds, companions):
        return replace(stats(name, "L/min", lo, hi, rounds, companions), dimension="flow")

    s = {
        "meter": replace(stats("meter", "m³", 306, 416, 20, {"usage": 20, "flow": 11}), dimension="volume"),
        "usage": replace(stats("usage", "m³", 0.1, 0.48, 20, {"meter": 20, "flow": 11}), dimension="volume"),
        "flow": flowing("flow", 4.2, 17.7, 11, {"meter": 11, "usage": 11}),
        "reading": replace(stats("reading", "m³", 320, 367, 7, {"used": 7, "max_flow": 7}), dimension="volume"),
        "used": replace(stats("used", "L", 133, 457, 7, {"reading": 7, "max_flow": 7}), dimension="volume"),
        "max_flow": flowing("max_flow", 6.3, 17.7, 7, {"reading": 7, "used": 7}),
    }
    typical = {"meter": 372, "usage": 0.28, "flow": 8.4, "reading": 335, "used": 249, "max_flow": 12.2}
    s = {k: replace(v, median=typical[k]) for k, v in s.items()}
    text, screen, other = (1.0, 0.2, 0.0), (0.8, 0.6, 0.0), (0.3, 0.0, 0.95)  # cosines 0.82 and 0.30
    meters = with_texts(s, ("meter", "usage", "flow"), text, screen)
    assert {(m.source, m.target) for m in plan_merges(meters, unlike_names)} == {
        ("max_flow", "flow"), ("reading", "meter"), ("used", "usage")}
    # rounds that read otherwise: two kinds of record, whatever their shapes
    assert plan_merges(with_texts(s, ("meter", "usage", "flow"), text, other), unlike_names) == []
    # rounds that read only a little alike (0.56: a proof's and a starter's, both about bread) are no evidence
    # against a contrast, nor typical values 2.6 times apart
    assert plan_merges(with_texts(s, ("meter", "usage", "flow"), text, (0.6, 0.0, 0.8)), unlike_names) == []
    apart = {k: replace(v, median=v.median * (2.6 if k in ("reading", "used") else 1)) for k, v in meters.items()}
    assert plan_merges(apart, unlike_names) == []
    # two quantities of each are no shape to go by: the contrast parts them
    two = {k: replace(v, companions={c: n for c, n in v.companions.items() if c not in ("usage", "used")})
           for k, v in meters.items() if k not in ("usage", "used")}
    assert plan_merges(two, unlike_names) == []


def test_m_in_one_naming_beside_minutes_in_the_other_is_minutes_when_pairing():
    # a garden count told in the text ("34 m watched", read as metres) and on an app's screen ("Count time 27
    # min"), beside the birds and the species of each
    s = {
        "watched": stats("watched", "m", 14, 58, 14, {"ind": 14, "species": 14}),
        "ind": stats("ind", None, 16, 75, 19, {"watched": 14, "species": 19}),
        "species": stats("species", None, 4, 19, 19, {"watched": 14, "ind": 19}),
        "count_time": stats("count_time", "min", 14, 48, 5, {"total_birds": 5, "spp": 5}),
        "total_birds": stats("total_birds", None, 12, 79, 9, {"count_time": 5, "spp": 9}),
        "spp": stats("spp", None, 6, 19, 9, {"count_time": 5, "total_birds": 9}),
    }
    s["watched"] = replace(s["watched"], dimension="distance")
    s["count_time"] = replace(s["count_time"], dimension="duration")
    typical = {"watched": 34, "ind": 52, "species": 9, "count_time": 27, "total_birds": 45, "spp": 14}
    s = {k: replace(v, median=typical[k]) for k, v in s.items()}
    garden = with_texts(s, ("watched", "ind", "species"), (1.0, 0.2, 0.0), (0.8, 0.6, 0.0))  # cosine 0.82
    assert {(m.source, m.target) for m in plan_merges(garden, unlike_names)} == {
        ("count_time", "watched"), ("total_birds", "ind"), ("spp", "species")}
    # metres of another size than the minutes (a walk's 340 m) are no count time
    walk = {k: replace(v, median=340, vmin=150, vmax=900) if k == "watched" else v for k, v in garden.items()}
    assert ("count_time", "watched") not in {(m.source, m.target) for m in plan_merges(walk, unlike_names)}


def test_same_shapes_whose_typical_values_differ_in_size_are_two_kinds_of_record():
    # a receipt (total $, tax $, items) and a client's payment (amount $, fee $, days late): the ranges
    # overlap at their ends and the rounds read alike, but a payment is typically ten times a receipt
    s = {
        "total": stats("total", "$", 43, 330, 29, {"tax": 25, "items": 18}),
        "tax": stats("tax", "$", 0.9, 29, 25, {"total": 25, "items": 16}),
        "items": stats("items", None, 1, 8, 18, {"total": 18, "tax": 16}),
        "payment": stats("payment", "$", 158, 3956, 22, {"fee": 15, "days_late": 18}),
        "fee": stats("fee", "$", 2.2, 11, 15, {"payment": 15, "days_late": 12}),
        "days_late": stats("days_late", None, 0, 25, 18, {"payment": 18, "fee": 12}),
    }
    texts = with_texts(s, ("total", "tax", "items"), (1.0, 0.2, 0.0), (0.8, 0.6, 0.0))  # cosine 0.82
    typical = {"total": 226, "tax": 15, "items": 6, "payment": 2105, "fee": 7.2, "days_late": 11}
    apart = {k: replace(v, median=typical[k]) for k, v in texts.items()}
    assert plan_merges(apart, unlike_names) == []
    # the same records with payments the size of receipts are read as one kind, as before
    alike = {k: replace(v, median=typical[k] / (10 if k == "payment" else 1)) for k, v in texts.items()}
    assert {(m.source, m.target) for m in plan_merges(alike, unlike_names)} == {
        ("fee", "tax"), ("days_late", "items"), ("payment", "total")}


def test_field_stats_give_each_number_field_its_median_in_its_unit(tmp_path):
    from core.align import field_stats

    deps = BuildDeps(Meaning(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as store:
        build(store, read_file(_tills(tmp_path)), deps, DEFAULT)
        takings = field_stats(store)["takings"]  # the revenue of the second till joined it: 170..340 EUR
        values = [170 + 20 * i for i in range(6)] + [160 + 15 * s for s in range(7, 13)]
        assert takings.median == float(np.median(values))


def test_a_word_more_or_less_does_not_vouch_for_an_unlike_pair():
    # starter (temp, rise %) and proof (dough temp, water %): "temp" is "dough temp" with a word less
    s = {
        "temp": stats("temp", "°C", 20, 28, 36, {"up": 11}),
        "up": stats("up", "%", 60, 140, 11, {"temp": 11}),
        "dough_temp": stats("dough_temp", "°C", 22, 27, 20, {"water": 13}),
        "water": stats("water", "%", 65, 80, 13, {"dough_temp": 13}),
    }
    sim = lambda a, b: 1.0 if a == b else 0.6 if "temp" in a and "temp" in b else 0.2  # noqa: E731
    assert plan_merges(s, sim) == []


def test_a_word_more_or_less_vouches_for_an_unlike_pair_when_every_pair_reads_as_one_record():
    # an invoice's photo (total due $, duration h) and its text (amt $, hrs duration h)
    s = {
        "total_due": stats("total_due", "$", 400, 4000, 6, {"duration": 5}),
        "duration": stats("duration", "min", 200, 2000, 9, {"total_due": 5}),
        "amt": stats("amt", "$", 390, 4010, 22, {"hrs_duration": 18}),
        "hrs_duration": stats("hrs_duration", "min", 220, 2300, 18, {"amt": 18}),
    }
    sim = unlike_names
    photo, text, other = (1.0, 0.3, 0.0), (0.8, 0.6, 0.0), (0.6, 0.0, 0.8)  # cosines 0.94 and 0.57
    same = with_texts(s, ("total_due", "duration"), photo, text)
    assert {(m.source, m.target) for m in plan_merges(same, sim)} == {("total_due", "amt"), ("duration", "hrs_duration")}
    # rounds alike only as much as two kinds of record of one hobby are: a word more or less is not enough
    apart = with_texts(s, ("total_due", "duration"), photo, other)
    assert plan_merges(apart, sim) == []
    assert plan_merges(s, sim) == []


def test_two_kinds_each_with_a_field_of_its_own_are_not_joined_by_a_word_more_or_less():
    # openings (line: a text, reps, study_duration in min) and puzzles (correct, score, duration in min): the
    # counts and minutes fit and the rounds read alike, but each kind holds something the other never shows
    s = {
        "reps": stats("reps", None, 4, 30, 24, {"study_duration": 24, "line": 24}),
        "study_duration": stats("study_duration", "min", 15, 80, 24, {"reps": 24, "line": 24}),
        "line": stats("line", None, None, None, 24, {"reps": 24, "study_duration": 24}, kind="text"),
        "correct": stats("correct", None, 3, 38, 30, {"score": 30, "duration": 23}),
        "score": stats("score", None, 1500, 2100, 30, {"correct": 30, "duration": 23}),
        "duration": stats("duration", "min", 5, 46, 23, {"correct": 23, "score": 23}),
    }
    sim = lambda a, b: 1.0 if a == b else 0.7 if "duration" in a and "duration" in b else 0.2  # noqa: E731
    alike = with_texts(s, ("reps", "study_duration", "line"), (1.0, 0.3, 0.0), (0.8, 0.6, 0.0))  # cosine 0.94
    assert plan_merges(alike, sim) == []
    # ... however near the encoder puts "reps" and "correct" (0.4: not unlike)
    near = lambda a, b: 0.4 if {a, b} == {"reps", "correct"} else sim(a, b)  # noqa: E731
    assert plan_merges(alike, near) == []
    # the same records with the score printed on one kind only: the text of one, nothing of its own in the
    # other, is a record told with a field more
    # (named a word apart: "puzzle study duration" / "study duration")
    one_sided = {k: v for k, v in alike.items() if k not in ("score", "duration")}
    one_sided["correct"] = replace(one_sided["correct"], companions={"puzzle_study_duration": 23})
    one_sided["puzzle_study_duration"] = replace(alike["duration"], name="puzzle_study_duration",
                                                 companions={"correct": 23})
    assert {(m.source, m.target) for m in plan_merges(one_sided, sim)} == {
        ("reps", "correct"), ("puzzle_study_duration", "study_duration")}
    # a bare "duration" (a "Time (mins)" label) shares with "study duration" only the word every duration is
    # named with: no name evidence, the records stay apart
    bare = {k: v for k, v in alike.items() if k != "score"}
    bare["correct"] = replace(bare["correct"], companions={"duration": 23})
    bare["duration"] = replace(bare["duration"], companions={"correct": 23})
    assert plan_merges(bare, sim) == []


def test_a_pairing_that_turns_round_an_order_every_record_keeps_is_not_taken():
    # a solar screen (YIELD, EXPORTED, PEAK) and the text (produced, feed-in, peak power): the encoder puts
    # "exported" nearer "produced", but a yield is above the part exported in every record, as produced is
    # above feed-in
    s = {
        "yield": stats("yield", "kWh", 2, 24, 6, {"exported": 6, "peak~2": 6}),
        "exported": stats("exported", "kWh", 1.5, 11, 6, {"yield": 6, "peak~2": 6}),
        "peak~2": stats("peak~2", "kW", 0.7, 5, 6, {"yield": 6, "exported": 6}),
        "produced": stats("produced", "kWh", 1.2, 25, 21, {"feed": 15, "peak": 21}),
        "feed": stats("feed", "kWh", 2, 13, 15, {"produced": 15, "peak": 15}),
        "peak": stats("peak", "kW", 1, 5.2, 21, {"produced": 21, "feed": 15}),
    }
    s = with_texts(s, ("yield", "exported", "peak~2"), (1.0, 0.3, 0.0), (0.95, 0.35, 0.0))  # both read alike
    sim = lambda a, b: 1.0 if a.split("~")[0] == b.split("~")[0] else 0.46 if {a, b} == {"exported", "produced"} \
        else 0.27 if {a, b} == {"yield", "feed"} else 0.2  # noqa: E731
    assert {(m.source, m.target) for m in plan_merges(s, sim)} >= {("exported", "produced"), ("yield", "feed")}
    ordered = dict(s, **{"yield": replace(s["yield"], above={"exported": (6, 6)}),
                         "exported": replace(s["exported"], above={"yield": (6, 0)}),
                         "produced": replace(s["produced"], above={"feed": (15, 15)}),
                         "feed": replace(s["feed"], above={"produced": (15, 0)})})
    assert {(m.source, m.target) for m in plan_merges(ordered, sim)} >= {("exported", "feed"), ("yield", "produced")}
    # an order kept in only some records is no order: the names decide
    loose = dict(ordered, produced=replace(s["produced"], above={"feed": (15, 9)}),
                 feed=replace(s["feed"], above={"produced": (15, 6)}))
    assert ("exported", "produced") in {(m.source, m.target) for m in plan_merges(loose, sim)}


def test_with_a_field_in_common_bare_counts_of_clearly_different_sizes_pair_by_size():
    # a puzzle app's screen (hits, tactics rating, duration) and the text (correct, PR, duration)
    s = {
        "hits": replace(stats("hits", None, 3, 40, 13, {"tactics_rating": 13, "duration": 13}), median=21),
        "tactics_rating": replace(stats("tactics_rating", None, 1500, 2050, 13, {"hits": 13, "duration": 13}),
                                  median=1760),
        "correct": replace(stats("correct", None, 4, 38, 14, {"pr": 14, "duration": 14}), median=22),
        "pr": replace(stats("pr", None, 1480, 2100, 14, {"correct": 14, "duration": 14}), median=1790),
        "duration": stats("duration", "min", 5, 60, 27, {"hits": 13, "tactics_rating": 13, "correct": 14, "pr": 14}),
    }
    s = with_texts(s, ("hits", "tactics_rating"), (1.0, 0.3, 0.0), (0.9, 0.4, 0.0))
    assert {(m.source, m.target) for m in plan_merges(s, unlike_names)} == {("hits", "correct"),
                                                                          ("tactics_rating", "pr")}
    # counts of like sizes (a rating near the count's size): the sizes alone do not tell which is which ...
    like = dict(s, tactics_rating=replace(s["tactics_rating"], vmin=10, vmax=40, median=30),
                pr=replace(s["pr"], vmin=12, vmax=45, median=28))
    apart = with_texts(like, ("hits", "tactics_rating"), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0))
    assert plan_merges(apart, unlike_names) == []
    # ... with the shared field, rounds that read alike and medians that clearly pair (21/22 and 30/28 against
    # 21/28 and 30/22) they do: a lake survey's "dabblers | gs" in the texts and "mallards | greylag" on a screen
    assert {(m.source, m.target) for m in plan_merges(like, unlike_names)} == {("hits", "correct"),
                                                                             ("tactics_rating", "pr")}


def test_typical_values_inside_each_others_range_are_one_size():
    # a water test kit's screen (NH3/NH4, NITRATE) and the text (amm, NO3), both beside pH: five screens
    # whose median ammonia is 0.1 beside many texts of 0.05-0.97 (median 0.49) are one quantity
    s = {
        "amm": replace(stats("amm", "ppm", 0.05, 0.97, 24, {"no3": 23, "ph": 24}), median=0.485),
        "no3": replace(stats("no3", "ppm", 2, 39, 23, {"amm": 23, "ph": 23}), median=23),
        "nh3_nh4": replace(stats("nh3_nh4", "ppm", 0.01, 0.86, 5, {"nitrate": 5, "ph": 5}), median=0.1),
        "nitrate": replace(stats("nitrate", "ppm", 11, 34, 5, {"nh3_nh4": 5, "ph": 5}), median=16),
        "ph": stats("ph", None, 6.2, 7.8, 29, {"amm": 24, "no3": 23, "nh3_nh4": 5, "nitrate": 5}),
    }
    sim = lambda a, b: 1.0 if a == b else 0.5 if {a, b} == {"no3", "nitrate"} else 0.2  # noqa: E731
    assert {(m.source, m.target) for m in plan_merges(s, sim)} == {("nh3_nh4", "amm"), ("nitrate", "no3")}
    # a median outside the other's range is another size (a receipt's total beside a client's payment)
    apart = dict(s, nh3_nh4=replace(s["nh3_nh4"], vmin=0.01, vmax=0.12, median=0.02))
    assert ("nh3_nh4", "amm") not in {(m.source, m.target) for m in plan_merges(apart, sim)}


def test_a_field_seen_a_few_times_has_a_size_not_a_range():
    # a bank's screen (credit $, bank fee $, days) seen twice, the other bank's (payment $, fee $, days late)
    def bank(fee_lo, fee_hi, rounds):
        return {
            "credit": stats("credit", "$", 750, 3100, rounds, {"bank_fee": rounds, "days": rounds}),
            "bank_fee": stats("bank_fee", "$", fee_lo, fee_hi, rounds, {"credit": rounds, "days": rounds}),
            "days": stats("days", None, 17, 28, rounds, {"credit": rounds, "bank_fee": rounds}),
            "payment": stats("payment", "$", 1100, 3300, 6, {"fee": 6, "days_late": 6}),
            "fee": stats("fee", "$", 6.45, 9.9, 6, {"payment": 6, "days_late": 6}),
            "days_late": stats("days_late", None, 13, 27, 6, {"payment": 6, "fee": 6}),
        }
    sim = unlike_names
    assert {(m.source, m.target) for m in plan_merges(bank(3.26, 5.43, 2), sim)} == {
        ("credit", "payment"), ("bank_fee", "fee"), ("days", "days_late")}
    # seen often, the same ranges are the quantity's bounds: two fees of different sizes
    assert plan_merges(bank(3.26, 5.43, 12), sim) == []


def test_a_field_two_pairings_would_join_to_different_partners_joins_only_one():
    # "duration" is printed by the writing sessions (beside errors, length) and by the tutor classes (beside cost)
    s = {
        "duration": stats("duration", "min", 20, 90, 30, {"errors": 12, "length": 12, "cost": 10}),
        "errors": stats("errors", None, 5, 30, 12, {"duration": 12, "length": 12}),
        "length": stats("length", None, 200, 600, 12, {"duration": 12, "errors": 12}),
        "duration~2": stats("duration~2", "min", 25, 80, 14, {"fixes": 14, "word_count": 14}),
        "fixes": stats("fixes", None, 4, 28, 14, {"duration~2": 14, "word_count": 14}),
        "word_count": stats("word_count", None, 250, 650, 14, {"duration~2": 14, "fixes": 14}),
        "cost": stats("cost", "€", 14, 40, 10, {"duration": 10}),
        "cost_amount": stats("cost_amount", "€", 15, 39, 6, {"duration~3": 6}),
        "duration~3": stats("duration~3", "min", 40, 90, 6, {"cost_amount": 6}),
    }
    sim = lambda a, b: 1.0 if a.split("~")[0] == b.split("~")[0] else 0.6 if {a, b} in (  # noqa: E731
        {"errors", "fixes"}, {"length", "word_count"}, {"cost", "cost_amount"}) else 0.2
    merged = {(m.source, m.target) for m in plan_merges(s, sim)}
    into = {src for src, t in merged if t == "duration"} | {t for src, t in merged if src == "duration"}
    assert len(into) == 1, merged  # one kind of record's second naming joins it, not both


def test_of_two_places_that_fit_the_one_clearly_closer_in_name_is_taken():
    # device A: height, leaves, new leaves; device B: height, leaf count (the leaves on the plant)
    s = {
        "height": stats("height", "cm", 30, 155, 23, {"leaf_count": 12, "leaves": 6, "new_leaves": 11}),
        "leaf_count": stats("leaf_count", None, 3, 39, 12, {"height": 12}),
        "leaves": stats("leaves", None, 3, 35, 6, {"height": 6, "new_leaves": 6}),
        "new_leaves": stats("new_leaves", None, 1, 40, 11, {"height": 11, "leaves": 6}),
    }
    sim = lambda a, b: 1.0 if a == b else {frozenset({"leaf_count", "leaves"}): 0.69,  # noqa: E731
                                           frozenset({"leaf_count", "new_leaves"}): 0.62}.get(frozenset({a, b}), 0.2)
    assert [(m.source, m.target) for m in plan_merges(s, sim)] == [("leaves", "leaf_count")]
    # as close to both: not settled
    even = lambda a, b: 1.0 if a == b else 0.65 if "leaf_count" in (a, b) else 0.2  # noqa: E731
    assert plan_merges(s, even) == []


def test_a_field_two_kinds_of_record_share_is_split_by_kind():
    from core.realign import plan_splits

    # "duration" in writing sessions (beside length, fixes) and in tutor sessions (beside a fee): no round ever
    # holds a length and a fee
    by_round = {f"W{i}": frozenset({"duration", "length", "fixes"}) for i in range(6)}
    by_round |= {f"T{i}": frozenset({"duration", "fee"}) for i in range(4)}
    by_round |= {"X": frozenset({"duration"})}  # a lone duration says nothing about its kind
    (s,) = plan_splits(by_round)
    assert (s.field, s.sense, s.rounds) == ("duration", "duration~2", ("T0", "T1", "T2", "T3"))
    assert "fee" in s.evidence["reason"]
    # a name an alias already holds is not given again
    assert plan_splits(by_round, taken=frozenset({"duration~2"}))[0].sense == "duration~3"
    # the two kinds' rounds read alike: one stream printed with other companions, kept one field
    assert plan_splits(by_round, alike=lambda a, b: 0.9) == []
    assert len(plan_splits(by_round, alike=lambda a, b: 0.5)) == 1
    # a round where a fee and a length meet makes the two one kind of record (optional fields)
    assert plan_splits(by_round | {"M": frozenset({"length", "fee"})}) == []
    # too few rounds of the second kind, or a field a person decided about
    assert plan_splits({k: v for k, v in by_round.items() if k not in ("T2", "T3")}) == []
    assert plan_splits(by_round, keep=frozenset({"duration"})) == []


def test_a_fields_second_sense_is_not_joined_back_by_shape_alone():
    # vocabulary sessions (duration~2, new, rev) and writing sessions (duration, fixes, length): alike in
    # shape and kind, but duration~2 exists because its records are of another kind
    s = {
        "duration~2": stats("duration~2", "min", 7, 57, 6, {"new": 6, "rev": 6}),
        "new": stats("new", None, 2, 23, 9, {"rev": 9, "duration~2": 6}),
        "rev": stats("rev", None, 50, 262, 9, {"new": 9, "duration~2": 6}),
        "duration": stats("duration", "min", 16, 90, 22, {"fixes": 22, "length": 18}),
        "fixes": stats("fixes", None, 1, 29, 22, {"length": 18, "duration": 22}),
        "length": stats("length", None, 104, 569, 18, {"fixes": 18, "duration": 18}),
    }
    unlike = unlike_names
    # rounds alike as two kinds of record of one hobby are (cosine 0.6): kept apart
    hobby = with_texts(s, ("duration~2", "new", "rev"), (1.0, 0.0), (0.6, 0.8))
    assert plan_merges(hobby, unlike) == []
    # rounds that read as one stream (a second device's reports, cosine 0.8): joined back
    stream = with_texts(s, ("duration~2", "new", "rev"), (1.0, 0.0), (0.8, 0.6))
    assert {(m.source, m.target) for m in plan_merges(stream, unlike)} == {
        ("duration~2", "duration"), ("new", "fixes"), ("rev", "length")}


def test_a_second_sense_joins_back_beside_two_texts_of_recurring_values_both_kinds_hold():
    # games on a scoresheet ("Moves | Rtg") and in an app ("length. | rating.", its rating a second sense): the
    # opponents and the results, a few values recurring, are printed beside both; the names "length" and
    # "moves" are unlike and the rounds read only somewhat alike (0.56)
    s = {
        "moves": stats("moves", None, 21, 88, 12, {"rating": 12, "vs": 12, "outcome": 12}),
        "rating": stats("rating", None, 1380, 1620, 12, {"moves": 12, "vs": 12, "outcome": 12}),
        "length": stats("length", None, 24, 80, 10, {"rating~2": 10, "vs": 10, "outcome": 10}),
        "rating~2": stats("rating~2", None, 1390, 1610, 10, {"length": 10, "vs": 10, "outcome": 10}),
    }
    s = with_texts(s, ("moves", "rating"), (1.0, 0.0), (0.56, np.sqrt(1 - 0.56 ** 2)))
    people = frozenset({"Aurelie", "Bruno", "Keiko", "Mateo", "Sanna", "Tomas"})
    texts = {
        "vs": replace(stats("vs", None, None, None, 22, {"moves": 12, "rating": 12, "length": 10, "rating~2": 10},
                            kind="text"), values=people),
        "outcome": replace(stats("outcome", None, None, None, 22, {"moves": 12, "rating": 12, "length": 10,
                                                                   "rating~2": 10}, kind="text"),
                           values=frozenset({"win", "loss", "draw"})),
    }
    assert {(m.source, m.target) for m in plan_merges(dict(s, **texts), unlike_names)} == {
        ("length", "moves"), ("rating~2", "rating")}
    # one such text is not enough: the opponents of a game are also the partners of a lesson
    assert plan_merges(dict(s, vs=texts["vs"]), unlike_names) == []


def test_counts_a_count_apart_in_typical_value_pair_by_their_names_not_by_size():
    # nest boxes in the texts ("clutch", "chicks") and on a camera's screen ("EGG COUNT", "NESTLINGS"): eggs and
    # chicks of one size, their medians 4 and 5 by chance; "nestlings" is nearer "chicks" by the encoder
    s = {
        "chicks": stats("chicks", None, 0, 8, 19, {"clutch": 19}),
        "clutch": stats("clutch", None, 0, 8, 19, {"chicks": 19}),
        "egg_count": stats("egg_count", None, 1, 9, 15, {"nestlings": 15}),
        "nestlings": stats("nestlings", None, 1, 8, 15, {"egg_count": 15}),
    }
    typical = {"chicks": 5, "clutch": 4, "egg_count": 5, "nestlings": 4}
    s = {k: replace(v, median=typical[k]) for k, v in s.items()}
    s = with_texts(s, ("chicks", "clutch"), (1.0, 0.0), (0.77, np.sqrt(1 - 0.77 ** 2)))
    near = {frozenset({"chicks", "nestlings"}): 0.4, frozenset({"chicks", "egg_count"}): 0.3}
    similar = lambda a, b: 1.0 if a == b else near.get(frozenset({a, b}), 0.17)  # noqa: E731
    assert {(m.source, m.target) for m in plan_merges(s, similar)} == {
        ("egg_count", "clutch"), ("nestlings", "chicks")}


def test_a_second_sense_joins_back_when_every_field_pairs_by_its_unit_and_size():
    # a water change told in the text (changed L, pct %, conditioner mL) and on an app's screen (vol L,
    # portion %, conditioner~2 mL): three quantities with units, of one size each, in rounds read at 0.6
    s = {
        "changed": stats("changed", "L", 5.4, 39, 29, {"pct": 29, "conditioner": 22}),
        "pct": stats("pct", "%", 10, 50, 29, {"changed": 29, "conditioner": 22}),
        "conditioner": stats("conditioner", "mL", 2, 15, 23, {"changed": 22, "pct": 22}),
        "vol": stats("vol", "L", 14.6, 37.6, 5, {"portion": 5, "conditioner~2": 5}),
        "portion": stats("portion", "%", 18, 44, 5, {"vol": 5, "conditioner~2": 5}),
        "conditioner~2": stats("conditioner~2", "mL", 4, 10, 5, {"vol": 5, "portion": 5}),
    }
    s["pct"], s["portion"] = replace(s["pct"], dimension="percent"), replace(s["portion"], dimension="percent")
    typical = {"changed": 22.8, "pct": 30, "conditioner": 9, "vol": 25.4, "portion": 26, "conditioner~2": 7}
    s = {k: replace(v, median=typical[k]) for k, v in s.items()}
    hobby = with_texts(s, ("changed", "pct", "conditioner"), (1.0, 0.0), (0.6, 0.8))  # cosine 0.6
    assert {(m.source, m.target) for m in plan_merges(hobby, unlike_names)} == {
        ("vol", "changed"), ("portion", "pct"), ("conditioner~2", "conditioner")}
    # a share without its unit is no shape to go by (the counts of writing and vocabulary sessions)
    bare = {k: replace(v, unit=None, dimension=None) if k == "portion" else v for k, v in hobby.items()}
    assert plan_merges(bare, unlike_names) == []
    # nor are sizes twice apart (a larger tank's changes beside a nano tank's)
    big = {k: replace(v, median=v.median * 2.5) if k == "vol" else v for k, v in hobby.items()}
    assert plan_merges(big, unlike_names) == []


def test_a_split_moves_one_kinds_observations_and_the_report_says_why(tmp_path):
    from core.align import field_report, split_field

    with Store(tmp_path / "m.duckdb") as st:
        con = st.con
        con.execute("INSERT INTO field_aliases VALUES ('duration', 'duration', 1, 0.0, '{}', 'auto'), "
                    "('class_time', 'duration', 3, 0.7, '{\"reason\": \"a word more or less (duration)\"}', 'auto')")
        for i, (rid, raw, label) in enumerate([("W1", "duration", "Time"), ("W2", "duration", "Time"),
                                               ("T1", "class_time", "Class time"), ("T2", "class_time", "Class time")]):
            con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, source, "
                        "label, extractor, raw_attribute) VALUES (?, 0, 'duration', '40', 40, 'min', 'number', 'text', ?, "
                        "'rules', ?)", [rid, label, raw])
        n = split_field(con, "duration", "duration~2", ["T1", "T2"], {"reason": "late split: beside a fee"})
        assert n == 2
        report = {i.name: i for i in field_report(con)}
    assert report["duration"].observations == 2 and report["duration~2"].observations == 2
    (lab,) = report["duration~2"].labels
    assert lab.raw_attribute == "class_time" and lab.labels == (("Class time", 2),)
    assert lab.reason == "late split: beside a fee"


def test_a_field_split_late_has_the_text_of_its_own_rounds(tmp_path):
    # a field made by a late split must read like its own rounds (stored with each round's event), or late
    # re-alignment cannot tell whether it reads like another kind of record
    from core.align import field_stats, split_field

    with Store(tmp_path / "m.duckdb") as st:
        con = st.con
        for k, rid in enumerate(["W1", "W2", "T1", "T2"]):
            con.execute("INSERT INTO rounds (round_id, session_id, round_order, time, dialogue, text, content_hash) "
                        "VALUES (?, 'S', ?, TIMESTAMP '2026-01-01 10:00:00', '[]', '', '')", [rid, k])
            vec = [1.0, 0.0, 0.0] if rid.startswith("W") else [0.0, 1.0, 0.0]
            con.execute("INSERT INTO nodes (node_id, level, round_id, text_emb) VALUES (?, 'event', ?, ?)",
                        [f"e{k}", rid, vec])
            con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, "
                        "source, label, extractor, raw_attribute) VALUES (?, 0, 'duration', '40', 40, 'min', 'number', "
                        "'text', 'Time', 'rules', 'duration')", [rid])
        split_field(con, "duration", "duration~2", ["T1", "T2"], {"reason": "late split"})
        recompute_field_stats(con)
        stats = field_stats(con)
    assert stats["duration~2"].text is not None and stats["duration"].text is not None
    assert abs(stats["duration"].text_cosine(stats["duration~2"])) < 1e-9


def test_a_field_two_desks_of_one_stream_share_anchors_their_join_before_any_split(tmp_path):
    # desk A prints "Loans, Fines", desk B "Lendings, Fines": one stream; "fines" is no label of two kinds
    t0 = datetime(2025, 3, 1, 10)
    sessions = []
    for s in range(1, 11):
        t = t0 + timedelta(days=s)
        # (the two desks' reports share no other word: their rounds do not read alike)
        user = (f"Library desk. Loans: {20 + s}, Fines: {1 + s % 7} EUR" if s % 2 else
                f"Branch counter report: Lendings: {22 + s}, Fines: {2 + s % 6} EUR")
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": [
            {"round": f"S{s}:R1", "time": t.isoformat(), "user": user, "assistant": "Logged."}]})
    path = tmp_path / "desk.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    class Desks(Meaning):
        SAME = {"lendings": "loans"}  # alike in meaning (cosine about 0.6), as the text encoder finds them

    deps = BuildDeps(Desks(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as st:
        build(st, read_file(path), deps, DEFAULT)
        tables = [t for (t,) in st.con.execute("SELECT table_name FROM memory_tables").fetchall()]
        assert len(tables) == 1, tables
        assert st.con.execute(f'SELECT count(*) FROM "{tables[0]}"').fetchone()[0] == 10
        assert not st.con.execute("SELECT count(*) FROM field_events WHERE kind = 'realign-split'").fetchone()[0]


def test_a_text_field_with_the_same_values_beside_each_group_anchors_their_join():
    # a feeder's screen: food (g), count, KIND; the text: feed amount (g), seen, food type. No name is
    # alike, but both text fields hold the same few foods
    s = {
        "food": stats("food", "g", 2.7, 11.3, 7, {"count": 5, "kind": 7}),
        "count": stats("count", None, 12, 23, 5, {"food": 5, "kind": 5}),
        "kind": stats("kind", None, None, None, 7, {"food": 7, "count": 5}, kind="text"),
        "feed_amount": stats("feed_amount", "g", 1.5, 11.6, 15, {"seen": 3, "food_type": 9}),
        "seen": stats("seen", None, 9, 24, 3, {"feed_amount": 3, "food_type": 3}),
        "food_type": stats("food_type", None, None, None, 9, {"feed_amount": 9, "seen": 3}, kind="text"),
    }
    def some_alike(a, b):  # the encoder: not unlike (0.4), not close
        return 1.0 if a == b else 0.4 if {a, b} in ({"food", "feed_amount"}, {"count", "seen"}) else 0.2

    s = with_texts(s, ("food", "count", "kind"), (1.0, 0.2, 0.0), (0.8, 0.6, 0.0))  # the rounds read alike
    foods = frozenset({"bloodworms", "flakes", "pellets", "brine shrimp"})
    same = {**s, "kind": replace(s["kind"], values=foods - {"pellets"}), "food_type": replace(s["food_type"], values=foods)}
    assert {(m.source, m.target) for m in plan_merges(same, some_alike)} == {
        ("food", "feed_amount"), ("seen", "count"), ("kind", "food_type")}
    # texts that share one value or none say nothing: the shapes alone do not join two quantities
    other = {**s, "kind": replace(s["kind"], values=frozenset({"north box", "oak box", "flakes"})),
             "food_type": replace(s["food_type"], values=foods)}
    assert plan_merges(other, some_alike) == []
    # nor do the same values in rounds that read otherwise (a plant's name beside two kinds of care)
    apart = with_texts(same, ("food", "count", "kind"), (1.0, 0.2, 0.0), (0.3, 0.0, 0.95))
    assert plan_merges(apart, some_alike) == []


def test_a_rate_printed_without_its_amount_pairs_with_the_same_rate_with_it():
    # the text says "1.651/L PPL", the pump's receipt "price/l 1.924 EUR/L": both per litre
    s = {
        "ppl": stats("ppl", "/L", 1.56, 1.93, 20, {"amount": 20, "vol": 20}),
        "amount": stats("amount", "€", 41, 110, 20, {"ppl": 20, "vol": 20}),
        "vol": stats("vol", "L", 25, 56, 20, {"ppl": 20, "amount": 20}),
        "price_l": stats("price_l", "€/L", 1.59, 1.93, 5, {"total": 5, "vol": 5}),
        "total": stats("total", "€", 41, 91, 5, {"price_l": 5, "vol": 5}),
    }
    s["vol"] = replace(s["vol"], rounds=25, companions={"ppl": 20, "amount": 20, "price_l": 5, "total": 5})
    got = {(m.source, m.target) for m in plan_merges(s, lambda a, b: 1.0 if a == b else 0.4)}
    assert got == {("price_l", "ppl"), ("total", "amount")}
    # a rate per another unit is another quantity
    s["price_l"] = replace(s["price_l"], unit="€/kg", dimension="price")
    assert plan_merges(s, lambda a, b: 1.0 if a == b else 0.4) == []


def test_a_rate_printed_without_what_it_is_per_pairs_with_the_same_rate_in_full():
    # one receipt prints "PPL 1.819 €" (per litre, in its label only), the text says "1.722 €/L";
    # both beside an odometer reading, an amount and a volume
    s = {
        "unit_price": stats("unit_price", "€/L", 1.55, 1.95, 25, {"amount": 25, "vol": 20, "odo": 18}),
        "amount": stats("amount", "€", 39, 103, 25, {"unit_price": 25, "vol": 20, "odo": 18}),
        "vol": stats("vol", "L", 22, 58, 20, {"unit_price": 20, "amount": 20, "odo": 15}),
        "ppl": stats("ppl", "€", 1.56, 1.90, 7, {"total": 7, "volume": 7, "odo": 6}),
        "total": stats("total", "€", 47, 107, 7, {"ppl": 7, "volume": 7, "odo": 6}),
        "volume": stats("volume", "L", 22, 58, 7, {"ppl": 7, "total": 7, "odo": 6}),
        "odo": stats("odo", "km", 84000, 98000, 24, {"unit_price": 18, "amount": 18, "vol": 15, "ppl": 6,
                                                     "total": 6, "volume": 6}),
    }
    similar = lambda a, b: 1.0 if a == b else {frozenset({"amount", "total"}): 0.68,  # noqa: E731
                                              frozenset({"vol", "volume"}): 0.9}.get(frozenset({a, b}), 0.1)
    got = {(m.source, m.target) for m in plan_merges(s, similar)}
    assert got == {("ppl", "unit_price"), ("total", "amount"), ("volume", "vol")}
    # a sum in € is not the rate in €/L: its range is another
    s["ppl"] = replace(s["ppl"], vmin=40.0, vmax=95.0)
    assert ("ppl", "unit_price") not in {(m.source, m.target) for m in plan_merges(s, similar)}


def test_a_flow_is_no_volume_with_its_per_unprinted():
    # a price's "per litre" may go unprinted ("PPL 1.819 €", above); a flow's "per minute" does not: a screen's
    # "pump" in L/min fits the text's "flow" in L/min, not its "consumption" in L
    s = {
        "pump": stats("pump", "L/min", 5.7, 14.9, 9, {}),
        "flow": stats("flow", "L/min", 4.2, 16.9, 20, {}),
        "consumption": stats("consumption", "L", 4.0, 17.0, 34, {}),
    }
    s = {k: replace(v, dimension={"L": "volume", "L/min": "flow"}[v.unit]) for k, v in s.items()}
    same = lambda a, b: 1.0 if a == b else 0.5  # noqa: E731  (names tell nothing)
    assert pairing(frozenset({"pump"}), frozenset({"flow", "consumption"}), s, same, by_fit=True) == {
        "pump": "flow"}


def test_of_two_groups_one_kind_pairs_with_the_one_a_text_field_of_the_same_values_anchors_wins():
    # openings told in text ("session 50 min, 14 variations, variation: Najdorf") pair by shape with the
    # puzzles (duration, puzzles) and with the openings' photos (duration, lines, opening): the photos print
    # the same openings, so that join is taken (it used to depend on which pairing was looked at last)
    s = {
        "session_duration": stats("session_duration", "min", 20, 80, 15, {"variations": 15, "variation": 13}),
        "variations": stats("variations", None, 5, 30, 15, {"session_duration": 15, "variation": 13}),
        "variation": stats("variation", None, None, None, 13, {"session_duration": 13, "variations": 13}, kind="text"),
        "duration": stats("duration", "min", 10, 90, 18, {"puzzles": 18, "puzzle_rating": 18}),
        "puzzles": stats("puzzles", None, 8, 40, 24, {"duration": 18, "puzzle_rating": 24}),
        "puzzle_rating": stats("puzzle_rating", None, 1500, 2000, 24, {"duration": 18, "puzzles": 24}),
        "duration~2": stats("duration~2", "min", 20, 85, 19, {"lines": 19, "opening": 19}),
        "lines": stats("lines", None, 4, 32, 19, {"duration~2": 19, "opening": 19}),
        "opening": stats("opening", None, None, None, 19, {"duration~2": 19, "lines": 19}, kind="text"),
    }
    s = {k: replace(v, text=(1.0, 0.3, 0.0)) for k, v in s.items()}  # every round reads alike
    names = frozenset({"najdorf", "caro-kann", "catalan", "london system"})
    s["variation"] = replace(s["variation"], values=names)
    s["opening"] = replace(s["opening"], values=names | {"king's indian"})
    got = {(m.source, m.target) for m in plan_merges(s, lambda a, b: 1.0 if a == b else 0.4)}
    assert got == {("session_duration", "duration~2"), ("variations", "lines"), ("variation", "opening")}, got
    # without the photos' openings, the text openings pair with the puzzles as before
    s["opening"] = replace(s["opening"], values=frozenset({"north", "south", "east"}))
    got = {(m.source, m.target) for m in plan_merges(s, lambda a, b: 1.0 if a == b else 0.4)}
    assert ("variations", "lines") not in got


def test_a_text_field_named_two_ways_beside_the_same_numbers_is_joined():
    # a growth photo prints "Specimen: Pothos" beside height and leaves, another layout "Plant: Pothos"
    # beside the same height; the watering text names the same plants as "pot" beside other numbers
    plants = frozenset({"pothos", "monstera", "calathea", "snake plant", "fiddle leaf fig"})
    s = {
        "height": stats("height", "cm", 30, 140, 23, {"leaf_count": 18, "plant": 11, "specimen": 10}),
        "leaf_count": stats("leaf_count", None, 3, 39, 18, {"height": 18, "plant": 6, "specimen": 10}),
        "plant": replace(stats("plant", None, None, None, 11, {"height": 11, "leaf_count": 6}, kind="text"),
                         values=plants),
        "specimen": replace(stats("specimen", None, None, None, 10, {"height": 10, "leaf_count": 10}, kind="text"),
                            values=plants - {"monstera"}),
        "irrigation": stats("irrigation", "mL", 150, 820, 24, {"pot": 24}),
        "pot": replace(stats("pot", None, None, None, 24, {"irrigation": 24}, kind="text"), values=plants),
    }
    (m,) = plan_text_joins(s)
    assert (m.source, m.target) == ("specimen", "plant")
    assert "height" in m.evidence["reason"]
    # two names of things one record holds together ("from"/"to") meet in its rounds: never one field
    together = {**s, "plant": replace(s["plant"], companions={**s["plant"].companions, "specimen": 8})}
    assert plan_text_joins(together) == []
    # one shared value is no evidence; a person's decision is kept
    few = {**s, "specimen": replace(s["specimen"], values=frozenset({"pothos", "oak box", "north box"}))}
    assert plan_text_joins(few) == []
    assert plan_text_joins(s, keep=frozenset({"specimen"})) == []


def test_a_text_field_of_the_same_values_lets_unlike_names_pair_by_fit():
    # a feeder's screen: "Mix (g) | Mix type | Days since"; the text: "Seeds: 0.9 kg; seed type nyjer;
    # interval 3 days". No name is alike, even by the encoder, but both text fields hold the same foods
    # and the rounds read alike: one kind of record
    foods = frozenset({"nyjer", "peanuts", "fat balls", "sunflower hearts"})
    s = {
        "mix": stats("mix", "g", 207, 1485, 8, {"mix_type": 8, "days_since": 5}),
        "days_since": stats("days_since", None, 2, 4, 5, {"mix": 5, "mix_type": 5}),
        "mix_type": replace(stats("mix_type", None, None, None, 8, {"mix": 8, "days_since": 5}, kind="text"),
                            values=foods - {"peanuts"}),
        "seeds": stats("seeds", "kg", 0.26, 1.46, 26, {"interval": 18, "seed_type": 26}),
        "interval": stats("interval", None, 1, 5, 18, {"seeds": 18, "seed_type": 18}),
        "seed_type": replace(stats("seed_type", None, None, None, 26, {"seeds": 26, "interval": 18}, kind="text"),
                             values=foods),
    }
    s["mix"] = replace(s["mix"], dimension="mass")  # grams on the screen, kilograms in the text
    alike = with_texts(s, ("mix", "days_since", "mix_type"), (1.0, 0.2, 0.0), (0.8, 0.5, 0.0))
    assert {(m.source, m.target) for m in plan_merges(alike, unlike_names)} == {
        ("mix", "seeds"), ("days_since", "interval"), ("mix_type", "seed_type")}
    # without the same values there is nothing to go by
    other = {**alike, "mix_type": replace(alike["mix_type"], values=frozenset({"oak box", "shed box"}))}
    assert plan_merges(other, unlike_names) == []
    # nor with them in rounds that read otherwise
    apart = with_texts(s, ("mix", "days_since", "mix_type"), (1.0, 0.2, 0.0), (0.1, 0.0, 0.99))
    assert plan_merges(apart, unlike_names) == []


def test_a_placeholder_text_joins_the_printed_label_of_the_same_values():
    # a photo prints "Result: draw" beside a rating; the log lines leave the result unlabelled (`item_2`) beside
    # the same label's other sense: one field, named as printed, though the log lines are the more rounds
    results = frozenset({"win", "draw", "loss"})
    s = {
        "rating": stats("rating", None, 1300, 1600, 4, {"result": 4}),
        "result": replace(stats("result", None, None, None, 4, {"rating": 4}, kind="text"), values=results),
        "rating~2": stats("rating~2", None, 1350, 1650, 18, {"item_2": 18, "length": 18}),
        "length": stats("length", None, 20, 90, 18, {"item_2": 18, "rating~2": 18}),
        "item_2": replace(stats("item_2", None, None, None, 18, {"rating~2": 18, "length": 18}, kind="text"),
                          values=results),
    }
    (m,) = plan_text_joins(s)
    assert (m.source, m.target) == ("item_2", "result")
    # beside numbers of unrelated names there is no evidence
    other = {**s, "rating": replace(s["rating"], name="elo"), "result": replace(
        s["result"], companions={"elo": 4})}
    other["elo"] = other.pop("rating")
    assert plan_text_joins(other) == []


def test_an_unlabelled_text_two_kinds_of_record_open_their_lines_with_is_two_fields(tmp_path):
    # openings studied ("Caro-Kann, 12 lines, 30 min") and games played ("Aurelie, draw, 41 length, 1490 my
    # rating") both open a log line with an unlabelled name: the games' names are opponents, not openings
    t0 = datetime(2025, 3, 1, 10)
    openings = ["Caro-Kann", "Sicilian", "London", "French"]
    people = ["Aurelie", "Keiko", "Dev", "Ilya"]
    sessions = []
    for s in range(1, 13):
        t = t0 + timedelta(days=s)
        rounds = [f"Day {s} — {openings[s % 4]}, {10 + s} lines, {20 + s} min",
                  f"Day {s} — {people[s % 4]}, {('win', 'draw', 'loss')[s % 3]}, {30 + 3 * s} length, "
                  f"{1400 + 7 * s} my rating"]
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": [
            {"round": f"S{s}:R{k + 1}", "time": (t + timedelta(hours=k)).isoformat(), "user": u, "assistant": "Logged."}
            for k, u in enumerate(rounds)]})
    path = tmp_path / "chess.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as st:
        build(st, read_file(path), deps, DEFAULT)
        con = st.con
        split = con.execute("SELECT raw_attribute, field, evidence FROM field_events WHERE kind = 'realign-split'").fetchall()
        # one split, logged once (a planned split is applied a single time)
        assert len(split) == 1 and "item" in json.loads(split[0][2])["reason"]
        tables = {t: [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [t]).fetchall()]
            for (t,) in con.execute("SELECT table_name FROM memory_tables").fetchall()}
        assert len(tables) == 2, tables
        # each table holds the names of its own kind of record only
        for t, cols in tables.items():
            texts = [c for c in cols if c.startswith("item")]
            assert len(texts) >= 1, cols
            names = {v for c in texts for (v,) in con.execute(f'SELECT DISTINCT "{c}" FROM "{t}"').fetchall() if v}
            assert names <= set(openings) or names <= set(people) | {"win", "draw", "loss"}, (t, names)


def test_one_pair_unlike_in_name_needs_two_fields_in_common():
    # a feeding told in text (sugar used kg, volume mL) and on an app's screen (sugar used kg, syrup L),
    # both naming the colony: "volume" and "syrup" are unlike, the sugar and the colony's name vouch
    s = {
        "sugar_used": stats("sugar_used", "kg", 1.5, 4.6, 33, {"volume": 22, "syrup": 11, "colony": 27}),
        "volume": stats("volume", "mL", 2700, 6000, 22, {"sugar_used": 22, "colony": 18}),
        "syrup": stats("syrup", "L", 1.1, 5.0, 11, {"sugar_used": 11, "colony": 9}),
        "colony": replace(stats("colony", None, None, None, 27, {"sugar_used": 27, "volume": 18, "syrup": 9},
                                kind="text"), values=frozenset({"hive a", "hive c", "hive d"})),
    }
    far = lambda a, b: 1.0 if a == b else 0.2  # noqa: E731
    assert [(m.source, m.target) for m in plan_merges(s, far)] == [("syrup", "volume")]
    # the colony a reference number instead (a value per round): one field in common is not enough ...
    refs = dict(s, colony=replace(s["colony"], values=frozenset(f"r{i}" for i in range(27))))
    assert plan_merges(refs, far) == []
    # ... as a house's use and a solar panel's yield, both in kWh beside one peak power, are two streams
    meters = {
        "peak": stats("peak", "kW", 0.8, 4.9, 54, {"usage": 23, "yield": 31}),
        "usage": stats("usage", "kWh", 4, 31, 31, {"peak": 23}),
        "yield": stats("yield", "kWh", 2, 28, 31, {"peak": 31}),
    }
    assert plan_merges(meters, far) == []


def test_names_no_close_match_yield_to_typical_values_clearly_of_one_size():
    # a lake count's screenshot prints "Dabblers" and "Gs.", the text "mallards" and "geese": the encoder finds
    # dabblers a little closer to geese (0.39) than to mallards (0.30); their typical values say otherwise
    s = {
        "mallards": replace(stats("mallards", None, 10, 66, 23, {"geese": 23}), median=31.0),
        "geese": replace(stats("geese", None, 3, 37, 23, {"mallards": 23}), median=19.0),
        "dabblers": replace(stats("dabblers", None, 15, 65, 5, {"gs": 5}), median=54.0),
        "gs": replace(stats("gs", None, 7, 36, 5, {"dabblers": 5}), median=16.0),
    }
    names = {frozenset({"dabblers", "geese"}): 0.39, frozenset({"dabblers", "mallards"}): 0.30,
             frozenset({"gs", "geese"}): 0.2, frozenset({"gs", "mallards"}): 0.21}
    sim = lambda a, b: 1.0 if a == b else names.get(frozenset({a, b}), 0.1)  # noqa: E731
    assert pairing(frozenset({"dabblers", "gs"}), frozenset({"mallards", "geese"}), s, sim, lenient=True,
                   by_fit=True) == {"dabblers": "mallards", "gs": "geese"}
    # also where the names left one place only ("dabblers"/"mallards" unlike at 0.30, "gs" unlike both)
    assert pairing(frozenset({"dabblers", "gs"}), frozenset({"mallards", "geese"}), s, sim,
                   lenient=True) == {"dabblers": "mallards", "gs": "geese"}
    # sizes that do not tell (both pairings alike): the names decide as before
    even = dict(s, dabblers=replace(s["dabblers"], median=25.0), gs=replace(s["gs"], median=24.0))
    assert pairing(frozenset({"dabblers", "gs"}), frozenset({"mallards", "geese"}), even, sim, lenient=True,
                   by_fit=True) == {"dabblers": "geese", "gs": "mallards"}


def test_names_that_settle_nothing_beside_a_shared_field_leave_the_pairing_to_clearly_different_sizes():
    # a language app's lesson screen printed "Lessons | XP | Streak", another version "Units | Points | Streak":
    # the encoder finds "xp" and "lessons" both about as close to "points" (0.35, 0.36) and unlike "units"; the
    # counts are of clearly different sizes (lessons 4, units 6.5; xp 171, points 200)
    s = {
        "lessons": replace(stats("lessons", None, 1, 6, 5, {"xp": 5, "streak": 4}), median=4.0),
        "xp": replace(stats("xp", None, 72, 261, 5, {"lessons": 5, "streak": 4}), median=171.0),
        "units": replace(stats("units", None, 3, 9, 4, {"points": 4, "streak": 4}), median=6.5),
        "points": replace(stats("points", None, 52, 295, 4, {"units": 4, "streak": 4}), median=199.5),
        "streak": replace(stats("streak", "days", 12, 118, 8, {"lessons": 4, "xp": 4, "units": 4, "points": 4}),
                          median=85.5),
    }
    cos = {frozenset(p): c for p, c in ((("xp", "points"), 0.35), (("lessons", "points"), 0.36),
                                         (("xp", "units"), 0.29), (("lessons", "units"), 0.30))}

    def sim(a, b):
        return 1.0 if a == b else cos.get(frozenset((a, b)), 0.1)
    assert {(m.source, m.target) for m in plan_merges(s, sim)} == {("units", "lessons"), ("points", "xp")}
    # counts of one size on both sides: the sizes do not tell which is which either, and nothing is joined
    like = dict(s, xp=replace(s["xp"], vmin=2, vmax=9, median=5.0), points=replace(s["points"], vmin=2, vmax=8,
                                                                                      median=5.5))
    assert plan_merges(like, sim) == []


def test_one_bare_count_of_each_beside_two_fields_in_common_pairs_when_the_rounds_read_alike():
    # a garden count told in text ("kinds") and shown on an app's screen ("SPECIES SEEN"), both beside the
    # birds counted and the minutes watched: the one place the count fits
    s = {
        "birds": stats("birds", None, 11, 80, 12, {"duration": 12, "kinds": 8, "species_seen": 4}),
        "duration": stats("duration", "min", 12, 54, 13, {"birds": 12, "kinds": 8, "species_seen": 4}),
        "kinds": stats("kinds", None, 10, 18, 8, {"birds": 8, "duration": 8}),
        "species_seen": stats("species_seen", None, 5, 18, 4, {"birds": 4, "duration": 4}),
    }
    far = lambda a, b: 1.0 if a == b else 0.2  # noqa: E731
    v = np.ones(4) / 2.0
    alike = with_texts(s, {"kinds"}, v, v)
    assert [(m.source, m.target) for m in plan_merges(alike, far)] == [("species_seen", "kinds")]
    # rounds that read as two kinds of record: no join by fit alone
    w = np.array([1.0, 0, 0, 0])
    assert plan_merges(with_texts(s, {"kinds"}, v, w), far) == []
    # one field in common is not enough
    one = {k: replace(f, companions={c: n for c, n in f.companions.items() if c != "duration"})
           for k, f in alike.items() if k != "duration"}
    assert plan_merges(one, far) == []


def test_a_second_sense_given_to_one_round_of_the_usual_kind_joins_back():
    # "Gs." beside "Ducks" was given a sense of its own before "Ducks" joined "dabblers": its one round is a
    # lake survey like the others, beside the dabblers
    s = {
        "dabblers": stats("dabblers", None, 5, 70, 40, {"gs": 38, "temperature": 30, "gs~2": 1}),
        "gs": stats("gs", None, 3, 30, 38, {"dabblers": 38, "temperature": 29}),
        "temperature": stats("temperature", "°C", -2, 18, 30, {"dabblers": 30, "gs": 29}),
        "gs~2": stats("gs~2", None, 28, 28, 1, {"dabblers": 1}),
    }
    assert [(m.source, m.target) for m in plan_rejoins(s)] == [("gs~2", "gs")]
    # beside fields the field's own records never have, it is a record of another kind: it stays apart
    other = dict(s, **{"gs~2": stats("gs~2", None, 28, 28, 1, {"eggs": 1}),
                       "eggs": stats("eggs", None, 1, 9, 20, {"gs~2": 1})})
    assert plan_rejoins(other) == []
    # met in one round with the field: two quantities
    met = dict(s, **{"gs~2": stats("gs~2", None, 28, 28, 1, {"dabblers": 1, "gs": 1})})
    assert plan_rejoins(met) == []
    # a person's decision is kept
    assert plan_rejoins(s, keep=frozenset({"gs~2"})) == []


def test_one_other_count_beside_a_labels_two_senses_and_a_shared_text_pairs_when_the_rounds_read_alike():
    # nest boxes: the text logs "eggs, chicks, box"; a camera's screen "eggs, young, box". "eggs" on the screen
    # was given a sense of its own ("eggs~2") because "young" was new beside it: one label printed beside both
    boxes = frozenset({"north box", "oak box", "shed box"})
    s = {
        "eggs": stats("eggs", None, 0, 8, 16, {"chicks": 16, "box": 12}),
        "chicks": stats("chicks", None, 1, 8, 17, {"eggs": 16, "box": 13}),
        "box": replace(stats("box", None, None, None, 20, {"eggs": 12, "chicks": 13, "eggs~2": 7, "young": 7},
                             kind="text"), values=boxes),
        "eggs~2": stats("eggs~2", None, 0, 8, 8, {"young": 8, "box": 7}),
        "young": stats("young", None, 0, 8, 8, {"eggs~2": 8, "box": 7}),
    }
    far = lambda a, b: 1.0 if a == b else 0.2  # noqa: E731
    v, w = np.array([1.0, 0.0]), np.array([0.67, np.sqrt(1 - 0.67 ** 2)])  # cosine 0.67: alike, not the same
    alike = with_texts(s, {"eggs", "chicks"}, v, w)
    assert ("young", "chicks") in [(m.source, m.target) for m in plan_merges(alike, far)]
    # rounds that read as another kind of record stay apart
    assert plan_merges(with_texts(s, {"eggs", "chicks"}, v, np.array([0.3, np.sqrt(1 - 0.09)])), far) == []
    # with two other fields on each side the senses were split for their company: no anchor
    two = dict(alike, **{
        "chicks": replace(alike["chicks"], companions={"eggs": 16, "box": 13, "fed": 16}),
        "eggs": replace(alike["eggs"], companions={"chicks": 16, "box": 12, "fed": 16}),
        "fed": replace(alike["chicks"], name="fed", companions={"eggs": 16, "chicks": 16}),
        "young": replace(alike["young"], companions={"eggs~2": 8, "box": 7, "seen": 8}),
        "eggs~2": replace(alike["eggs~2"], companions={"young": 8, "box": 7, "seen": 8}),
        "seen": replace(alike["young"], name="seen", companions={"eggs~2": 8, "young": 8}),
    })
    assert ("young", "chicks") not in [(m.source, m.target) for m in plan_merges(two, far)]


def test_a_quantity_with_a_unit_beside_a_labels_second_sense_pairs_where_the_other_kind_prints_more():
    # a scale's screen prints "HARVEST 19.72 kilos | FRAMES 17" ("frames~2": "harvest" was new beside it); the
    # texts say "honey" kg, "frames" and a moisture %: the one place of the harvest's unit and size is the honey
    s = {
        "honey": stats("honey", "kg", 2.2, 21.9, 26, {"frames": 26, "h2o": 18}),
        "frames": stats("frames", None, 3, 20, 26, {"honey": 26, "h2o": 18}),
        "h2o": replace(stats("h2o", "%", 16.3, 19.7, 18, {"honey": 18, "frames": 18}), dimension="percent"),
        "harvest": stats("harvest", "kg", 5.6, 19.7, 3, {"frames~2": 3}),
        "frames~2": stats("frames~2", None, 10, 17, 3, {"harvest": 3}),
    }
    typical = {"honey": 14.3, "frames": 11, "h2o": 17.6, "harvest": 10.8, "frames~2": 17}
    s = {k: replace(v, median=typical[k]) for k, v in s.items()}
    far = lambda a, b: 1.0 if a == b else 0.2  # noqa: E731
    v, w = np.array([1.0, 0.0]), np.array([0.73, np.sqrt(1 - 0.73 ** 2)])  # cosine 0.73
    alike = with_texts(s, {"honey", "frames", "h2o"}, v, w)
    assert {(m.source, m.target) for m in plan_merges(alike, far)} == {("harvest", "honey"), ("frames~2", "frames")}
    # rounds read only a little alike (0.6): apart
    some = with_texts(s, {"honey", "frames", "h2o"}, v, np.array([0.6, 0.8]))
    assert plan_merges(some, far) == []
    # a harvest without its unit has no place of its kind to go by
    bare = {k: replace(x, unit=None, dimension=None) if k == "harvest" else x for k, x in alike.items()}
    assert plan_merges(bare, far) == []


def test_a_one_off_record_whose_labels_are_all_new_joins_the_one_kind_it_fits_field_by_field():
    # an electricity log ("cons" kWh, "reading" kWh, "peak" kW) and once another app's screen ("usage." 25.3 kWh,
    # "register." 42535 kWh, "peak load." 8.1 kW); a solar log has kWh and kW too, of other sizes
    s = {
        "cons": stats("cons", "kWh", 9, 27, 28, {"reading": 28, "peak": 19}),
        "reading": stats("reading", "kWh", 41069, 42931, 28, {"cons": 28, "peak": 19}),
        "peak": stats("peak", "kW", 2.3, 8.4, 19, {"cons": 19, "reading": 19}),
        "yield": stats("yield", "kWh", 3, 28, 39, {"max": 39}),
        "max": stats("max", "kW", 1, 5, 39, {"yield": 39}),
        "usage": stats("usage", "kWh", 25.3, 25.3, 1, {"register": 1, "peak_load": 1}),
        "register": stats("register", "kWh", 42535, 42535, 1, {"usage": 1, "peak_load": 1}),
        "peak_load": stats("peak_load", "kW", 8.1, 8.1, 1, {"usage": 1, "register": 1}),
    }
    for k in ("cons", "reading", "yield", "usage", "register"):
        s[k] = replace(s[k], dimension="energy")
    for k in ("peak", "max", "peak_load"):
        s[k] = replace(s[k], dimension="power")
    v, w = np.array([1.0, 0.0]), np.array([0.8, 0.6])
    alike = with_texts(s, {"cons", "reading", "peak", "yield", "max"}, v, w)
    assert {(m.source, m.target) for m in plan_lone_joins(alike)} == {
        ("usage", "cons"), ("register", "reading"), ("peak_load", "peak")}
    # a round that reads otherwise, or a one-off of two fields, stays as it is
    assert plan_lone_joins(with_texts(s, {"cons", "reading", "peak", "yield", "max"}, v, np.array([0.2, 0.98]))) == []
    two = {k: replace(x, companions={c: n for c, n in x.companions.items() if c != "register"})
           for k, x in alike.items() if k != "register"}
    assert plan_lone_joins(two) == []
    # a one-off that fits two kinds of record field by field is no one's
    twin = dict(alike, **{k + "_b": replace(alike[k], name=k + "_b", companions={c + "_b": n for c, n in
                                                                             alike[k].companions.items()})
                          for k in ("cons", "reading", "peak")})
    assert plan_lone_joins(twin) == []


def invoices_with_one_other_screen():
    # invoices in the texts ("3099.43 USD total due, Harbor Cafe, 20.3 hrs"); once another screen prints "Amount
    # 2196.30 USD | Bill to Harbor Cafe | Hours 28.0 h": its hours joined by name, the amount and client are new
    clients = frozenset({"Harbor Cafe", "Pine & Co", "Vega Studio"})
    return {
        "total_due": stats("total_due", "$", 302.0, 3950.0, 21, {"hrs_duration": 16, "item": 21}),
        "hrs_duration": stats("hrs_duration", "min", 174.0, 2310.0, 17, {"total_due": 16, "item": 16, "amount": 1,
                                                                         "bill": 1}),
        "item": replace(stats("item", None, None, None, 21, {"total_due": 21, "hrs_duration": 16}, kind="text"),
                        values=clients),
        "amount": stats("amount", "$", 2196.3, 2196.3, 1, {"hrs_duration": 1, "bill": 1}),
        "bill": replace(stats("bill", None, None, None, 1, {"hrs_duration": 1, "amount": 1}, kind="text"),
                        values=frozenset({"Harbor Cafe"})),
    }


def test_a_record_printed_once_another_way_joins_the_places_its_kind_lacks_in_that_round():
    s = invoices_with_one_other_screen()
    # the names are unlike: the client the new text holds, one the invoices name, says which record it is
    assert {(m.source, m.target) for m in plan_anchored_lone_joins(s, unlike_names)} == {
        ("amount", "total_due"), ("bill", "item")}
    # a client no invoice names, and names unlike: a number beside a record, not its amount
    other = dict(s, bill=replace(s["bill"], values=frozenset({"Lunch"})))
    assert plan_anchored_lone_joins(other, unlike_names) == []
    # ... unless the names are alike
    assert [(m.source, m.target) for m in plan_anchored_lone_joins(other, lambda a, b: 0.6)] == [("amount", "total_due")]
    # a number of another unit fills no place
    assert plan_anchored_lone_joins(dict(s, amount=replace(s["amount"], unit="kg", dimension="mass")), unlike_names) == []
    # a place the round already holds is not free: a second amount beside the total stays apart
    held = dict(s, amount=replace(s["amount"], companions={"hrs_duration": 1, "bill": 1, "total_due": 1}))
    assert plan_anchored_lone_joins(held, unlike_names) == []


def test_a_text_anchor_lets_rounds_that_read_somewhat_alike_join():
    # a feeder's refill screen ("Fill. 813 g | Food. nyjer | Days since last. 4") and the text's "seed 1.2 kg,
    # nyjer, 5 d gap": the same four foods beside each, a mass and a bare count that fit
    foods = frozenset({"fat balls", "nyjer", "peanuts", "sunflower hearts"})
    s = {
        "seed": stats("seed", "kg", 0.26, 1.49, 18, {"item": 18, "gap": 9}),
        "gap": stats("gap", None, 3, 6, 9, {"seed": 9, "item": 9}),
        "item": replace(stats("item", None, None, None, 18, {"seed": 18, "gap": 9}, kind="text"), values=foods),
        "fill": stats("fill", "kg", 0.437, 1.343, 9, {"food": 7, "days_since": 6}),
        "days_since": stats("days_since", None, 2, 6, 6, {"fill": 6, "food": 6}),
        "food": replace(stats("food", None, None, None, 7, {"fill": 7, "days_since": 6}, kind="text"), values=foods),
    }
    far = lambda a, b: 1.0 if a == b else 0.44 if {a, b} == {"fill", "seed"} else 0.2  # noqa: E731
    a, b = np.array([1.0, 0.0]), np.array([0.53, np.sqrt(1 - 0.53 ** 2)])  # cosine 0.53
    somewhat = with_texts(s, {"seed", "gap", "item"}, a, b)
    assert {(m.source, m.target) for m in plan_merges(somewhat, far)} == {
        ("fill", "seed"), ("days_since", "gap"), ("food", "item")}
    c = np.array([0.3, np.sqrt(1 - 0.3 ** 2)])  # cosine 0.3: two kinds of record that name the same foods
    assert plan_merges(with_texts(s, {"seed", "gap", "item"}, a, c), far) == []


def _labels(**by_field):
    return {(f, raw): LabelText(f, raw, frozenset(vals), frozenset(rounds))
            for f, labs in by_field.items() for raw, vals, rounds in labs}


def test_a_text_label_placed_early_in_the_wrong_place_moves_to_the_field_holding_its_values():
    # "Opponent: Aurelie" was placed early in the unlabelled place that holds "win/loss/draw" in the log
    # lines "Day 3 — Tomasz, draw, 77 move count"; the place holding the names is "item"
    people, results = {"aurelie", "keiko", "dev", "tomasz"}, {"win", "loss", "draw"}
    labels = _labels(item_2=[("item_2", results, {"r1", "r2", "r3"}), ("opponent", people - {"tomasz"}, {"r4", "r5"})],
                     item=[("item", people, {"r1", "r2", "r3"})],
                     outcome=[("outcome", results, {"r4", "r5"})])
    numbers = {"move_count": 5, "rating": 5}
    s = {
        "item": replace(stats("item", None, None, None, 3, numbers, kind="text"), values=frozenset(people)),
        "item_2": replace(stats("item_2", None, None, None, 5, numbers, kind="text"),
                          values=frozenset(people | results)),
        "outcome": replace(stats("outcome", None, None, None, 2, numbers, kind="text"), values=frozenset(results)),
        "move_count": stats("move_count", None, 20, 90, 5, {"item": 3, "item_2": 5, "outcome": 2, "rating": 5}),
        "rating": stats("rating", None, 1300, 1600, 5, {"item": 3, "item_2": 5, "outcome": 2, "move_count": 5}),
    }
    assert [(m.source, m.target) for m in plan_label_moves(labels, s)] == [("opponent", "item")]
    # the label the field is named after stays; a person's decision is kept
    assert plan_label_moves(labels, s, keep=frozenset({"opponent"})) == []
    # values shared with the field's other labels: one field, nothing moves
    mixed = {**labels, **_labels(item_2=[("item_2", results | {"dev"}, {"r1", "r2", "r3"})])}
    assert plan_label_moves(mixed, s) == []
    # the field holding the values meets the label in its rounds: two things of one record
    met = {**labels, **_labels(item=[("item", people, {"r1", "r4"})])}
    assert plan_label_moves(met, s) == []


def _games(folder: Path) -> Path:
    t0 = datetime(2025, 3, 1, 10)
    people, results = ["Dev", "Tomasz", "Aurelie", "Keiko", "Bronwen"], ["loss", "draw", "win"]
    sessions = []
    for s in range(1, 21):
        t = t0 + timedelta(days=s)
        who, res = people[(s * 3) % 5], results[(s // 2) % 3]
        u = (f"Game report: Opponent: {who}, the outcome was {res}, {20 + 3 * s} move count and my rating came in "
             f"at {1400 + 7 * s}." if s % 3 == 1 and s > 1 else
             f"Day {s} — {who}, {res}, {20 + 3 * s} move count, {1400 + 7 * s} my rating")
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": [
            {"round": f"S{s}:R1", "time": t.isoformat(), "user": u, "assistant": "Logged."}]})
    path = folder / "games.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    return path


def test_late_re_alignment_moves_a_misplaced_label_and_the_table_holds_one_kind_of_value_per_column(tmp_path):
    deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as st:
        build(st, read_file(_games(tmp_path)), deps, DEFAULT)
        con = st.con
        # the state an early decision on little evidence leaves: each label its own field, "opponent" in the
        # unlabelled place of the results
        con.execute("UPDATE field_aliases SET field = raw_attribute WHERE raw_attribute IN ('item', 'item_2', 'outcome')")
        con.execute("UPDATE field_aliases SET field = 'item_2' WHERE raw_attribute = 'opponent'")
        con.execute("UPDATE observations SET attribute = coalesce(raw_attribute, attribute)")
        con.execute("UPDATE observations SET attribute = 'item_2' WHERE raw_attribute = 'opponent'")
        recompute_field_stats(con)
        report = realign(st, DEFAULT, encoder=deps.text_encoder)
        assert any(m.source == "opponent" for m in report.merges)
        (t,) = [t for (t,) in con.execute("SELECT table_name FROM memory_tables").fetchall()]
        cols = [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [t]).fetchall()]
        texts = {c: {v for (v,) in con.execute(f'SELECT DISTINCT "{c}" FROM "{t}"').fetchall() if v}
                 for c in cols if c in ("opponent", "outcome", "item", "item_2")}
        assert texts.get("opponent") == {"Dev", "Tomasz", "Aurelie", "Keiko", "Bronwen"}, texts
        assert {v.lower() for v in texts.get("outcome", ())} == {"loss", "draw", "win"}, texts
        assert len(texts) == 2, texts


def test_two_pairs_of_one_size_join_by_shape_when_their_rounds_read_as_one_kind():
    # a second puzzle screen ("Puzzles." | "Tactics rating.") and the text ("solved" | "puzzle rating"), beside
    # a blitz log ("games" | "blitz rating") whose rating is closer in name to the screen's than the text's is
    s = {
        "puzzles": replace(stats("puzzles", None, 26, 35, 4, {"tactics_rating": 4}), median=27.0),
        "tactics_rating": replace(stats("tactics_rating", None, 1591, 1949, 4, {"puzzles": 4}), median=1743.0),
        "solved": replace(stats("solved", None, 5, 35, 8, {"puzzle_rating": 8}), median=19.0),
        "puzzle_rating": replace(stats("puzzle_rating", None, 1501, 2079, 8, {"solved": 8}), median=1917.0),
        "games": replace(stats("games", None, 4, 24, 11, {"blitz_rating": 11}), median=13.0),
        "blitz_rating": replace(stats("blitz_rating", None, 1274, 1461, 11, {"games": 11}), median=1411.0),
    }
    names = {frozenset({"tactics_rating", "blitz_rating"}): 0.64, frozenset({"tactics_rating", "puzzle_rating"}): 0.48,
             frozenset({"puzzles", "games"}): 0.41, frozenset({"puzzles", "solved"}): 0.38}

    def similar(a, b):
        return 1.0 if a == b else names.get(frozenset({a, b}), 0.1)

    screen, text, blitz = (1.0, 0.0, 0.0), (0.77, 0.638, 0.0), (0.48, -0.3, 0.824)  # 0.77 and 0.48 with the screen
    read = {k: replace(v, text=screen if k in ("puzzles", "tactics_rating") else text if k in ("solved", "puzzle_rating")
                       else blitz) for k, v in s.items()}
    assert {(m.source, m.target) for m in plan_merges(read, similar)} == {
        ("puzzles", "solved"), ("tactics_rating", "puzzle_rating")}
    # the text read less like the screen (0.6): two pairs are no kind of record by their shape
    far = dict(read, solved=replace(read["solved"], text=(0.6, 0.8, 0.0)),
               puzzle_rating=replace(read["puzzle_rating"], text=(0.6, 0.8, 0.0)))
    assert ("puzzles", "solved") not in {(m.source, m.target) for m in plan_merges(far, similar)}


def test_two_pairs_with_units_join_by_shape_in_rounds_that_read_alike_unlike_in_name():
    # a water meter's screen ("Index" m³, "Usage" m³) and the text ("meter" m³, "consumption" L): two pairs of
    # one size each once converted, names unlike, rounds reading 0.68 alike
    s = {
        "index": replace(stats("index", "m³", 333, 407, 7, {"usage~2": 7}), median=353.0),
        "usage~2": replace(stats("usage~2", "m³", 0.13, 0.52, 7, {"index": 7}), median=0.32),
        "meter": replace(stats("meter", "m³", 300, 406, 19, {"consumption": 19}), median=346.0),
        "consumption": replace(stats("consumption", "L", 107, 503, 19, {"meter": 19}), median=202.0),
    }
    s = {k: replace(v, dimension="volume") for k, v in s.items()}
    names = {frozenset({"index", "meter"}): 0.25, frozenset({"usage~2", "consumption"}): 0.43}  # measured, MiniLM

    def similar(a, b):
        return 1.0 if a == b else names.get(frozenset({a, b}), 0.1)

    screen, text = (1.0, 0.0), (0.68, 0.733)
    read = {k: replace(v, text=screen if k in ("index", "usage~2") else text) for k, v in s.items()}
    assert {(m.source, m.target) for m in plan_merges(read, similar)} == {
        ("index", "meter"), ("usage~2", "consumption")}
    # read as two kinds (0.5): apart
    apart = {k: replace(v, text=screen if k in ("index", "usage~2") else (0.5, 0.866)) for k, v in s.items()}
    assert plan_merges(apart, similar) == []


def test_a_fields_second_sense_beside_quantities_with_units_joins_back_by_shape():
    # a scale's screen ("Frames." | "Net." kg | "Moisture." %) beside the text ("frames" | "honey" kg | "h2o %"):
    # "frames~2" was split off for its unlike company; net and moisture pair by unit and size, rounds read 0.75
    s = {
        "frames": replace(stats("frames", None, 4, 20, 38, {"honey": 35, "h2o": 27}), median=11.5),
        "honey": replace(stats("honey", "kg", 2.7, 21.6, 35, {"frames": 35, "h2o": 27}), median=12.1),
        "h2o": replace(stats("h2o", "%", 16.1, 19.8, 27, {"frames": 27, "honey": 27}), median=17.8),
        "frames~2": replace(stats("frames~2", None, 6, 19, 6, {"net": 6, "moisture": 4}), median=13.5),
        "net": replace(stats("net", "kg", 2.2, 21.7, 9, {"frames~2": 6, "moisture": 5}), median=16.4),
        "moisture": replace(stats("moisture", "%", 17.2, 19.1, 5, {"frames~2": 4, "net": 5}), median=17.9),
    }
    names = {frozenset({"h2o", "moisture"}): 0.31, frozenset({"honey", "net"}): 0.21}  # measured, MiniLM

    def similar(a, b):
        return 1.0 if a.split("~")[0] == b.split("~")[0] else names.get(frozenset({a, b}), 0.1)

    screen, text = (1.0, 0.0), (0.748, 0.664)
    read = {k: replace(v, text=screen if k in ("frames~2", "net", "moisture") else text) for k, v in s.items()}
    assert {(m.source, m.target) for m in plan_merges(read, similar)} == {
        ("frames~2", "frames"), ("net", "honey"), ("moisture", "h2o")}
    # the same shapes with a bare count where the mass was: no unit to pair by, apart
    bare = dict(read, net=replace(read["net"], unit=None, dimension=None),
                honey=replace(read["honey"], unit=None, dimension=None))
    assert plan_merges(bare, similar) == []
