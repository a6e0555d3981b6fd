"""Attribute-name and unit normalization, without synonyms.

`normalize_attribute` is deterministic and general: lower snake_case, units
split off (also in parentheses/brackets and trailing unit words: "Study Time
(hrs)" -> study_time + h, "TEMP. (°C)" -> temp + °C), trailing periods and
colons, possessives and grammar stop words dropped. It holds no synonym or
abbreviation table: "temp" stays "temp"; the field-alignment stage
(core/align.py) merges "temp"/"temperature"/"TEMP." per memory from evidence.
A duration value names its quantity "<x>_duration" ("Study Time (hrs)" ->
study_duration) so a label, a verb and a phrase can agree.

Units: `parse_unit` maps a unit spelling to (canonical unit, dimension,
factor) from the lexicon's unit table (core/lexicon.py: SI prefixes x base
units, imperial units, currencies, percent; "mg/dL"-style compounds are
parsed as unit/unit). Durations have one canonical unit, minutes ("7h 12m"
-> 432 min); every other unit keeps its own canonical spelling (8.2 km stays
km) so values stay source-faithful.

The word lists come from the active `Lexicon` (`use_lexicon`), by default the
built-in one.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

from core.lexicon import BUILTIN, Lexicon, lemma

DURATION_UNIT = "min"

_ACTIVE: ContextVar[Lexicon] = ContextVar("adamm_lexicon", default=BUILTIN)


def active_lexicon() -> Lexicon:
    """The lexicon the extraction functions read now (the built-in one unless `use_lexicon` says else)."""
    return _ACTIVE.get()


@contextmanager
def use_lexicon(lex: Lexicon):
    """Run a block with `lex` as the active lexicon."""
    token = _ACTIVE.set(lex)
    try:
        yield lex
    finally:
        _ACTIVE.reset(token)


@dataclass(frozen=True)
class UnitInfo:
    unit: str  # canonical spelling
    dimension: str  # duration, length, mass, energy, rate, percent, currency, ...
    factor: float = 1.0  # multiply the number by this to express it in `unit`


_COMPOUND_DIMS = {("mass", "volume"): "concentration", ("amount", "volume"): "concentration",
                  ("distance", "duration"): "speed", ("duration", "distance"): "pace",
                  ("volume", "duration"): "flow", ("currency", "mass"): "price", ("currency", "volume"): "price",
                  ("currency", "distance"): "price", ("currency", "duration"): "price", ("energy", "duration"): "power"}


@lru_cache(maxsize=16)
def _tables(lex: Lexicon) -> tuple[dict[str, UnitInfo], dict[str, UnitInfo]]:
    exact: dict[str, UnitInfo] = {}
    lower: dict[str, UnitInfo] = {}
    for name, (unit, dim, factor) in lex.units.items():
        info = UnitInfo(unit, dim, factor)
        exact[name] = info
    # case-insensitive spellings: a lower-case entry wins, else the first registration (milli before mega)
    for name, info in exact.items():
        if name == name.lower():
            lower[name] = info
    for name, info in exact.items():
        lower.setdefault(name.lower(), info)
    return exact, lower


def parse_unit(raw: str | None) -> UnitInfo | None:
    """Canonical unit for a spelling ("hrs" -> min x60, "Km" -> km, "mS/cm"); None when unknown."""
    if not raw:
        return None
    key = raw.strip().rstrip(".")
    if not key:
        return None
    if "/" in key:
        key = re.sub(r"\s+", "", key)
    exact, lower = _tables(active_lexicon())
    info = exact.get(key) or lower.get(key.lower())
    if info is not None:
        return info
    if key.count("/") == 1 and key.startswith("/") and len(key) > 1:
        ub = parse_unit(key[1:])  # "1.776/L": a price or a rate per unit
        if ub is not None and ub.dimension != "duration":
            return UnitInfo(f"/{ub.unit}", f"per_{ub.dimension}", 1.0)
    initials = rate_initials(key)
    if initials is not None:
        return initials
    if key.count("/") == 1 and not key.startswith("/"):
        a, b = key.split("/")
        rate = count_rate(a, b)
        if rate is not None:
            return rate
        ua, ub = parse_unit(a), parse_unit(b)
        if ua is not None and ub is not None and ua.dimension != ub.dimension:
            dim = _COMPOUND_DIMS.get((ua.dimension, ub.dimension), f"{ua.dimension}_per_{ub.dimension}")
            ca = ua.unit if ua.dimension != "duration" else a.strip()
            cb = ub.unit if ub.dimension != "duration" else b.strip()
            return UnitInfo(f"{ca}/{cb}", dim, 1.0)
    return None


# (a consonant first: "eps", "ups", "ops" are words and abbreviations of words)
RATE_INITIALS = r"[b-df-hj-np-tv-z]p[smh]"
_RATE_INITIALS = re.compile(RATE_INITIALS)
_PER_TIME = {1 / 60: "s", 1.0: "min", 60.0: "h"}  # a duration unit's factor to minutes -> its short spelling


def rate_initials(token: str) -> UnitInfo | None:
    """"bps", "wpm": a count's initial per a second, minute or hour, kept as written in lower case (dimension
    count_per_duration; "b/s" would read as bits): a count rate whose count word is known only beside its
    field's other spellings (`units.read_beside` reads "bps" as "bubbles/s"); None for anything else."""
    key = token.strip().lower()
    return UnitInfo(key, "count_per_duration", 1.0) if _RATE_INITIALS.fullmatch(key) else None


def count_rate(count: str, per: str) -> UnitInfo | None:
    """The unit of a count per time ("bubbles" per "s" -> bubbles/s, dimension count_per_duration): `count` a
    plural word that is no unit ("km" per hour is a speed), `per` a unit of time ("second", "hrs": s, min or
    h) or a calendar noun ("day", "weeks"); None otherwise. Such rates are units of their own, converted to
    nothing."""
    word, per = count.strip().lower(), per.strip().lower()
    if not re.fullmatch(r"[a-z]{2,}s", word) or word.endswith("ss") or parse_unit(word) is not None:
        return None
    lex = active_lexicon()
    if word in lex.number_words or word in lex.calendar_nouns:
        return None
    if per in lex.calendar_nouns:
        return UnitInfo(f"{word}/{per[:-1] if per.endswith('s') else per}", "count_per_duration", 1.0)
    time = parse_unit(per)
    short = next((v for k, v in _PER_TIME.items() if time and abs(time.factor - k) < 1e-9), None)
    if time is None or time.dimension != "duration" or short is None:
        return None
    return UnitInfo(f"{word}/{short}", "count_per_duration", 1.0)


_PAREN_UNIT = re.compile(r"\(([^)]*)\)|\[([^\]]*)\]")
_SNAKE_SPLIT = re.compile(r"[^a-z0-9%_]+")


def _strong_tail(word: str) -> UnitInfo | None:
    """A unit spelling that may end a label ("Weight kg", "Temp °C"): not a letter or a common word."""
    lex = active_lexicon()
    if not word.isalnum() and parse_unit(word) is not None:
        return parse_unit(word)  # "%", "°C", "$"
    if word in lex.weak_units or word.lower() in lex.stop_words or len(word) < 2:
        return None
    if word.lower() in ("hr", "cal", "min", "max", "no", "st"):
        return None  # "Resting HR", "min"/"max" are label words before they are units
    return parse_unit(word)


def split_label_unit(label: str) -> tuple[str, UnitInfo | None]:
    """Split a unit off a label: "Study Time (hrs)" -> ("Study Time", h), "Distance km" -> ("Distance", km)."""
    unit = None
    label = label.strip().rstrip(":").strip()
    m = _PAREN_UNIT.search(label)
    if m:
        inner = (m.group(1) or m.group(2) or "").strip()
        unit = parse_unit(inner)
        if unit is None and inner.lower() in active_lexicon().calendar_nouns and inner.lower().endswith("s"):
            # "Streak length (days)": a count of days, said to be one by the label (a bare "3 days" in a
            # sentence stays a span of life, not a measure); not converted to minutes
            unit = UnitInfo(inner.lower(), f"count of {inner.lower()}", 1.0)
        if unit is not None or not inner or len(inner) <= 12:
            label = (label[: m.start()] + label[m.end():]).strip()
    words = label.split()
    # a trailing unit word ("Weight kg", "Distance, km", "Temp °C"), never the only word
    if unit is None and len(words) > 1:
        last = words[-1].strip(",:.")
        tail = _strong_tail(last)
        if tail is not None:
            unit = tail
            if last.lower() not in active_lexicon().duration_words:
                label = " ".join(words[:-1])  # "Study hours": the word names the unit and stays in the name
    return label.strip(" ,:-."), unit


def _words(label: str) -> list[str]:
    text = label.lower().replace("\u2019", "'")
    text = re.sub(r"'s\b", " ", text).replace("-", " ").replace("'", "").replace("\u2024", ".")
    text = re.sub(r"(?<=[a-z]\d)\.(?=\d)", "_", text)  # "PM2.5" -> pm2_5
    return [w for w in _SNAKE_SPLIT.split(text) if w]


_DOTTED_INITIALS = re.compile(r"(?<![A-Za-z])[A-Za-z](?:\.\s?[A-Za-z])+(?![A-Za-z])\.?")


def normalize_attribute(label: str, *, value_kind: str = "number", dimension: str | None = None) -> str | None:
    """A label as an attribute name (lower snake_case), or None when nothing meaningful is left.

    `dimension` (from the value's unit) refines names: a duration value names
    its quantity "<x>_duration" ("Study Time (hrs)", "study hours" ->
    study_duration) so the same quantity stated as a label or a verb is one
    attribute. No synonyms: abbreviations stay as written.
    """
    lex = active_lexicon()
    label, _ = split_label_unit(label)
    # initials written with dots are one word: "O.G." / "A.B.V." -> og / abv (not "o", "g", nor the stop word "a")
    label = _DOTTED_INITIALS.sub(lambda m: re.sub(r"[.\s]", "", m.group(0)), label)
    words = [w for w in _words(label) if w not in lex.stop_words and not w.isdigit()]
    if not words:
        return None
    if dimension == "duration" and value_kind == "number":
        if words[-1] in lex.duration_words and len(words) > 1:
            words = words[:-1] + ["duration"]
        elif len(words) == 1 and words[0] in lex.duration_words:
            words = ["duration"]
        elif words[-1] != "duration":
            words = words + ["duration"]
    name = "_".join(words)
    name = re.sub(r"_+", "_", name).strip("_")
    if not name or not re.match(r"[a-z]", name):
        return None
    return name[:60]


# ---------------------------------------------------------------------- text values
# First-person words: a text value that names the speaker ("I won") is stored as "me", the user.
FIRST_PERSON = BUILTIN.first_person
SELF_VALUE = "me"


def _text_canon(lex: Lexicon) -> dict[str, str]:
    out = {v: v for v in lex.irregular_verbs.values()}
    out.update(lex.irregular_verbs)
    return out


# Past forms of irregular verbs -> lemma, and each lemma -> itself (grammar, not a domain: 'grew' -> grow).
TEXT_CANON: dict[str, str] = _text_canon(BUILTIN)
# no abbreviation or synonym table any more (field alignment merges labels from evidence); kept for importers
WORD_MAP: dict[str, str] = {}


def canonical_word(word: str) -> str:
    """One word's canonical form: 'I' -> 'me', an irregular past form -> its lemma; else lower case."""
    w = word.strip().lower().replace("\u2019", "'")
    lex = active_lexicon()
    if w in lex.first_person:
        return SELF_VALUE
    if w in lex.irregular_verbs:
        return lex.irregular_verbs[w]
    return w


def canonical_text(raw: str | None) -> str | None:
    """The normalized form of a short text value (Observation.text_value), or None for no value.

    Whitespace and surrounding punctuation are trimmed; a one-word value that
    names the speaker becomes "me" ("I" -> "me") and an irregular past verb
    form its lemma ("Grew" -> "grow"); other values keep their spelling.
    """
    if raw is None:
        return None
    s = " ".join(str(raw).split()).strip(" .,;:!")
    if not s:
        return None
    if " " not in s:
        low = s.lower().replace("\u2019", "'")
        lex = active_lexicon()
        if low in lex.first_person or low in lex.irregular_verbs:
            return canonical_word(s)
    return s


__all__ = ["UnitInfo", "parse_unit", "split_label_unit", "normalize_attribute", "canonical_text",
           "canonical_word", "TEXT_CANON", "WORD_MAP", "DURATION_UNIT", "use_lexicon", "active_lexicon", "lemma",
           "count_rate"]
