"""Schemas -> DuckDB tables (paper 3.3.3): metadata, typed columns, rows, evolution.

Every analytic table has, in this order, the contract columns
    source (VARCHAR, the round id), round_order (INTEGER), time (TIMESTAMP),
    captions (VARCHAR, the round's image captions joined by " | "),
then one column per schema attribute, then `_obs` (JSON) — the provenance:
{column: observation seq}, so every non-NULL cell leads to its observation
(observations(round_id = source, seq)), which names the dialogue span or the
image it came from. Columns added by evolution come after `_obs` (ALTER TABLE
appends); `Schema.columns` gives the logical order.

Population rule (which rounds make rows). A round with attribute set R
populates the table of schema A, with one row, when k = |R ∩ A| >= 1 and
(2k >= |A| or 2k >= |R|): it reports at least half of the schema, or at least
half of what it reports belongs to the schema. So a watering report that only
says "watered 250 ml" is a watering_log row, while a fertilizing round that shares one
volume attribute with a 4-attribute watering schema is not (1 of 4 in the
schema, 1 of 3 in the round). Of two tables a round populates, one whose attributes in
the round are fewer than, and among, the other's is left out: a listening round's
duration and episodes make a listening row, not also a tutor row by its duration
(`populated`; a table made or evolved later takes such rows from the others); of two tables taking the
same attributes of the round, the one with fewer attributes (whose share the round covers more) keeps
it. A round that reports only a table's date or time columns makes no row there (when a record was made is not a record).
A round of text alone that reports fewer than half of a table's fields, in a table with at least
STRAY_MIN_ROWS rows of text that report half or more, is no record of it when, beyond the labels and
values of what it reports, it speaks only of things none of those rows mention (`record_words`): "Paid
106 USD for concert tickets" is no tutor session's "paid" (no tutor row says "concert" or "ticket"),
while "Tutor was ill, paid 20 USD anyway" and "Day 5: grav. 1.020" (nothing beyond its labels) are records. Values
of the round for the schema's attributes
fill the row; attributes it did not report are NULL; when one attribute was
observed several times in a round, the first observation (lowest seq) is used.

Discovery back-fills every round up to the discovery round that satisfies the
rule; evolution appends the new columns and rematerializes all rows (the rule
depends on |A|, so rounds may enter or leave the table). `add_round` inserts
the row of a newly processed round into every table it populates. Writing a
round's row replaces any earlier row for that round, so every call is
idempotent.

Metadata. Without an LLM, a table is named by what its rounds are about where they say it
(`topic_words`), else from the attribute names (the word that recurs in most attributes,
e.g. brew_volume, brew_temp, brew_gravity -> brew_log; two recurring words ->
blood_pressure_log), and the description
lists attributes, units and the round count. Column types come from the
values: DOUBLE when >= 80% parse as numbers (the unit, the most common one, is
kept in the column metadata), DATE / TIMESTAMP when >= 80% parse as dates /
date-times, else VARCHAR (times of day such as "07:30" stay VARCHAR: a
TIMESTAMP would need a date the value does not carry). With an LLM (prompt
core/prompts.table_metadata), the reply is validated: a name not matching
^[a-z][a-z0-9_]{0,62}$ or reserved, a type the values do not support, or a
missing description falls back to the rule-based value (recorded in
`fallbacks`); an LLMError falls back entirely. The table name never changes
after creation (queries and people rely on it).

Names: analytic tables keep plain names; a name already used by any table or
view in the file, by a migration of core/store.py, or by another schema gets a
_2, _3, ... suffix. Identifiers are validated against ^[a-z][a-z0-9_]{0,62}$
and double-quoted; values are always bound parameters.

The view `memory_tables(table_name, description, n_rows)` (public contract) is
a UNION ALL over the analytic tables, rebuilt when a table is created, so
n_rows is always live.

All writes happen in the caller's transaction (no BEGIN/COMMIT here).
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from typing import Callable, Iterable, Mapping, Sequence

import duckdb

from .errors import LLMError
from .extract.normalize import active_lexicon, canonical_word, parse_unit
from .lexicon import singular
from .model import Column, Observation, Schema
from .protocols import LLM
from .units import convert, read_beside

IDENT_RE = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
CONTRACT_COLUMNS = (
    Column("source", "VARCHAR", description="round id"),
    Column("round_order", "INTEGER", description="position of the round in the history"),
    Column("time", "TIMESTAMP", description="time of the round"),
    Column("captions", "VARCHAR", description="captions of the round's images"),
    Column("modality", "VARCHAR", description="where the row's values were read: text, image or text+image"),
)
PROVENANCE_COLUMN = "_obs"
TYPES = ("DOUBLE", "DATE", "TIMESTAMP", "VARCHAR")
TYPE_SHARE = 0.8  # share of values that must parse for a typed column
SAMPLE_LIMIT = 500  # most recent observations per attribute used to infer types and samples
# Words that say how something is measured rather than what: never a table name on their own.
GENERIC_WORDS = frozenset(
    "avg average mean median total sum count number num min max value values level levels rate score "
    "scores time times duration date day daily weekly per pct percent percentage amount the of and my "
    "last first current today minutes hours seconds ms kg lb km".split()
    # the extractor's own name for an unlabelled text ("item", "item_2") says nothing of what a row records
    + ["item"] + [str(k) for k in range(10)]
)
_EXTRA_RESERVED = frozenset({"memory_tables", "schema_version", "main", "information_schema", "pg_catalog"})

MetadataFn = Callable[[Sequence[str], dict], dict]


def reserved_names() -> frozenset[str]:
    """Names an analytic table may never take: every table of the store's migrations and the views."""
    from .store import MIGRATIONS

    names = set(_EXTRA_RESERVED)
    for _, sql in MIGRATIONS:
        names |= {m.lower() for m in re.findall(r"CREATE\s+(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", sql, re.I)}
    return frozenset(names)


def quote(name: str) -> str:
    """Double-quoted identifier; raises ValueError when `name` is not ^[a-z][a-z0-9_]{0,62}$."""
    if not isinstance(name, str) or not IDENT_RE.match(name):
        raise ValueError(f"invalid identifier {name!r}: must match {IDENT_RE.pattern}")
    return f'"{name}"'


def sanitize(name: str, fallback: str = "records") -> str:
    """Lower snake_case identifier matching IDENT_RE (at most 50 characters, room for a suffix)."""
    s = re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_")
    s = re.sub(r"_+", "_", s)
    if not s:
        s = fallback
    if not s[0].isalpha():
        s = "t_" + s
    return s[:50].rstrip("_")


def populates(round_attrs: Iterable[str], schema_attrs: Iterable[str], when: Iterable[str] = ()) -> bool:
    """The population rule of the module docstring. Attributes in `when` (the tables' date and time
    columns) say when a record was made, not what it holds: a round reporting nothing else of the
    schema makes no row (a photo whose only value read is its date)."""
    r, a = set(round_attrs), set(schema_attrs)
    k = len(r & a)
    return k >= 1 and bool((r & a) - set(when)) and (2 * k >= len(a) or 2 * k >= len(r))


def populated(round_attrs: Iterable[str], schemas: Mapping[object, Iterable[str]], when: Iterable[str] = ()) -> set:
    """The keys of the schemas a round populates: those the population rule admits, less those whose
    attributes in the round are fewer than, and among, another admitted schema's (a listening round's
    duration and episodes make a listening row, not also a tutor row by its duration alone), and less
    those taking the same attributes of the round as a smaller schema."""
    r = set(round_attrs)
    sizes = {k: len(set(a)) for k, a in schemas.items()}
    mine = {k: r & set(a) for k, a in schemas.items() if populates(r, a, when)}
    # of tables taking the same fields of the round, those whose fields it covers the larger share of
    # (a dough log's "duration, temp" beside an oven log that also holds an item and a flour)
    return {k for k, m in mine.items() if not any(m < o for o in mine.values())
            and not any(o == m and sizes[j] < sizes[k] for j, o in mine.items())}


# ---------------------------------------------------------------------- values and types
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y")
_TS_FORMATS = ("%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y/%m/%d %H:%M")
_NUM_RE = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$|^[+-]?\.\d+$")


def modality(sources: Iterable[str | None]) -> str | None:
    """Where a row's values were read: "text" (the dialogue), "image" (OCR or a caption) or
    "text+image"; None for a row without values."""
    kinds = {"image" if s in ("ocr", "caption") else "text" for s in sources if s}
    return "+".join(k for k in ("text", "image") if k in kinds) or None


def as_number(number: float | None, raw: str | None) -> float | None:
    if number is not None and math.isfinite(number):
        return float(number)
    if raw is None:
        return None
    s = raw.strip()
    if _NUM_RE.match(s):
        return float(s.replace(",", ""))
    return None


def as_date(raw: str | None) -> date | None:
    if not raw:
        return None
    s = raw.strip()
    for f in _DATE_FORMATS:
        try:
            return datetime.strptime(s, f).date()
        except ValueError:
            continue
    return None


def as_timestamp(raw: str | None) -> datetime | None:
    if not raw:
        return None
    s = raw.strip()
    for f in _TS_FORMATS:
        try:
            return datetime.strptime(s, f)
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class AttributeProfile:
    """What the observed values of one attribute support."""

    attribute: str
    n: int
    numeric: float  # shares of values that parse as ...
    dates: float
    timestamps: float
    unit: str | None
    other_units: tuple[str, ...]
    samples: tuple[str, ...]
    identifier: bool = False  # values that name things (receipt, order numbers), not quantities
    # (unit, order of magnitude of its typical value) for each unit the values came in, when several did
    magnitudes: tuple[tuple[str, int], ...] = ()
    glued: bool = False  # its bare numbers end in a unit sign OCR read as "1" (`glued_sign`)
    span: tuple[float, float] | None = None  # least and greatest of its values written in `unit`
    outliers: bool = False  # a bare number of it is one with its sign glued on (`glued_outlier`)

    def allows(self, dtype: str) -> bool:
        if dtype == "VARCHAR":
            return True
        if self.identifier and dtype == "DOUBLE":
            return False
        share = {"DOUBLE": self.numeric, "DATE": self.dates, "TIMESTAMP": self.timestamps}.get(dtype)
        return share is not None and self.n > 0 and share >= TYPE_SHARE

    @property
    def dtype(self) -> str:
        for t in ("DOUBLE", "TIMESTAMP", "DATE"):
            if self.allows(t):
                return t
        return "VARCHAR"


_IDENT_VALUE = re.compile(r"#\d{4,}|\d{6,}")
_GLUED_ONE = re.compile(r"\d+\.\d*1")
GLUED_MIN = 4  # bare numbers a field needs before their last "1" is read as a sign
GLUED_SHARE = 0.9


def glued_sign(values: Sequence[tuple[str | None, float | None, str | None]]) -> bool:
    """True when nearly every (raw, number, unit) value of a field printed without a unit ends in a "1"
    after its decimal point (at least GLUED_MIN of them, GLUED_SHARE): OCR read a sign glued to the number
    as a "1" ("4.9 l" -> "4.91", "0.02 l" -> "0.021"; a box's border "|" too). Four values whose last
    digit is 1 by chance are one in ten thousand, ten one in ten billion."""
    bare = [raw.strip() for raw, x, u in values if raw and not u and as_number(x, raw) is not None]
    return len(bare) >= GLUED_MIN and sum(_GLUED_ONE.fullmatch(b) is not None for b in bare) >= GLUED_SHARE * len(bare)


def unglued(raw: str | None) -> float | None:
    """The number of a value whose last "1" is a glued sign ("4.91" -> 4.9); None when it has none."""
    r = (raw or "").strip()
    return float(r[:-1]) if _GLUED_ONE.fullmatch(r) else None


FEW_SPAN = 3  # values with the unit a column needs before a bare one is judged against them
GLUED_BEYOND = 5.0  # a bare number this many times a column's greatest value with its unit ...


def glued_outlier(raw: str | None, span: Sequence[float] | None) -> float | None:
    """... whose last digit is a "1", and whose number without that digit lies within the column's values
    with their unit, is that number with its sign glued on: "4751" among "136 ltr" .. "502 ltr" is "475l"
    (OCR read the litre sign as a 1; one screen's value, where `glued_sign` needs nearly all). None else."""
    r = (raw or "").strip()
    if not span or not re.fullmatch(r"\d+(?:\.\d*)?1", r) or r[:-1].endswith("."):
        return None
    lo, hi = span
    x, rest = float(r), float(r[:-1])
    return rest if hi > 0 and x >= GLUED_BEYOND * hi and lo <= rest <= hi else None


def unit_span(num: Sequence[tuple], unit: str | None) -> tuple[float, float] | None:
    """(least, greatest) of the (raw, number, unit) values written in `unit`; None with fewer than FEW_SPAN."""
    xs = sorted(float(x) for raw, number, u in num if u and u == unit and (x := as_number(number, raw)) is not None)
    return (xs[0], xs[-1]) if len(xs) >= FEW_SPAN else None


def profile(attribute: str, values: Sequence[tuple[str | None, float | None, str | None]]) -> AttributeProfile:
    """Profile (raw_value, number, unit) observations of one attribute."""
    vals = [v for v in values if (v[0] is not None and v[0].strip()) or v[1] is not None]
    n = len(vals)
    num = [v for v in vals if as_number(v[1], v[0]) is not None]
    seen = {v[2] for v in num if v[2]}
    # "59 m" beside "1 h 11 min" in one field: minutes, not metres
    num = [(raw, x, read_beside(u, seen)) for raw, x, u in num]
    units = Counter(v[2] for v in num if v[2])
    ranked = _readable_first([u for u, _ in sorted(units.items(), key=lambda kv: (-kv[1], kv[0]))], num)
    samples = tuple(dict.fromkeys(str(v[0] if v[0] is not None else v[1]) for v in vals))[:5]
    # an identifier: at least 3 values, every one a bare integer of 6+ digits (or "#" and 4+; no unit,
    # no thousands separator, no decimals), and no two equal: numbers that never repeat name receipts
    # and orders, and an average of them means nothing (a 5-digit count such as steps stays a measure)
    span = unit_span(num, ranked[0] if ranked else None)
    idents = [v for v in vals if not v[2] and v[0] is not None and _IDENT_VALUE.fullmatch(v[0].strip())]
    identifier = n >= 3 and len(idents) == n and len({v[0].strip().lstrip("#") for v in idents}) == n
    return AttributeProfile(
        attribute=attribute, n=n, magnitudes=unit_magnitudes(num) if len(units) >= 2 else (),
        numeric=len(num) / n if n else 0.0,
        dates=sum(as_date(v[0]) is not None for v in vals) / n if n else 0.0,
        timestamps=sum(as_timestamp(v[0]) is not None for v in vals) / n if n else 0.0,
        unit=ranked[0] if ranked else None, other_units=tuple(ranked[1:]), samples=samples,
        identifier=identifier, glued=glued_sign(num), span=span,
        outliers=any(glued_outlier(raw, span) is not None for raw, _x, u in num if not u),
    )


def unit_magnitudes(num: Sequence[tuple]) -> tuple[tuple[str, int], ...]:
    """(unit, order of magnitude of the median value in it) for each unit at least two of the
    (raw, number, unit) values came in: "1800 ml" and "2.7 L" beside each other -> (("L", 0), ("mL", 3))."""
    by: dict[str, list[float]] = {}
    for raw, number, unit in num:
        x = as_number(number, raw)
        if unit and x:
            by.setdefault(unit, []).append(abs(float(x)))
    return tuple(sorted((u, round(math.log10(sorted(v)[len(v) // 2]))) for u, v in by.items() if len(v) >= 2))


def unit_by_magnitude(value: float, column: Mapping) -> str | None:
    """The unit a number printed without one was most likely in, from its size: a column of millilitres
    also read in litres ("1800 ml", "2.7 L") takes a bare "3.6" as litres (OCR often drops or misreads a
    unit: "3.6 l" read "3.61"). None when its size is that of the column's own unit, or fits no unit
    the values came in clearly (within one order of magnitude, two or more from the column's)."""
    mags = dict(column.get("magnitudes") or ())
    own = column.get("unit")
    if not value or own not in mags or len(mags) < 2:
        return None
    m = math.log10(abs(value))
    best = min(mags, key=lambda u: abs(m - mags[u]))
    if best == own or abs(m - mags[best]) > 1 or abs(m - mags[own]) < 2:
        return None
    return best


def _readable_first(ranked: list[str], num: Sequence[tuple]) -> list[str]:
    """The units of a column's values, the one its values are stored in first: the most common, unless
    its typical value is below 1 and another unit the history used gives it at least 1 ("0.28 kg" beside
    "410 g": grams; a person writes 284 g, and 0.284 kg rounds away the last gram)."""
    if len(ranked) < 2:
        return ranked
    values = []
    for _raw, number, unit in num:
        x = convert(float(number), unit, ranked[0]) if unit and unit != ranked[0] and number is not None else number
        if x is not None:
            values.append(abs(float(x)))
    if not values:
        return ranked
    typical = sorted(values)[len(values) // 2]
    if typical == 0 or typical >= 1:
        return ranked
    sized = [(convert(typical, ranked[0], u), u) for u in ranked[1:]]
    fits = sorted((x, u) for x, u in sized if x is not None and x >= 1)
    return [fits[0][1]] + [u for u in ranked if u != fits[0][1]] if fits else ranked


def cell(dtype: str, raw: str | None, number: float | None, text_value: str | None = None):
    """The value stored for an observation in a column of type dtype (None when it does not parse).
    Text columns store the normalized text value when the extractor gave one ("Bike" -> "ride")."""
    if dtype == "DOUBLE":
        return as_number(number, raw)
    if dtype == "DATE":
        return as_date(raw)
    if dtype == "TIMESTAMP":
        return as_timestamp(raw)
    if text_value:
        return text_value
    return raw if raw is not None else (f"{number:g}" if number is not None else None)


def in_column_unit(value, unit: str | None, column: Mapping) -> object:
    """A number read in `unit` stored in its column's unit ("0.28 kg" in a column of grams: 280), so
    that sums and averages mean something; unchanged when the units are equal, unknown or do not
    convert (another currency)."""
    cu = column.get("unit")
    if column.get("dtype") != "DOUBLE" or value is None or not unit or not cu or unit == cu:
        return value
    converted = convert(float(value), unit, cu)
    if converted is None:
        # a symbol the column reads otherwise ("m" in a column of minutes)
        converted = convert(float(value), read_beside(unit, [cu]), cu)
    return value if converted is None else round(converted, 9)


def other_units_note(unit: str | None, others: Sequence[str]) -> str:
    """The column description for values read in several units: which were converted to the column's."""
    if not unit or not others:
        return ""
    conv = [u for u in others if convert(1.0, u, unit) is not None]
    kept = [u for u in others if u not in conv]
    parts = [f"values in {unit}"]
    if conv:
        parts.append(f"also reported in {', '.join(conv)} (converted)")
    if kept:
        parts.append(f"also reported in {', '.join(kept)} (not converted)")
    return "; ".join(parts)


def alias_of(attribute: str, columns: Sequence[str]) -> str | None:
    """The one column attribute that `attribute` names with a word more or less ("tank_temperature"
    -> temperature, "score" -> puzzle_score): one's words end the other's. None when no column or
    several do (ambiguous), or when `attribute` is itself a column."""
    if attribute in columns:
        return None
    aw = attribute.split("_")
    hits = []
    for c in columns:
        cw = c.split("_")
        short, long_ = (aw, cw) if len(aw) < len(cw) else (cw, aw)
        if len(short) != len(long_) and long_[-len(short):] == short:
            hits.append(c)
    return hits[0] if len(hits) == 1 else None


# ---------------------------------------------------------------------- rule-based metadata
def _stem(word: str) -> str:
    """Light stemming so that bottle_filled and fill_count share "fill", plants and plant "plant"."""
    for suffix, keep in (("ing", 4), ("ed", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            return word[: -len(suffix)]
    return singular(word)


def said(stem: str, attributes: Sequence[str] = (), words: "RoundWords | None" = None) -> str:
    """A stem as a word people write: the stem of "changed" is "chang", and a table of volume_changed and
    share_changed is a change log when its rounds write "change". Candidates are the words of the
    attribute names and of the rounds with that stem, or the stem and an "e"; a form that is no past or
    -ing form wins, then the shortest; the stem itself when nothing has it."""
    pool = {t for a in attributes for t in a.split("~")[0].split("_") if t}
    if words is not None:
        pool |= {w for w, *_ in words.rows} | {w for w, _ in words.context}
    cands = [w for w in pool if _stem(w) == stem or w == stem + "e"]
    if stem + "s" in pool:
        cands.append(stem)  # a plural's stem is its singular ("rounds" -> "round")
    if not cands:
        return stem
    return min(cands, key=lambda w: (w.endswith(("ed", "ing")), len(w), w))


def rule_table_name(attributes: Sequence[str]) -> str:
    """A name from the (stemmed) words that recur across attribute names, plus "_log"."""
    return sanitize(_rule_stem(attributes)[0] + "_log")


def _rule_stem(attributes: Sequence[str]) -> tuple[str, bool]:
    """(name stem, whether it is made of words that recur across attribute names)."""
    attrs = sorted({a.split("~")[0] for a in attributes})  # "duration~2" is a "duration" too
    counts: Counter = Counter()
    first: dict[str, tuple[int, int]] = {}
    for i, a in enumerate(attrs):
        for j, w in enumerate(dict.fromkeys(_stem(t) for t in a.split("_") if t)):
            counts[w] += 1
            first.setdefault(w, (i, j))
    words = [w for w in counts if w not in GENERIC_WORDS and not w.isdigit()]
    words.sort(key=lambda w: (-counts[w], first[w], w))
    recurring = [w for w in words if counts[w] >= 2][:2]
    if recurring:
        recurring.sort(key=lambda w: first[w])  # keep the words in the order people write them
        return "_".join(recurring), True
    specific = [a for a in attrs if any(t not in GENERIC_WORDS for t in a.split("_"))]
    return (specific[0] if specific else (attrs[0] if attrs else "records")), False


def _words(name: str) -> str:
    return name.replace("_", " ")


def _nice_date(x) -> str:
    d = x.date() if isinstance(x, datetime) else x
    return f"{d.day} {d.strftime('%b')} {d.year}"


def rule_description(name: str, columns: Sequence[Column], n_rounds: int, span: tuple | None,
                     modalities: Mapping[str, int] | None = None, mentioned: Sequence[str] = ()) -> str:
    """A description a person reads: what one row is, its fields with units, since when, and where
    the values were read ("One row per watering record: water (mL), soil moisture (%). First
    recorded 4 Feb 2025; read from images and text."). No counts: they would go stale as rows are
    added (memory_tables.n_rows is live)."""
    parts = []
    for c in columns:
        unit = f" ({c.unit})" if c.unit else " (date)" if c.dtype == "DATE" else ""
        parts.append(_words(c.name) + unit)
    subject = _words(name[:-4] if name.endswith("_log") else name).strip()
    out = f"One row per {subject} record: {', '.join(parts)}."
    if mentioned:
        out += f" Its rounds also mention {', '.join(mentioned)}."
    if span and span[0] is not None:
        out += f" First recorded {_nice_date(span[0])}."
    if modalities:
        kinds = {"image" if "image" in k else None for k in modalities} | {"text" if "text" in k else None
                                                                              for k in modalities}
        kinds.discard(None)
        if kinds:
            out += " Read from " + " and ".join({"image": "images", "text": "text"}[k] for k in sorted(kinds)) + "."
    return out


# Words that never name what a table records (function words, chat filler, acknowledgements).
_ROUND_STOP = frozenset(
    "the and for with was were are this that you your have has had but not just got get today here there "
    "what when how can could would will some very really thanks thank saved save logged log noted note "
    "recorded record stored store added add keep back from about into after before again also than then "
    "them they she her his him our out all any its i'm i've i'll let one two three four five six seven "
    "eight nine ten now did does done yes yeah okay nice great good cool sure please want need think "
    "know see let's tell each every give gave made make take took said say says like more most much "
    "ish".split()  # "ish" of "7pm-ish"
)
_TIME_WORDS = frozenset("morning evening afternoon night nights tonight yesterday week weekend month year "
                        "monday tuesday wednesday thursday friday saturday sunday nightly weekly monthly".split())
ROW_WORD_SHARE = 0.6  # a word in at least this share of a table's rounds describes the table
CONTEXT_MIN_SCORE = 1.0  # share x idf a word of the neighbouring rounds needs to enter the description


def round_words(text: str) -> set[str]:
    """Content words of a round's user turns and captions, in canonical form ('plants' -> 'plant',
    'Grew' -> 'grow'); unit words, numbers and function words are left out."""
    return {w for w in map(_canonical_token, re.findall(r"[a-z][a-z']+", text.lower())) if _is_content(w)}


def _canonical_token(token: str) -> str:
    """The form `round_words` keeps for one token ("Plants" -> "plant", "Grew" -> "grow")."""
    w = canonical_word(token.lower().replace("\u2019", "'"))
    if w.endswith("'s"):
        w = w[:-2]
    return singular(w, min_len=5)


def _is_content(w: str) -> bool:
    """A canonical word `round_words` keeps: no function, time, generic or unit word."""
    return (len(w) >= 3 and w not in _ROUND_STOP and w not in _TIME_WORDS and w not in GENERIC_WORDS
            and parse_unit(w) is None and parse_unit(w + "s") is None)


STRAY_MIN_ROWS = 5  # rows of text reporting half a table's fields or more, before its words judge a partial one


def user_text(text: str | None) -> str:
    """The user's lines of a round's stored text ("user: ..." lines, without the speaker), no
    assistant's: what the person said about the record."""
    return " ".join(line.split(":", 1)[1] for line in (text or "").splitlines()
                    if ":" in line and not re.match(r"\s*(assistant|agent|bot|ai|system)\s*:", line, re.I))


def record_words(rounds: Iterable[set[str]], excluded: set[str] = frozenset()) -> frozenset[str]:
    """Every word (`round_words`) any of `rounds` says, less `excluded` (the words of their values: a
    name said in a record is no subject of the records)."""
    return frozenset().union(*rounds) - set(excluded)


def speaks_of_other_things(words: set[str], own: set[str], vocabulary: frozenset[str]) -> bool:
    """True when `words` (a round's), less `own` (the labels and values of what it reports), are not
    empty and none of them is in `vocabulary` (what a table's records say): "concert", "ticket" beside
    a "paid" that a tutor log also holds."""
    rest = set(words) - set(own)
    return bool(rest) and not rest & vocabulary


def partial(round_attrs: Iterable[str], schema_attrs: Iterable[str], when: Iterable[str] = ()) -> bool:
    """True when a round reports fewer than half of a schema's fields (its date and time fields not
    counted): one the population rule admits only because most of what it reports is theirs."""
    a = set(schema_attrs) - set(when)
    return 2 * len(set(round_attrs) & a) < len(a)


@dataclass(frozen=True)
class RoundWords:
    """Words that describe a table's rounds: `rows` (share of its rounds, x idf), `context` (the
    other rounds of the same sessions, e.g. "I'll log each harvest here"), `topics` (what the
    rounds are about by `topic_words`: a name, its share of the rounds)."""

    rows: tuple[tuple[str, float, float], ...]  # (word, share, score), best first
    context: tuple[tuple[str, float], ...]  # (word, score), best first
    topics: tuple[tuple[str, float], ...] = ()  # ("lake_survey", 0.92), best first
    names: frozenset[str] = frozenset()  # words the rounds write as names (apps, people, places)


MENTION_SHARE = 0.2  # a word in at least this share of a table's rounds is one they mention ...
MENTIONS = 4  # ... at most this many, best scored first


def mentions(words: "RoundWords", columns: Sequence[str], table_name: str) -> tuple[str, ...]:
    """What a table's rounds talk about beyond its fields, for its description ("dough", "proofing" beside
    rest duration and temperature): words of at least MENTION_SHARE of its rounds, best scored first, but
    not its columns' or its name's words, names (an app's, a person's), past-tense verbs, or words about the
    medium or the occasion of a record ("screenshot", "update")."""
    lex = active_lexicon()
    own = {_stem(w) for n in (*columns, table_name) for w in n.split("~")[0].split("_") if w}
    out = []
    for w, share, _ in words.rows:
        if share < MENTION_SHARE or len(out) >= MENTIONS:
            continue
        if _stem(w) in own or any(len(x) >= 3 and (x.startswith(w) or w.startswith(x)) for x in own):
            continue  # a field's name or its abbreviation ("temp" beside "temperature")
        if w in words.names or lex.is_past(w) or w in lex.media_words or w in lex.occasion_words or \
                lex.lemma(w) in lex.record_words or w in lex.reporting_verbs or w in lex.light_verbs or \
                w in lex.connectives or w in lex.prepositions or w in lex.circumstance_prepositions or \
                w in lex.stop_words or w in GENERIC_WORDS:
            continue
        out.append(w)
    return tuple(out)


TOPIC_MIN_ROUNDS = 5  # a topic is said in at least this many of a table's rounds ...
TOPIC_SHARE = 0.5  # ... and in at least half of them ...
TOPIC_LIFT = 5.0  # ... and in at most a fifth of that share of the other rounds


_SENTENCE_BREAK = re.compile(r"(?<=[.!?:;|/()\[\]—–])\s*|\s+-\s+|\n")


def _tokens(sentence: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'\u2019]*", sentence)


def proper_nouns(texts: Iterable[str]) -> set[str]:
    """Words (lower case) that `texts` write with a capital inside a sentence or inside the word
    ("from Ledgerly", "BlitzBoard") and never in lower case: names of apps, people and places,
    also where a sentence starts with one."""
    capital, lower = set(), set()
    for text in texts:
        for sentence in _SENTENCE_BREAK.split(text):
            for i, tok in enumerate(_tokens(sentence)):
                low = tok.lower()
                if tok == low:
                    lower.add(low)
                elif re.search(r"[a-z][A-Z]", tok) or (i > 0 and not tok.isupper()):
                    capital.add(low)
    return capital - lower - active_lexicon().first_person


def topic_uses(text: str, proper: set[str] = frozenset()) -> list[list[tuple[str, str]]]:
    """The words of `text` that may say what it is about, in order, as (canonical form, spelling in
    lower case), one list per phrase (a sentence, cut where a word is left out). Left out by
    grammar, not by a word list of any domain: proper nouns (a capital letter inside a sentence, or
    inside a word: an app, a person, a place; `proper`: words known as names from other texts),
    acronyms, past-tense verb forms ("refilled"), nouns after a preposition of circumstance
    ("before work", "at the office": when or where, not what), words about the medium or the
    occasion of a record ("screenshot", "session"), and every word `round_words` leaves out."""
    lex = active_lexicon()
    out: list[list[tuple[str, str]]] = []
    for sentence in _SENTENCE_BREAK.split(text):
        run: list[tuple[str, str]] = []
        prev = ""
        for i, tok in enumerate(_tokens(sentence)):
            low = tok.lower()
            w = _canonical_token(tok)
            named = low in proper or bool(re.search(r"[a-z][A-Z]", tok)) or (
                i > 0 and tok[0].isupper() and not tok.isupper() and low not in lex.first_person)
            acronym = len(tok) > 1 and tok.isupper()
            after_prep = prev in lex.circumstance_prepositions
            if low not in lex.determiners and low not in lex.possessives:
                prev = low
            if low in lex.media_words or w in lex.media_words:
                run = []  # "plant tracking app": the words before a medium describe the medium
                continue
            ok = (not (named or acronym or after_prep or lex.is_past(low))
                  and low not in lex.occasion_words and w not in lex.occasion_words
                  and lex.lemma(low) not in lex.record_words and low not in lex.reporting_verbs
                  and _is_content(w))
            if ok:
                run.append((w, low))
            elif run:
                out.append(run)
                run = []
        if run:
            out.append(run)
    return out


def topic_words(texts: Mapping[str, str], mine: Sequence[str], excluded: set[str] = frozenset(),
                words: Mapping[str, set[str]] | None = None) -> tuple[tuple[str, float], ...]:
    """What a table's rounds are about, from the words they use: the head of a phrase, or the head
    with the word before it ("lake survey"), that at least TOPIC_MIN_ROUNDS and TOPIC_SHARE of the
    rounds `mine` use as a topic (`topic_uses`) and the other rounds of `texts` rarely use at all
    (share ≤ 1/TOPIC_LIFT of it). `excluded`: words that are already labels or values of the rows;
    `words`: `round_words` of each text, when the caller has them. Best first; () when none
    qualifies."""
    mine_set = set(mine)
    others = [r for r in texts if r not in mine_set]
    out_df = Counter(w for r in others for w in (words[r] if words is not None and r in words
                                                 else round_words(texts[r])))
    uni, bi, spelled = Counter(), Counter(), Counter()
    proper = proper_nouns(texts.values())
    for r in mine:
        heads, pairs_here = set(), set()
        for p in topic_uses(texts.get(r, ""), proper):
            spelled.update(p)
            # an English noun phrase ends in its head ("latest nest box", "lake survey"): the head says
            # what the phrase is about, a word before it only narrows it; a phrase whose head is a
            # label or a value says a field, not a topic
            head = p[-1][0]
            if head in excluded:
                continue
            heads.add(head)
            if len(p) >= 2 and p[-2][0] not in excluded and p[-2][0] != head:
                pairs_here.add((p[-2][0], head))
        uni.update(heads)
        bi.update(pairs_here)
    n, n_out = max(1, len(mine)), max(1, len(others))

    def distinct(w: str, share: float) -> bool:
        return out_df[w] / n_out <= share / TOPIC_LIFT

    singles = [(w, c / n) for w, c in uni.items()
               if c >= TOPIC_MIN_ROUNDS and c / n >= TOPIC_SHARE and distinct(w, c / n)]
    pairs = [("_".join(p), c / n) for p, c in bi.items()
             if c >= TOPIC_MIN_ROUNDS and c / n >= TOPIC_SHARE and all(distinct(w, c / n) for w in p)]
    ranked = sorted(singles, key=lambda x: (-x[1], x[0]))
    if pairs and ranked:
        best_pair = max(pairs, key=lambda x: (x[1], x[0]))
        if best_pair[1] >= 0.8 * ranked[0][1] and best_pair[0].endswith("_" + ranked[0][0]):
            ranked.insert(0, best_pair)  # "lake survey" says more than "lake"

    def name(w: str) -> str:
        # canonical forms cut plurals crudely ("supplies" -> "supplie"): say it as the rounds spell it
        low = max((c, sp) for (cw, sp), c in spelled.items() if cw == w)[1]
        if low.endswith("ies") and w.endswith("ie"):
            return low[:-3] + "y"
        if len(w) >= 4 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            return w[:-1]  # "pots" (too short for round_words to cut) -> "pot"
        return w

    return tuple(("_".join(name(x) for x in w.split("_")), round(sh, 3)) for w, sh in ranked)


def name_from_words(attributes: Sequence[str], words: RoundWords | None,
                    text_attributes: Sequence[str] = ()) -> str:
    """The table name: what its rounds are about when they say it in words no field or value
    carries (`topic_words`: "Lake survey: 12 mallards, 3 geese" -> lake_survey_log); else from its
    fields: a word that recurs across its attribute names
    (brew_volume, brew_temp, brew_gravity -> brew_log); else its one text field, which says
    what kind of record a row is (activity, variety -> activity_log); else a word of an attribute
    name that most of its rounds also use (the rounds say what the record is about: "moisture" of
    soil_moisture in every sensor round -> moisture_log); else `rule_table_name`. Words the
    rounds use that no field carries and that are no topic ("dashboard", "before work") never name a
    table: they say how or when a record was made, not what it records."""
    if words and words.topics:
        return sanitize(words.topics[0][0] + "_log")
    attributes = [a.split("~")[0] for a in attributes]
    text_attributes = [a.split("~")[0] for a in text_attributes]
    rule = rule_table_name(attributes)
    stem, recurring = _rule_stem(attributes)
    if recurring:
        return sanitize("_".join(said(w, attributes, words) for w in stem.split("_")) + "_log")
    named = [a for a in text_attributes if any(t not in GENERIC_WORDS for t in a.split("_"))]
    if len(named) == 1:
        return sanitize(named[0] + "_log")
    if not words:
        return rule
    attr_words = {_stem(p) for a in attributes for p in a.split("_") if p and p not in GENERIC_WORDS}
    cands = [w for w, sh, _ in words.rows if sh >= ROW_WORD_SHARE and _stem(w) in attr_words]
    if not cands:
        return rule
    return sanitize(said(_stem(cands[0]), attributes, words) + "_log")


def main_fields(attributes: Sequence[str], words: RoundWords | None, text_attributes: Sequence[str] = ()) -> set[str]:
    """The attributes the table would be named after by its fields alone (`name_from_words` without
    the rounds' topics: net_wt of "net_wt_log"): its main quantity, which a planner reads when a
    question names the table's rows but none of its columns ("my average hops" over hop purchases).
    Empty when that name comes from no attribute's words."""
    plain = RoundWords(words.rows, words.context) if words else None
    stem = set(name_from_words(attributes, plain, text_attributes).removesuffix("_log").split("_")) - GENERIC_WORDS
    return {a for a in attributes if {_stem(t) for t in a.split("~")[0].split("_")} & {_stem(t) for t in stem}}


def column_name(attribute: str, taken: set[str]) -> str:
    """The column for an attribute: the attribute itself when it is a valid, free identifier (a
    field of a second kind of record, "duration~2", is the column "duration" of its table)."""
    base = sanitize(attribute.split("~")[0], fallback="value")
    if base in {c.name for c in CONTRACT_COLUMNS} or base == PROVENANCE_COLUMN:
        base = f"{base}_value"
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    return name


# ---------------------------------------------------------------------- the materializer
def _reported(t: "_Table", provenance: str | None) -> set[str]:
    """The attributes a row of t holds a value of, from its `_obs` provenance JSON (keyed by column)."""
    by_name = {c["name"]: c["attribute"] for c in t.columns}
    return {by_name.get(n, n) for n in json.loads(provenance or "{}")}


@dataclass(frozen=True)
class TableChange:
    """What `apply` did: action is "created", "evolved" or "unchanged"."""

    schema: Schema
    action: str
    added_columns: tuple[str, ...]
    n_rows: int
    fallbacks: tuple[str, ...] = ()


@dataclass
class _Table:
    schema_id: int
    table_name: str
    description: str
    columns: list[dict]  # {"name", "attribute", "dtype", "unit", "description"}
    discovered: int
    updated: int
    llm_description: str | None = None  # the LLM's description, used instead of the rule-based one
    mentions: tuple[str, ...] = ()  # what its rounds talk about beyond its fields (`mentions`), set at a build's end

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(c["attribute"] for c in self.columns)

    def schema(self) -> Schema:
        return Schema(
            schema_id=self.schema_id, attributes=tuple(sorted(self.attributes)), table_name=self.table_name,
            description=self.description,
            columns=tuple(Column(c["name"], c["dtype"], c.get("unit"), c.get("description", ""))
                          for c in self.columns),
            discovered_order=self.discovered, updated_order=self.updated,
        )


class Materializer:
    """Creates, evolves and fills the analytic tables of one memory file.

    con: a DuckDB connection (or core.store.Store). llm: optional LLM for table
    metadata; metadata_fn(attributes, samples) -> dict can replace the LLM call
    (same output shape as prompts.table_metadata). Creates the memory_tables
    view when missing.
    """

    def __init__(self, con, llm: LLM | None = None, *, metadata_fn: MetadataFn | None = None):
        self.con = getattr(con, "con", con)
        self.llm = llm
        self.metadata_fn = metadata_fn
        self.fallbacks: list[str] = []
        self._tables: dict[int, _Table] = {}
        self._described: dict[int, tuple[int, frozenset[str]]] = {}  # schema id -> (rows then, `_vocabulary`)
        existing = self._catalog_names()
        for sid, name, desc, cols, disc, upd in self.con.execute(
            "SELECT schema_id, table_name, description, columns, discovered_order, updated_order FROM schemas "
            "WHERE table_name IS NOT NULL ORDER BY schema_id"
        ).fetchall():
            if name in existing:
                self._tables[int(sid)] = _Table(int(sid), name, desc or "", json.loads(cols or "[]"),
                                                int(disc or 0), int(upd or disc or 0))
                self._add_missing_contract_columns(name)
        if "memory_tables" not in existing:
            self._rebuild_view()

    # ------------------------------------------------------------------ reads
    def tables(self) -> list[Schema]:
        """Every materialized schema, by schema id."""
        return [t.schema() for _, t in sorted(self._tables.items())]

    def table_for(self, schema_id: int) -> Schema | None:
        t = self._tables.get(schema_id)
        return t.schema() if t else None

    # ------------------------------------------------------------------ writes
    def apply(self, schema_id: int, attributes: Iterable[str], round_order: int) -> TableChange:
        """Create the table of a discovered schema (back-filled from all rounds up to
        round_order) or add the new attributes of an evolved one (ALTER TABLE ADD
        COLUMN, then every row rematerialized). Attributes a schema no longer has
        keep their column. Raises ValueError on an empty or non-string attribute."""
        attrs = tuple(sorted(set(attributes)))
        if not attrs or any(not isinstance(a, str) or not a for a in attrs):
            raise ValueError(f"schema {schema_id}: attributes must be non-empty strings, got {attrs!r}")
        before = len(self.fallbacks)
        table = self._tables.get(schema_id)
        if table is None:
            table = self._create(schema_id, attrs, round_order)
            action, added = "created", tuple(c["name"] for c in table.columns)
        else:
            new = [a for a in attrs if a not in table.attributes]
            if not new:
                return TableChange(table.schema(), "unchanged", (), self._count(table.table_name))
            added = self._evolve(table, new, round_order)
            action = "evolved"
        rounds = self._round_attributes(table.attributes, round_order)
        n = self._refill(table, round_order, rounds)
        self._drop_dominated(table, rounds)
        table.description = self._description(table, n)
        self._save_schema(table)
        if action == "created":
            self._rebuild_view()
        return TableChange(table.schema(), action, added, self._count(table.table_name),
                           tuple(self.fallbacks[before:]))

    def add_round(self, round_order: int, round_id: str) -> tuple[str, ...]:
        """Write round_id's row into every table whose schema it populates (replacing an
        earlier row of that round); returns those table names. A round without
        observations populates nothing."""
        return self.add_rounds([(round_order, round_id)]).get(round_id, ())

    def add_rounds(self, rounds: Sequence[tuple[int, str]],
                   observations: Mapping[str, Sequence[Observation]] | None = None) -> dict[str, tuple[str, ...]]:
        """`add_round` for several (round_order, round_id) at once, with the same rows as
        calling it for each in turn: a few statements per table for the whole batch
        instead of per round. Returns {round_id: table names} for the rounds that
        populate at least one table.

        observations: the rounds' stored observations in seq order, when the caller has
        them (the build just inserted them): the `observations` table, which has no
        index on round_id, is then not scanned at all (a scan per batch grew with the
        history: 1.9 ms per round at 100k rounds). They must be exactly what is stored."""
        ids = list(dict.fromkeys(rid for _, rid in rounds))
        if not ids or not self._tables:
            return {}
        rows = None
        if observations is not None:
            rows = [(rid, seq, o.attribute, o.raw_value, None if o.number is None else float(o.number), o.unit,
                     o.text_value, o.source) for rid in ids for seq, o in enumerate(observations.get(rid, ()))]
            attrs: dict[str, set[str]] = {}
            for r in rows:
                attrs.setdefault(r[0], set()).add(r[2])
        else:
            attrs = {rid: set(a) for rid, a in self.con.execute(
                "SELECT round_id, list(DISTINCT attribute) FROM observations "
                "WHERE round_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY round_id", [ids]).fetchall()}
        out: dict[str, list[str]] = {}
        schemas = {sid: t.attributes for sid, t in self._tables.items()}
        when = self._when()
        keep = {rid: populated(attrs[rid], schemas, when) for rid in ids if attrs.get(rid)}
        for sid, t in sorted(self._tables.items()):
            targets = [rid for rid in ids if sid in keep.get(rid, ())]
            partial_ones = [rid for rid in targets if partial(attrs[rid], t.attributes, when)]
            if partial_ones:
                strays = self._strays(t, partial_ones)
                targets = [rid for rid in targets if rid not in strays]
            if targets:
                chosen = set(targets)
                self._write_rows(t, targets, obs_rows=None if rows is None else [r for r in rows if r[0] in chosen])
                for rid in targets:
                    out.setdefault(rid, []).append(t.table_name)
        return {rid: tuple(names) for rid, names in out.items()}

    def settle_types(self, round_order: int) -> tuple[str, ...]:
        """Re-decide each column's type from all its values up to round_order; a column whose values
        now support another type is changed to it and its table refilled, as is a column whose unit its
        values now read otherwise (a symbol of two readings, a sign OCR glued on). Returns "table.column"
        of every changed column.

        A column's type is first decided when its table is created, from the few rounds seen then:
        a stray word among them ("GP: Won" once in three rounds) makes a count column text for
        good, and no sum or average can use it. At the end of a build every value is known."""
        changed: list[str] = []
        for _, t in sorted(self._tables.items()):
            profiles = self._profiles(t.attributes, round_order)
            moved = False
            for c in t.columns:
                p = profiles.get(c["attribute"])
                if p is not None and c["dtype"] == "DOUBLE" and p.dtype == "DOUBLE" and p.unit == c.get("unit") \
                        and [list(m) for m in p.magnitudes] != [list(m) for m in c.get("magnitudes", ())]:
                    # how big a value is in each unit: a number printed without its unit is read by its size
                    c["magnitudes"] = [list(m) for m in p.magnitudes]
                    moved = True
                if p is not None and c["dtype"] == "DOUBLE" and p.dtype == "DOUBLE" and p.unit and p.unit != c.get(
                        "unit") and (read_beside(c.get("unit"), [p.unit]) == p.unit or (not c.get("unit") and p.glued)):
                    # a symbol of two readings the column was named in from its first rounds ("34 m watched"), read
                    # otherwise beside the unit its values now come in (a screen's "27 min" joined the field): minutes;
                    # a column of numbers OCR read with their sign glued on as a "1" ("4.91" for "4.9 l") is in the
                    # unit the one value read whole shows ("3.7 l"), though its first rounds showed none
                    c["unit"] = p.unit
                    c["description"] = other_units_note(p.unit, p.other_units)
                    changed.append(f"{t.table_name}.{c['name']}")
                    moved = True
                if p is not None and c["dtype"] == "DOUBLE" and bool(p.glued) != bool(c.get("glued")):
                    c["glued"] = bool(p.glued)  # "4.91" beside "3.7 l": the sign glued to every number, read again
                    moved = True
                if p is not None and c["dtype"] == "DOUBLE" and p.unit == c.get("unit") and p.span is not None \
                        and list(p.span) != list(c.get("span") or ()):
                    # a bare number far beyond the values with the unit may be one with its sign glued on
                    moved = moved or p.outliers
                    c["span"] = list(p.span)
                if p is None or p.n == 0 or p.dtype == c["dtype"] or (
                        c.get("typed_by") == "llm" and p.allows(c["dtype"])):
                    continue  # a type the LLM chose stays while the values allow it
                # the stored cells are rewritten by the refill below: nothing is cast
                self.con.execute(f"ALTER TABLE {quote(t.table_name)} ALTER COLUMN {quote(c['name'])} "
                                 f"SET DATA TYPE {p.dtype} USING NULL")
                c["dtype"] = p.dtype
                c["unit"] = p.unit if p.dtype == "DOUBLE" else None
                c["description"] = other_units_note(p.unit, p.other_units) if p.dtype == "DOUBLE" else ""
                changed.append(f"{t.table_name}.{c['name']}")
                moved = True
            if moved:
                n = self._refill(t, round_order)
                t.description = self._description(t, n)
                self._save_schema(t)
        return tuple(changed)

    def settle_strays(self) -> dict[str, tuple[str, ...]]:
        """At the end of a build: rows of text alone that report fewer than half of their table's fields
        and speak only of things its other records never mention (`_strays`, judged from all its rows now) go.
        While a table is young its words are judged from its first rows, or not at all (fewer than
        STRAY_MIN_ROWS): a one-off "Paid 106 USD for concert tickets" may have become a row of a tutor log
        then. Returns {table: the rounds whose rows went}."""
        gone: dict[str, tuple[str, ...]] = {}
        when = self._when()
        for sid, t in sorted(self._tables.items()):
            self._described.pop(sid, None)
            rows = self.con.execute(f"SELECT source, _obs FROM {quote(t.table_name)} WHERE source IS NOT NULL"
                                    ).fetchall()
            partial_ones = [rid for rid, prov in rows if partial(_reported(t, prov), t.attributes, when)]
            strays = sorted(self._strays(t, partial_ones)) if partial_ones else []
            if strays:
                self.con.execute(f"DELETE FROM {quote(t.table_name)} WHERE source IN (SELECT unnest(?))", [strays])
                t.description = self._description(t, self._count(t.table_name))
                self._save_schema(t)
                gone[t.table_name] = tuple(strays)
        return gone

    def _vocabulary(self, t: _Table) -> frozenset[str]:
        """`record_words` of t's rows of text alone that report half its fields or more (their values left
        out), from its latest 400 rows; empty while it has fewer than STRAY_MIN_ROWS of them. Kept until
        t's rows grow by a quarter."""
        n = self._count(t.table_name)
        seen = self._described.get(t.schema_id)
        if seen is not None and n < max(seen[0] + 1, 1.25 * seen[0]):
            return seen[1]
        when = self._when()
        try:
            rows = self.con.execute(
                f"SELECT t.source, t._obs, r.text FROM {quote(t.table_name)} t JOIN rounds r ON r.round_id = t.source "
                "WHERE NOT EXISTS (SELECT 1 FROM images i WHERE i.round_id = t.source) "
                "ORDER BY t.round_order DESC LIMIT 400").fetchall()
        except duckdb.Error:  # a store without rounds/images (unit tests of the materializer alone)
            rows = []
        full = {rid: text for rid, prov, text in rows if not partial(_reported(t, prov), t.attributes, when)}
        words: frozenset[str] = frozenset()
        if len(full) >= STRAY_MIN_ROWS:
            values = {w for ws in self._said(list(full)).values() for w in ws[0]}
            words = record_words((round_words(user_text(x)) for x in full.values()), values)
        self._described[t.schema_id] = (n, words)
        return words

    def _said(self, round_ids: Sequence[str]) -> dict[str, tuple[set[str], set[str]]]:
        """{round: (words of its observations' values, words of their labels)} in `round_words` form."""
        out: dict[str, tuple[set[str], set[str]]] = {}
        for rid, raw, lab in self.con.execute(
                "SELECT round_id, raw_value, coalesce(label, '') || ' ' || coalesce(raw_attribute, '') || ' ' || "
                "attribute FROM observations WHERE round_id IN (SELECT unnest(?))", [list(round_ids)]).fetchall():
            values, labels = out.setdefault(rid, (set(), set()))
            values.update(canonical_word(w) for w in re.findall(r"[A-Za-z']+", raw or ""))
            labels.update(_canonical_token(w) for w in re.findall(r"[A-Za-z']+", lab.replace("_", " ")))
        return out

    def _strays(self, t: _Table, round_ids: Sequence[str]) -> set[str]:
        """Of `round_ids` (rounds that report fewer than half of t's fields), those of text alone that,
        beyond the labels and values of what they report, speak only of things t's records never mention
        (`speaks_of_other_things`): no record of t's."""
        vocabulary = self._vocabulary(t)
        if not vocabulary:
            return set()
        rows = self.con.execute(
            "SELECT r.round_id, r.text FROM rounds r WHERE r.round_id IN (SELECT unnest(?)) "
            "AND NOT EXISTS (SELECT 1 FROM images i WHERE i.round_id = r.round_id)", [list(round_ids)]).fetchall()
        said = self._said([rid for rid, _ in rows])
        return {rid for rid, text in rows if speaks_of_other_things(
            round_words(user_text(text)), set().union(*said.get(rid, (set(), set()))), vocabulary)}

    # ------------------------------------------------------------------ internals
    def settle_names(self, since_order: int) -> dict[str, str]:
        """At the end of a build: each table discovered at or after round `since_order` (made by this
        build) whose rounds now say a topic (`topic_words`) is named by it. A name is first given when
        a table is made, from its first few rounds, too few to show a topic (TOPIC_MIN_ROUNDS). Tables of
        earlier builds keep their names (a person may know them by now); tables named by a model
        too. Returns {old name: new name} of every renamed table; its rows, columns and schema id
        stay."""
        if self.llm is not None or self.metadata_fn is not None:
            return {}
        renamed: dict[str, str] = {}
        for _, t in sorted(self._tables.items()):
            rounds = [r for (r,) in self.con.execute(f"SELECT DISTINCT source FROM {quote(t.table_name)} "
                                                     "WHERE source IS NOT NULL").fetchall()]
            words = self._round_words(rounds)
            mentioned = mentions(words, [c["name"] for c in t.columns], t.table_name) if words else ()
            if mentioned != t.mentions:
                # (every table, old ones too: what its rounds mention grows with them)
                t.mentions = mentioned
                t.description = self._description(t, self._count(t.table_name))
                self._save_schema(t)
            if t.discovered < since_order or not words or not words.topics:
                continue  # a name from the fields stays as it was made (their types may have moved since)
            base = name_from_words(t.attributes, words)
            if base == t.table_name or re.fullmatch(re.escape(base[:58]) + r"_\d+", t.table_name):
                continue
            taken = (self._catalog_names() | reserved_names()) - {t.table_name}
            new, i = base, 2
            while new in taken:
                new, i = f"{base[:58]}_{i}", i + 1
            self.con.execute(f"ALTER TABLE {quote(t.table_name)} RENAME TO {quote(new)}")
            renamed[t.table_name] = new
            t.table_name = new
            t.mentions = mentions(words, [c["name"] for c in t.columns], new)
            t.description = self._description(t, self._count(new))
            self._save_schema(t)
        if renamed:
            self._rebuild_view()
        return renamed

    def _add_missing_contract_columns(self, name: str) -> None:
        """Tables made before a contract column existed (a memory built by an older version) get it
        appended, empty until their rows are rewritten."""
        have = {r[0] for r in self.con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [name]).fetchall()}
        for c in CONTRACT_COLUMNS:
            if c.name not in have:
                self.con.execute(f"ALTER TABLE {quote(name)} ADD COLUMN {quote(c.name)} {c.dtype}")

    def _catalog_names(self) -> set[str]:
        rows = self.con.execute(
            "SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
        return {r[0] for r in rows}

    def _count(self, name: str) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {quote(name)}").fetchone()[0])

    def _profiles(self, attrs: Sequence[str], round_order: int) -> dict[str, AttributeProfile]:
        rows = self.con.execute(
            "SELECT o.attribute, o.raw_value, o.number, o.unit FROM observations o "
            "JOIN rounds r ON r.round_id = o.round_id "
            "WHERE list_contains(?, o.attribute) AND r.round_order <= ? "
            "QUALIFY row_number() OVER (PARTITION BY o.attribute ORDER BY r.round_order DESC, o.seq) <= ? ",
            [list(attrs), round_order, SAMPLE_LIMIT],
        ).fetchall()
        by: dict[str, list] = {a: [] for a in attrs}
        for a, raw, num, unit in rows:
            by[a].append((raw, num, unit))
        return {a: profile(a, v) for a, v in by.items()}

    def _llm_metadata(self, attrs: Sequence[str], profiles: dict[str, AttributeProfile]) -> dict | None:
        samples = {a: list(profiles[a].samples) for a in attrs}
        try:
            if self.metadata_fn is not None:
                data = self.metadata_fn(attrs, samples)
            elif self.llm is not None:
                from . import prompts

                messages, schema = prompts.table_metadata(attrs, samples)
                data = self.llm.complete_json(
                    prompts.TABLE_METADATA, messages, schema,
                    prompt_version=prompts.PROMPT_VERSION[prompts.TABLE_METADATA]).data
            else:
                return None
        except LLMError as e:
            self.fallbacks.append(f"table metadata for {', '.join(attrs)}: LLM failed ({e}); rule-based metadata")
            return None
        if not isinstance(data, dict):
            self.fallbacks.append(f"table metadata for {', '.join(attrs)}: reply is not an object; rule-based")
            return None
        return data

    def _columns(self, attrs, profiles, llm_data, taken: set[str]) -> list[dict]:
        llm_cols = {}
        if llm_data is not None:
            for c in llm_data.get("columns") or []:
                if isinstance(c, dict) and isinstance(c.get("name"), str):
                    llm_cols[c["name"]] = c
        cols = []
        for a in attrs:
            p = profiles[a]
            dtype, unit = p.dtype, p.unit if p.dtype == "DOUBLE" else None
            typed_by = "values"
            lc = llm_cols.get(a)
            if lc is not None:
                t = lc.get("type")
                # (never text for a column of numbers or dates: its values could no longer be computed over)
                if t in TYPES and p.allows(t) and (t != "VARCHAR" or p.dtype == "VARCHAR"):
                    dtype, typed_by = t, "llm"
                elif t != dtype:
                    self.fallbacks.append(f"column {a}: LLM type {t!r} not supported by its values; using {dtype}")
                u = lc.get("unit")
                # the values' own unit stands (they are stored in it); the model names one only where they had none
                if dtype == "DOUBLE" and unit is None and isinstance(u, str) and 0 < len(u.strip()) <= 20:
                    unit = u.strip()
            desc = other_units_note(unit, p.other_units) if dtype == "DOUBLE" else ""
            name = column_name(a, taken)
            taken.add(name)
            col = {"name": name, "attribute": a, "dtype": dtype, "unit": unit if dtype == "DOUBLE" else None,
                   "description": desc, "typed_by": typed_by}
            if dtype == "DOUBLE" and p.magnitudes and unit == p.unit:
                col["magnitudes"] = [list(m) for m in p.magnitudes]
            if dtype == "DOUBLE" and p.glued:
                col["glued"] = True
            if dtype == "DOUBLE" and p.span is not None and unit == p.unit:
                col["span"] = list(p.span)
            cols.append(col)
        return cols

    def _table_name(self, attrs, llm_data, schema_id: int, words: RoundWords | None = None,
                    text_attributes: Sequence[str] = ()) -> str:
        taken = self._catalog_names() | reserved_names() | {t.table_name for t in self._tables.values()}
        name = None
        if llm_data is not None:
            cand = llm_data.get("name")
            if isinstance(cand, str) and IDENT_RE.match(cand) and cand not in reserved_names():
                name = cand
            else:
                self.fallbacks.append(f"table name {cand!r} from the LLM is invalid or reserved; rule-based name")
        base = name or name_from_words(attrs, words, text_attributes)
        out, i = base, 2
        while out in taken:
            out, i = f"{base[:58]}_{i}", i + 1
        return out

    def _create(self, schema_id: int, attrs: tuple[str, ...], round_order: int) -> _Table:
        profiles = self._profiles(attrs, round_order)
        llm_data = self._llm_metadata(attrs, profiles)
        words = self._round_words(self._matching(attrs, round_order))
        texts = [a for a in attrs if profiles[a].dtype == "VARCHAR"]
        name = self._table_name(attrs, llm_data, schema_id, words, texts)
        cols = self._columns(attrs, profiles, llm_data, {c.name for c in CONTRACT_COLUMNS} | {PROVENANCE_COLUMN})
        main = main_fields(attrs, words, texts)
        for c in cols:  # what a planner reads as the table's main quantity, however the table is named
            if c["attribute"] in main:
                c["main"] = True
        desc = None
        if llm_data is not None:
            d = llm_data.get("description")
            if isinstance(d, str) and d.strip() and len(d) <= 1000:
                desc = d.strip()
            else:
                self.fallbacks.append(f"table {name}: LLM description missing or too long; rule-based")
        ddl = ", ".join(
            [f"{quote(c.name)} {c.dtype}" for c in CONTRACT_COLUMNS]
            + [f"{quote(c['name'])} {c['dtype']}" for c in cols]
            + [f'"{PROVENANCE_COLUMN}" JSON']
        )
        self.con.execute(f"CREATE TABLE {quote(name)} ({ddl})")
        row = self.con.execute("SELECT discovered_order FROM schemas WHERE schema_id = ?", [schema_id]).fetchone()
        disc = int(row[0]) if row and row[0] is not None else round_order
        table = _Table(schema_id, name, desc or "", cols, disc, round_order, llm_description=desc)
        self._tables[schema_id] = table
        return table

    def _evolve(self, table: _Table, new: list[str], round_order: int) -> tuple[str, ...]:
        profiles = self._profiles(new, round_order)
        llm_data = self._llm_metadata(list(table.attributes) + new, {**self._profiles(table.attributes, round_order),
                                                                     **profiles})
        taken = {c.name for c in CONTRACT_COLUMNS} | {PROVENANCE_COLUMN} | {c["name"] for c in table.columns}
        cols = self._columns(new, profiles, llm_data, taken)
        for c in cols:
            self.con.execute(f"ALTER TABLE {quote(table.table_name)} ADD COLUMN {quote(c['name'])} {c['dtype']}")
        table.columns.extend(cols)
        table.updated = round_order
        d = (llm_data or {}).get("description")
        table.llm_description = d.strip() if isinstance(d, str) and d.strip() and len(d) <= 1000 else None
        return tuple(c["name"] for c in cols)

    def _description(self, table: _Table, n_rows: int) -> str:
        if table.llm_description:
            return table.llm_description
        span = self.con.execute(f"SELECT min(time), max(time) FROM {quote(table.table_name)}").fetchone()
        mods = dict(self.con.execute(f"SELECT modality, count(*) FROM {quote(table.table_name)} "
                                     "WHERE modality IS NOT NULL GROUP BY ALL").fetchall())
        return rule_description(table.table_name,
                                [Column(c["name"], c["dtype"], c.get("unit")) for c in table.columns], n_rows,
                                span, mods, table.mentions)

    def _when(self) -> frozenset[str]:
        """The attributes of the tables' date and time columns."""
        return frozenset(c["attribute"] for t in self._tables.values() for c in t.columns
                         if c.get("dtype") in ("DATE", "TIMESTAMP"))

    def _round_attributes(self, attrs: Sequence[str], round_order: int) -> dict[str, set[str]]:
        """The attributes of every round up to round_order that reports any of `attrs`."""
        return {rid: set(a) for rid, a in self.con.execute(
            "SELECT o.round_id, list(DISTINCT o.attribute) FROM observations o JOIN rounds r "
            "ON r.round_id = o.round_id WHERE r.round_order <= ? GROUP BY o.round_id "
            "HAVING count(*) FILTER (WHERE list_contains(?, o.attribute)) > 0",
            [round_order, list(attrs)]).fetchall()}

    def _matching(self, attrs: Sequence[str], round_order: int, key: object = None,
                  rounds: Mapping[str, set[str]] | None = None) -> list[str]:
        """Rounds up to round_order that populate a schema with these attributes (population rule, beside
        the other tables: `key` is this schema's id among them, None for one not yet made). `rounds`: the
        `_round_attributes` of these attributes, when the caller has them."""
        schemas = {sid: t.attributes for sid, t in self._tables.items() if sid != key}
        schemas[key] = tuple(attrs)
        rounds = self._round_attributes(attrs, round_order) if rounds is None else rounds
        when = self._when()
        out = [rid for rid, ra in sorted(rounds.items()) if key in populated(ra, schemas, when)]
        t = self._tables.get(key) if key is not None else None
        partial_ones = [rid for rid in out if partial(rounds[rid], attrs, when)] if t is not None else []
        if partial_ones:
            strays = self._strays(t, partial_ones)
            out = [rid for rid in out if rid not in strays]
        return out

    def _drop_dominated(self, t: _Table, rounds: Mapping[str, set[str]]) -> None:
        """Rows of other tables whose rounds t now describes better (t took more of their attributes) go.
        `rounds`: the `_round_attributes` of t's attributes."""
        schemas = {k: x.attributes for k, x in self._tables.items()}
        when = self._when()
        keep = {rid: populated(ra, schemas, when) for rid, ra in rounds.items()}
        for sid, u in sorted(self._tables.items()):
            if sid == t.schema_id:
                continue
            shared = set(u.attributes)
            gone = [rid for rid, ra in rounds.items() if ra & shared and sid not in keep[rid]]
            if gone:
                self.con.execute(f"DELETE FROM {quote(u.table_name)} WHERE source IN (SELECT unnest(?))", [gone])

    def _round_words(self, round_ids: Sequence[str]) -> RoundWords | None:
        """What the table's rounds talk about: words most of them use (scored by share x idf over all
        rounds so far; words of their own values left out) and words of the other rounds of their
        sessions. None when the store has no round text."""
        if not round_ids:
            return None
        try:
            rows = self.con.execute(
                "SELECT r.round_id, r.session_id, r.text, (SELECT string_agg(i.caption, ' ') FROM images i "
                "WHERE i.round_id = r.round_id) FROM rounds r WHERE r.round_order <= "
                "(SELECT max(round_order) FROM rounds WHERE round_id IN (SELECT unnest(?)))", [list(round_ids)]
            ).fetchall()
        except duckdb.Error:  # a store without rounds/images (unit tests of the materializer alone)
            return None
        words, session, texts = {}, {}, {}
        for rid, sid, text, caps in rows:
            user = user_text(text)
            words[rid] = round_words(user + " " + (caps or ""))
            texts[rid] = user + "\n" + (caps or "")
            session[rid] = sid
        mine = [r for r in round_ids if r in words]
        if not mine:
            return None
        said = self.con.execute(
            "SELECT raw_value, coalesce(label, '') || ' ' || coalesce(raw_attribute, '') || ' ' || attribute "
            "FROM observations WHERE round_id IN (SELECT unnest(?))", [mine]).fetchall()
        values = {canonical_word(w) for raw, _ in said for w in re.findall(r"[A-Za-z']+", raw or "")}
        labels = {_canonical_token(w) for _, lab in said for w in re.findall(r"[A-Za-z']+", lab.replace("_", " "))}
        n_all = len(words)
        df = Counter(w for ws in words.values() for w in ws)
        idf = {w: math.log((1 + n_all) / (1 + c)) + 0.1 for w, c in df.items()}
        counts = Counter(w for r in mine for w in words[r] if w not in values)
        scored = sorted(((w, c / len(mine), c / len(mine) * idf[w]) for w, c in counts.items()),
                        key=lambda x: (-x[2], x[0]))
        sessions = {session[r] for r in mine}
        mine_set = set(mine)
        ctx_rounds = [r for r in words if session[r] in sessions and r not in mine_set]
        ctx_counts = Counter(w for r in ctx_rounds for w in words[r] if w not in values)
        ctx = sorted(((w, c / max(1, len(ctx_rounds)) * idf[w]) for w, c in ctx_counts.items()),
                     key=lambda x: (-x[1], x[0]))
        return RoundWords(tuple((w, round(sh, 3), round(sc, 3)) for w, sh, sc in scored[:12]),
                          tuple((w, round(sc, 3)) for w, sc in ctx[:8]),
                          topic_words(texts, mine, values | labels, words)[:3],
                          frozenset(_canonical_token(w) for w in proper_nouns(texts[r] for r in mine)))

    def _save_schema(self, t: _Table) -> None:
        self.con.execute(
            "INSERT INTO schemas (schema_id, attributes, table_name, description, columns, discovered_order, "
            "updated_order) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (schema_id) DO UPDATE SET "
            "table_name = excluded.table_name, description = excluded.description, columns = excluded.columns, "
            "attributes = excluded.attributes, updated_order = greatest(schemas.updated_order, excluded.updated_order)",
            [t.schema_id, json.dumps(sorted(t.attributes)), t.table_name, t.description, json.dumps(t.columns),
             t.discovered, t.updated],
        )

    def _refill(self, t: _Table, round_order: int, rounds: Mapping[str, set[str]] | None = None) -> int:
        """Rematerialize every row of t from the observations of rounds up to round_order (`rounds`: their
        `_round_attributes`, when the caller has them)."""
        matching = self._matching(t.attributes, round_order, t.schema_id, rounds)
        self.con.execute(f"DELETE FROM {quote(t.table_name)}")
        self._write_rows(t, matching, replace=False)
        return len(matching)

    def _write_rows(self, t: _Table, round_ids: list[str], replace: bool = True,
                    obs_rows: list[tuple] | None = None) -> None:
        """Write the rows of `round_ids` into t. obs_rows: their (round_id, seq, attribute, raw_value,
        number, unit, text_value, source) observations in seq order, instead of reading the table."""
        if not round_ids:
            return
        ident = quote(t.table_name)
        if len(round_ids) <= 1000:
            # an IN list of parameters probes the primary-key index; IN (SELECT unnest(?)) scans `rounds`
            sql = ("SELECT round_id, round_order, time FROM rounds WHERE round_id IN ("
                   + ", ".join(["?"] * len(round_ids)) + ")")
            found = self.con.execute(sql, round_ids).fetchall()
        else:  # a refill of many rounds: one scan is cheaper than many probes
            found = self.con.execute("SELECT round_id, round_order, time FROM rounds "
                                     "WHERE round_id IN (SELECT unnest(?))", [round_ids]).fetchall()
        info = {rid: (order, time) for rid, order, time in found}
        caps = dict(self.con.execute(
            "SELECT round_id, string_agg(caption, ' | ' ORDER BY position) FROM images "
            "WHERE round_id IN (SELECT unnest(?)) AND caption IS NOT NULL AND caption <> '' GROUP BY round_id",
            [round_ids],
        ).fetchall())
        by_attr = {c["attribute"]: c for c in t.columns}
        values: dict[str, dict[str, tuple]] = {rid: {} for rid in round_ids}
        aliased: list[tuple] = []
        if obs_rows is None:
            obs_rows = self.con.execute(
                "SELECT round_id, seq, attribute, raw_value, number, unit, text_value, source FROM observations "
                "WHERE round_id IN (SELECT unnest(?)) ORDER BY round_id, seq",
                [round_ids],
            ).fetchall()
        sources: dict[tuple, str] = {}  # (round_id, seq) -> where the observation was read
        for rid, seq, attr, raw, num, unit, tv, src in obs_rows:
            sources[(rid, seq)] = src or "dialogue"
            c = by_attr.get(attr)
            if c is None:
                # the same quantity named with a word more or less in this round ("soil moist." beside
                # "moisture"): it fills its column only when the round has no value there (below)
                target = alias_of(attr, list(by_attr))
                if target is not None:
                    tc = by_attr[target]
                    if tc["dtype"] != "DOUBLE" or (tc.get("unit") or None) == (unit or None):
                        aliased.append((rid, seq, tc, raw, num, tv))
                continue
            if c["name"] in values[rid]:
                continue  # first observation of the attribute in the round wins
            if not unit and c.get("glued") and unglued(raw) is not None:
                num, unit = unglued(raw), c.get("unit")  # "4.91" in a column of litres is 4.9 l
            elif not unit and c.get("unit") and (read := glued_outlier(raw, c.get("span"))) is not None:
                num, unit = read, c.get("unit")  # "4751" beside 136-502 L is 475 l
            if not unit and num is not None and c.get("magnitudes"):
                unit = unit_by_magnitude(float(num), c)
            v = in_column_unit(cell(c["dtype"], raw, num, tv), unit, c)
            if v is not None:
                values[rid][c["name"]] = (v, seq)
        for rid, seq, c, raw, num, tv in aliased:
            if c["name"] not in values[rid]:
                v = cell(c["dtype"], raw, num, tv)
                if v is not None:
                    values[rid][c["name"]] = (v, seq)
        names = [c["name"] for c in t.columns]
        cols = ", ".join([quote(c.name) for c in CONTRACT_COLUMNS] + [quote(n) for n in names]
                         + [f'"{PROVENANCE_COLUMN}"'])
        marks = ", ".join(["?"] * (len(CONTRACT_COLUMNS) + len(names) + 1))
        batch = []
        for rid in round_ids:
            if rid not in info:
                continue  # observations of a round that is not in `rounds`: nothing to anchor a row to
            order, time = info[rid]
            vals = values[rid]
            prov = {n: vals[n][1] for n in names if n in vals}
            batch.append([rid, order, time, caps.get(rid), modality(sources.get((rid, q)) for q in prov.values())]
                         + [vals[n][0] if n in vals else None for n in names] + [json.dumps(prov)])
        if replace:
            # a row's round_order is its round's: the range lets DuckDB skip the row groups of older rounds
            # (zone maps) instead of comparing every source of a table that grows with the history
            orders = [o for o, _ in info.values()]
            if orders:
                self.con.execute(f"DELETE FROM {ident} WHERE round_order BETWEEN ? AND ? AND source IN "
                                 f"(SELECT unnest(?))", [min(orders), max(orders), round_ids])
            unknown = [r for r in round_ids if r not in info]  # not in `rounds`: no order to narrow by
            if unknown:
                self.con.execute(f"DELETE FROM {ident} WHERE source IN (SELECT unnest(?))", [unknown])
        # one multi-row statement per chunk: executemany runs one statement per row in DuckDB
        per = max(1, 4000 // (len(names) + len(CONTRACT_COLUMNS) + 1))
        for k in range(0, len(batch), per):
            part = batch[k:k + per]
            self.con.execute(f"INSERT INTO {ident} ({cols}) VALUES " + ", ".join([f"({marks})"] * len(part)),
                             [v for row in part for v in row])

    def _rebuild_view(self) -> None:
        parts = ["SELECT CAST(NULL AS VARCHAR) AS table_name, CAST(NULL AS VARCHAR) AS description, "
                 "CAST(NULL AS BIGINT) AS n_rows WHERE false"]
        for sid, t in sorted(self._tables.items()):
            parts.append(f"SELECT s.table_name, s.description, (SELECT count(*) FROM {quote(t.table_name)}) "
                         f"FROM schemas s WHERE s.schema_id = {int(sid)}")
        self.con.execute("CREATE OR REPLACE VIEW memory_tables AS " + " UNION ALL ".join(parts))
