"""Field alignment (core/align.py): raw labels -> fields, with evidence, vetoes, persistence, undo."""
from __future__ import annotations

import json
import zlib
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from conftest import AlikeEncoder, FakeImageEncoder, FakeOCR, HashEmbedder, UnlikeEncoder
from core.align import FieldAligner, abbreviates, field_report, merge_fields, name_evidence, undo_alias
from core.analytic import rebuild
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.formats import read_file
from core.model import Observation
from core.store import Store


def num(attr: str, value: float, unit: str | None = None, round_id: str = "S1:R1") -> Observation:
    return Observation(round_id, attr, f"{value:g}", value, unit, "number")


# ---------------------------------------------------------------------- name evidence
@pytest.mark.parametrize("short,long", [("temp", "temperature"), ("moist", "moisture"), ("wt", "weight"),
                                        ("qty", "quantity"), ("dist", "distance")])
def test_abbreviations_of_any_word(short, long):
    assert abbreviates(short, long)
    assert not abbreviates(long, short)


@pytest.mark.parametrize("a,b", [("pot", "plant"), ("rate", "temperature"), ("ph", "ph"), ("t", "temp"),
                                 ("wght", "weigh")])
def test_not_abbreviations(a, b):
    # letters out of order, another first letter, equal words, one letter, only one letter left out
    assert not abbreviates(a, b)


def test_name_evidence_kinds():
    assert name_evidence("seeds", "seed") == (1.0, "same words")
    assert name_evidence("soil_moist", "soil_moisture")[1] == "abbreviation"
    assert name_evidence("rh", "relative_humidity")[1] == "initials"
    assert name_evidence("moisture", "soil_moisture")[1] == "a word more or less"
    assert name_evidence("temperture", "temperature")[1] == "similar spelling"
    assert name_evidence("water", "price")[0] == 0.0
    # "Avg speed" on one screen, "Mean speed" on another: one statistic spelled two ways
    assert name_evidence("avg_speed", "mean_speed")[0] >= 0.9
    assert name_evidence("max_speed", "mean_speed")[0] < 0.7
    # OCR reads the O of a name of letters and digits as a zero: one name
    assert name_evidence("h20", "h2o")[0] == 1.0 and name_evidence("pm10", "pm25")[0] == 0.0


# ---------------------------------------------------------------------- the aligner
@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        yield s


def test_abbreviated_label_joins_the_field_of_its_stream(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 4):
        al.align(i, [num("temperature", 20 + i, "°C"), num("humidity", 40 + i, "%")])
    out = al.align(4, [num("temp", 22.5, "°C"), num("humidity", 44, "%")])
    assert [o.attribute for o in out] == ["temperature", "humidity"]
    assert out[0].raw_attribute == "temp"


def test_m_beside_minutes_joins_the_field_of_minutes_either_way(store):
    """A podcast log: "Listening 83 mins" on the app, "Listening: 59 m" in texts. "m" is metres beside
    kilometres, minutes beside minutes: one field, whichever came first."""
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 4):
        al.align(i, [num("listening_duration", 30 * i, "min", f"S1:R{i}"), num("eps", i, None, f"S1:R{i}")])
    out = al.align(4, [num("listening", 59, "m", "S1:R4"), num("eps", 2, None, "S1:R4")])
    assert out[0].attribute == "listening_duration", out
    other = FieldAligner(Store(Path(store.path).parent / "o.duckdb").con, DEFAULT)
    for i in range(1, 4):
        other.align(i, [num("listening", 30 * i, "m", f"S1:R{i}"), num("eps", i, None, f"S1:R{i}")])
    out = other.align(4, [num("listening_duration", 83, "min", "S1:R4"), num("eps", 2, None, "S1:R4")])
    assert out[0].attribute == "listening", out
    # a distance beside metres stays apart from a duration ("walk 3 km" is no "walk 40 min")
    third = FieldAligner(Store(Path(store.path).parent / "t.duckdb").con, DEFAULT)
    for i in range(1, 4):
        third.align(i, [num("walk", 2 + i, "km", f"S1:R{i}"), num("eps", i, None, f"S1:R{i}")])
    out = third.align(4, [num("walk_duration", 40, "min", "S1:R4"), num("eps", 2, None, "S1:R4")])
    assert out[0].attribute != "walk", out


def test_a_label_written_after_its_value_that_reads_as_a_unit_joins_its_field(store):
    """A score sheet prints "mv 24" (moves) and "32 mv": the second reads as 32 millivolts ("voltage"); the
    unit as written is the other's label, so it is the same field (and the other way round)."""
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 4):
        al.align(i, [num("mv", 20 + i, round_id=f"S1:R{i}"), num("rating", 1400 + i, round_id=f"S1:R{i}")])
    volts = Observation("S1:R4", "voltage", "32 mv", 32.0, "mV", "number")
    out = al.align(4, [volts, num("rating", 1404, round_id="S1:R4")])
    assert [o.attribute for o in out] == ["mv", "rating"], out
    assert out[0].unit is None and out[0].number == 32.0  # 32 moves: the "unit" was the label
    other = FieldAligner(Store(Path(store.path).parent / "o.duckdb").con, DEFAULT)
    for i in range(1, 4):
        other.align(i, [Observation(f"S1:R{i}", "voltage", f"{30 + i} mv", 30.0 + i, "mV", "number"),
                        num("rating", 1400 + i, round_id=f"S1:R{i}")])
    assert [o.attribute for o in other.align(4, [num("mv", 24, round_id="S1:R4"), num("rating", 1404, round_id="S1:R4")])] \
        == ["voltage", "rating"]
    # a spelling of percent stays percent in a field of that name ("30 pct" beside "pct 28": 30 %)
    pct = FieldAligner(Store(Path(store.path).parent / "p.duckdb").con, DEFAULT)
    for i in range(1, 4):
        pct.align(i, [num("pct", 20 + i, round_id=f"S1:R{i}", unit="%"), num("rating", 1400 + i, round_id=f"S1:R{i}")])
    out = pct.align(4, [Observation("S1:R4", "pct", "30 pct", 30.0, "%", "number"), num("rating", 1404, round_id="S1:R4")])
    assert out[0].attribute == "pct" and out[0].unit == "%", out
    # a unit that is no label of the round's record stays apart: "3 kg" is not the moves
    assert [o.attribute for o in al.align(5, [Observation("S1:R5", "weight", "3 kg", 3.0, "kg", "number"),
                                              num("rating", 1405, round_id="S1:R5")])][0] != "mv"


class _KindredEncoder(UnlikeEncoder):
    """Birds are alike (cosine about 0.4 across kinds, as MiniLM finds "dabblers" and "greylag"), two words
    of one kind more so (about 0.7: "dabblers" and "mallards" are ducks); other words apart."""

    KIN = {"dabblers": 1, "mallards": 1, "geese": 2, "greylag": 2}

    def encode(self, texts):
        base = super().encode(texts)
        out = []
        for t, v in zip(texts, base):
            k = self.KIN.get(t.strip().lower())
            if k is not None:
                shared, kind = np.zeros(self.dim, dtype=np.float32), np.zeros(self.dim, dtype=np.float32)
                shared[0], kind[k] = 1.0, 1.0
                v = 0.63 * shared + 0.55 * kind + 0.3 * v
                v = v / np.linalg.norm(v)
            out.append(v)
        return np.asarray(out, dtype=np.float32)


def test_a_screen_naming_every_quantity_its_own_way_is_placed_by_the_closest_names(store):
    """A survey written "mallards, greylag, temp" in the texts and "dabblers | geese | temperature" on a
    screen: both counts fit both places (same kind, unit, range); the closest names decide the placing."""
    al = FieldAligner(store.con, DEFAULT, encoder=_KindredEncoder())
    for i in range(1, 6):
        al.align(i, [num("mallards", 30 + i, round_id=f"S1:R{i}"), num("greylag", 20 + 2 * i, round_id=f"S1:R{i}"),
                     num("temp", 5 + i, "°C", round_id=f"S1:R{i}")])
    out = al.align(6, [num("dabblers", 33, round_id="S1:R6"), num("geese", 27, round_id="S1:R6"),
                       num("temperature", 7.5, "°C", round_id="S1:R6")])
    assert [o.attribute for o in out] == ["mallards", "greylag", "temp"], out
    # names with nothing to tell which is which stay apart rather than guess
    other = FieldAligner(Store(Path(store.path).parent / "o.duckdb").con, DEFAULT, encoder=AlikeEncoder())
    for i in range(1, 6):
        other.align(i, [num("mallards", 30 + i, round_id=f"S1:R{i}"), num("greylag", 20 + 2 * i, round_id=f"S1:R{i}"),
                        num("temp", 5 + i, "°C", round_id=f"S1:R{i}")])
    out = other.align(6, [num("dabblers", 33, round_id="S1:R6"), num("geese", 27, round_id="S1:R6"),
                          num("temperature", 7.5, "°C", round_id="S1:R6")])
    assert out[0].attribute != "greylag" and out[1].attribute != "mallards"  # never the wrong way round


def test_vetoes_unit_dimension_kind_and_same_round(store):
    al = FieldAligner(store.con, DEFAULT)
    al.align(1, [num("weight", 2.0, "kg")])
    # "wt" abbreviates weight but is a volume: never the same field
    assert al.align(2, [num("wt", 2.0, "L")])[0].attribute == "wt"
    # a text value is never a number's field
    assert al.align(3, [Observation("S1:R3", "weights", "heavy", value_kind="text")])[0].attribute == "weights"
    # the field is already in this round: a second quantity, not another name of it
    out = al.align(4, [num("weight", 2.0, "kg"), num("weight_net", 1.8, "kg")])
    assert [o.attribute for o in out] == ["weight", "weight_net"]


def test_an_unlabelled_value_named_by_its_unit_joins_only_its_own_name(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 4):
        al.align(i, [num("sleep_duration", 420 + i, "min"), num("sleep_score", 80 + i)])
    # a new round whose other fields are new too: no companion evidence either way
    unlabelled = Observation("S1:R4", "duration", "45 minutes", 45.0, "min", "number", label="")
    out = al.align(4, [num("distance", 8.0, "km"), unlabelled])
    assert out[1].attribute == "duration"


def test_a_generic_name_of_another_stream_stays_apart(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 4):
        al.align(i, [num("sleep_duration", 420 + i, "min"), num("score", 80 + i)])
    for i in range(4, 7):
        al.align(i, [num("distance", 5.0 + i, "km"), num("laps", 3 + i)])
    # "duration" is a word less than sleep_duration, but the round's other fields never came with it
    out = al.align(7, [num("distance", 8.0, "km"), num("duration", 45, "min")])
    assert out[1].attribute == "duration"


def test_similar_meaning_needs_the_encoder_and_structure(store):
    class Synonyms(HashEmbedder):
        def encode(self, texts):  # "wetness" and "moisture" mean the same here
            return super().encode([t.replace("wetness", "moisture") for t in texts])

    al = FieldAligner(store.con, DEFAULT, encoder=Synonyms())
    for i in range(1, 5):
        al.align(i, [num("soil_moisture", 30 + i, "%"), num("water", 200 + i, "mL")])
    assert al.align(5, [num("soil_wetness", 33, "%"), num("water", 210, "mL")])[0].attribute == "soil_moisture"
    plain = FieldAligner(store.con.cursor(), DEFAULT)  # a fresh aligner without the encoder
    assert plain.field_of("soil_wetness") is None  # nothing flushed yet: decisions are in memory only


def test_decisions_persist_with_evidence_and_reload(store):
    al = FieldAligner(store.con, DEFAULT)
    al.align(1, [num("temperature", 21, "°C"), num("humidity", 40, "%")])
    al.align(2, [num("temp", 22, "°C"), num("humidity", 41, "%")])
    al.flush()
    row = store.con.execute("SELECT field, score, evidence FROM field_aliases WHERE raw_attribute = 'temp'").fetchone()
    assert row[0] == "temperature" and row[1] >= DEFAULT.align_threshold
    assert "abbreviation" in json.loads(row[2])["reason"]
    again = FieldAligner(store.con, DEFAULT)
    assert again.field_of("temp") == "temperature"
    assert again.align(3, [num("temp", 23, "°C")])[0].attribute == "temperature"


def test_alignment_off_keeps_every_label(store):
    al = FieldAligner(store.con, DEFAULT.with_(field_alignment=False))
    al.align(1, [num("temperature", 21, "°C")])
    assert al.align(2, [num("temp", 22, "°C")])[0].attribute == "temp"


# ---------------------------------------------------------------------- in a build
def _history(folder: Path, n: int = 12) -> Path:
    """A plant-care log: soil moisture written "Moisture: … %" in some rounds and "Moist: … %" in
    others, beside the water given, plus small talk."""
    sessions = []
    start = datetime(2026, 3, 1, 9, 0)
    for s in range(1, n + 1):
        t = start + timedelta(days=s)
        if s % 2:
            user = f"Moisture: {30 + s} %\nWater: {200 + 10 * s} ml"
        else:
            user = f"Moist: {31 + s} %\nWater: {210 + 10 * s} ml"
        rounds = [{"round": f"S{s}:R1", "time": t.isoformat(), "user": user, "assistant": "Logged."},
                  {"round": f"S{s}:R2", "time": (t + timedelta(minutes=5)).isoformat(),
                   "user": "We watched a film tonight.", "assistant": "Nice."}]
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": rounds})
    path = folder / "plants.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    return path


def _deps() -> BuildDeps:
    return BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))


def _tables(store) -> dict:
    out = {}
    for (name,) in store.con.execute("SELECT table_name FROM memory_tables ORDER BY 1").fetchall():
        out[name] = store.con.execute(f'SELECT * EXCLUDE (time) FROM "{name}" ORDER BY round_order').fetchall()
    return out


def test_two_label_variants_make_one_table_and_undo_splits_them(tmp_path):
    src = _history(tmp_path)
    with Store(tmp_path / "m.duckdb") as s:
        build(s, read_file(src), _deps(), DEFAULT)
        report = {f.name: f for f in field_report(s.con)}
        merged = [f for f in report.values() if f.merged]
        assert merged, f"no field merged: {sorted(report)}"
        temp = next(f for f in merged if any("moist" in l.raw_attribute for l in f.labels))
        assert {l.raw_attribute for l in temp.labels} >= {"moisture", "moist"}
        labels = {lab.rstrip(".") for l in temp.labels for lab, _ in l.labels}
        assert {"Moisture", "Moist"} <= labels
        tables = _tables(s)
        assert len(tables) == 1, tables.keys()
        (rows,) = tables.values()
        assert len(rows) == 12  # every record in the one table, whichever labels it used
        # an untouched memory rebuilds to exactly the same tables
        rebuild(s, DEFAULT)
        assert _tables(s) == tables
        # undo: "temp" becomes its own field again, and stays so when the build continues
        raw = next(l.raw_attribute for l in temp.labels if l.raw_attribute != temp.name)
        undo_alias(s, raw, DEFAULT)
        after = {f.name: f for f in field_report(s.con)}
        assert raw in after and not any(l.raw_attribute == raw for l in after[temp.name].labels)
        assert s.con.execute("SELECT count(*) FROM observations WHERE attribute = ?", [raw]).fetchone()[0] > 0
        build(s, read_file(src), _deps(), DEFAULT)
        assert FieldAligner(s.con, DEFAULT).field_of(raw) == raw
        # and a person can merge it back by hand
        merge_fields(s, raw, temp.name, DEFAULT)
        assert FieldAligner(s.con, DEFAULT).field_of(raw) == temp.name
        assert sum(len(r) for r in _tables(s).values()) >= 12


def test_unknown_names_are_refused(store):
    with pytest.raises(KeyError):
        undo_alias(store, "nothing_here", DEFAULT)
    with pytest.raises(KeyError):
        merge_fields(store, "nothing_here", "other", DEFAULT)


def test_cli_lists_fields_and_undoes_a_merge(tmp_path, capsys):
    from core.__main__ import main

    src = _history(tmp_path)
    path = tmp_path / "m.duckdb"
    with Store(path) as s:
        build(s, read_file(src), _deps(), DEFAULT)
    assert main(["fields", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "moisture (%)" in out and "Moist x6" in out and "abbreviation" in out
    assert main(["fields", "--store", str(path), "--undo", "moist"]) == 0
    assert "moist is its own field again" in capsys.readouterr().out
    with Store(path) as s:
        assert FieldAligner(s.con, DEFAULT).field_of("moist") == "moist"
    assert main(["fields", "--store", str(path), "--undo", "no_such_label"]) == 2
    assert "no raw attribute 'no_such_label'" in capsys.readouterr().err
    assert main(["fields", "--store", str(path), "--merge", "moist"]) == 2


def test_undo_and_merge_refuse_what_would_be_wrong(tmp_path):
    src = _history(tmp_path)
    with Store(tmp_path / "m.duckdb") as s:
        build(s, read_file(src), _deps(), DEFAULT)
        with pytest.raises(ValueError, match="not merged into another field"):
            undo_alias(s, "moisture", DEFAULT)  # the field is named after it
        with pytest.raises(ValueError, match="both recorded"):
            merge_fields(s, "water", "moisture", DEFAULT)  # two quantities of one record
        undo_alias(s, "moist", DEFAULT)
        ev = json.loads(s.con.execute("SELECT evidence FROM field_aliases WHERE raw_attribute = 'moist'").fetchone()[0])
        assert ev["reason"] == "kept apart by the user" and "abbreviation" in ev["previous"]["evidence"]["reason"]
        info = {f.name: f for f in field_report(s.con)}["moist"]
        assert info.labels[0].reason == "kept apart by the user"


def test_a_word_may_stand_for_the_initials_of_several():
    assert name_evidence("resting_hr", "resting_heart_rate") == (0.9, "abbreviation")
    assert name_evidence("avg_glucose", "average_glucose") == (0.9, "abbreviation")
    assert name_evidence("hr", "heart_rate") == (0.85, "initials")
    assert name_evidence("max_hr", "heart_rate")[0] == 0.0  # a maximum is another quantity
    assert name_evidence("heart_rate", "resting_heart_rate") == (0.7, "a word more or less")
    assert name_evidence("net_weight", "gross_weight") == (0.0, "")


def test_the_same_value_under_two_labels_in_one_round_is_one_field(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 4):
        al.align(i, [num("moisture", 30 + i, "%"), num("water", 200 + i, "mL")])
    # the screen says "Soil moisture 33 %", the text "moisture 33 %": one reading, two labels
    out = al.align(4, [num("moisture", 33, "%"), num("soil_moisture", 33, "%"), num("water", 210, "mL")])
    assert [o.attribute for o in out] == ["moisture", "moisture", "water"]
    # another value under the other label is another quantity
    out = al.align(5, [num("moisture", 33, "%"), num("moisture_deep", 41, "%"), num("water", 210, "mL")])
    assert out[1].attribute == "moisture_deep"


def test_a_trailing_measure_word_may_be_left_out():
    score, why = name_evidence("dilut_volume", "dilution")
    assert score == round(0.9 * 0.9, 3) and "leaving out" in why
    assert name_evidence("water_volume", "water")[0] >= 0.7
    assert name_evidence("sleep_duration", "sleep_score")[0] == 0.0
    assert name_evidence("price_value", "weight_value")[0] == 0.0


def test_a_second_device_with_every_label_its_own_way(store):
    # device A prints "temperature", "humidity"; device B prints "hum", "room temp(erature)", "co2"
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 5):
        al.align(i, [num("temperature", 20 + i, "°C"), num("humidity", 40 + i, "%")])
    # a weak name ("a word more") beside only new fields, none of them the field's usual companions:
    # maybe another stream, so it stays apart
    out = al.align(5, [num("co2", 400, "ppm"), num("room_temperature", 22, "°C")])
    assert [o.attribute for o in out] == ["co2", "room_temperature"]
    # beside a label that joined the usual companion (an abbreviation of "humidity"), it joins
    al2 = FieldAligner(store.con.cursor(), DEFAULT)
    for i in range(1, 5):
        al2.align(i, [num("temperature", 20 + i, "°C"), num("humidity", 40 + i, "%")])
    out = al2.align(5, [num("hum", 44, "%"), num("co2", 400, "ppm"), num("indoor_temperature", 22, "°C")])
    assert [o.attribute for o in out] == ["humidity", "co2", "temperature"]


def test_a_name_of_measure_words_only_is_no_evidence():
    # "amount" is what the extractor calls an unlabelled sum of money: it is not "cost amount"
    assert name_evidence("amount", "cost_amount") == (0.0, "")
    assert name_evidence("renew_amount", "amount") == (0.0, "")
    assert name_evidence("amount", "amount")[0] == 1.0


def test_contrast_words_keep_two_quantities_apart(store):

    al = FieldAligner(store.con, DEFAULT, encoder=AlikeEncoder())
    for i in range(1, 4):
        al.align(i, [num("my_value", 3 + i), num("soil_moisture", 30 + i, "%")])
    assert al.align(4, [num("other_value", 5), num("soil_moisture", 33, "%")])[0].attribute == "other_value"
    assert al.align(5, [num("soil_wetness", 31, "%"), num("my_value", 2)])[0].attribute == "soil_moisture"
    # an equal text in one round is no reason to merge two labels that differ by more than spelling
    t = Observation("S1:R6", "my_color", "yellow", value_kind="text")
    u = Observation("S1:R6", "other_color", "yellow", value_kind="text")
    assert [o.attribute for o in al.align(6, [t, u])] == ["my_color", "other_color"]


def test_a_dimension_word_for_a_field_word_when_the_unit_is_the_same():
    assert name_evidence("average_concentration", "average_glucose") == (0.0, "")
    score, why = name_evidence("average_concentration", "average_glucose", same_unit=True)
    assert score == 0.63 and "leaving out" in why


def test_letters_in_order_keep_the_first_and_last():
    assert abbreviates("rtg", "rating") and abbreviates("wt", "weight")
    assert not abbreviates("vm", "volume")
    # two letters may also be a word's first and its only other consonant (a lake count's "Gs." for geese)
    assert abbreviates("gs", "geese") and name_evidence("gs", "geese")[0] >= 0.8
    assert not abbreviates("gs", "gravel") and not abbreviates("gs", "glucose")


def test_new_companions_that_are_not_the_fields_usual_ones_keep_a_label_apart(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 5):
        al.align(i, [num("b_rating", 1400 + i), num("gp", 10 + i), num("won", 3 + i)])
    # another stream's first round: "moves" is new, "rtg" abbreviates "rating" with a word less
    out = al.align(5, [num("moves", 79), num("rtg", 1474)])
    assert [o.attribute for o in out] == ["moves", "rtg"]


def test_a_word_written_as_its_initial_is_weak_name_evidence():
    assert name_evidence("soil_t", "soil_temp") == (0.6, "a word shortened to its initial")
    assert name_evidence("t_max", "temp_max")[0] == 0.6
    # every word an initial, or nothing written out in both: no evidence
    assert name_evidence("s_t", "soil_temp")[0] < 0.6
    assert name_evidence("x", "xylophone")[0] == 0.0


def test_new_labels_beside_only_new_labels_are_judged_by_all_of_them_in_any_order(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 5):
        al.align(i, [num("temperature", 20 + i, "°C"), num("humidity", 40 + i, "%")])
    # the label with weak name evidence comes first, the unlike new label after it: still apart
    out = al.align(5, [num("room_temperature", 22, "°C"), num("co2", 400, "ppm")])
    assert [o.attribute for o in out] == ["room_temperature", "co2"]


def test_a_second_device_fills_the_places_of_a_known_record(store):
    # station A prints "air temp" and "rainfall"; station B "air t" and "precipitation": no spelling
    # links the second pair, the record does (the one place left beside air temp, in mm, in range)
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 6):
        al.align(i, [num("air_temp", 10 + i, "°C"), num("rainfall", 2.0 + i, "mm")])
    out = al.align(6, [num("air_temp", 12.5, "°C"), num("precipitation", 4.2, "mm")])
    assert [o.attribute for o in out] == ["air_temp", "rainfall"]
    al.flush()
    ev = json.loads(store.con.execute("SELECT evidence FROM field_aliases WHERE raw_attribute = "
                                      "'precipitation'").fetchone()[0])
    assert "place of rainfall" in ev["reason"]
    # both labels new: the record as a whole is read as the station's
    out = al.align(7, [num("air_t", 12.5, "°C"), num("rain_gauge", 4.2, "mm")])
    assert [o.attribute for o in out] == ["air_temp", "rainfall"]


def test_no_place_is_filled_when_two_fit(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 6):
        al.align(i, [num("air_temp", 10 + i, "°C"), num("rainfall", 2.0 + i, "mm"), num("snow", 1.0 + i, "mm")])
    out = al.align(6, [num("air_t", 12.5, "°C"), num("precipitation", 4.2, "mm")])  # two places in mm
    assert [o.attribute for o in out] == ["air_temp", "precipitation"]


def test_no_place_is_filled_out_of_range_or_in_another_unit(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 6):
        al.align(i, [num("air_temp", 10 + i, "°C"), num("rainfall", 2.0 + i, "mm")])
    # 400 mm is far outside 3-7 mm; a value in hours is not a rainfall
    assert al.align(6, [num("air_temp", 12, "°C"), num("precipitation", 400, "mm")])[1].attribute == "precipitation"
    assert al.align(7, [num("air_temp", 12, "°C"), num("sunshine", 4, "h")])[1].attribute == "sunshine"


def test_a_record_that_shares_one_label_and_a_shape_stays_apart(store):

    al = FieldAligner(store.con, DEFAULT, encoder=UnlikeEncoder())
    for i in range(1, 6):  # greenhouse records: temperature, germination (%), light (min)
        al.align(i, [num("temperature", 20 + i, "°C"), num("germination", 40 + i, "%"),
                     num("light_duration", 300 + i, "min")])
    # compost records print "temperature" too, with a % and a min of their own and unlike names
    out = al.align(6, [num("temperature", 24, "°C"), num("moisture", 45, "%"), num("turning_duration", 302, "min")])
    # its temperature is a field of its own kind of record, not the greenhouse's
    assert [o.attribute for o in out] == ["temperature~2", "moisture", "turning_duration"]
    assert [o.raw_attribute for o in out][0] == "temperature"
    # later records of either kind find their own temperature by the company it keeps
    out = al.align(7, [num("moisture", 50, "%"), num("temperature", 30, "°C")])
    assert [o.attribute for o in out] == ["moisture", "temperature~2"]
    out = al.align(8, [num("germination", 44, "%"), num("temperature", 22, "°C")])
    assert [o.attribute for o in out] == ["germination", "temperature"]
    # a mention alone is the field it always was
    assert al.align(9, [num("temperature", 21, "°C")])[0].attribute == "temperature"


def test_a_second_desk_naming_every_quantity_its_own_way(store):
    class Loose(HashEmbedder):  # every two labels somewhat alike (cosine about 0.4), none close
        def encode(self, texts):
            shared = np.ones(384) / np.sqrt(384)
            out = []
            for t in texts:
                r = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(384)
                out.append(np.sqrt(0.4) * shared + np.sqrt(0.6) * r / np.linalg.norm(r))
            return np.array(out)

    al = FieldAligner(store.con, DEFAULT, encoder=Loose())
    for i in range(1, 5):  # a library's loans desk: books lent, returned (counts), fines (EUR)
        al.align(i, [num("books_lent", 40 + i), num("returned", 6 + i), num("fines", 12.0 + i, "EUR")])
    # the new desk prints "lent", "handed over" and "penalties": one close name, the rest placed by unit and range
    out = al.align(5, [num("lent", 44), num("handed_over", 8), num("penalties", 13.5, "EUR")])
    assert [o.attribute for o in out] == ["books_lent", "returned", "fines"]
    # without one close name the shape alone is not enough
    al2 = FieldAligner(store.con.cursor(), DEFAULT, encoder=Loose())
    out = al2.align(6, [num("taken", 44), num("handed_over", 8), num("penalties", 13.5, "EUR")])
    assert [o.attribute for o in out] == ["taken", "handed_over", "penalties"]


def _two_kinds(folder: Path, n: int = 8) -> Path:
    """A chess player's log: games ("Duration: … min, Moves: …") and, from the fourth day, puzzle
    practice too ("Duration: … min, Puzzles: …"), both printing "Duration"."""
    sessions = []
    start = datetime(2026, 5, 1, 19, 0)
    for s in range(1, n + 4):
        t = start + timedelta(days=s)
        rounds = [{"round": f"S{s}:R1", "time": t.isoformat(), "user": f"Game done. Duration: {40 + s} min, "
                   f"Moves: {30 + 2 * s}", "assistant": "Logged."}]
        if s > 3:
            rounds.append({"round": f"S{s}:R2", "time": (t + timedelta(hours=1)).isoformat(),
                           "user": f"Practice done. Duration: {15 + s} min, Puzzles: {10 + s}", "assistant": "Noted."})
        sessions.append({"session_id": f"S{s}", "date": t.date().isoformat(), "dialogues": rounds})
    path = folder / "chess.json"
    path.write_text(json.dumps({"character_profile": {}, "multi_session_dialogues": sessions,
                                "human-annotated QAs": []}))
    return path


def test_a_label_two_kinds_of_record_share_is_a_column_of_each_table(tmp_path):
    with Store(tmp_path / "m.duckdb") as s:
        build(s, read_file(_two_kinds(tmp_path)), _deps(), DEFAULT)
        tables = {}
        for name, cols in s.con.execute("SELECT table_name, columns FROM schemas WHERE table_name IS NOT NULL").fetchall():
            tables[name] = {c["name"]: c["attribute"] for c in json.loads(cols)}
        games = next(t for t, c in tables.items() if "moves" in c)
        practice = next(t for t, c in tables.items() if "puzzles" in c)
        assert games != practice and "duration" in tables[games] and "duration" in tables[practice]
        g = [r[0] for r in s.con.execute(f'SELECT duration FROM "{games}" ORDER BY round_order').fetchall()]
        p = [r[0] for r in s.con.execute(f'SELECT duration FROM "{practice}" ORDER BY round_order').fetchall()]
        # every game's duration in the games table, every practice's in the other: no mixing
        assert sorted(g) == [40.0 + i for i in range(1, 12)] and sorted(p) == [15.0 + i for i in range(4, 12)]
        second = tables[practice]["duration"] if "~" in tables[practice]["duration"] else tables[games]["duration"]
        assert "~" in second
        # a person can join the two by hand: the observations are rewritten, one field remains
        merge_fields(s, second, "duration", DEFAULT)
        assert s.con.execute("SELECT count(*) FROM observations WHERE attribute = ?", [second]).fetchone()[0] == 0
        assert s.con.execute("SELECT count(*) FROM observations WHERE attribute = 'duration'").fetchone()[0] == 19


def test_a_value_nobody_labelled_does_not_make_its_record_another_kind(store):

    al = FieldAligner(store.con, DEFAULT, encoder=UnlikeEncoder())
    for i in range(1, 5):  # parcels: items and the parcel's weight
        al.align(i, [num("items", 3 + i), num("parcel_weight", 2.0 + i, "kg")])
    # "5 items, 4.1 kg": the weight has no label, so the extractor named it by its unit
    out = al.align(5, [num("items", 5), Observation("S1:R5", "mass", "4.1 kg", 4.1, "kg", "number")])
    assert out[0].attribute == "items"


def test_a_lexicon_file_changes_the_words_alignment_reads(tmp_path, store):
    from dataclasses import replace as dc_replace


    p = tmp_path / "lexicon.json"
    p.write_text(json.dumps({"extend": {"contrast_words": ["hot", "cold"]}}))
    for cfg, expect in ((DEFAULT, "cold_yield"), (dc_replace(DEFAULT, lexicon=str(p)), "hot_yield")):
        al = FieldAligner(store.con.cursor(), cfg, encoder=AlikeEncoder())
        for i in range(1, 4):
            al.align(i, [num("cold_yield", 10 + i, "g"), num("pots", 3)])
        # by default the encoder's likeness joins the two; a lexicon that makes "hot"/"cold" contrast
        # words keeps them apart
        assert al.align(4, [num("hot_yield", 12, "g"), num("pots", 3)])[0].attribute == expect, cfg.lexicon


def test_two_new_labels_of_one_round_are_two_fields_however_alike(store):

    al = FieldAligner(store.con, DEFAULT, encoder=AlikeEncoder())
    out = al.align(1, [num("white_captures", 3), num("black_captures", 4)])  # a chess game's first record
    assert [o.attribute for o in out] == ["white_captures", "black_captures"]


def test_a_lone_value_nobody_labelled_is_no_record_of_a_field_with_company(store):
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 5):  # client payments: payment and days late
        al.align(i, [num("payment", 300 + i, "USD"), num("late", 2 + i)])
    # "Paid $91 for concert tickets": the extractor names the unlabelled sum after its verb
    lone = Observation("S9:R1", "pay_amount", "$91", 91.0, "USD", "number")
    assert al.align(5, [lone])[0].attribute == "pay_amount"
    # the same label written out beside its record's company joins
    assert al.align(6, [num("payment", 310, "USD"), num("late", 3)])[0].attribute == "payment"


def test_a_verbs_past_and_its_noun_are_one_name():
    assert name_evidence("kept", "keeps") == (0.8, "the same words in another form")
    assert name_evidence("sold", "sells")[0] == 0.8
    assert name_evidence("kept", "price")[0] == 0.0


def test_a_field_seen_once_has_no_range_to_refuse_a_second_devices_value(store, embedder):
    # one screenshot ("PC 23 | Kept 6"), then the same record typed out with full labels and other values
    al = FieldAligner(store.con, DEFAULT)
    al.align(1, [num("pc", 23), num("kept", 6)])
    out = al.align(2, [num("pages_copied", 20), num("keeps", 9)])
    assert [o.attribute for o in out] == ["pc", "kept"]
    # a value far off the single one seen (ten times it) still stays apart
    al2 = FieldAligner(store.con.cursor(), DEFAULT)
    al2.align(1, [num("pc", 23), num("kept", 6)])
    assert [o.attribute for o in al2.align(2, [num("pages_copied", 230), num("keeps", 60)])] == ["pages_copied", "keeps"]


def test_a_contrast_word_contrasts_only_with_what_it_modifies():
    from core.align import contrasting
    assert contrasting("my_value", "other_value") and contrasting("net_weight", "weight")
    assert contrasting("net", "gross") and contrasting("opening_time", "closing_time")
    # a scale's "net" for the harvest weight: no shared word for the contrast to modify
    assert not contrasting("net", "harvest") and not contrasting("left", "unsold")
    # two words for one end of a scale contrast with the other end, not with each other
    assert not contrasting("max_power", "peak_power") and contrasting("max_power", "min_power")
    assert contrasting("peak_power", "power")
    # so for the two ends of a course of time: a brew's "start gravity" is its "original gravity", not its final
    assert not contrasting("start_gravity", "original_gravity") and contrasting("start_gravity", "final_gravity")
    assert contrasting("opening_time", "closing_time") and not contrasting("opening_balance", "starting_balance")


def test_a_value_in_a_unit_is_not_a_word_more_or_less_of_a_unitless_field(store):
    # "length 257" (a word count) in writing rounds; a screen's "35 / STREAK LENGTH (days)" beside new labels
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 5):
        al.align(i, [num("length", 250 + i), num("fixes", 3 + i)])
    # (its companion looks like "fixes": a small count, so the record could be of the same kind)
    out = al.align(5, [num("streak_length", 35, "days"), num("lessons", 5)])
    assert out[0].attribute == "streak_length"
    # the field's own name with a unit added stays one field (people drop units)
    assert al.align(6, [num("length", 260, "words"), num("fixes", 4)])[0].attribute == "length"


def test_a_bare_count_is_not_a_field_whose_every_value_had_a_unit_when_range_and_company_disagree(store):
    # flash cards: "297 cards, 20 new cards, 93% correct"; then writing: "509 words, 20 corrections, 41 min"
    al = FieldAligner(store.con, DEFAULT)
    al.align(1, [num("cards", 297), num("new_cards", 20), num("correct", 93, "%")])
    out = al.align(2, [num("words", 509), num("corrections", 20), num("duration", 41, "min")])
    assert out[1].attribute == "corrections"
    for i in range(3, 5):
        al.align(i, [num("cards", 200 + i), num("new_cards", 15 + i), num("correct", 80 + i, "%")])
    # the field with its unit dropped, near its range or among its usual company, stays the field
    assert al.align(6, [num("correct", 85)])[0].attribute == "correct"
    assert al.align(7, [num("cards", 210), num("new_cards", 16), num("correct", 60)])[2].attribute == "correct"
    # and a label its abbreviation with the unit dropped, in the field's company: the field (people drop units)
    assert al.align(8, [num("cards", 220), num("new_cards", 18), num("correct_answers", 50)])[2].attribute == "correct"


def test_a_value_of_another_magnitude_and_unit_is_another_quantity(store):
    # print jobs: "layer 0.12 mm"; resin prints: "layers 1450" (a count): the same word, not one quantity
    al = FieldAligner(store.con, DEFAULT)
    for i in range(1, 5):
        al.align(i, [num("layer", 0.1 + 0.05 * (i % 3), "mm"), num("filament", 90 + 10 * i, "g")])
    assert al.align(5, [num("layers", 1450), num("resin", 40, "mL")])[0].attribute == "layers"
    # a value in the field's own unit keeps the field however far from its range (rain 0.2 mm and 15 mm)
    assert al.align(6, [num("layer", 4.0, "mm"), num("filament", 95, "g")])[0].attribute == "layer"


def test_a_value_far_beyond_a_fields_first_value_and_unit_is_another_quantity(store):
    # the history's first print job ("layer 0.2 mm"), then a resin print ("layers 1200", a count): one value
    # is a size, and 1200 is thousands of times beyond it
    al = FieldAligner(store.con, DEFAULT)
    al.align(1, [num("layer", 0.2, "mm"), num("filament", 90, "g")])
    assert al.align(2, [num("layers", 1200), num("resin", 40, "mL")])[0].attribute == "layers"
    # a value without its unit near the first one's size is that field still (people drop units)
    assert al.align(3, [num("layer", 0.3), num("filament", 95, "g")])[0].attribute == "layer"


def test_a_known_label_in_another_unit_dimension_is_another_field(store):
    # "Usage: 12 kWh" on the power meter, then a water screen prints "USAGE 405 litres": one name, two
    # quantities; the next litres go to the same second field, kWh stay where they were
    al = FieldAligner(store.con, DEFAULT)
    for i in range(4):
        al.align(i, [num("usage", 10.0 + i, "kWh"), num("meter", 41000.0 + i, "kWh")])
    (water,) = al.align(5, [num("usage", 405.0, "L")])
    assert water.attribute not in ("usage",) and water.attribute.startswith("usage") and water.raw_attribute == "usage"
    assert al.align(6, [num("usage", 380.0, "L")])[0].attribute == water.attribute
    assert al.align(7, [num("usage", 14.0, "kWh")])[0].attribute == "usage"
    # a unit of the same dimension is the same quantity (Wh beside kWh); no unit says nothing
    assert al.align(8, [num("usage", 9000.0, "Wh")])[0].attribute == "usage"
    assert al.align(9, [num("usage", 11.0)])[0].attribute == "usage"
    # OCR drops a power ("0.60 m" for "0.60 m³"): the same field, not a length
    for i in range(3):
        al.align(20 + i, [num("gas", 3.0 + i, "m³")])
    assert al.align(30, [num("gas", 0.6, "m")])[0].attribute == "gas"

def word(attr: str, value: str, round_id: str = "S1:R1") -> Observation:
    return Observation(round_id, attr, value, None, None, "text")


def test_a_known_label_holding_another_kind_of_value_is_another_field(store):
    # a screen prints "Material: 131.7 g" (the mass used) where messages say "material TPU" (its kind):
    # one name, a number on one side and a word on the other; the words go to a field of their own and
    # the numbers stay, so neither column mixes masses with names
    al = FieldAligner(store.con, DEFAULT)
    for i in range(3):
        al.align(i, [num("material", 100.0 + i, "g"), num("time", 200.0 + i, "min")])
    (kind, grams) = al.align(5, [word("material", "TPU"), num("filament", 88.0, "g")])
    assert kind.attribute != "material" and kind.attribute.startswith("material") and kind.raw_attribute == "material"
    assert al.align(6, [word("material", "PLA")])[0].attribute == kind.attribute
    assert al.align(7, [num("material", 120.0, "g")])[0].attribute == "material"
    # a field seen once says little about its kind: its second value joins it whatever it is
    al.align(8, [word("colour", "red")])
    assert al.align(9, [num("colour", 3.0)])[0].attribute == "colour"



def test_field_stats_count_in_how_many_records_one_field_was_the_larger(store):
    from core.align import field_stats

    rows = [("S1:R1", "yield", 12.0, "kWh"), ("S1:R1", "exported", 3.0, "kWh"),
            ("S1:R2", "yield", 9.0, "kWh"), ("S1:R2", "exported", 4000.0, "Wh"),  # 4 kWh: compared converted
            ("S1:R3", "yield", 2.0, "kWh"), ("S1:R3", "exported", 3.0, "kWh"), ("S1:R3", "count", 5.0, None)]
    al = FieldAligner(store.con, DEFAULT)
    for k, rid in enumerate(("S1:R1", "S1:R2", "S1:R3")):
        al.align(k, [num(a, n, u, rid) for r, a, n, u in rows if r == rid])
    al.flush()
    for k, (rid, attr, number, unit) in enumerate(rows):
        store.con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind) "
                          "VALUES (?, ?, ?, ?, ?, ?, 'number')", [rid, k, attr, f"{number:g}", number, unit])
    st = field_stats(store.con)
    assert st["yield"].above["exported"] == (3, 2) and st["exported"].above["yield"] == (3, 1)
    assert "count" not in st["yield"].above  # a bare count is not compared with energy
