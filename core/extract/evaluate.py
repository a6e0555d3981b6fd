"""Recall and precision of the rule extractor against a ground truth.

    python -m core.extract.evaluate [--demo data/demo] [--no-ocr] [--misses 20] [--json]

Reads DEMO/demo.json (MemEye format, through core.formats) and DEMO/truth.json,
OCRs every image with the real core.encoders.RapidOcr (cached per image
sha256 in /tmp/adamm-extract-ocr-cache.json, so a second run is fast), runs
RuleExtractor on every round and matches extracted numeric observations to
the truth values:

- a truth value is recalled when an observation of the same round and the
  same modality (text = dialogue; image = that round's OCR and captions)
  has the same value within tolerance (1 % relative, 0.011 absolute) after
  unit conversion (durations compare in minutes);
- an extracted numeric observation (dates and times excluded) is a true
  positive when it matches any truth value of its round, else a false
  positive; numbers of other ground-truth facts (truth.json "events", e.g. a
  price) are not false positives; extracted observations on the truth's
  distractor phrases are counted separately.

Names may differ: the truth's quantity names are mapped to the attribute
names the extractor produced, and the report lists that mapping (the goal is
one attribute per quantity). Exit status 0 when the targets (recall >= 0.95,
precision >= 0.90 for text and for images) are met, 1 when not, 2 on bad input.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from core.errors import InputError
from core.extract.normalize import parse_unit
from core.extract.rules import RuleExtractor
from core.model import Observation, Round

OCR_CACHE = Path("/tmp/adamm-extract-ocr-cache.json")
TARGET_RECALL, TARGET_PRECISION = 0.95, 0.90


@dataclass(frozen=True)
class TruthValue:
    round_id: str
    quantity: str
    value: float
    unit: str | None
    modality: str  # "text" or "image"
    image_id: str | None = None


@dataclass
class Scores:
    truth: int = 0
    recalled: int = 0
    extracted: int = 0
    correct: int = 0
    distractor_hits: int = 0
    misses: list = field(default_factory=list)
    false_positives: list = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.recalled / self.truth if self.truth else 1.0

    @property
    def precision(self) -> float:
        return self.correct / self.extracted if self.extracted else 1.0


# --------------------------------------------------------------------------- truth


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        m = re.fullmatch(r"\s*[-+]?[\d,]*\.?\d+\s*", v)
        if m:
            return float(v.replace(",", ""))
    return None


def _modalities(item: dict) -> tuple[str, ...]:
    """("text",), ("image",) or both ("both": the value is in the dialogue and in the image)."""
    where = str(item.get("modality") or item.get("where") or item.get("source") or item.get("in") or "text").lower()
    if where == "both":
        return ("text", "image")
    return ("image",) if any(k in where for k in ("image", "ocr", "visual", "caption", "photo", "picture")) else ("text",)


def load_truth(path: Path) -> tuple[list[TruthValue], dict[str, list[str]]]:
    """Truth values and distractor phrases per round from truth.json.

    Accepted shapes: {"records"|"values"|"observations": [item...], "distractors": [...]}
    or a bare list of items; an item names its round ("round"/"round_id"),
    quantity ("quantity"/"attribute"/"name"), "value", optional "unit" and
    where the value is shown ("modality"/"where"/"source": text | image | both; "both" counts
    once per modality).
    Raises InputError naming the file and the item on anything else.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(str(path), "", f"cannot read truth JSON ({e})") from e
    items = data
    distractors: dict[str, list[str]] = defaultdict(list)
    if isinstance(data, dict):
        items = next((data[k] for k in ("records", "values", "observations", "truth", "items") if k in data), None)
        for d in data.get("distractors", []) or []:
            if isinstance(d, dict):
                rid = d.get("round") or d.get("round_id")
                txt = d.get("text") or d.get("phrase") or d.get("value")
                if rid and txt is not None:
                    distractors[str(rid)].append(str(txt))
        if items is None:
            raise InputError(str(path), "$", "no list of truth values (records/values/observations)")
    if not isinstance(items, list):
        raise InputError(str(path), "$", "truth values must be a list")
    out: list[TruthValue] = []
    # numbers of other ground-truth facts ("events": a price, a date) are not false positives
    for ev in (data.get("events", {}) if isinstance(data, dict) else {}).values() if isinstance(data, dict) and isinstance(data.get("events"), dict) else []:
        if isinstance(ev, dict) and ev.get("round"):
            for k, val in ev.items():
                n = _num(val)
                if n is not None and k not in ("round", "date"):
                    out.append(TruthValue(str(ev["round"]), k, n, None, "fact"))
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise InputError(str(path), f"$[{i}]", "a truth value must be an object")
        if it.get("distractor"):
            distractors[str(it.get("round") or it.get("round_id"))].append(str(it.get("text") or it.get("value")))
            continue
        rid = it.get("round") or it.get("round_id")
        q = it.get("quantity") or it.get("attribute") or it.get("name")
        v = _num(it.get("value"))
        if not rid or not q:
            raise InputError(str(path), f"$[{i}]", "missing round or quantity")
        if v is None:
            continue  # text/date values are not scored here
        for m in _modalities(it):
            out.append(TruthValue(str(rid), str(q), v, it.get("unit") or None, m, it.get("image_id")))
    return out, dict(distractors)


# --------------------------------------------------------------------------- matching


def _canonical(value: float, unit: str | None) -> list[float]:
    """Values a truth number may appear as after extraction (durations in minutes)."""
    u = parse_unit(unit) if unit else None
    cands = [value]
    if u is not None and u.factor != 1.0:
        cands.append(value * u.factor)
    return cands


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(0.01 * abs(b), 0.011)


def matches(obs: Observation, tv: TruthValue) -> bool:
    """Same value within tolerance, trying the truth's unit conversion (and minutes <-> hours)."""
    if obs.number is None:
        return False
    for c in _canonical(tv.value, tv.unit):
        if _close(obs.number, c):
            return True
        if obs.unit == "min" and (tv.unit is None or parse_unit(tv.unit) is None) and (
                _close(obs.number / 60, c) or _close(obs.number * 60, c)):
            return True
    return False


def _obs_modality(o: Observation) -> str:
    return "text" if o.source == "dialogue" else "image"


def score(rounds: Iterable[Round], observations: dict[str, list[Observation]], truth: list[TruthValue],
          distractors: dict[str, list[str]]) -> tuple[dict[str, Scores], dict[str, Counter]]:
    """Scores per modality ("text", "image") and the attribute names seen per truth quantity."""
    by_round: dict[str, list[TruthValue]] = defaultdict(list)
    for tv in truth:
        by_round[tv.round_id].append(tv)
    s = {"text": Scores(), "image": Scores()}
    # "fact" truth values (other ground truth, e.g. a price in an event) only keep matching
    # extractions from counting as false positives
    names: dict[str, Counter] = defaultdict(Counter)
    for r in rounds:
        obs = [o for o in observations.get(r.round_id, []) if o.value_kind == "number"]
        tvs = by_round.get(r.round_id, [])
        for tv in tvs:
            if tv.modality == "fact":
                continue  # scored for precision only
            sc = s[tv.modality]
            sc.truth += 1
            hit = [o for o in obs if _obs_modality(o) == tv.modality and matches(o, tv)]
            if hit:
                sc.recalled += 1
                names[tv.quantity][hit[0].attribute] += 1
            else:
                sc.misses.append((r.round_id, tv.quantity, tv.value, tv.unit))
        dphr = distractors.get(r.round_id, [])
        for o in obs:
            sc = s[_obs_modality(o)]
            sc.extracted += 1
            if any(matches(o, tv) for tv in tvs):
                sc.correct += 1
            else:
                sc.false_positives.append((r.round_id, o.attribute, o.raw_value, o.source, o.label))
                if any(o.raw_value and o.raw_value in d for d in dphr):
                    sc.distractor_hits += 1
    return s, names


# --------------------------------------------------------------------------- OCR with cache


def ocr_texts(rounds: list[Round], use_ocr: bool = True) -> dict[str, dict[str, str]]:
    """round_id -> {image_id: OCR text} with the real RapidOcr, cached by image sha256 under /tmp."""
    out: dict[str, dict[str, str]] = {}
    if not use_ocr:
        return out
    cache: dict[str, str] = {}
    if OCR_CACHE.exists():
        try:
            cache = json.loads(OCR_CACHE.read_text())
        except ValueError:
            cache = {}
    engine = None
    dirty = False
    for r in rounds:
        for im in r.images:
            if not im.data:
                continue
            sha = im.sha256 or hashlib.sha256(im.data).hexdigest()
            if sha not in cache:
                if engine is None:
                    from core.encoders.ocr import RapidOcr

                    engine = RapidOcr()
                cache[sha] = engine.read(im.data).text
                dirty = True
            out.setdefault(r.round_id, {})[im.image_id] = cache[sha]
    if dirty:
        OCR_CACHE.write_text(json.dumps(cache))
    return out


def load_rounds(demo: Path) -> list[Round]:
    """Rounds of DEMO/demo.json (images resolved relative to it)."""
    from core.formats import read_file

    return [r for h in read_file(demo / "demo.json") for r in h.rounds]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core.extract.evaluate", description=__doc__.split("\n")[0])
    ap.add_argument("--demo", default="data/demo", help="folder with demo.json and truth.json")
    ap.add_argument("--no-ocr", action="store_true", help="skip OCR (image values then come from captions only)")
    ap.add_argument("--misses", type=int, default=15, help="how many misses / false positives to list")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)
    demo = Path(a.demo)
    try:
        rounds = load_rounds(demo)
        truth, distractors = load_truth(demo / "truth.json")
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ocr = ocr_texts(rounds, not a.no_ocr)
    ex = RuleExtractor()
    observations = {r.round_id: ex.extract(r, ocr.get(r.round_id, {})) for r in rounds}
    s, names = score(rounds, observations, truth, distractors)
    split = {q: dict(c) for q, c in sorted(names.items())}
    fig = {
        m: {"truth": sc.truth, "recall": round(sc.recall, 4), "extracted_numeric": sc.extracted,
            "precision": round(sc.precision, 4), "false_positives": sc.extracted - sc.correct,
            "distractor_hits": sc.distractor_hits}
        for m, sc in s.items()
    }
    fig["rounds"] = len(rounds)
    fig["quantities"] = len(split)
    fig["quantities_with_one_name"] = sum(1 for c in split.values() if len(c) == 1)
    if a.json:
        print(json.dumps({"figures": fig, "names": split}, indent=2))
    else:
        print(f"rounds {len(rounds)}, truth values {len(truth)}, images OCRed {sum(len(v) for v in ocr.values())}")
        for m, sc in s.items():
            print(f"{m:5s}: recall {sc.recall:.3f} ({sc.recalled}/{sc.truth})  precision {sc.precision:.3f} "
                  f"({sc.correct}/{sc.extracted})  distractor hits {sc.distractor_hits}")
        print(f"quantity -> attribute names ({fig['quantities_with_one_name']}/{len(split)} with one name):")
        for q, c in split.items():
            print(f"  {q}: {c}")
        for m, sc in s.items():
            for x in sc.misses[: a.misses]:
                print(f"  MISS {m} {x}")
            for x in sc.false_positives[: a.misses]:
                print(f"  FP   {m} {x}")
    ok = all(sc.recall >= TARGET_RECALL and sc.precision >= TARGET_PRECISION for sc in s.values() if sc.truth)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
