"""The bundled demo history (data/demo) and its benchmark: reproducible, in range, gold answers right, fair.

Gold answers are recomputed here from truth.json by code independent of the
generator; the fairness test OCRs the screenshots with the real rapidocr.
"""
from __future__ import annotations

import hashlib
import json
import re
import statistics
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from core.evaluation.scoring import find_numbers, score_answer

from conftest import ROOT

DEMO = ROOT / "data" / "demo"
GENERATOR = ROOT / "data" / "generate_demo.py"
ANALYTIC_TYPES = {"average", "sum", "max", "min", "count", "argmax", "argmin", "latest", "first", "date_range",
                  "filtered", "trend", "progressive"}
ALL_TYPES = ANALYTIC_TYPES | {"single_fact", "visual", "refusal"}


@pytest.fixture(scope="module")
def demo() -> dict:
    return json.loads((DEMO / "demo.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def truth() -> dict:
    return json.loads((DEMO / "truth.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rounds(demo) -> dict:
    return {d["round"]: d for s in demo["multi_session_dialogues"] for d in s["dialogues"]}


def _norm(s: str) -> str:
    return re.sub(r"\s+", "", s).lower()


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# ------------------------------------------------------------------ reproducibility

def test_generator_reproduces_the_committed_files_byte_for_byte(tmp_path):
    out = tmp_path / "demo"
    proc = subprocess.run([sys.executable, str(GENERATOR), "--seed", "7", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    made = {p.relative_to(out).as_posix(): _sha(p) for p in out.rglob("*") if p.is_file()}
    committed = {p.relative_to(DEMO).as_posix(): _sha(p) for p in DEMO.rglob("*") if p.is_file() and p.name != "README.md"}
    assert set(made) == set(committed)
    differing = sorted(k for k in made if made[k] != committed[k])
    assert not differing, f"regenerated files differ from data/demo: {differing[:5]}"


def test_another_seed_gives_another_history(tmp_path):
    out = tmp_path / "demo"
    subprocess.run([sys.executable, str(GENERATOR), "--seed", "8", "--out", str(out)], check=True,
                   capture_output=True, timeout=300, cwd=ROOT)
    assert _sha(out / "truth.json") != _sha(DEMO / "truth.json")


# ------------------------------------------------------------------ format and counts

def test_memeye_fields_and_counts(demo, rounds):
    assert set(demo) == {"character_profile", "multi_session_dialogues", "human-annotated QAs"}
    sessions = demo["multi_session_dialogues"]
    assert 50 <= len(sessions) <= 80
    dates = [s["date"] for s in sessions]
    assert dates == sorted(dates) and dates[0] == "2026-01-12" and dates[-1] == "2026-04-12"
    allowed = {"round", "time", "user", "assistant", "image_id", "input_image", "image_caption"}
    for n, s in enumerate(sessions, start=1):
        assert s["session_id"] == f"S{n}"
        assert 3 <= len(s["dialogues"]) <= 8, s["session_id"]
        times = [d["time"] for d in s["dialogues"]]
        assert times == sorted(times) and all(t.startswith(s["date"]) for t in times)
        for k, d in enumerate(s["dialogues"], start=1):
            assert d["round"] == f"S{n}:R{k}"
            assert set(d) <= allowed and {"round", "time", "user", "assistant"} <= set(d)
            if "input_image" in d:
                assert len(d["input_image"]) == len(d["image_id"]) == len(d["image_caption"])
                for rel in d["input_image"]:
                    assert not Path(rel).is_absolute() and (DEMO / rel).is_file()
    qas = demo["human-annotated QAs"]
    assert 100 <= len(qas) <= 150
    for qa in qas:
        assert {"question", "answer", "clue", "session_id", "query_type", "sample_id", "answer_kind"} <= set(qa)
        assert all(c in rounds for c in qa["clue"])
        assert qa["session_id"] == sorted({c.split(":")[0] for c in qa["clue"]}, key=lambda s: int(s[1:]))
        if qa["answer_kind"] == "number":
            assert isinstance(qa["tolerance"], (int, float)) and qa["tolerance"] >= 0
    types = {qa["query_type"] for qa in qas}
    assert ALL_TYPES <= types, ALL_TYPES - types
    assert len({qa["sample_id"] for qa in qas}) == len(qas)


def test_size_and_image_files(demo):
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total < 15 * 1024 * 1024
    referenced = {rel for s in demo["multi_session_dialogues"] for d in s["dialogues"] for rel in d.get("input_image", [])}
    on_disk = {p.relative_to(DEMO).as_posix() for p in (DEMO / "images").iterdir()}
    assert referenced == on_disk


def test_the_project_reader_loads_the_demo_with_its_images(demo):
    from core.formats import read_file

    (h,) = read_file(DEMO / "demo.json")
    assert len(h.sessions) == len(demo["multi_session_dialogues"])
    assert len(h.qas) == len(demo["human-annotated QAs"])
    assert all(img.data for r in h.rounds for img in r.images)
    kinds = {q.answer_kind for q in h.qas}
    assert kinds == {"number", "date", "updown", "yesno", "text", "refusal"}
    assert all(q.refusal for q in h.qas if q.answer_kind == "refusal")


def test_gold_answers_score_full_marks_against_themselves(demo):
    for qa in demo["human-annotated QAs"]:
        assert score_answer(qa["answer"], qa["answer"], qa["answer_kind"], qa.get("tolerance")) == 1.0, qa["sample_id"]


def test_the_scorer_infers_every_stated_answer_kind(demo):
    from core.evaluation.scoring import infer_kind

    wrong = [(qa["sample_id"], qa["answer"], qa["answer_kind"], infer_kind(qa["answer"]))
             for qa in demo["human-annotated QAs"] if infer_kind(qa["answer"]) != qa["answer_kind"]]
    assert not wrong


# ------------------------------------------------------------------ truth consistency

def test_where_is_honest(truth, rounds):
    """text/both values are in the dialogue; image-only values are in neither the dialogue nor the captions."""
    for o in truth["observations"]:
        d = rounds[o["round"]]
        said = _norm(d["user"] + " " + d["assistant"])
        shown = _norm(o["display"])
        if o["where"] in ("text", "both"):
            assert shown in said, o
        else:
            assert shown not in said, o
            assert all(shown not in _norm(c) for c in d.get("image_caption", [])), o
        if o["where"] in ("image", "both"):
            assert d.get("input_image"), o


def test_display_strings_mean_the_recorded_values(truth):
    for o in truth["observations"]:
        if isinstance(o["value"], str):
            assert o["display"].lower() in {o["value"].lower(), "i"}, o
            continue
        q = find_numbers(o["display"])[0]
        value = q.value * 60 if (q.unit == "h" and o["unit"] == "min") else q.value
        assert abs(value - o["value"]) <= 1 / 120 + 1e-9, o


# ------------------------------------------------------------------ gold answers, recomputed

class Table:
    """truth.json observations pivoted to one record per (stream, round), ordered by round."""

    def __init__(self, truth: dict):
        recs: dict[tuple[str, str], dict] = {}
        for o in truth["observations"]:
            r = recs.setdefault((o["stream"], o["round"]), {"_round": o["round"], "_stream": o["stream"],
                                                             "_date": truth["rounds"][o["round"]]["date"]})
            r[o["quantity"]] = o["value"]
        order = {rid: i for i, rid in enumerate(truth["rounds"])}
        self.recs = sorted(recs.values(), key=lambda r: order[r["_round"]])
        self.events = truth["events"]

    def select(self, spec: dict) -> list[dict]:
        ops = {"=": lambda a, b: a == b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
               "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}
        out = [r for r in self.recs if r["_stream"] == spec["stream"]]
        if spec.get("range"):
            lo, hi = spec["range"]
            out = [r for r in out if lo <= r["_date"] <= hi]
        for q, op, v in spec.get("where", []):
            out = [r for r in out if q in r and ops[op](r[q], v)]
        return out


def _recompute(t: Table, spec: dict):
    """The gold answer of an analytic spec as a value (number, ISO date or word)."""
    op, q = spec["op"], spec.get("quantity")
    rs = t.select(spec)
    if op == "avg":
        return sum(r[q] for r in rs) / len(rs)
    if op == "sum":
        return sum(r[q] for r in rs)
    if op == "count":
        return len(rs)
    if op in ("max", "min"):
        return (max if op == "max" else min)(r[q] for r in rs)
    if op in ("argmax", "argmin"):
        best = (max if op == "argmax" else min)(r[q] for r in rs)
        days = {r["_date"] for r in rs if r[q] == best}
        assert len(days) == 1
        return days.pop()
    if op == "exists":
        return "yes" if rs else "no"
    if op in ("latest", "first"):
        return (rs[-1] if op == "latest" else rs[0])[q]
    if op in ("latest_date", "first_date"):
        return (rs[-1] if op == "latest_date" else rs[0])["_date"]
    if op == "trend_first_last":
        return "up" if rs[-1][q] > rs[0][q] else "down"
    if op == "trend_avg":
        a = statistics.fmean(r[q] for r in rs)
        b = statistics.fmean(r[q] for r in t.select({**spec, "range": spec["range2"]}))
        return "up" if b > a else "down"
    if op == "mode":
        counts: dict = {}
        for r in rs:
            counts[r[q]] = counts.get(r[q], 0) + 1
        return max(counts, key=counts.get)
    if op == "group_winner":
        night = [r for r in rs if r["_date"] == spec["date"]]
        mine = sum(r["points"] for r in night if r["winner"] == "me")
        theirs = sum(r["points"] for r in night if r["winner"] != "me")
        return "yes" if mine > theirs else "no"
    if op == "lookup":
        (r,) = [r for r in rs if r["_date"] == spec["date"]]
        if spec.get("anchor"):
            assert t.events[spec["anchor"]]["date"] == spec["date"]
        return r[q]
    if op in ("first_after", "count_after"):
        after = [r for r in rs if r["_date"] > t.events[spec["anchor"]]["date"]]
        return after[0][q] if op == "first_after" else len(after)
    raise AssertionError(f"unknown op {op}")


def _gold_matches(gold: str, kind: str, value) -> bool:
    if kind == "number":
        g = find_numbers(gold)[0]
        if re.search(r"\d+h \d{2}m|\d+:\d{2}", gold):
            precision = 1 / 120  # shown to the minute / second
        else:
            m = re.search(r"\d+\.(\d+)", gold)
            precision = 0.5 * 10 ** -len(m.group(1)) if m else 0.5 if isinstance(value, float) and value != int(value) else 0
        return abs(g.value - value) <= precision + 1e-9
    if kind == "date":
        return gold == value
    if kind == "updown":
        return {"up": "up", "higher": "up", "down": "down", "lower": "down"}[gold] == value
    return gold == value


def test_every_analytic_gold_answer_is_recomputed_from_truth(demo, truth):
    t = Table(truth)
    checked = 0
    for qa in demo["human-annotated QAs"]:
        spec = qa["meta"]["spec"]
        if qa["query_type"] not in ANALYTIC_TYPES and spec["op"] != "lookup":
            continue
        value = _recompute(t, spec)
        assert _gold_matches(qa["answer"], qa["answer_kind"], value), (qa["sample_id"], qa["question"], qa["answer"], value)
        checked += 1
    assert checked >= 80


def test_retrieval_gold_answers_are_in_their_clue_round(demo, rounds, truth):
    for qa in demo["human-annotated QAs"]:
        op = qa["meta"]["spec"]["op"]
        if op == "caption":
            (c,) = qa["clue"]
            captions = " ".join(rounds[c].get("image_caption", []))
            assert captions, qa
            assert _norm(qa["answer"].removeprefix("a ")) in _norm(captions), qa
            assert _norm(qa["answer"].removeprefix("a ")) not in _norm(rounds[c]["user"] + rounds[c]["assistant"])
        elif op == "event_fact":
            (c,) = qa["clue"]
            said = rounds[c]["user"]
            answer = qa["answer"]
            if qa["answer_kind"] == "number":
                assert str(int(find_numbers(answer)[0].value)) in said.replace(",", ""), qa
            elif qa["answer_kind"] == "date":
                assert date.fromisoformat(answer).strftime("%B ") + str(date.fromisoformat(answer).day) in said, qa
            else:
                assert _norm(answer) in _norm(said), qa
        elif op == "refusal":
            assert qa["answer"] == "Not mentioned" and qa["clue"] == []


def test_clues_are_evidence_the_answer_rests_on(demo, truth):
    event_rounds = {e["round"] for e in truth["events"].values()}
    for qa in demo["human-annotated QAs"]:
        deps = {r for r, _q in qa["meta"]["depends_on"]}
        if qa["query_type"] in ANALYTIC_TYPES:
            assert set(qa["clue"]) <= deps | event_rounds, qa["sample_id"]
            assert deps, qa["sample_id"]


# ------------------------------------------------------------------ fairness: every number is recoverable

def _dependencies(demo, truth):
    obs = {(o["round"], o["quantity"]): o for o in truth["observations"]}
    for qa in demo["human-annotated QAs"]:
        for rid, q in qa["meta"]["depends_on"]:
            yield qa, obs[(rid, q)]


def test_text_dependencies_are_in_the_dialogue(demo, truth, rounds):
    n = 0
    for qa, o in _dependencies(demo, truth):
        if o["where"] in ("text", "both"):
            d = rounds[o["round"]]
            assert _norm(o["display"]) in _norm(d["user"] + " " + d["assistant"]), (qa["sample_id"], o)
            n += 1
    assert n > 100


@pytest.mark.slow
def test_image_dependencies_are_recovered_by_real_ocr(demo, truth, rounds):
    """FAIRNESS: every value a question needs that is shown only in a screenshot is read back by rapidocr."""
    from core.encoders import RapidOcr

    ocr = RapidOcr()
    cache: dict[str, str] = {}
    missed, n = [], 0
    for qa, o in _dependencies(demo, truth):
        if o["where"] != "image":
            continue
        rid = o["round"]
        if rid not in cache:
            cache[rid] = " ".join(ocr.read((DEMO / rel).read_bytes()).text for rel in rounds[rid]["input_image"])
        n += 1
        if _norm(o["display"]) not in _norm(cache[rid]):
            missed.append((qa["sample_id"], rid, o["quantity"], o["display"], cache[rid]))
    assert n > 50
    assert not missed, missed[:5]
