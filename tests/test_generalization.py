"""The generalization suite: bench/histgen histories are deterministic, true to their truth and readable
by the engine; bench/generalization.py scores a memory right (handcrafted DuckDB file with known
answers) and runs end to end on a small seeded slice built with the real engine."""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import generalization as gen  # noqa: E402
from bench.histgen import DOMAIN_NAMES, generate, make  # noqa: E402
from bench.histgen.history import NUMBER_WORDS  # noqa: E402

SMALL = {"rounds": 70, "images": 6}


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bank_has_ten_domains_unlike_the_demo():
    from bench.histgen.bank import DOMAINS

    assert len(DOMAINS) >= 10
    for d in DOMAINS:
        assert 4 <= len(d.streams) <= 6, d.name
        assert not {"sleep", "glucose", "workout", "cards"} & {s.name for s in d.streams}
        for s in d.streams:
            assert 2 <= len(s.fields) <= 5, (d.name, s.name)
            for f in s.fields:
                assert len(f.labels) >= 3 or f.is_text, (d.name, s.name, f.qid)


def test_histgen_never_imports_core():
    for p in (ROOT / "bench" / "histgen").glob("*.py"):
        src = p.read_text()
        assert not re.search(r"^\s*(from|import)\s+core\b", src, re.M), p
        assert not re.search(r"^\s*from\s+\.\.+\s*core\b|__import__\(.core", src, re.M), p


def test_same_seed_same_bytes(tmp_path):
    a = generate(tmp_path / "a", seed=11, **SMALL)
    b = generate(tmp_path / "b", seed=11, **SMALL)
    assert a["domain"] == b["domain"]
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert any(p.suffix == ".png" for p in (tmp_path / "a" / "images").iterdir())


def test_different_seeds_differ():
    domains, labels = set(), set()
    for seed in range(1, 9):
        doc, truth, _ = make(seed, rounds=60, images=4, questions=False)
        domains.add(truth["domain"])
    assert len(domains) >= 3
    for seed in (1, 2, 3):
        _, truth, _ = make(seed, domain="aquarium", rounds=60, images=6, questions=False)
        labels.add(json.dumps(truth["fields"], sort_keys=True))
    assert len(labels) == 3


def test_default_size():
    doc, truth, images = make(5, questions=False)
    sessions = doc["multi_session_dialogues"]
    assert 50 <= len(sessions) <= 70
    assert 200 <= len(truth["rounds"]) <= 280
    assert 30 <= len(images) <= 45
    assert 4 <= len(truth["streams"]) <= 5


@pytest.mark.parametrize("seed", [3, 4, 7])
def test_every_truth_value_is_in_its_round(seed):
    doc, truth, images = make(seed, rounds=120, images=14, questions=False)
    rounds = {d["round"]: d for s in doc["multi_session_dialogues"] for d in s["dialogues"]}
    assert set(rounds) == set(truth["rounds"])
    kinds = {m["kind"] for m in truth["rounds"].values()}
    assert {"record", "talk", "oneoff", "photo"} <= kinds
    for o in truth["observations"]:
        r = rounds[o["round"]]
        assert truth["rounds"][o["round"]]["kind"] == "record"
        assert o["round"] in truth["streams"][o["stream"]]
        if o["where"] == "text":
            assert o["display"] in r["user"], o
            assert o["label"] in r["user"], o
        else:
            lines = truth["renders"][o["round"]]["lines"]
            assert any(o["display"] in line for line in lines), o
            assert any(o["label"] in line for line in lines), o
            assert r["input_image"][0] in images
        if not isinstance(o["value"], str):
            d = o["display"]
            if d in NUMBER_WORDS:
                assert NUMBER_WORDS.index(d) == o["value"]
            elif not re.search(r"\d+ h \d+ min|\d+ h$", d):
                shown = float(re.search(r"-?\d+(?:\.\d+)?", d).group(0))
                assert any(abs(shown - o["value"] * f) <= 0.006 * max(1, abs(shown)) for f in gen.factors(o["unit"])), o
    # identifiers are printed where the truth says, and are never record values
    for ident in truth["identifiers"]:
        r = rounds[ident["round"]]
        shown = r["user"] + " ".join(truth["renders"].get(ident["round"], {}).get("lines", []))
        assert ident["text"] in shown
    # one-offs stay one-offs
    from collections import Counter
    assert max(Counter(m["label"] for m in truth["rounds"].values() if m["kind"] == "oneoff").values()) < 4


def test_history_parses_with_the_engine_reader(tmp_path):
    from core.formats import read_file

    truth = generate(tmp_path / "h", seed=21, **SMALL)
    histories = read_file(truth["path"])
    assert len(histories) == 1
    h = histories[0]
    ids = [r.round_id for s in h.sessions for r in s.rounds]
    assert ids == list(truth["rounds"])
    doc = json.loads(Path(truth["path"]).read_text())
    n_img = 0
    for s in doc["multi_session_dialogues"]:
        for d in s["dialogues"]:
            for rel in d.get("input_image", []):
                assert (tmp_path / "h" / rel).is_file(), rel
                n_img += 1
    assert n_img == SMALL["images"]
    assert len(h.qas) == len(doc["human-annotated QAs"])


# ------------------------------------------------------------------ the scorer on a handcrafted memory

def _truth_fixture() -> dict:
    rounds = {f"S{i}:R1": {"kind": "record", "stream": "watering"} for i in range(1, 6)}
    rounds["S6:R1"] = {"kind": "talk"}
    rounds["S7:R1"] = {"kind": "oneoff"}
    obs = []
    for i in range(1, 6):
        obs.append({"round": f"S{i}:R1", "stream": "watering", "quantity": "water_ml", "value": 100.0 * i,
                    "unit": "ml", "where": "text", "label": "Water", "display": f"{100 * i} ml"})
        obs.append({"round": f"S{i}:R1", "stream": "watering", "quantity": "plant", "value": "Monstera",
                    "unit": "", "where": "text", "label": "Plant", "display": "Monstera"})
    obs.append({"round": "S1:R1", "stream": "watering", "quantity": "mist_min", "value": 90.0, "unit": "min",
                "where": "text", "label": "Mist", "display": "90 min"})
    return {"observations": obs, "streams": {"watering": [f"S{i}:R1" for i in range(1, 6)]}, "rounds": rounds}


def _handmade_store(path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    base = "source VARCHAR, round_order INTEGER, time TIMESTAMP, captions VARCHAR, modality VARCHAR, _obs VARCHAR"
    con.execute(f"CREATE TABLE water_log ({base}, water DOUBLE, plant VARCHAR, mist DOUBLE)")
    con.execute(f"CREATE TABLE irrigation_log ({base}, irrigation DOUBLE)")
    con.execute(f"CREATE TABLE chat_log ({base}, meetings DOUBLE)")
    # S1..S3 in water_log: S1 in ml with the mist in hours, S2 stored in litres, S3 with a wrong value
    con.execute("INSERT INTO water_log VALUES ('S1:R1', 1, NULL, '', 'text', '[]', 100, 'monstera', 1.5),"
                " ('S2:R1', 2, NULL, '', 'text', '[]', 0.2, 'The Monstera', NULL),"
                " ('S3:R1', 3, NULL, '', 'text', '[]', 333, NULL, NULL)")
    # S4, S5 split off into another table (labels not aligned), values right, `_obs` would match but is ignored
    con.execute("INSERT INTO irrigation_log VALUES ('S4:R1', 4, NULL, '', 'text', '400', 400),"
                " ('S5:R1', 5, NULL, '', 'text', '500', 500)")
    # a table made of a record-less round
    con.execute("INSERT INTO chat_log VALUES ('S6:R1', 6, NULL, '', 'text', '[]', 3)")
    con.execute("CREATE VIEW memory_tables AS SELECT * FROM (VALUES ('water_log', 'waterings', 3),"
                " ('irrigation_log', 'irrigation', 2), ('chat_log', 'meetings', 1)) t(table_name, description, n_rows)")
    con.close()


def test_scorer_metrics_on_a_handcrafted_memory(tmp_path):
    store = tmp_path / "m.duckdb"
    _handmade_store(store)
    m = gen.score_store(store, _truth_fixture())
    # 11 values: water S1, S2 (litres), S4, S5 = 4 of 5; plant S1, S2 = 2 of 5; mist (hours) = 1
    assert m["n_values"] == 11 and m["n_found"] == 7
    assert m["values_in_table"] == pytest.approx(7 / 11)
    # 5 records: 3 in water_log, 2 in irrigation_log
    assert m["stream_coherence"] == pytest.approx(0.6)
    assert m["stream_table"]["watering"]["table"] == "water_log"
    # water_ml: best column water_log.water (2 of 5); plant: 2 of 5; mist: 1 of 1 -> (2 + 2 + 1) / 11
    assert m["field_coherence"] == pytest.approx(5 / 11)
    assert m["field_column"]["watering.water_ml"] == {"column": "water_log.water", "share": 0.4, "values": 5}
    assert m["recordless_rows"] == pytest.approx(1 / 6)
    assert m["recordless_sources"] == ["S6:R1"]
    assert m["tables"] == 3 and m["streams"] == 1
    assert {t["name"]: t["columns"] for t in m["table_list"]}["water_log"] == ["water", "plant", "mist"]
    line = gen.fmt_line("plants", m)
    assert line == ("domain=plants values_in_table=0.64 stream_coherence=0.60 field_coherence=0.45 "
                    "recordless_rows=0.17 mixed_rows=0.00 tables=3 streams=1")
    assert m["mixed_rows"] == 0.0  # one stream: nothing mixed in


def test_rows_of_a_stream_in_a_table_another_stream_holds_are_mixed_in():
    # a house's electricity readings (3 rounds) and a solar panel's (2 rounds) joined in one table
    truth = {"observations": [], "streams": {"use": ["A1", "A2", "A3"], "solar": ["B1", "B2"]}, "plans": {},
             "rounds": {r: {"kind": "record", "stream": "use" if r[0] == "A" else "solar"}
                        for r in ("A1", "A2", "A3", "B1", "B2")}}
    rows = [{"source": r, "kwh": 1.0} for r in ("A1", "A2", "A3", "B1", "B2")]
    joined = gen.score_tables([{"name": "energy_log", "description": "", "n_rows": 5, "columns": ["kwh"],
                                "rows": rows}], truth)
    assert joined["mixed_rows"] == pytest.approx(2 / 5) and joined["stream_coherence"] == 1.0
    apart = gen.score_tables([{"name": "use_log", "description": "", "n_rows": 3, "columns": ["kwh"], "rows": rows[:3]},
                              {"name": "solar_log", "description": "", "n_rows": 2, "columns": ["kwh"], "rows": rows[3:]}],
                             truth)
    assert apart["mixed_rows"] == 0.0


def test_value_matching_rules():
    assert gen.number_matches(0.25, 250, "ml") and gen.number_matches(250.0, 250, "ml")
    assert gen.number_matches(1.5, 90, "min") and gen.number_matches(90, 1.5, "h")
    assert not gen.number_matches(0.25, 250, "USD")
    assert gen.number_matches(1.045, 1.045, "") and not gen.number_matches(1.06, 1.045, "")
    assert gen.number_matches(101.0, 100, "") and not gen.number_matches(102.0, 100, "")
    assert gen.text_matches("fiddle leaf fig", "Fiddle leaf fig") and not gen.text_matches("fig", "Fiddle leaf fig")
    assert not gen.text_matches(3.0, "3")


def test_a_table_is_named_for_a_stream_when_it_says_a_word_of_the_record_noun():
    assert gen.names_record("lake_survey_log", "lake survey") and gen.names_record("lake_log", "lake survey")
    assert gen.names_record("tyre_pressure_log", "tyre check")
    # the occasion word alone ("check", "reading") does not name the stream
    assert not gen.names_record("check_log", "tyre check") and not gen.names_record("usage_log", "electricity reading")
    assert gen.names_record("reading_log", "reading")  # ... unless it is all the noun says
    assert not gen.names_record(None, "game") and not gen.names_record("gp_log", "blitz session")


def test_mem_gallery_mode_skips_clearly_when_absent(tmp_path, capsys):
    assert gen.run_mem_gallery(tmp_path / "nowhere", tmp_path) is None
    assert "absent" in capsys.readouterr().out


def test_strip_images_keeps_captions():
    doc = {"multi_session_dialogues": [{"session_id": "D1", "dialogues": [
        {"round": "D1:1", "user": "hi", "image_id": ["a"], "input_image": ["x.png"], "image_caption": ["a cat"]}]}]}
    out = gen.strip_images(doc)
    d = out["multi_session_dialogues"][0]["dialogues"][0]
    assert "input_image" not in d and d["image_caption"] == ["a cat"]
    assert doc["multi_session_dialogues"][0]["dialogues"][0]["input_image"] == ["x.png"]


# ------------------------------------------------------------------ end to end with the real engine

def test_small_slice_end_to_end_with_the_real_engine(tmp_path, capsys):
    out_json = tmp_path / "g.json"
    rc = gen.main(["--domain", "brewing", "language", "--seed", "3", "--rounds", "70", "--images", "6",
                   "--out", str(tmp_path / "h"), "--json", str(out_json), "--details"])
    out = capsys.readouterr().out
    print(out)
    assert rc == 0, out
    lines = re.findall(r"^domain=(\w+) values_in_table=([0-9.]+) stream_coherence=([0-9.]+) field_coherence=([0-9.]+) "
                       r"recordless_rows=([0-9.]+) mixed_rows=[0-9.]+ tables=(\d+) streams=(\d+)(?: named=[0-9.]+)?$", out, re.M)
    assert [x[0] for x in lines] == ["brewing", "language", "pooled"], out
    data = json.loads(out_json.read_text())
    assert all("metrics" in r for r in data["results"]), out
    for r in data["results"]:
        m = r["metrics"]
        assert 0 <= m["values_in_table"] <= 1 and 0 <= m["recordless_rows"] <= 1
        assert m["streams"] >= 4
        assert Path(r["store"]).is_file()
    # Floors only where the engine already is, and it moves daily (this slice: values_in_table 0.25 at
    # b1caede, 0.05 with the alignment work in progress); the team raises them as extraction and
    # alignment improve. Today: some record values reach a table, and the figures are consistent.
    assert sum(r["metrics"]["n_found"] for r in data["results"]) >= 1, out
    assert data["pooled"]["tables"] >= 1, out
    for r in data["results"]:
        m = r["metrics"]
        assert m["field_coherence"] <= m["values_in_table"] + 1e-9


# ------------------------------------------------------------------ questions

@pytest.mark.parametrize("seed", [8, 16])
def test_questions_cover_the_demo_types_with_gold_from_the_truth(seed):
    from core.evaluation.scoring import ANSWER_KINDS

    doc, truth, _ = make(seed)
    qs = doc["human-annotated QAs"]
    assert 90 <= len(qs) <= 120
    types = {q["query_type"] for q in qs}
    assert types == {"average", "sum", "count", "max", "min", "argmax", "argmin", "latest", "first", "date_range",
                     "filtered", "trend", "progressive", "single_fact", "visual", "refusal"}
    assert len({q["question"] for q in qs}) == len(qs)
    rounds = set(truth["rounds"])
    by_round = {}
    for o in truth["observations"]:
        by_round.setdefault((o["stream"], o["quantity"]), []).append(o)
    for q in qs:
        assert q["answer_kind"] in ANSWER_KINDS
        assert set(q["clue"]) <= rounds
        spec = q["meta"]["spec"]
        if q["answer_kind"] == "number":
            assert q["tolerance"] >= 0
        if q["query_type"] == "average":
            xs = [o["value"] for o in by_round[(spec["stream"], spec["quantity"])]]
            assert float(q["answer"].split()[0].rstrip("%")) == pytest.approx(sum(xs) / len(xs), abs=0.006)
        if q["query_type"] in ("max", "min"):
            # a value shown in another unit (4.82 h) is what the user saw: the gold (289 min) must accept it
            xs = [o["value"] for o in by_round[(spec["stream"], spec["quantity"])]]
            shown = max(xs) if q["query_type"] == "max" else min(xs)
            assert abs(float(q["answer"].split()[0].rstrip("%")) - shown) <= q["tolerance"] + 1e-9
        if q["query_type"] == "count" and not spec["where"]:
            assert int(q["answer"]) == len(truth["streams"][spec["stream"]])
        if q["query_type"] == "refusal":
            assert q["answer"] == "Not mentioned" and not q["clue"]
            text = json.dumps(doc["multi_session_dialogues"]).lower()
            assert spec["topic"].lower() not in text
    # paraphrases: each frequent type is asked in more than one wording
    openers = {}
    for q in qs:
        openers.setdefault(q["query_type"], set()).add(" ".join(q["question"].split()[:2]))
    assert all(len(openers[t]) >= 2 for t in ("average", "sum", "count", "max", "min", "date_range"))


# ------------------------------------------------------------------ re-asking a run without a rebuild

def test_reask_asks_a_runs_questions_again_and_reports_what_moved(tmp_path, capsys):
    from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
    from bench import reask
    from core.build import BuildDeps, build
    from core.config import DEFAULT
    from core.extract import RuleExtractor
    from core.formats import read_file
    from core.store import Store

    folder = tmp_path / "run" / "plants-5"
    truth = generate(folder, seed=5, domain="plants", **SMALL)
    with Store(folder / "memory.duckdb") as s:
        build(s, read_file(truth["path"]), BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(),
                                                     RuleExtractor(DEFAULT)), DEFAULT)
    first = reask.reask(folder, HashEmbedder())
    qas = json.loads(Path(truth["path"]).read_text())["human-annotated QAs"]
    assert set(first.answers) == {q["sample_id"] for q in qas} and first.moved == ()
    # the run's own predictions with one verdict turned round: that question, and only it, moved
    (folder / "eval").mkdir()
    flipped = sorted(first.answers)[0]
    (folder / "eval" / "predictions.jsonl").write_text("".join(
        json.dumps({"qa_id": k, "correct": ok != (k == flipped), "prediction": "before"}) + "\n"
        for k, (ok, _) in first.answers.items()))
    again = reask.reask(folder, HashEmbedder())
    assert again.answers == first.answers  # the copy is asked, the run's memory is as it was
    assert [m[0] for m in again.moved] == [flipped] and again.moved[0][3] == "before"
    assert reask.main([str(tmp_path / "run"), "--changes"], encoder=HashEmbedder()) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^history=plants-5 n={len(qas)} accuracy=[0-9.]+ gained=[01] lost=[01]$", out, re.M), out
    assert flipped in out and "pooled n=" in out
    # a folder that is no run says so and exits 2
    assert reask.main([str(tmp_path / "nothing")], encoder=HashEmbedder()) == 2
