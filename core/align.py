"""Field alignment: raw labels -> fields of one memory, from evidence in the history itself.

Between extraction and induction (DESIGN.md "Field alignment"). Devices, apps,
shops and people name one quantity many ways ("Temp", "Temperature", "TEMP.";
"Moist." and "soil moisture"); the extractor normalizes spelling only
(`normalize_attribute`), so without this stage every variant is its own
attribute, no attribute set recurs with enough support, and one stream ends up
as two or three partial tables.

How a raw attribute is aligned (`FieldAligner.align`), once, the first time it
is seen, with the evidence of the history so far:

* vetoes — a different value kind (number vs text), a different unit
  dimension (mass vs volume), or the field already present in the same round
  with another value (two quantities of one record are never one field; the
  same value under two labels — said in the text, shown on the screen — is
  one reading named twice);
* name evidence — the same words up to a plural; an abbreviation (a prefix
  "temp"/"temperature", the letters of a word in order "wt"/"weight",
  initials "rh"/"relative humidity"); a word more or less; similar spelling
  (rapidfuzz ratio); the text encoder's similarity of the two label phrases.
  A merge needs some name evidence;
* structure — the same unit; the value inside the field's range so far; the
  round's other fields are the field's usual companions (when the round has
  other fields and none of them ever came with the field, only a spelling
  variant or an abbreviation may join it: "duration" of a walk is not the
  "brew duration" of a brewing record; when the round's other labels are all
  new, they must look like the field's companions — same kind, unit, range,
  names not unlike); the round's text is like the texts of the field's rounds;
* a place in a known record — with no name evidence at all, a value may fill
  the one field its record's known fields always come with and the round does
  not have yet, of the same unit and range ("precipitation" beside "air t" of a
  station that printed "rainfall" beside "air temp"). With one known field only,
  the labels must not be unlike (text encoder) and the round's other new labels
  must fit the record too, so two kinds of record that share a label and a
  shape stay apart.

score = 0.5 name + 0.15 unit + 0.1 range + 0.15 companions + 0.1 text, and the
attribute joins the best field when score >= Config.align_threshold (else it
starts a field of its own). Every decision is stored (`field_aliases`, with its
evidence and round) and logged (`field_events`), so the app can show why two
labels were merged, and a person can undo it (`undo_alias`) or merge two fields
by hand (`merge_fields`): both rewrite the stored observations and rebuild the
analytic memory from them (core/analytic.py), as induction would have built it
had the alignment been so from the start. A user's decision is pinned: later
builds keep it.

Cost: the per-round work is a dictionary lookup for every known attribute; the
comparison with every field happens once per new raw attribute (rare after the
first few records of each stream).
"""
from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

import numpy as np
from rapidfuzz import fuzz

from .config import Config, DEFAULT
from .extract.normalize import active_lexicon as _lex, parse_unit, use_lexicon
from .lexicon import first_and_consonant, load as load_lexicon, singular
from .model import Observation
from .protocols import TextEncoder
from .units import convert, read_beside

W_NAME, W_UNIT, W_RANGE, W_COMPANIONS, W_TEXT = 0.5, 0.15, 0.1, 0.15, 0.1
MIN_NAME = 0.5  # a merge needs at least this much name evidence: structure alone never merges
DURATION_NAME = "duration"  # the word normalize_attribute ends every duration's name with
WORD_MORE_OR_LESS = 0.7  # name evidence of two names a whole word apart ("length" / "streak length")
FEW_VALUES = 3  # a field with fewer values than this has no range to judge a new value by, only its size
COMPANION_SHARE = 0.25  # a field g is f's usual companion when it was in >= 25% of f's rounds
SLOT_SHARE = 0.5  # a field is a place to fill beside p when it was in >= half of p's rounds
SENSE_MARK = "~"  # "duration~2": the field "duration" of a second kind of record (its column is "duration")
MAX_SENSES = 5  # a quantity as generic as a duration is a field of each of several kinds of record
FILL_MARGIN = 0.1  # the closest placing of new labels into a record's places must be this much closer than the next
SLOT_NAME = 0.55  # name evidence a value gets for filling the one such place (structure, no spelling)
SLOT_COSINE = 0.35  # below this label similarity two names are unlike (MiniLM: "hydration"/"rise" 0.25,
#                     "rest duration"/"proof duration" 0.5, "precipitation"/"rainfall" 0.83)


# ---------------------------------------------------------------------- name evidence
def _base(word: str) -> str:
    """A word's singular, or the lemma of an irregular past form ("won" -> win, "kept" -> keep)."""
    return _lex().irregular_verbs.get(word, singular(word))


def words_of(name: str) -> list[str]:
    """The words of an attribute name ("soil_moisture" -> ["soil", "moisture"]); in a word of letters and
    digits a zero is the letter O, as OCR reads it either way ("h20" and "h2o" are one word)."""
    return [w.replace("0", "o") if re.search(r"[a-z]", w) and re.search(r"\d", w) else w
            for w in re.split(r"[^a-z0-9%]+", name.lower()) if w]


def abbreviates(short: str, long: str) -> bool:
    """True when `short` is a written abbreviation of `long`: a prefix of at least two letters
    ("temp"/"temperature") or, starting with the same letter, its letters in order with at least two
    left out ("avg"/"average", "qty"/"quantity"; two letters only as first and last: "wt"/"weight",
    or as the first and the only other consonant: "gs"/"geese"; not "vm"/"volume"). Equal words are not
    abbreviations."""
    if len(short) < 2 or len(short) >= len(long) or not short.isalpha():
        return False
    if long.startswith(short):
        return True
    if first_and_consonant(short, long):
        return True
    if short[0] != long[0] or len(long) - len(short) < 2 or (len(short) < 3 and short[-1] != long[-1]):
        return False  # two letters must be the word's first and last ("wt", "ht"); "avg", "qty" have three
    it = iter(long)
    return all(ch in it for ch in short)


def _word_match(a: str, b: str) -> bool:
    # ("Avg speed" on one screen, "Mean speed" on another: spellings of one statistic, the lexicon's)
    return singular(a) == singular(b) or abbreviates(a, b) or abbreviates(b, a) or (
        a in _lex().average_words and b in _lex().average_words)


def _cover(short: list[str], long: list[str]) -> int | None:
    """How many words of `long` are left over when every word of `short`, in order, names one word
    of `long` (equal up to a plural, or abbreviating it) or the initials of 2-3 consecutive ones
    ("hr" -> "heart rate"); None when some word of `short` names nothing. Fewest left over wins."""
    best: dict[tuple[int, int], int | None] = {}

    def go(i: int, j: int) -> int | None:
        if i == len(short):
            return len(long) - j
        if (i, j) in best:
            return best[(i, j)]
        out = None
        for k in range(j, len(long)):
            skipped = k - j
            steps = []
            if _word_match(short[i], long[k]):
                steps.append(k + 1)
            for n in (2, 3):
                if k + n <= len(long) and short[i] == "".join(w[0] for w in long[k:k + n]):
                    steps.append(k + n)
            for nxt in steps:
                rest = go(i + 1, nxt)
                if rest is not None and (out is None or skipped + rest < out):
                    out = skipped + rest
        best[(i, j)] = out
        return out

    return go(0, 0)




def name_evidence(a: str, b: str, *, same_unit: bool = False) -> tuple[float, str]:
    """How strongly two attribute names say they are one field, from their spelling alone:
    (score in [0, 1], reason). 1.0 same words up to plurals; 0.9 word-by-word abbreviation (also a
    word for the initials of several: "resting hr" / "resting heart rate"); 0.85 initials of the
    whole name; 0.7 a word more or less; up to 0.8 similar spelling; else 0. A trailing measure word
    ("volume", "value", "duration") may be left out of either name, at 0.9 times the score, when what
    is left matches closely, or by a word more or less when `same_unit` (both values in one unit:
    "average concentration" and "average nitrate", both mg/L)."""
    best = _name_evidence(words_of(a), words_of(b))
    wa, wb = words_of(a), words_of(b)
    for xa in ([wa] + ([wa[:-1]] if len(wa) > 1 and wa[-1] in _lex().measure_words else [])):
        for xb in ([wb] + ([wb[:-1]] if len(wb) > 1 and wb[-1] in _lex().measure_words else [])):
            if xa is wa and xb is wb:
                continue
            s, why = _name_evidence(xa, xb)
            # only a close match survives leaving a word out ("dilut volume" / "dilution"), never a
            # word more or less on top of it ("brew duration" is not "brew score")
            if (s >= 0.85 or (same_unit and s >= 0.7)) and round(0.9 * s, 3) > best[0]:
                best = (round(0.9 * s, 3), f"{why} (leaving out \"{(wa[-1] if xa is not wa else wb[-1])}\")")
    return best




def contrasting(a: str, b: str) -> bool:
    """True when the words that differ between two names include a contrast word: then the text
    encoder's similarity (high for "my value" / "other value") is no evidence that they are one."""
    wa, wb = set(words_of(a)), set(words_of(b))
    lex = _lex()
    contrast = lex.contrast_words
    if not (wa ^ wb) & contrast:
        return False
    if any((wa - wb) and (wb - wa) and (wa - wb) | (wb - wa) <= side
           for side in (lex.high_words, lex.low_words, lex.start_words, lex.end_words)):
        return False  # "max power" / "peak power", "start gravity" / "original gravity": one end of the scale
    # a contrast modifies what both names share ("my value" / "other value", "net weight" / "weight"),
    # or the two differ by contrast words alone ("net" / "gross"); "net" beside "harvest" (a scale's
    # label for the harvest weight) contrasts with nothing
    return bool(wa & wb) or bool((wa - wb) & contrast and (wb - wa) & contrast)




def _name_evidence(wa: list[str], wb: list[str]) -> tuple[float, str]:
    empty = _lex().empty_words
    if (not [w for w in wa if w not in empty] or not [w for w in wb if w not in empty]) \
            and [singular(w) for w in wa] != [singular(w) for w in wb]:
        # so only the very same name is evidence for them (not "cost amount" for "amount")
        return 0.0, ""
    score, why = _name_evidence_words(wa, wb)
    if score == WORD_MORE_OR_LESS and _only_the_dimension_shared(wa, wb):
        return 0.0, ""
    return score, why


def _only_the_dimension_shared(wa: list[str], wb: list[str]) -> bool:
    """True when two names a word apart share only the word the extractor gives every duration ("Session
    (h)" -> session_duration, "Time (mins)" -> duration): that word is the unit's evidence, not the name's,
    unless the word between them is itself a unit spelling ("hrs duration")."""
    if set(wa) & set(wb) != {DURATION_NAME}:
        return False
    return not any(parse_unit(w) for w in set(wa) ^ set(wb))


def _name_evidence_words(wa: list[str], wb: list[str]) -> tuple[float, str]:
    if not wa or not wb:
        return 0.0, ""
    if [singular(w) for w in wa] == [singular(w) for w in wb]:
        return 1.0, "same words"
    if [_base(w) for w in wa] == [_base(w) for w in wb]:
        return 0.8, "the same words in another form"  # "won" / "wins": a verb's past and its noun
    short, long = (wa, wb) if len(wa) < len(wb) or (len(wa) == len(wb) and len("".join(wa)) <= len("".join(wb))) \
        else (wb, wa)
    if len(short) == 1 and len(long) >= 2 and short[0] == "".join(w[0] for w in long):
        return 0.85, "initials"
    if _initial_of_word(wa, wb):
        return 0.6, "a word shortened to its initial"
    left = _cover(short, long)
    if left == 0:
        return 0.9, "abbreviation"
    if left == 1:
        return WORD_MORE_OR_LESS, "a word more or less"
    ratio = fuzz.ratio(" ".join(wa), " ".join(wb)) / 100.0
    if ratio >= 0.85:
        return round(0.8 * ratio, 3), "similar spelling"
    return 0.0, ""


def _initial_of_word(wa: list[str], wb: list[str]) -> bool:
    """True when two names of the same length differ only where one writes a word as its first
    letter ("dough t" / "dough temp", "t max" / "temp max"): every other word pair matches and at
    least one is written out in both. Weaker than an abbreviation: one letter stands for many words."""
    if len(wa) != len(wb) or len(wa) < 2:
        return False
    initials = written = 0
    for x, y in zip(wa, wb):
        if len(x) == 1 and len(y) > 1 and y[0] == x or len(y) == 1 and len(x) > 1 and x[0] == y:
            initials += 1
        elif len(x) > 1 and len(y) > 1 and _word_match(x, y):
            written += 1
        else:
            return False
    return initials >= 1 and written >= 1


# ---------------------------------------------------------------------- state
OFF_RANGE = 2.0  # a value this many times beyond a field's range (either way) is far off it


def _off_range(x: float | None, f: "_Field") -> bool:
    """x positive and more than OFF_RANGE times beyond the positive range of f (below or above)."""
    if x is None or f.vmin is None or f.vmax is None or x <= 0 or f.vmin <= 0:
        return False
    return x * OFF_RANGE < f.vmin or x > OFF_RANGE * f.vmax


@dataclass
class _Field:
    """What the memory knows about one field (mutable, persisted as JSON in `fields`)."""

    name: str
    kind: str  # number, date, time, text
    created: int
    dims: Counter = field(default_factory=Counter)
    units: Counter = field(default_factory=Counter)
    n: int = 0  # observations
    rounds: int = 0  # rounds it was observed in
    vmin: float | None = None
    vmax: float | None = None
    companions: Counter = field(default_factory=Counter)
    text_sum: list[float] | None = None

    def as_json(self) -> str:
        return json.dumps({"kind": self.kind, "created": self.created, "dims": self.dims, "units": self.units,
                           "n": self.n, "rounds": self.rounds, "vmin": self.vmin, "vmax": self.vmax,
                           "companions": self.companions, "text_sum": self.text_sum})

    @classmethod
    def from_json(cls, name: str, data: str) -> "_Field":
        d = json.loads(data)
        return cls(name, d["kind"], int(d["created"]), Counter(d.get("dims") or {}), Counter(d.get("units") or {}),
                   int(d.get("n") or 0), int(d.get("rounds") or 0), d.get("vmin"), d.get("vmax"),
                   Counter(d.get("companions") or {}), d.get("text_sum"))

    @property
    def dimension(self) -> str | None:
        return self.dims.most_common(1)[0][0] if self.dims else None

    @property
    def unit(self) -> str | None:
        return self.units.most_common(1)[0][0] if self.units else None


@dataclass(frozen=True)
class Alignment:
    """One decision: raw attribute -> field, with its score and evidence (what the app shows)."""

    raw_attribute: str
    field: str
    round_order: int
    score: float
    evidence: Mapping[str, object]
    decided_by: str = "auto"  # auto | user


@dataclass(frozen=True)
class FieldLabel:
    """One raw attribute of a field, as the app lists it."""

    raw_attribute: str
    labels: tuple[tuple[str, int], ...]  # labels as written, with counts
    observations: int
    score: float
    reason: str
    decided_by: str
    round_order: int


@dataclass(frozen=True)
class FieldInfo:
    name: str
    kind: str
    unit: str | None
    observations: int
    labels: tuple[FieldLabel, ...]

    @property
    def merged(self) -> bool:
        return len(self.labels) > 1


def _read_alike(unit: str | None, f: _Field) -> bool:
    """A unit symbol of two readings that reads in the field's dimension beside its units ("59 m" in a
    field of minutes), or a field whose one unit reads so beside this unit ("83 min" in a field of "m")."""
    if not unit or not f.units:
        return False
    if _dimension(read_beside(unit, f.units)) == f.dimension:
        return True
    return any(_dimension(read_beside(u, [unit])) == _dimension(unit) for u in f.units)


def _dimension(unit: str | None) -> str | None:
    if not unit:
        return None
    from .extract.normalize import parse_unit

    info = parse_unit(unit)
    return info.dimension if info is not None else f"unit:{unit}"


# ---------------------------------------------------------------------- the aligner
class FieldAligner:
    """Maps raw attributes to fields for one memory, incrementally (see the module docstring).

    con: the memory's DuckDB connection (or a core.store.Store) with migration 4 applied.
    encoder: optional text encoder for label similarity and round-text similarity.
    Writes happen in the caller's transaction when `flush()` is called.
    """

    def __init__(self, con, config: Config = DEFAULT, encoder: TextEncoder | None = None, *, load: bool = True):
        """`load=False`: start with no fields and aliases (recounting statistics from observations)."""
        self.con = getattr(con, "con", con)
        self.config = config
        self.encoder = encoder
        self._fields: dict[str, _Field] = {}
        self._alias: dict[str, str] = {}
        self._dirty_fields: set[str] = set()
        self._new_aliases: list[Alignment] = []
        self._label_vecs: dict[str, np.ndarray] = {}
        # the words name evidence reads (measure, contrast, empty words): Config.lexicon may change them
        self._lexicon = load_lexicon(config.lexicon) if config.lexicon else None
        if not load:
            return
        for name, data in self.con.execute("SELECT field, stats FROM fields").fetchall():
            self._fields[name] = _Field.from_json(name, data)
        # a person's decisions (decided_by = 'user') are rows like any other: later builds read them here
        for raw, fld in self.con.execute("SELECT raw_attribute, field FROM field_aliases").fetchall():
            self._alias[raw] = fld

    # ------------------------------------------------------------------ public
    def field_of(self, raw_attribute: str) -> str | None:
        return self._alias.get(raw_attribute)

    def prepare(self, rounds: Iterable[Sequence[Observation]]) -> None:
        """Embed, in one call, the labels `align` will compare for these rounds (a build's batch):
        the raw attributes not aligned yet and every field. Optional: `align` embeds what is missing."""
        if self.encoder is None or not self.config.field_alignment:
            return
        new = [o.attribute for obs in rounds for o in obs if o.attribute not in self._alias]
        if new:
            self._encode_labels(new + list(self._fields))

    def align(self, round_order: int, observations: Sequence[Observation],
              text_vector: np.ndarray | None = None) -> list[Observation]:
        """The round's observations with `attribute` set to its field (`raw_attribute` keeps the
        extractor's name). New raw attributes are decided here, with the evidence so far; the
        round then updates every touched field's statistics. Pure in-memory until `flush()`."""
        if self._lexicon is None:
            return self._align(round_order, observations, text_vector)
        with use_lexicon(self._lexicon):
            return self._align(round_order, observations, text_vector)

    def _align(self, round_order: int, observations: Sequence[Observation],
               text_vector: np.ndarray | None) -> list[Observation]:
        raws = list(dict.fromkeys(o.attribute for o in observations))
        firsts = {o.attribute: o for o in reversed(observations)}
        created: set[str] = set()
        # a known label in a record of another kind means another field of that name (a sense)
        sense = self._senses(round_order, raws, firsts, created) if self.config.field_alignment else {}
        present: dict[str, str] = {}  # field -> the raw attribute that brought it into this round
        for raw in raws:  # known attributes first: they are the companions new ones are judged by
            f = sense.get(raw, self._alias.get(raw))
            if f is not None and f in self._fields:
                present.setdefault(f, raw)
        by_raw: dict[str, list[Observation]] = {}
        for o in observations:
            by_raw.setdefault(o.attribute, []).append(o)
        new = [r for r in raws if not (r in self._alias and self._alias[r] in self._fields)]
        if new and self.encoder is not None and self.config.field_alignment:
            self._encode_labels(new + list(self._fields))
        # a round with no known quantity (a field just split off by kind of record has no history)
        anchors = [f for f in present if f not in created and self._fields[f].kind == "number"]
        joint = ({} if not self.config.field_alignment else self._filled_record([firsts[r] for r in new], anchors)
                 if anchors else self._joint_record([firsts[r] for r in new]))
        for raw in raws:
            if raw in self._alias and self._alias[raw] in self._fields:
                continue
            o = firsts[raw]
            if not self.config.field_alignment:
                best, score, ev = None, 0.0, {"reason": "field alignment off"}
            elif raw in joint:
                best, score, ev = joint[raw]
            else:
                seen = {f: [x for r2 in raws if sense.get(r2, self._alias.get(r2)) == f for x in by_raw.get(r2, ())]
                        for f in present}
                # the round's other labels that bring no history: not aligned yet, or just started a field
                unknown = [firsts[r] for r in raws if r != raw
                           and (r not in self._alias or self._alias[r] in created)]
                best, score, ev = self._best_field(raw, o, {f: r for f, r in present.items() if f not in created},
                                                   text_vector, seen, unknown=unknown, round_fields=set(present))
            if best is None or score < self.config.align_threshold:
                target = raw  # a field of its own, named as the extractor named it
                if target not in self._fields:
                    self._fields[target] = _Field(target, o.value_kind, round_order)
                    # a field born in this round has no history: it is no evidence, for or against,
                    # about the round's other new labels (a second device printing every label its way)
                    created.add(target)
                decision = Alignment(raw, target, round_order, round(score, 3),
                                     ev | {"best_field": best} if best else ev)
            else:
                target = best
                decision = Alignment(raw, target, round_order, round(score, 3), ev)
            self._alias[raw] = target
            self._new_aliases.append(decision)
            present.setdefault(target, raw)
        # a second raw attribute mapped to a field already present in this round keeps its own
        # field only when decided now (the veto above); known aliases that collide in one round
        # (an older decision) both fill the field: the first observation wins in the table
        out = [_unit_dropped(replace(o, attribute=sense.get(o.attribute, self._alias[o.attribute]),
                                     raw_attribute=o.attribute)) for o in observations]
        self._observe(out, text_vector)
        return out

    def flush(self) -> None:
        """Write new decisions and changed field statistics (in the caller's transaction): one
        multi-row statement per table (executemany runs one statement per row in DuckDB)."""
        if self._new_aliases:
            rows = [(a.raw_attribute, a.field, a.round_order, a.score, json.dumps(a.evidence, default=str),
                     a.decided_by) for a in self._new_aliases]
            _insert(self.con, "INSERT INTO field_aliases VALUES {} ON CONFLICT (raw_attribute) DO UPDATE SET "
                    "field = excluded.field, round_order = excluded.round_order, score = excluded.score, "
                    "evidence = excluded.evidence, decided_by = excluded.decided_by", rows, 6)
            _insert(self.con, "INSERT INTO field_events VALUES {}",
                    [(a.round_order, "new field" if a.field == a.raw_attribute else "alias", a.raw_attribute,
                      a.field, None, a.score, json.dumps(a.evidence, default=str)) for a in self._new_aliases], 7,
                    extra="now()")
            self._new_aliases = []
        if self._dirty_fields:
            _insert(self.con, "INSERT INTO fields VALUES {} ON CONFLICT (field) DO UPDATE SET stats = excluded.stats",
                    [(f, self._fields[f].as_json()) for f in sorted(self._dirty_fields)], 2)
            self._dirty_fields = set()

    # ------------------------------------------------------------------ internals
    def _observe(self, obs: Sequence[Observation], text_vector: np.ndarray | None) -> None:
        in_round = list(dict.fromkeys(o.attribute for o in obs))
        for o in obs:
            f = self._fields[o.attribute]
            f.n += 1
            if o.value_kind == "number" and o.number is not None and math.isfinite(o.number):
                f.vmin = o.number if f.vmin is None else min(f.vmin, o.number)
                f.vmax = o.number if f.vmax is None else max(f.vmax, o.number)
            if o.unit:
                # (counted in the reading the field's other units give it: "59 m" beside minutes is a duration)
                d = _dimension(read_beside(o.unit, f.units))
                f.units[o.unit] += 1
                if d:
                    f.dims[d] += 1
        for name in in_round:
            f = self._fields[name]
            f.rounds += 1
            for other in in_round:
                if other != name:
                    f.companions[other] += 1
            if text_vector is not None:
                v = np.asarray(text_vector, dtype=np.float64)
                f.text_sum = (v if f.text_sum is None else np.asarray(f.text_sum) + v).tolist()
            self._dirty_fields.add(name)

    def _label_vec(self, name: str) -> np.ndarray | None:
        if self.encoder is None:
            return None
        if name not in self._label_vecs:
            self._encode_labels([name])
        return self._label_vecs[name]

    def _encode_labels(self, names: Iterable[str]) -> None:
        """Embed the label phrases of names not embedded yet, in one encoder call (a call costs
        tens of milliseconds whatever its size on this CPU)."""
        todo = [n for n in dict.fromkeys(names) if n not in self._label_vecs]
        if self.encoder is None or not todo:
            return
        vecs = np.asarray(self.encoder.encode([" ".join(words_of(n)) for n in todo]), dtype=np.float64)
        for n, v in zip(todo, vecs):
            norm = np.linalg.norm(v)
            self._label_vecs[n] = v / norm if norm else v

    def _best_field(self, raw: str, o: Observation, present: Mapping[str, str],
                    text_vector: np.ndarray | None,
                    seen: Mapping[str, Sequence[Observation]] | None = None,
                    unknown: Sequence[Observation] = (),
                    round_fields: set[str] | None = None) -> tuple[str | None, float, dict]:
        """The best field for a new raw attribute: (field, score, evidence). `present`: the round's
        fields known before it, with a history (companion evidence); `unknown`: the first observation
        of each of the round's other labels that has no history yet; `round_fields`: every field the
        round has so far (a field already there is never a place to fill)."""
        best: tuple[str | None, float, dict] = (None, 0.0, {"reason": "no field with name evidence"})
        dim = _dimension(o.unit)
        seen = seen or {}
        slots = self._slots(raw, o, present, round_fields or set(present), unknown)
        for name, f in self._fields.items():
            if f.kind != o.value_kind:
                continue
            restated = False
            if name in present or name in (round_fields or ()):  # known before, or born in this round
                # the field is already in this round: a second quantity, not another name of it —
                # unless it says the same value (one reading stated in the text and on the screen)
                if not any(_same_value(o, x) for x in seen.get(name, ())):
                    continue
                restated = True
            others = [g for g in present if g != name]
            alike = bool(dim and f.dimension and dim != f.dimension and _read_alike(o.unit, f))
            if dim and f.dimension and dim != f.dimension and not alike:
                continue
            nscore, reason = 0.0, ""
            same_unit = bool(o.unit) and o.unit == f.unit
            for alias in [name] + [r for r, t in self._alias.items() if t == name and r != name]:
                s, why = name_evidence(raw, alias, same_unit=same_unit)
                if s > nscore:
                    nscore, reason = s, f"{why} ({alias})"
            if nscore < 1.0 and _unit_names(o, raw, name, f):
                # "32 mv" read as millivolts beside "mv 24": a label written after its value looks like a unit
                nscore, reason = 1.0, f"the label {name!r} written after the value reads as a unit"
            if nscore < 0.9 and self.encoder is not None and not contrasting(raw, name):
                a, b = self._label_vec(raw), self._label_vec(name)
                cos = float(a @ b) if a is not None and b is not None else 0.0
                enc = min(0.85, max(0.0, (cos - 0.45) / 0.5))
                if enc > nscore:
                    nscore, reason = enc, f"similar meaning (cosine {cos:.2f} with {name})"
            if (o.unit and not f.units and f.n >= FEW_VALUES and o.value_kind == "number"
                    and nscore <= WORD_MORE_OR_LESS):
                # a value in a unit ("streak length 35 days") beside a field whose many values never had
                # one ("length 257", a word count), named a word more or less or less alike: another
                # quantity; the same name (or its abbreviation) with the unit dropped stays one field
                continue
            if _another_magnitude(o, f):
                # "layers 1450" without a unit beside "layer 0.12 mm": a value twenty times beyond every value
                # the field had, and not in its unit, is another quantity, however alike the names (in the
                # field's own unit a wide range is the quantity's: rain 0.2 mm and 15 mm)
                continue
            if nscore < MIN_NAME:
                if slots != [name]:
                    continue
                # no name evidence, but the record is one of f's kind and f is the one place left in
                # it for this value (same unit, value in f's range): a device or person naming f anew
                nscore = SLOT_NAME
                reason = f"fills the place of {name} in a record beside {', '.join(sorted(present))}"
            if restated and o.value_kind != "number" and nscore < 0.85:
                continue  # an equal word in one round ("yellow" twice) is weak: only a close name may join
            if not o.label and nscore < 1.0 and all(w in _lex().measure_words for w in words_of(raw)):
                continue  # a value nobody labelled, named by its unit ("duration"): only its own name
            unit_s = (1.0 if o.unit and o.unit == f.unit else 0.7 if (dim and dim == f.dimension) or alike
                      else 0.6 if not o.unit and not f.units else 0.4)
            range_s = 0.5
            if o.value_kind == "number" and o.number is not None and f.vmin is not None:
                lo, hi = f.vmin, f.vmax
                x = o.number
                if lo <= x <= hi:
                    range_s = 1.0
                else:
                    span = max(abs(hi - lo), abs(hi), abs(lo), 1e-9)
                    dist = (lo - x) if x < lo else (x - hi)
                    range_s = max(0.0, 1.0 - dist / (2 * span))
            comp_s = 0.5
            usual = {g for g, n in f.companions.items() if n >= COMPANION_SHARE * max(1, f.rounds)}
            if not o.label and not others and not unknown and usual:
                # one value nobody labelled, alone in its round ("Paid $91 for concert tickets"): a
                # mention, not a record of a field that comes with others ("payment" beside "late")
                continue
            if others:
                comp_s = sum(g in usual for g in others) / len(others)
                if comp_s == 0.0 and nscore < 0.9:
                    continue  # none of the round's other fields ever came with f: another stream's quantity
            elif usual and nscore < 0.9 and unknown:
                # the round's other labels are all new: they must look like f's usual companions
                # (same kind, unit and range) for this to be a record of f's kind, named another way
                comp_s = self._counterparts(usual, unknown)
                if comp_s == 0.0:
                    continue
            if (not o.unit and f.n and sum(f.units.values()) >= f.n and o.value_kind == "number"
                    and nscore < 1.0 and comp_s < 1.0 and _off_range(o.number, f)):
                # a bare count ("20 corrections") beside a field whose every value had a unit ("93% correct"),
                # far off its range and not among all its usual company: another quantity whose name begins
                # like it, not the field with its unit dropped (that stays near its range or in its company)
                continue
            text_s = 0.5
            if text_vector is not None and f.text_sum is not None:
                c = np.asarray(f.text_sum)
                v = np.asarray(text_vector, dtype=np.float64)
                denom = np.linalg.norm(c) * np.linalg.norm(v)
                cos = float(c @ v / denom) if denom else 0.0
                text_s = min(1.0, max(0.0, (cos - 0.2) / 0.5))
            score = W_NAME * nscore + W_UNIT * unit_s + W_RANGE * range_s + W_COMPANIONS * comp_s + W_TEXT * text_s
            if restated:
                reason += "; the same value in the same round"
            if score > best[1]:
                best = (name, score, {"reason": reason, "name": round(nscore, 3), "unit": round(unit_s, 3),
                                      "range": round(range_s, 3), "companions": round(comp_s, 3),
                                      "text": round(text_s, 3)})
        return best


    def _senses(self, round_order: int, raws: Sequence[str], firsts: Mapping[str, Observation],
                created: set[str]) -> dict[str, str]:
        """Known labels of this round that belong to a record of another kind than their field's:
        raw -> the field of that name for this kind of record ("duration" beside km and L/100km is
        not the "duration" beside a price and a programme). A field's kinds of record are told apart
        by its usual companions; a label gets a field of its own kind of record (named "<field>~2")
        when the round's other fields, known ones or all new ones, are nothing like its field's
        companions. Only numbers are split, and only numbers are the company: dates, codes and names
        come with records of any kind. Fields with fewer than three rounds or no usual companions
        (numbers) are not split."""
        out: dict[str, str] = self._kind_senses(round_order, raws, firsts, created)
        # quantities say what kind of record a round is; dates, codes and names come with any kind
        known = {r: self._alias[r] for r in raws if r in self._alias and self._alias[r] in self._fields
                 and r not in out and self._fields[self._alias[r]].kind == "number"}
        if not known:
            return out
        unknown = [firsts[r] for r in raws if r not in self._alias and firsts[r].value_kind == "number"]
        for raw, f in known.items():
            base = f.split(SENSE_MARK)[0]
            family = [base] + [g for g in self._fields if g.startswith(base + SENSE_MARK)]
            other_dim = self._dimension_sense(round_order, raw, firsts[raw], f, family, created)
            if other_dim is not None:
                if other_dim != f:
                    out[raw] = other_dim
                continue
            others = {g for r, g in known.items() if r != raw and g.split(SENSE_MARK)[0] != base}
            if not others and not unknown:
                continue

            def fit(g: str) -> float:
                fg = self._fields[g]
                usual = {c for c, n in fg.companions.items() if n >= COMPANION_SHARE * max(1, fg.rounds)
                         and c in self._fields and self._fields[c].kind == "number"}
                if others:
                    return len({o.split(SENSE_MARK)[0] for o in others} & {u.split(SENSE_MARK)[0] for u in usual}) \
                        / len(others)
                return self._counterparts(usual, unknown)

            scores = {g: fit(g) for g in family if g in self._fields}
            best = max(scores, key=lambda g: (scores[g], g == f))
            if scores[best] > 0:
                if best != f:
                    out[raw] = best
                continue
            fb = self._fields[f]
            if fb.rounds < 3 or not any(n >= COMPANION_SHARE * fb.rounds and c in self._fields
                                        and self._fields[c].kind == "number" for c, n in fb.companions.items()):
                continue
            if others and not all(self._fields[g].rounds >= 2 for g in others):
                continue
            if len(family) >= MAX_SENSES:
                continue
            beside = sorted(others) or sorted(x.attribute for x in unknown)
            out[raw] = self._new_sense(f, len(family), fb.kind, round_order, created,
                                       f"{raw} in a record of another kind (beside {', '.join(beside[:4])}), "
                                       f"not like the records of {f}")
        return out

    def _kind_senses(self, round_order: int, raws: Sequence[str], firsts: Mapping[str, Observation],
                     created: set[str]) -> dict[str, str]:
        """One field holds one kind of value: a known label whose value is a word where its field has
        held numbers, or a number where it has held words (a screen's "Material: 131.7 g" beside a
        message's "material TPU"), goes to the field of its family of that kind, or to a new one
        ("material~2"). raw -> field, for the labels that move; fields seen in one round only are
        not judged (a first value says little about the field's kind)."""
        out: dict[str, str] = {}
        for raw in raws:
            f = self._alias.get(raw)
            kind = firsts[raw].value_kind
            if f is None or f not in self._fields or kind not in ("number", "text"):
                continue
            fd = self._fields[f]
            if fd.kind == kind or fd.kind not in ("number", "text") or fd.rounds < 2:
                continue
            base = f.split(SENSE_MARK)[0]
            family = [base] + [g for g in self._fields if g.startswith(base + SENSE_MARK)]
            same = [g for g in family if g in self._fields and self._fields[g].kind == kind]
            if same:
                out[raw] = same[0]
                continue
            if len(family) >= MAX_SENSES:
                continue
            out[raw] = self._new_sense(f, len(family), kind, round_order, created,
                                       f"{raw} holds a {kind} here, not the {fd.kind}s of {f}")
        return out

    def _new_sense(self, f: str, family_size: int, kind: str, round_order: int, created: set[str],
                   reason: str) -> str:
        """A new field for another sense of f's label ("<base>~<n>"), born in this round; the decision logged."""
        name = f"{f.split(SENSE_MARK)[0]}{SENSE_MARK}{family_size + 1}"
        self._fields[name] = _Field(name, kind, round_order)
        created.add(name)
        self._new_aliases.append(Alignment(name, name, round_order, 0.0, {"reason": reason, "sense_of": f}))
        return name

    def _dimension_sense(self, round_order: int, raw: str, o: Observation, f: str, family: Sequence[str],
                         created: set[str]) -> str | None:
        """One field holds one quantity: a known label whose value is in another unit dimension than its
        field's ("USAGE 405 litres" where "usage" has been kWh) goes to the field of its family in that
        dimension, or to a new one ("usage~2"); None when the dimensions agree or either is unknown
        (no unit, a unit the table lacks), or the family is full."""
        fd = self._fields[f]
        od = _dimension(o.unit)
        if od is None or od.startswith("unit:") or fd.dimension is None or fd.dimension.startswith("unit:") \
                or od == fd.dimension or o.unit in fd.units:
            return None
        if any(re.fullmatch(re.escape(o.unit) + r"[²³23]", u) for u in fd.units):
            return None  # OCR drops a power: "0.60 m" on a screen that prints the field's "m³"
        same = [g for g in family if g in self._fields and self._fields[g].dimension == od]
        if same:
            return same[0]
        if len(family) >= MAX_SENSES:
            return None
        return self._new_sense(f, len(family), fd.kind, round_order, created,
                               f"{raw} in {o.unit} ({od}), not the {fd.dimension} of {f}")

    def _joint_record(self, unknown: Sequence[Observation]) -> dict[str, tuple[str, float, dict]]:
        """A round whose quantities are all new labels, read as a known kind of record named another
        way (a second till, app or device): raw -> (field, score, evidence) when every one of its
        two or more new numbers has a place among one field's usual companions (one to one, same
        unit and range, names not unlike), at least one pair is close in meaning or spelling, and
        no other kind of record fits as well. Else nothing."""
        nums = [x for x in unknown if x.value_kind == "number"]
        if len(nums) < 2:
            return {}
        fits: dict[frozenset, dict[str, str]] = {}
        for g, fg in self._fields.items():
            if fg.kind != "number" or fg.rounds < 3 or SENSE_MARK in g and g.split(SENSE_MARK)[0] in fits:
                continue
            group = {g} | {c for c, n in fg.companions.items() if n >= SLOT_SHARE * fg.rounds
                           and c in self._fields and self._fields[c].kind == "number"}
            if len(group) < len(nums) or frozenset(group) in fits:
                continue
            pairs = self._assign(nums, group)
            if pairs is not None:
                fits[frozenset(group)] = pairs
        if len(fits) != 1:
            return {}
        pairs = next(iter(fits.values()))
        closeness = {raw: max(name_evidence(raw, f)[0], self._cosine(raw, f)) for raw, f in pairs.items()}
        if max(closeness.values()) < 0.55:
            return {}
        beside = ", ".join(f"{r} as {f}" for r, f in pairs.items())
        return {raw: (f, round(0.5 * SLOT_NAME + 0.5, 3),
                      {"reason": f"the round's quantities read as a known kind of record ({beside})",
                       "name": round(closeness[raw], 3)}) for raw, f in pairs.items()}

    def _filled_record(self, unknown: Sequence[Observation], anchors: Sequence[str]) -> dict[str, tuple[str, float, dict]]:
        """New labels that fill, together and one to one, the places a known record still has beside the
        round's known fields (`anchors`): a screen printing "dabblers | geese" above the lake survey's
        "temperature (C)" where the texts say "mallards, greylag, temp". The places are the fields
        beside every anchor in at least half of its rounds; there must be exactly as many as the new
        numbers, each new number compatible with its place (unit, range, name not unlike), and of the
        placings the one whose names are closest (spelling or meaning) must be clearly the closest.
        raw -> (field, score, evidence), or nothing."""
        nums = [x for x in unknown if x.value_kind == "number"]
        if len(nums) < 2 or len(nums) > 4:
            return {}
        places = [g for g, fg in self._fields.items() if fg.kind == "number" and g not in anchors and all(
            self._fields[a].companions.get(g, 0) >= SLOT_SHARE * max(1, self._fields[a].rounds) for a in anchors)]
        if len(places) != len(nums):
            return {}
        pairs = self._assign(nums, places)
        if pairs is None:
            return {}
        close = {(r, f): max(name_evidence(r, f)[0], self._cosine(r, f)) for r, f in pairs.items()}
        beside = ", ".join(f"{r} as {f}" for r, f in pairs.items())
        return {raw: (f, round(0.5 * SLOT_NAME + 0.5, 3),
                      {"reason": f"the round's new labels fill the places of a {' + '.join(anchors)} record "
                                 f"({beside})", "name": round(close[(raw, f)], 3)}) for raw, f in pairs.items()}

    def _assign(self, nums: Sequence[Observation], group: Iterable[str]) -> dict[str, str] | None:
        """A one-to-one placing of the observations into the group's fields, each compatible and not
        unlike by name: the only one, or of several the one whose names are clearly closest (spelling
        or meaning, by FILL_MARGIN: "dabblers | geese" beside "mallards | greylag"). None otherwise."""
        group = sorted(group)
        if len(nums) > len(group) or len(group) > 8:
            return None
        ok = {(x.attribute, g) for x in nums for g in group
              if _compatible(x, self._fields[g], _dimension(x.unit)) and not contrasting(x.attribute, g)
              and self._name_ok(x, g)}
        raws = [x.attribute for x in nums]
        placings = [dict(zip(raws, perm)) for perm in itertools.permutations(group, len(raws))
                    if all((r, g) in ok for r, g in zip(raws, perm))]
        if len(placings) <= 1:
            return placings[0] if placings else None
        close = {p: max(name_evidence(*p)[0], self._cosine(*p)) for p in ok}
        ranked = sorted(((sum(close[(r, g)] for r, g in pl.items()), pl) for pl in placings), key=lambda t: -t[0])
        return ranked[0][1] if ranked[0][0] - ranked[1][0] >= FILL_MARGIN else None

    def _cosine(self, a: str, b: str) -> float:
        va, vb = self._label_vec(a), self._label_vec(b)
        return float(va @ vb) if va is not None and vb is not None else 0.0

    def _slots(self, raw: str, o: Observation, present: Mapping[str, str], round_fields: set[str],
               unknown: Sequence[Observation] = ()) -> list[str]:
        """Fields this value could fill in a record of a known kind: each of the round's known fields
        (the anchors, at least one) has the field beside it in at least half of its rounds, the field
        is not in the round yet, has the same value kind, unit (or dimension) and a range that holds
        the value, and its name does not contrast with the label. With a single anchor (a label two
        kinds of record may share, "temperature") the names must not be unlike (`_name_ok`) and the
        round's other new labels must look like the anchor's companions too: a record of another
        kind that happens to share one label and a shape stays apart."""
        anchors = [p for p in present if p in self._fields]
        if not anchors:
            return []
        if len(anchors) == 1:
            usual = {g for g, n in self._fields[anchors[0]].companions.items()
                     if n >= COMPANION_SHARE * max(1, self._fields[anchors[0]].rounds)}
            if any(self._counterparts(usual, [x]) == 0.0 for x in unknown):
                return []
        dim = _dimension(o.unit)
        out = []
        for name, f in self._fields.items():
            if name in round_fields or f.kind != o.value_kind or f.rounds < 2 or contrasting(raw, name):
                continue
            if not all(self._fields[p].companions.get(name, 0) >= SLOT_SHARE * max(1, self._fields[p].rounds)
                       for p in anchors):
                continue
            if not _compatible(o, f, dim) or (len(anchors) == 1 and not self._name_ok(o, name)):
                continue
            out.append(name)
        return out

    def _name_ok(self, o: Observation, b: str) -> bool:
        """The observation's label and the field's name are not unlike: some name evidence, or the
        text encoder finds them at least SLOT_COSINE alike. No objection without an encoder, nor for
        a value nobody labelled (the extractor named it by its unit: "mass" for "39.6 kg")."""
        a = o.attribute
        if not o.label and all(w in _lex().measure_words for w in words_of(a)):
            return True
        if name_evidence(a, b)[0] >= MIN_NAME:
            return True
        va, vb = self._label_vec(a), self._label_vec(b)
        return va is None or vb is None or float(va @ vb) >= SLOT_COSINE

    def _counterparts(self, usual: set[str], unknown: Sequence[Observation]) -> float:
        """The share of `unknown` observations that look like one of the `usual` fields (same kind,
        unit or dimension, value in range, names not unlike): how much a round of new labels
        resembles a record of the kind these fields come in."""
        if not unknown:
            return 0.0
        hits = 0
        for x in unknown:
            dim = _dimension(x.unit)
            if any(g in self._fields and self._fields[g].kind == x.value_kind and (
                    (_compatible(x, self._fields[g], dim) and self._name_ok(x, g))
                    or _unit_names(x, x.attribute, g, self._fields[g])) for g in usual):
                hits += 1
        return hits / len(unknown)


MAGNITUDE = 20.0  # a value this many times beyond a field's range is of another quantity
FEW_MAGNITUDE = 100.0  # ... this many times beyond the one or two values of a field seen once or twice


def _key(word: str) -> str:
    return re.sub(r"[^a-z]", "", word.lower())


def _written_unit(o: Observation) -> str:
    """The unit of `o` as its raw value writes it, letters only ("32 mv" -> "mv"); "" without a unit."""
    return _key(re.sub(r"^[\s\d.,+-]+", "", o.raw_value or "")) if o.unit else ""


def _unit_dropped(o: Observation) -> Observation:
    """`o` without a unit that was its field's name written after the value ("32 mv" in the field "mv":
    32 moves, no millivolts), else `o` as it is."""
    written = _written_unit(o)
    # (a spelling of percent is percent whatever the label: "30 pct" in the field "pct" is 30 %)
    return replace(o, unit=None) if len(written) >= 2 and written == _key(o.attribute.split(SENSE_MARK)[0]) \
        and o.unit != "%" else o


def _unit_names(o: Observation, raw: str, name: str, f: _Field) -> bool:
    """Whether a unit and a label are one word written two ways: the unit of `o` as written ("32 mv") is the
    field's name ("mv"), or the new label ("mv" in "mv 24") is the unit the field's values were read in."""
    written = _written_unit(o)
    if len(written) >= 2 and written == _key(name) and not f.units:
        return True
    return not o.unit and len(_key(raw)) >= 2 and any(_key(u) == _key(raw) for u in f.units)


def _another_magnitude(o: Observation, f: _Field) -> bool:
    """o, not in f's unit (none where f has one, or another), has a number (converted to f's unit where
    it can be) more than MAGNITUDE times above f's largest or below its smallest value; f has at least
    FEW_VALUES positive values and o's number is positive; with fewer (one or two), when it is more than
    FEW_MAGNITUDE times beyond them ("layers 1450" beside the one "layer 0.12 mm" seen so far: a field's
    first values are its size, not its range). False when unknown."""
    if o.value_kind != "number" or o.number is None or f.n < 1 or f.vmin is None or f.vmin <= 0:
        return False
    if (o.unit or None) == f.unit:
        return False
    x = o.number
    if o.unit and f.unit and o.unit != f.unit:
        x = convert(x, o.unit, f.unit)
        if x is None:
            return False
    k = MAGNITUDE if f.n >= FEW_VALUES else FEW_MAGNITUDE
    return x > 0 and (x > k * f.vmax or x * k < f.vmin)


def _compatible(o: Observation, f: _Field, dim: str | None) -> bool:
    """The observation could be a value of f: the same unit or dimension (or neither has a unit) and,
    for numbers, a value inside f's range widened by half its width and a tenth of its size (and, for
    positive fields, within half the lowest and twice the highest value)."""
    if o.unit:
        if not f.units or not (o.unit in f.units or (dim and dim == f.dimension) or _read_alike(o.unit, f)):
            return False
    elif f.units:
        return False
    if o.value_kind == "number" and o.number is not None and f.vmin is not None and f.vmax is not None:
        lo, hi, x = f.vmin, f.vmax, o.number
        w = 0.5 * (hi - lo) + 0.1 * max(abs(lo), abs(hi)) + 1e-9
        if f.n < FEW_VALUES:
            # a field seen once or twice has no range yet ("23 games" then "20 games"): within half its size
            w = max(w, 0.5 * max(abs(lo), abs(hi)))
        if not (lo - w <= x <= hi + w):
            return False
        if lo > 0 and not (lo / 2 <= x <= 2 * hi):  # a price per litre is no total of 26-85
            return False
    return True


def _insert(con, sql: str, rows: Sequence[tuple], width: int, extra: str | None = None) -> None:
    """`sql` with "{}" replaced by the VALUES list of `rows` (each `width` parameters, plus `extra`
    SQL appended to every row), in chunks of a few hundred rows."""
    per = max(1, 2000 // width)
    cell = "(" + ", ".join(["?"] * width) + (f", {extra}" if extra else "") + ")"
    for k in range(0, len(rows), per):
        part = rows[k:k + per]
        con.execute(sql.format(", ".join([cell] * len(part))), [v for r in part for v in r])


def _same_value(a: Observation, b: Observation) -> bool:
    """Two observations of one round that state the same value (numbers within 1 %, or equal text)."""
    if a.number is not None and b.number is not None:
        return abs(a.number - b.number) <= 0.01 * max(abs(a.number), abs(b.number), 1e-9) and \
            (not a.unit or not b.unit or _dimension(a.unit) == _dimension(b.unit))
    return bool(a.raw_value) and (a.raw_value or "").strip().lower() == (b.raw_value or "").strip().lower()


# ---------------------------------------------------------------------- reads for the app
def field_report(con) -> list[FieldInfo]:
    """Every field of the memory with its raw attributes, their labels as written and counts, and
    why each was merged; fields with several raw attributes first. A field of a second kind of record
    ("duration~2") lists the labels of its own observations, with why the kind was told apart."""
    con = getattr(con, "con", con)
    aliases = {raw: (fld, score, ev, by, order) for raw, fld, score, ev, by, order in con.execute(
        "SELECT raw_attribute, field, score, evidence, decided_by, round_order FROM field_aliases").fetchall()}
    stats = {f: json.loads(st) if st else {} for f, st in con.execute("SELECT field, stats FROM fields").fetchall()}
    by_field: dict[str, dict[str, list[tuple[str, int]]]] = {}
    for fld, raw, label, n in con.execute(
            "SELECT attribute, coalesce(raw_attribute, attribute), coalesce(label, ''), count(*) FROM observations "
            "GROUP BY ALL").fetchall():
        by_field.setdefault(fld, {}).setdefault(raw, []).append((label, n))
    for raw, (fld, *_rest) in aliases.items():
        if SENSE_MARK not in raw:  # a sense's rows name a kind of record (or one joined away), not a label
            by_field.setdefault(fld, {}).setdefault(raw, [])
    infos = []
    for fld, raws in by_field.items():
        labels = []
        for raw, labs in raws.items():
            own = aliases.get(raw)
            if own is not None and own[0] == fld:
                _, score, ev, by, order = own
                reason = (json.loads(ev or "{}") or {}).get("reason", "") if fld != raw or by == "user" else ""
            elif SENSE_MARK in fld and fld in aliases:  # observations moved to a second kind of record
                _, score, ev, by, order = aliases[fld]
                reason = (json.loads(ev or "{}") or {}).get("reason", "")
            else:
                score, reason, by, order = 0.0, "", "auto", 0
            labs = tuple(sorted(labs, key=lambda x: (-x[1], x[0])))
            labels.append(FieldLabel(raw, labs, sum(n for _, n in labs), float(score or 0), reason, by or "auto",
                                     int(order or 0)))
        labels.sort(key=lambda lab: (lab.round_order, lab.raw_attribute))
        st = stats.get(fld, {})
        units = Counter(st.get("units") or {})
        infos.append(FieldInfo(fld, st.get("kind", ""), units.most_common(1)[0][0] if units else None,
                               sum(lab.observations for lab in labels), tuple(labels)))
    return sorted(infos, key=lambda i: (-len(i.labels), -i.observations, i.name))


@dataclass(frozen=True)
class FieldStats:
    """What the memory knows about one field, read-only (for late re-alignment and reports)."""

    name: str
    kind: str
    unit: str | None
    dimension: str | None
    vmin: float | None
    vmax: float | None
    rounds: int
    companions: Mapping[str, int]
    text: tuple[float, ...] | None = None  # the sum of its rounds' text vectors (None: not embedded)
    median: float | None = None  # its numbers' median in its unit (None: no numbers, or not counted)
    values: frozenset[str] = frozenset()  # a text field's most common values, lower case (numbers: none)
    # number fields beside it in one unit or dimension -> (rounds with both, rounds where it was the larger)
    above: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def text_cosine(self, other: "FieldStats") -> float | None:
        """How alike the rounds of two fields read (cosine of their text sums), None when either lacks one."""
        if self.text is None or other.text is None:
            return None
        a, b = np.asarray(self.text, dtype=np.float64), np.asarray(other.text, dtype=np.float64)
        denom = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(a @ b / denom) if denom else None


def field_stats(con) -> dict[str, FieldStats]:
    """Every field's statistics as stored in `fields`."""
    con = getattr(con, "con", con)
    out = {}
    fields = {name: _Field.from_json(name, data) for name, data in con.execute("SELECT field, stats FROM fields").fetchall()}
    units = {name: f.unit for name, f in fields.items() if f.kind == "number"}
    medians = _medians(con, units)
    orders = _orders(con, units)
    texts = _text_values(con, {name for name, f in fields.items() if f.kind == "text"})
    for name, f in fields.items():
        out[name] = FieldStats(name, f.kind, f.unit, f.dimension, f.vmin, f.vmax, f.rounds, dict(f.companions),
                               tuple(float(x) for x in f.text_sum) if f.text_sum is not None else None,
                               medians.get(name), texts.get(name, frozenset()), orders.get(name, {}))
    return out


def _orders(con, units: Mapping[str, str | None]) -> dict[str, dict[str, tuple[int, int]]]:
    """For each two number fields in one round, both without a unit or in units of one dimension (compared
    in the first one's unit): in how many rounds both were, and in how many the first was the larger
    (a panel's yield above the part it exported, the eggs above the chicks: an order each record keeps)."""
    by_round: dict[str, dict[str, tuple[float, str | None]]] = {}
    for round_id, attribute, number, unit in con.execute(
            "SELECT round_id, attribute, number, unit FROM observations "
            "WHERE value_kind = 'number' AND number IS NOT NULL ORDER BY round_id, seq").fetchall():
        if attribute in units and math.isfinite(number):
            by_round.setdefault(round_id, {}).setdefault(attribute, (float(number), unit))
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for values in by_round.values():
        for a, (x, ua) in values.items():
            for b, (y, ub) in values.items():
                if a == b or (ua is None) != (ub is None):
                    continue
                if ua and ub and ua != ub:
                    y = convert(y, ub, ua)
                    if y is None:
                        continue
                both, larger = out.setdefault(a, {}).get(b, (0, 0))
                out[a][b] = (both + 1, larger + (x > y))
    return out


TEXT_VALUES_KEPT = 50  # a text field's most common values kept for comparing fields


def _text_values(con, names: set[str]) -> dict[str, frozenset[str]]:
    """Each text field's most common values (lower case, at most TEXT_VALUES_KEPT)."""
    if not names:
        return {}
    counts: dict[str, Counter] = {}
    for attribute, value in con.execute(
            "SELECT attribute, lower(trim(coalesce(text_value, raw_value))) FROM observations "
            "WHERE value_kind = 'text'").fetchall():
        if attribute in names and value:
            counts.setdefault(attribute, Counter())[value] += 1
    return {a: frozenset(v for v, _ in c.most_common(TEXT_VALUES_KEPT)) for a, c in counts.items()}


def _medians(con, units: Mapping[str, str | None]) -> dict[str, float]:
    """Each number field's median, its values converted to the field's unit where they carry another
    (values that do not convert are left out)."""
    values: dict[str, list[float]] = {}
    for attribute, number, unit in con.execute(
            "SELECT attribute, number, unit FROM observations WHERE value_kind = 'number' AND number IS NOT NULL").fetchall():
        if attribute not in units or not math.isfinite(number):
            continue
        target = units[attribute]
        if unit and target and unit != target:
            number = convert(number, unit, target)
            if number is None:
                continue
        values.setdefault(attribute, []).append(float(number))
    return {a: float(np.median(v)) for a, v in values.items() if v}


def join_field(con, source: str, target: str, evidence: Mapping[str, object], score: float) -> list[str]:
    """Move the field `source` into `target` as an automatic decision (a person can undo it label by
    label): every raw attribute aliased to `source` now names `target`, its observations are
    rewritten, and the change is logged (kind "realign"). Field statistics and analytic tables are
    the caller's to recompute (`recompute_field_stats`, core.analytic.rebuild). Returns the raw
    attributes moved."""
    con = getattr(con, "con", con)
    raws = [r for (r,) in con.execute("SELECT raw_attribute FROM field_aliases WHERE field = ?", [source]).fetchall()]
    ev = json.dumps(dict(evidence), default=str)
    for raw in raws:
        con.execute("UPDATE field_aliases SET field = ?, score = ?, evidence = ?, decided_by = 'auto' "
                    "WHERE raw_attribute = ?", [target, score, ev, raw])
        con.execute("INSERT INTO field_events VALUES ((SELECT coalesce(max(round_order), 0) FROM rounds), "
                    "'realign', ?, ?, ?, ?, ?, now())", [raw, target, source, score, ev])
    con.execute("UPDATE observations SET attribute = ? WHERE attribute = ?", [target, source])
    return raws


def move_label(con, raw: str, target: str, evidence: Mapping[str, object]) -> int:
    """Move one raw attribute (a label as the extractor named it) from its field into `target` as an
    automatic decision (logged as kind "realign", undone like any alignment): its alias and its
    observations follow. Field statistics and analytic tables are the caller's to recompute.
    Returns the number of observations moved; 0 when `raw` is not a known label."""
    con = getattr(con, "con", con)
    row = con.execute("SELECT field FROM field_aliases WHERE raw_attribute = ?", [raw]).fetchone()
    if row is None:
        return 0
    ev = json.dumps(dict(evidence), default=str)
    con.execute("UPDATE field_aliases SET field = ?, score = 0.0, evidence = ?, decided_by = 'auto' "
                "WHERE raw_attribute = ?", [target, ev, raw])
    con.execute("INSERT INTO field_events VALUES ((SELECT coalesce(max(round_order), 0) FROM rounds), "
                "'realign', ?, ?, ?, 0.0, ?, now())", [raw, target, row[0], ev])
    n = con.execute(f"SELECT count(*) FROM observations WHERE attribute = ? AND {_observations_of(raw)}",
                    [row[0], raw]).fetchone()[0]
    con.execute(f"UPDATE observations SET attribute = ? WHERE attribute = ? AND {_observations_of(raw)}",
                [target, row[0], raw])
    return int(n)


@dataclass(frozen=True)
class LabelText:
    """The text values one label (raw attribute) brought into its field, and the rounds it was in."""

    field: str
    raw: str
    values: frozenset[str]  # lower case, at most TEXT_VALUES_KEPT most common
    rounds: frozenset[str]


def label_texts(con) -> dict[tuple[str, str], LabelText]:
    """(field, raw attribute) -> what that label brought into that field, for every text label."""
    con = getattr(con, "con", con)
    counts: dict[tuple[str, str], Counter] = {}
    rounds: dict[tuple[str, str], set[str]] = {}
    for rid, attribute, raw, value in con.execute(
            "SELECT round_id, attribute, coalesce(raw_attribute, attribute), "
            "lower(trim(coalesce(text_value, raw_value))) FROM observations WHERE value_kind = 'text'").fetchall():
        rounds.setdefault((attribute, raw), set()).add(rid)
        if value:
            counts.setdefault((attribute, raw), Counter())[value] += 1
    return {k: LabelText(k[0], k[1], frozenset(v for v, _ in counts.get(k, Counter()).most_common(TEXT_VALUES_KEPT)),
                         frozenset(r)) for k, r in rounds.items()}


def split_field(con, field: str, sense: str, rounds: Sequence[str], evidence: Mapping[str, object]) -> int:
    """Give the observations of `field` in `rounds` to a field of their own kind of record, `sense`
    ("duration~3"), as an automatic decision logged like a merge (kind "realign-split"; a person joins
    it back with merge_fields). Field statistics and analytic tables are the caller's to recompute.
    Returns the number of observations moved."""
    con = getattr(con, "con", con)
    ev = json.dumps(dict(evidence), default=str)
    con.execute("INSERT INTO field_aliases VALUES (?, ?, (SELECT coalesce(max(round_order), 0) FROM rounds), 0.0, ?, "
                "'auto') ON CONFLICT (raw_attribute) DO NOTHING", [sense, sense, ev])
    con.execute("INSERT INTO field_events VALUES ((SELECT coalesce(max(round_order), 0) FROM rounds), "
                "'realign-split', ?, ?, ?, 0.0, ?, now())", [sense, sense, field, ev])
    marks = ", ".join("?" * len(rounds))
    n = con.execute(f"SELECT count(*) FROM observations WHERE attribute = ? AND round_id IN ({marks})",
                    [field, *rounds]).fetchone()[0]
    con.execute(f"UPDATE observations SET attribute = ? WHERE attribute = ? AND round_id IN ({marks})",
                [sense, field, *rounds])
    return int(n)


def fields_by_round(con, value_kind: str = "number") -> dict[str, frozenset[str]]:
    """round id -> the fields of `value_kind` ("number", "text") its observations fill."""
    con = getattr(con, "con", con)
    out: dict[str, set[str]] = {}
    for rid, attr in con.execute("SELECT round_id, attribute FROM observations WHERE value_kind = ?",
                                 [value_kind]).fetchall():
        out.setdefault(rid, set()).add(attr)
    return {r: frozenset(v) for r, v in out.items()}


def recompute_field_stats(con) -> None:
    """Recount every field's statistics from the stored observations (round texts kept)."""
    _recompute_fields(getattr(con, "con", con))


# ---------------------------------------------------------------------- user decisions
def _set_alias(con, raw: str, target: str, evidence: dict, kind: str, previous: str | None) -> None:
    old = con.execute("SELECT evidence, score FROM field_aliases WHERE raw_attribute = ?", [raw]).fetchone()
    if old is not None:  # the automatic decision's evidence stays readable beside the person's
        evidence = evidence | {"previous": {"field": previous, "score": old[1], "evidence": json.loads(old[0] or "{}")}}
    con.execute(
        "INSERT INTO field_aliases VALUES (?, ?, (SELECT coalesce(max(round_order), 0) FROM rounds), 1.0, ?, 'user') "
        "ON CONFLICT (raw_attribute) DO UPDATE SET field = excluded.field, score = 1.0, evidence = excluded.evidence, "
        "decided_by = 'user'", [raw, target, json.dumps(evidence)])
    con.execute("INSERT INTO field_events VALUES ((SELECT coalesce(max(round_order), 0) FROM rounds), ?, ?, ?, ?, "
                "1.0, ?, now())", [kind, raw, target, previous, json.dumps(evidence)])
    con.execute(f"UPDATE observations SET attribute = ? WHERE {_observations_of(raw)}", [target, raw])


def _observations_of(raw: str) -> str:
    """SQL condition (one parameter: raw) for the observations a raw attribute stands for: those the
    extractor named so, or, for a field of a second kind of record ("duration~2"), those in it."""
    return "attribute = ?" if SENSE_MARK in raw else "coalesce(raw_attribute, attribute) = ?"


def _recompute_fields(con) -> None:
    """Field statistics from the stored observations (after a user decision rewrote them)."""
    aligner = FieldAligner(con, DEFAULT, None, load=False)
    rows = con.execute(
        "SELECT r.round_order, o.attribute, o.raw_value, o.number, o.unit, o.value_kind FROM observations o "
        "JOIN rounds r ON r.round_id = o.round_id ORDER BY r.round_order, o.seq").fetchall()
    by_round: dict[int, list[Observation]] = {}
    for order, attr, raw, num, unit, kind in rows:
        by_round.setdefault(order, []).append(Observation("", attr, raw, num, unit, kind or "text"))
    old = {name: _Field.from_json(name, data) for name, data in con.execute("SELECT field, stats FROM fields").fetchall()}
    # the rounds' text vectors, as the hierarchy stored them with each round's event: a field split off or
    # joined late has its rounds' text like any other (else late re-alignment cannot tell how they read)
    vectors = dict(con.execute(
        "SELECT r.round_order, n.text_emb FROM nodes n JOIN rounds r ON r.round_id = n.round_id "
        "WHERE n.level = 'event' AND n.text_emb IS NOT NULL").fetchall())
    for order, obs in by_round.items():
        for o in obs:
            if o.attribute not in aligner._fields:
                prev = old.get(o.attribute)
                aligner._fields[o.attribute] = _Field(o.attribute, o.value_kind, prev.created if prev else order)
        vector = vectors.get(order)
        aligner._observe(obs, None if vector is None else np.asarray(vector, dtype=np.float64))
    # with no stored vectors (a memory without its hierarchy), keep the old sums where the field survives
    for name, f in aligner._fields.items():
        if name in old and not vectors:
            f.text_sum = old[name].text_sum
    con.execute("DELETE FROM fields")
    if aligner._fields:
        con.executemany("INSERT INTO fields VALUES (?, ?)", [(n, f.as_json()) for n, f in aligner._fields.items()])


def undo_alias(store, raw_attribute: str, config: Config = DEFAULT, llm=None) -> "object":
    """Make `raw_attribute` its own field again (pinned: later builds keep it apart), rewrite its
    observations and rebuild the analytic memory. Raises KeyError for an unknown raw attribute,
    ValueError when it is not merged into another field (the field is named after it: undo the
    other labels instead). Returns the core.analytic.RebuildReport."""
    from .analytic import rebuild

    with store.transaction() as con:
        row = con.execute("SELECT field FROM field_aliases WHERE raw_attribute = ?", [raw_attribute]).fetchone()
        if row is None:
            raise KeyError(f"no raw attribute {raw_attribute!r} in this memory")
        if row[0] == raw_attribute:
            raise ValueError(f"{raw_attribute!r} is not merged into another field (the field {row[0]!r} is named "
                             "after it); undo the labels that joined it instead")
        _set_alias(con, raw_attribute, raw_attribute, {"reason": "kept apart by the user"}, "undo", row[0])
        _recompute_fields(con)
        return rebuild(store, config, llm=llm)


def merge_fields(store, raw_attribute: str, into: str, config: Config = DEFAULT, llm=None) -> "object":
    """Align `raw_attribute` with the field `into` by hand (pinned), rewrite its observations and
    rebuild the analytic memory. Raises KeyError for an unknown raw attribute or field, ValueError
    when the two hold different kinds of values or were both recorded in one round (two quantities
    of one record are never one field)."""
    from .analytic import rebuild

    with store.transaction() as con:
        row = con.execute("SELECT field FROM field_aliases WHERE raw_attribute = ?", [raw_attribute]).fetchone()
        if row is None:
            raise KeyError(f"no raw attribute {raw_attribute!r} in this memory")
        if con.execute("SELECT 1 FROM fields WHERE field = ?", [into]).fetchone() is None:
            raise KeyError(f"no field {into!r} in this memory")
        kinds = {k for (k,) in con.execute(
            f"SELECT DISTINCT value_kind FROM observations WHERE {_observations_of(raw_attribute)} "
            "OR attribute = ?", [raw_attribute, into]).fetchall()}
        if len(kinds) > 1:
            raise ValueError(f"{raw_attribute!r} and {into!r} hold different kinds of values ({', '.join(sorted(kinds))})")
        both = con.execute(
            f"SELECT count(*) FROM (SELECT round_id FROM observations WHERE {_observations_of(raw_attribute)} "
            f"INTERSECT SELECT round_id FROM observations WHERE attribute = ? AND NOT ({_observations_of(raw_attribute)}))",
            [raw_attribute, into, raw_attribute]).fetchone()[0]
        if both:
            raise ValueError(f"{raw_attribute!r} and {into!r} were both recorded in {both} round(s): "
                             "two quantities of one record are never one field")
        _set_alias(con, raw_attribute, into, {"reason": "merged by the user"}, "merge", row[0])
        _recompute_fields(con)
        return rebuild(store, config, llm=llm)
